/* SPDX-License-Identifier: MIT */
/* mgc_units.h: numbers for people, shared by mgreport and mgmon so both print memory the same
 * way. Writes into caller buffers only. */
#ifndef MGC_UNITS_H
#define MGC_UNITS_H

#include <stddef.h>

/* Bytes as people read `free -h`-style figures, 1000-based: "17.4 GB", "512 KB", "12 B"; "?"
 * for a non-finite value. Returns buf. */
const char *mgc_human_bytes(double b, char *buf, size_t cap);

#endif /* MGC_UNITS_H */
