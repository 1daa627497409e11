/* SPDX-License-Identifier: MIT */
/* mgp_unwind.h: the probe's own x86-64 stack unwinder, for the stacks of allocations. Each return
 * address's frame rule (where the caller's frame starts, where the return address and RBP were
 * saved) is read once from the module's .eh_frame_hdr, FDE and CIE into a global table, and every
 * later stack is a table lookup and two loads per frame; frames the thread's last stack shared are
 * one load and compare each. What it cannot follow for certain (CFA
 * expressions, DRAP realignment, signal frames, no FDE, code outside a loaded module, a stack it
 * does not know the bounds of) it leaves to libunwind: it returns -1 and the caller uses
 * unw_backtrace. Runs inside the hooks: never malloc, stdio or a blocking lock; never reads outside
 * the calling thread's stack or a loaded module's mapped segments. */
#ifndef MGP_UNWIND_H
#define MGP_UNWIND_H

#include <stdint.h>

/* MGPROBE_UNWIND: the probe's unwinder with libunwind as its fallback; libunwind only; or both
 * on every stack, compared (mismatches counted and printed on stderr at exit). */
enum mgp_unwind_mode { MGP_UNWIND_PROBE, MGP_UNWIND_LIBUNWIND, MGP_UNWIND_CHECK };

/* Set once by mgp_unwind_init, read-only after. */
extern int mgp_unwind_mode;

/* Reserves the rule table and notes the calling thread's stack bounds (the constructor runs on
 * the main thread). Call once at start-up; with no table the mode becomes libunwind only. */
void mgp_unwind_init(enum mgp_unwind_mode mode);

/* Return addresses of the caller's stack into out (at most max), innermost first, as
 * unw_backtrace(out, max) called at the same place would give them. -1 when this unwinder cannot
 * be sure of the whole stack: the caller then calls unw_backtrace. Hook-safe (see above); the
 * first call on a thread asks glibc for the thread's stack bounds (pthread_getattr_np, which may
 * allocate: the caller holds the recursion guard). */
int mgp_unwind_backtrace(uintptr_t *out, int max);

/* What this thread's last mgp_unwind_backtrace put out, as an identity: two calls on one thread
 * that leave the same nonzero value put out the same frames (the same count, the same return
 * addresses). 0 after a call that gave -1, or ran while another was in progress on the thread (a
 * signal handler's). A walk that followed the thread's last stack to its end, with the frames
 * before the followed ones unchanged, keeps the value; any other walk takes a new one. What lets
 * the site lookup skip comparing the frames again (mgp_sites_intern_known). */
extern __thread uint64_t mgp_unwind_stack_id __attribute__((tls_model("initial-exec")));

/* Or'ed into mgp_unwind_backtrace's max: the walk ends at the first frame whose return address is
 * in the stop range (mgp_unwind_stop_at), that frame put out last. A Python stack needs no native
 * frame past the first of the interpreter's frame evaluator (mgp_capture_unwind). */
#define MGP_UNWIND_TO_STOP (1 << 20)

/* Sets the stop range: return addresses in (lo, hi]. Call once at start-up, before recording. */
void mgp_unwind_stop_at(uintptr_t lo, uintptr_t hi);

/* Check mode: unwinds again with unw_backtrace and compares the frames past the probe's own
 * (those in [own_lo, own_hi)) with mine (got frames of a call that asked for max, MGP_UNWIND_TO_STOP
 * or'ed in where it was: a walk that ended at the stop range is compared up to there). */
void mgp_unwind_check(const uintptr_t *mine, int got, int max, uintptr_t own_lo, uintptr_t own_hi);

/* Check mode: prints one line on stderr, "unwind check: N stacks compared, M mismatches, F left
 * to libunwind; R return addresses in the table; K of T frames followed from the thread's last
 * stack" (this process's, since its start or fork). Call at the end, once. */
void mgp_unwind_summary(void);

/* In a forked child: the filler's lock is free (its holder, if any, is not in the child). */
void mgp_unwind_forked(void);

/* Forgets every rule (a module is being unloaded: its addresses may hold other code later). */
void mgp_unwind_flush(void);

#endif /* MGP_UNWIND_H */
