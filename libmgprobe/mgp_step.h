/* SPDX-License-Identifier: MIT */
/* mgp_step.h: the current training step and phase label, set through mgprobe.h's API (mgp_step.c
 * implements it) and read by the hooks (an allocation's birth step) and by every snapshot. The
 * step is read on the allocation fast path: one relaxed load, never a lock. */
#ifndef MGP_STEP_H
#define MGP_STEP_H

#include <stdint.h>

extern uint64_t mgp_step_value; /* atomic: the last mgprobe_step, 0 before the first */

static inline uint64_t mgp_step_now(void)
{
	return __atomic_load_n(&mgp_step_value, __ATOMIC_RELAXED);
}

/* The step an allocation made now is born in, saturated to the live table's 32 bits. */
static inline uint32_t mgp_step_birth(void)
{
	uint64_t s = mgp_step_now();
	return s > UINT32_MAX ? UINT32_MAX : (uint32_t)s;
}

/* The label in force ("" before the first mgprobe_label). Writer lock held. */
const char *mgp_step_label(void);

#endif /* MGP_STEP_H */
