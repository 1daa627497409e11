/* SPDX-License-Identifier: MIT */
/* mgr_stacks.h: the weighted stacks that the flame-graph exports write (--folded, --speedscope):
 * per process, the heaviest sites by the chosen weight, each with its frames root first, and the
 * weight left out by the site limit as one "[N other sites]" stack, so the totals stay true. It
 * chooses and names, a stack at a time; the two writers only format. */
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

/* What a process's stacks weigh. */
struct mgr_stacks {
	char what[96];  /* mgr_weight_describe: "live bytes at step 300" */
	double negative; /* growth mode: the shrinking sites' summed (negative) growth, left out */
};

/* The stacks of one process, one at a time: what the exports read as they go. */
struct mgr_stack_iter {
	const struct mgr_process *p;
	struct mgr_view v;
	struct mgr_picked pk; /* chosen, not symbolized */
	int prefix;
	size_t next; /* the next choice; pk.n is the "[N other sites]" stack */
};

/* Opens the stacks of process p: at most `max` sites (0 = all), each prefixed by the process's own
 * root frame when `prefix` (several processes in one flame graph); info gets `what` and `negative`.
 * 0; -ERANGE with the reason in err when the spec does not fit p's axis; -ENOMEM.
 * note gets mgr_weight_resolve's note. Close it whatever it returns. */
int mgr_stack_iter_open(struct mgr_stack_iter *it, const struct mgr_process *p, struct mgc_symbolizer *sym,
			const struct mgr_weight_spec *spec, size_t max, int prefix, struct mgr_stacks *info,
			char *err, size_t errlen, char *note, size_t notelen);

/* The next stack, heaviest first, "[N other sites]" last: 1 and *out (free it with
 * mgr_stack_free), 0 at the end (*out untouched), -ENOMEM. */
int mgr_stack_iter_next(struct mgr_stack_iter *it, struct mgr_stack *out);
void mgr_stack_iter_close(struct mgr_stack_iter *it);
void mgr_stack_free(struct mgr_stack *s);

#endif /* MGR_STACKS_H */
