/* SPDX-License-Identifier: MIT */
/* mgr_folded.h: `mgreport --folded`: Brendan Gregg's folded stacks, the input of flamegraph.pl,
 * inferno and speedscope: one line per distinct stack, its frames root first joined by ';', a
 * space and an integer weight in bytes. Formats what mgr_stacks chose; decides nothing. Holds a
 * prefix tree of the distinct stacks' frames, never a string per site: `--top 0` on a program
 * with 10^5 sites is millions of frames, most of them shared. */
#ifndef MGR_FOLDED_H
#define MGR_FOLDED_H

#include <stdio.h>

#include "mgr_stacks.h"

/* Writes the folded lines of every opened iterator's stacks to f: equal stacks merged, lines
 * sorted by stack (strcmp of the joined lines), weights rounded to whole bytes, zero weights left
 * out. 0 or -ENOMEM. */
int mgr_folded_write(FILE *f, struct mgr_stack_iter *its, size_t n);

#endif /* MGR_FOLDED_H */
