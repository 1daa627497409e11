/* SPDX-License-Identifier: MIT */
/* mgp_capture.c: finds the probe's own code once at start-up, for the inline stack capture of
 * mgp_capture.h, and notes each thread's alternate signal stack for its room check. */
#define _GNU_SOURCE
#include "mgp_capture.h"

#include "mgp_elf.h"

struct mgp_capture_conf mgp_capture_conf;
__thread struct mgp_stack_bounds mgp_stack_bounds __attribute__((tls_model("initial-exec")));

void mgp_capture_altstack(const void *sp, size_t size, int disable)
{
	struct mgp_stack_bounds *b = &mgp_stack_bounds;
	b->alt_lo = disable ? 0 : (uintptr_t)sp;
	b->alt_hi = disable ? 0 : (uintptr_t)sp + size;
}

void mgp_capture_init(unsigned depth)
{
	uint64_t lo, hi;
	mgp_elf_module_of((const void *)&mgp_capture_init, &lo, &hi);
	mgp_capture_conf.own_lo = lo;
	mgp_capture_conf.own_hi = hi;
	mgp_capture_conf.depth = depth;
}
