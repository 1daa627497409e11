/* SPDX-License-Identifier: MIT */
/* mgp_capture.c: finds the probe's own code once at start-up, for the inline stack capture of
 * mgp_capture.h, and keeps each thread's stack bounds for its room check. The bounds are read once
 * per thread, inside the guard; never on the fast path. */
#define _GNU_SOURCE
#include "mgp_capture.h"

#include <pthread.h>
#include <signal.h>

#include "mgp_elf.h"
#include "mgp_os.h"

struct mgp_capture_conf mgp_capture_conf;
__thread struct mgp_stack_bounds mgp_stack_bounds __attribute__((tls_model("initial-exec")));

void mgp_capture_bounds(void)
{
	struct mgp_stack_bounds *b = &mgp_stack_bounds;
	b->known = 1;
	if (mgp_gettid() == mgp_getpid())
		return; /* the main thread: its stack grows on demand up to RLIMIT_STACK */
	pthread_attr_t a;
	void *lo;
	size_t size, guard = 0;
	if (pthread_getattr_np(pthread_self(), &a) != 0)
		return;
	if (pthread_attr_getstack(&a, &lo, &size) == 0) {
		pthread_attr_getguardsize(&a, &guard);
		b->lo = (uintptr_t)lo + guard; /* glibc counts the guard inside the range */
		b->hi = (uintptr_t)lo + size;
	}
	pthread_attr_destroy(&a);
}

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
