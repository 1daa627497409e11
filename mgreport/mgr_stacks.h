/* SPDX-License-Identifier: MIT */
/* mgr_stacks.h: the weighted stacks that the flame-graph exports write (--folded, --speedscope):
 * per process, the heaviest sites by the chosen weight, each with its frames root first, and the
 * weight left out by the site limit as one "[N other sites]" stack, so the totals stay true. It
 * chooses and names; the two writers only format. */
#ifndef MGR_STACKS_H
#define MGR_STACKS_H

#include <stddef.h>

#include "mgr_view.h"

struct mgr_stack_frame {
	char *label;      /* mgr_frame_label, owned */
	const char *file; /* source file or NULL, owned by the symbolizer */
	int line;
};

struct mgr_stack {
	struct mgr_stack_frame *frames; /* root first, owned */
	size_t nframes;
	double weight;  /* bytes */
};

struct mgr_stacks {
	struct mgr_stack *stacks;
	size_t n;
	char what[96];  /* mgr_weight_describe: "live bytes at step 300" */
	double negative; /* growth mode: the shrinking sites' summed (negative) growth, left out */
};

/* Builds the stacks of process p: at most `max` sites (0 = all), each prefixed by the process's
 * own root frame when `prefix` (several processes in one flame graph). 0; -ERANGE with the
 * reason in err when the spec does not fit p's axis; -ENOMEM. note gets mgr_weight_resolve's
 * note. */
int mgr_stacks_build(const struct mgr_process *p, struct mgc_symbolizer *sym,
		     const struct mgr_weight_spec *spec, size_t max, int prefix, struct mgr_stacks *out,
		     char *err, size_t errlen, char *note, size_t notelen);
void mgr_stacks_free(struct mgr_stacks *st);

#endif /* MGR_STACKS_H */
