/* SPDX-License-Identifier: MIT */
/* mgc_units.h: numbers for people, shared by mgreport and mgmon so both print memory the same
 * way: IEC binary units, as PyTorch's memory_summary and nvidia-smi print them. Writes into caller
 * buffers only. */
#ifndef MGC_UNITS_H
#define MGC_UNITS_H

#include <stddef.h>

/* Bytes in binary units (1 KiB = 1024 B): "17.4 GiB", "512 KiB", "1.00 MiB", "12 B"; three
 * significant digits from 1 KiB up; "?" for a non-finite value. Returns buf. */
const char *mgc_human_bytes(double b, char *buf, size_t cap);

/* A point of the x axis: "step 40" (steps) or "40 s" (seconds); "?" for a non-finite x. */
const char *mgc_human_x(double x, int x_is_steps, char *buf, size_t cap);

#endif /* MGC_UNITS_H */
