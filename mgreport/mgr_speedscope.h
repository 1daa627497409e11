/* SPDX-License-Identifier: MIT */
/* mgr_speedscope.h: `mgreport --speedscope OUT.json`: the stacks in speedscope's documented file
 * format (https://www.speedscope.app/file-format-schema.json): one "sampled" profile per process,
 * unit "bytes", each sample a stack of indices into shared.frames, root first, with its weight.
 * Formats what mgr_stacks chose; decides nothing. */
#ifndef MGR_SPEEDSCOPE_H
#define MGR_SPEEDSCOPE_H

#include <stdio.h>

#include "mgr_stacks.h"

/* Writes the speedscope document for the sets (one per process, `names[k]` naming set k's
 * process) to f. `title` names the whole file. 0 or -ENOMEM. */
int mgr_speedscope_write(FILE *f, const char *title, const struct mgr_stacks *sets, const char *const *names,
			 size_t nsets);

#endif /* MGR_SPEEDSCOPE_H */
