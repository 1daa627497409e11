/* SPDX-License-Identifier: MIT */
/* mgp_tstack.h: how low on its own stack a thread may still capture a stack (issue 13, point 2,
 * for small thread stacks). The probe wraps the start routine of every thread created with a
 * small stack (pthread_create, mgp_tstack.c) and notes in a thread-local value the lowest stack
 * address at which a capture (MGP_CAPTURE_STACK, measured and doubled) still fits above the end
 * of that stack. The allocation hooks compare the stack pointer with it: one compare against a
 * thread-local value. It never allocates (the thread's bounds come from the attribute the program
 * gave and the thread descriptor's place, not from pthread_getattr_np, which allocates). */
#ifndef MGP_TSTACK_H
#define MGP_TSTACK_H

#include <stdint.h>

/* Threads with a stack smaller than this are wrapped; bigger ones are left as they are (their
 * floor stays 0) and their stacks look exactly as without the probe. */
#define MGP_TSTACK_SMALL (1024u << 10)

/* The lowest stack address at which this thread may capture; 0 when any is fine (the main
 * thread, threads with a big stack, threads started without pthread_create). */
extern __thread uintptr_t mgp_tstack_floor __attribute__((tls_model("initial-exec")));

/* 1 when a capture fits below sp on this thread's own stack. */
static inline int mgp_tstack_fits(uintptr_t sp)
{
	return sp >= mgp_tstack_floor;
}

#endif /* MGP_TSTACK_H */
