/* SPDX-License-Identifier: MIT */
/* mgr_speedscope.h: `mgreport --speedscope OUT.json`: the stacks in speedscope's documented file
 * format (https://www.speedscope.app/file-format-schema.json): one "sampled" profile per process,
 * unit "bytes", each sample a stack of indices into shared.frames, root first, with its weight.
 * Formats what mgr_stacks chose; decides nothing. Holds the distinct frames, the samples as the
 * leaves of a prefix tree (mgr_stacktree) and their weights, never a stack per site. */
#ifndef MGR_SPEEDSCOPE_H
#define MGR_SPEEDSCOPE_H

#include <stdio.h>

#include "mgr_stacks.h"

/* Writes the speedscope document for the opened iterators (one per process: infos[k] its
 * mgr_stack_iter_open's, `names[k]` naming its process) to f, reading each stack once. `title`
 * names the whole file. 0 or -ENOMEM. */
int mgr_speedscope_write(FILE *f, const char *title, struct mgr_stack_iter *its, const struct mgr_stacks *infos,
			 const char *const *names, size_t nsets);

#endif /* MGR_SPEEDSCOPE_H */
