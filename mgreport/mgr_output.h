/* SPDX-License-Identifier: MIT */
/* mgr_output.h: mgreport's two printers over the analysis model: JSON (the stable schema of
 * docs/report-json.md) and text for a terminal. They only format; they decide nothing. */
#ifndef MGR_OUTPUT_H
#define MGR_OUTPUT_H

#include <stdio.h>

#include "mgr_analyze.h"

/* Writes the JSON document for the processes (the first one is also mirrored at top level).
 * 0 or -ENOMEM. */
int mgr_print_json(FILE *f, struct mgr_process *procs, size_t n);

/* Writes the terminal report; colour when `color`. */
void mgr_print_text(FILE *f, struct mgr_process *procs, size_t n, int color);

#endif /* MGR_OUTPUT_H */
