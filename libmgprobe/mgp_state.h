/* SPDX-License-Identifier: MIT */
/* mgp_state.h: the one answer to "does the probe record this?": the recording state, read with one
 * atomic load, and the per-thread recursion guard that sends the probe's own allocations straight
 * through. Parts keep their own health (the trace file, the live segment, CUPTI), but only this
 * state says whether the hooks record. Nothing here calls out; safe anywhere, signals included. */
#ifndef MGP_STATE_H
#define MGP_STATE_H

enum mgp_state {
	MGP_OFF = 0,       /* not started yet, or running unprofiled (a bad setting, no trace file,
			      a child under --no-children) */
	MGP_RECORDING = 1, /* the hooks record and snapshots are written */
	MGP_STOPPED = 2,   /* stopped for good: no memory for the probe's tables, or the trace
			      cannot be written; the program runs on */
	MGP_CLOSED = 3,    /* the final snapshot is written (exit) */
};

extern int mgp_state_value; /* enum mgp_state; atomic, read through the functions below */

/* 1 while the hooks record: the fast path's only question about the probe (a relaxed load). */
static inline int mgp_recording(void)
{
	return __atomic_load_n(&mgp_state_value, __ATOMIC_RELAXED) == MGP_RECORDING;
}

static inline enum mgp_state mgp_state_get(void)
{
	return (enum mgp_state)__atomic_load_n(&mgp_state_value, __ATOMIC_ACQUIRE);
}

/* The life cycle's transitions: start (OFF -> RECORDING), exit (-> CLOSED), a fork child that is
 * not traced (-> OFF). */
static inline void mgp_state_set(enum mgp_state s)
{
	__atomic_store_n(&mgp_state_value, (int)s, __ATOMIC_RELEASE);
}

/* RECORDING -> STOPPED, from any thread. Returns 1 for the one call that stopped recording (it
 * says why, in one line), 0 when recording had already ended. */
static inline int mgp_state_stop(void)
{
	int want = MGP_RECORDING;
	return __atomic_compare_exchange_n(&mgp_state_value, &want, MGP_STOPPED, 0, __ATOMIC_ACQ_REL,
					   __ATOMIC_RELAXED);
}

/* The recursion guard: how deeply this thread is inside the probe's own work. While it is not
 * zero, allocations pass straight through unrecorded (the probe's own, libunwind's, dlsym's,
 * CUPTI's inside our calls). Enter and leave in pairs. */
extern __thread unsigned mgp_guard_depth __attribute__((tls_model("initial-exec")));

static inline int mgp_guarded(void)
{
	return mgp_guard_depth != 0;
}

static inline void mgp_guard_enter(void)
{
	mgp_guard_depth++;
}

static inline void mgp_guard_leave(void)
{
	mgp_guard_depth--;
}

#endif /* MGP_STATE_H */
