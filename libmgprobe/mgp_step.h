/* SPDX-License-Identifier: MIT */
/* mgp_step.h: the current training step and phase label, set through mgprobe.h's API (mgp_step.c
 * implements it) and read by the hooks (an allocation's birth step) and by every snapshot. The
 * step is read on the allocation fast path: one relaxed load, never a lock. */
#ifndef MGP_STEP_H
#define MGP_STEP_H

#include <stdint.h>

#include "mgc_format.h"

extern uint64_t mgp_step_value; /* atomic: the last mgprobe_step, 0 before the first */

static inline uint64_t mgp_step_now(void)
{
	return __atomic_load_n(&mgp_step_value, __ATOMIC_RELAXED);
}

/* The cohort bucket of an allocation made now (mgc_cohort_bucket of the current step). */
static inline unsigned mgp_step_bucket(void)
{
	return mgc_cohort_bucket(mgp_step_now());
}

/* The label in force ("" before the first mgprobe_label). Writer lock held. */
const char *mgp_step_label(void);

#endif /* MGP_STEP_H */
