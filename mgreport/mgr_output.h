/* SPDX-License-Identifier: MIT */
/* mgr_output.h: mgreport's two printers over the analysis model: JSON (the stable schema of
 * docs/report-json.md) and text for a terminal. They only format; they decide nothing. */
#ifndef MGR_OUTPUT_H
#define MGR_OUTPUT_H

#include <stdio.h>

#include <cjson/cJSON.h>

#include "mgr_analyze.h"

/* Writes the JSON document for the processes (the first one is also mirrored at top level).
 * 0 or -ENOMEM. */
int mgr_print_json(FILE *f, struct mgr_process *procs, size_t n);

/* Writes root as indented JSON and a newline to f, and frees root. 0 or -ENOMEM. */
int mgr_json_emit(FILE *f, cJSON *root);

/* Adds "frames" to o: the stack's frames as report-json.md gives them (innermost first). */
void mgr_json_frames(cJSON *o, const struct mgc_stack *st);

/* Writes the terminal report; colour when `color`. 0, or -ENOMEM (a stack could not be
 * symbolized: the report stops there). */
int mgr_print_text(FILE *f, struct mgr_process *procs, size_t n, int color);

/* The answer the text report opens with, one sentence (the process verdict, time to OOM, the top
 * leaking host site), and the GPU's own sentence ("" when the run has no device memory). */
void mgr_answer(const struct mgr_process *p, char *out, size_t cap);
void mgr_device_answer(const struct mgr_process *p, char *out, size_t cap);

#endif /* MGR_OUTPUT_H */
