/* SPDX-License-Identifier: MIT */
/* mgr_folded.h: `mgreport --folded`: Brendan Gregg's folded stacks, the input of flamegraph.pl,
 * inferno and speedscope: one line per distinct stack, its frames root first joined by ';', a
 * space and an integer weight in bytes. Formats what mgr_stacks chose; decides nothing. */
#ifndef MGR_FOLDED_H
#define MGR_FOLDED_H

#include <stdio.h>

#include "mgr_stacks.h"

/* Writes the folded lines of every set of stacks to f: equal stacks merged, lines sorted by stack,
 * weights rounded to whole bytes, zero weights left out. 0 or -ENOMEM. */
int mgr_folded_write(FILE *f, const struct mgr_stacks *sets, size_t nsets);

#endif /* MGR_FOLDED_H */
