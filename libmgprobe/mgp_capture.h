/* SPDX-License-Identifier: MIT */
/* mgp_capture.h: the calling stack of an allocation, as return addresses, innermost first, with the
 * probe's own frames left out and, in a Python program, the thread's Python frames in place of
 * every native frame past the first one of the interpreter's frame evaluator (mgp_python). The
 * first step of recording (capture -> intern -> live table -> counters): what makes a site. Runs
 * inside the hooks: never malloc, stdio or a lock of ours. Inline, because every frame of the probe
 * between the program and unw_backtrace is one more frame to unwind on every allocation. */
#ifndef MGP_CAPTURE_H
#define MGP_CAPTURE_H

#include <stdint.h>

#define UNW_LOCAL_ONLY
#include <libunwind.h>

#include "mgc_format.h"
#include "mgp_python.h"
#include "mgp_tstack.h"
#include "mgp_unwind.h"

/* Frames captured beyond the depth, to cover the probe's own (dropped). */
#define MGP_CAPTURE_SLACK 16u

/* Room for one capture, on the caller's stack: the native frames, and the stack with Python's. */
struct mgp_capture_buf {
	uintptr_t native[MGC_MAX_FRAMES + MGP_CAPTURE_SLACK];
	uintptr_t merged[MGC_MAX_FRAMES];
	/* What the site lookup may trust without comparing (mgp_sites_intern_known): the native
	 * frames' identity (mgp_unwind_stack_id; 0: none), and how many of the stack's first frames
	 * are those native frames (the same identity: the same frames there). */
	uint64_t id;
	unsigned fixed;
};

/* Set once by mgp_capture_init, read-only after. */
extern struct mgp_capture_conf {
	unsigned depth;
	uintptr_t own_lo, own_hi; /* the probe's own text: frames in it are not the program's */
} mgp_capture_conf;

/* Sets the depth kept (1..MGC_MAX_FRAMES) and finds the probe's own code, whose frames are left
 * out. Call once at start-up, before recording. */
void mgp_capture_init(unsigned depth);

/* The most stack one capture may take below its caller (the capture buffer, unw_backtrace's
 * context and cursor or mgp_unwind's walk and a miss's ~3 KiB of copied CIE and FDE, the Python
 * walk): measured at about 8 KiB on x86-64 with AVX-512 (tests/probe/prog_altstack.c "measure"),
 * doubled. */
#define MGP_CAPTURE_STACK (16u << 10)

/* This thread's alternate signal stack, as the program gave it (sigaltstack, seen by the hook);
 * 0..0 when none. And its own stack, for mgp_unwind's reads: 0..0 until its first unwind, 1..1
 * when glibc does not know it. */
struct mgp_stack_bounds {
	uintptr_t alt_lo, alt_hi;
	uintptr_t stk_lo, stk_hi;
};
extern __thread struct mgp_stack_bounds mgp_stack_bounds __attribute__((tls_model("initial-exec")));

/* The program called sigaltstack(ss) and it succeeded. */
void mgp_capture_altstack(const void *sp, size_t size, int disable);

/* 0 when the current stack cannot hold a capture: a handler on a small alternate signal stack,
 * or a thread low on its own small stack (mgp_tstack.h). The allocation is then recorded without
 * a stack, and the guard page is never touched. Call before any frame that holds a capture. */
static inline int mgp_capture_room(void)
{
	const struct mgp_stack_bounds *b = &mgp_stack_bounds;
	uintptr_t sp = (uintptr_t)__builtin_frame_address(0);
	if (sp - b->alt_lo < b->alt_hi - b->alt_lo)
		return sp - b->alt_lo >= MGP_CAPTURE_STACK;
	return mgp_tstack_fits(sp);
}

/* Native frames unwound first on a thread that runs Python (the probe's own included), as
 * mgp_python_merge needs none past the first evaluator frame: in the PyTorch sample that frame
 * comes within the first 32 in 92% of stacks, most of which are 48 to 63 frames deep. Only a stack
 * without an evaluator frame in its first 32 is unwound again, whole. Shorter does not pay: in
 * that sample's training steps the frame is at index 24 to 31 in 53% of stacks, 16 to 23 in 23%,
 * under 16 in 11% (not in the first 32: 13%), so 16 first, then 32, would unwind 48 frames for
 * 89% of stacks, 39% more than 32 alone. */
#define MGP_CAPTURE_FIRST 32u

/* unw_backtrace(out, max), by mgp_unwind where it can (MGPROBE_UNWIND); always inline, so both
 * unwinders start from the same frame. With `py`, mgp_unwind's walk ends at the first evaluator
 * frame (put out): a Python stack needs none past it (mgp_python_merge); libunwind's goes on. */
static inline __attribute__((always_inline)) int mgp_capture_backtrace(uintptr_t *out, int max, uintptr_t py)
{
	int ask = py ? max | MGP_UNWIND_TO_STOP : max;
	int got = mgp_unwind_mode != MGP_UNWIND_LIBUNWIND ? mgp_unwind_backtrace(out, ask) : -1;
	if (got < 0)
		return unw_backtrace((void **)out, max);
	if (mgp_unwind_mode == MGP_UNWIND_CHECK)
		mgp_unwind_check(out, got, ask, mgp_capture_conf.own_lo, mgp_capture_conf.own_hi);
	return got;
}

/* Unwinds the calling stack into b->native; returns how many frames (the probe's own included),
 * and in *ev the index of the first evaluator frame among them (the count when none, or py == 0).
 * On a thread with Python frames (py != 0) only up to that frame, when it comes in the first
 * MGP_CAPTURE_FIRST. */
static inline int mgp_capture_unwind(struct mgp_capture_buf *b, uintptr_t py, unsigned want, unsigned *ev)
{
	int all = (int)(want + MGP_CAPTURE_SLACK), got = 0;
	unsigned from = 0;
	if (py && want > MGP_CAPTURE_FIRST) {
		got = mgp_capture_backtrace(b->native, (int)MGP_CAPTURE_FIRST, py);
		*ev = mgp_python_first_evaluator(b->native, 0, got > 0 ? (unsigned)got : 0);
		if (got < (int)MGP_CAPTURE_FIRST || *ev < (unsigned)got)
			return got;
		from = (unsigned)got; /* none in the first ones: the whole stack, looked at from there */
	}
	got = mgp_capture_backtrace(b->native, all, py);
	unsigned n = got > 0 ? (unsigned)got : 0;
	*ev = py ? mgp_python_first_evaluator(b->native, from, n) : n;
	return got;
}

/* Captures the calling stack into b. Returns the stack (in b) and its number of frames in *n: at
 * most the depth or, with Python frames, twice the depth, so the Python frames above a deep
 * native library (PyTorch's dispatcher) stay while the interpreter's own frames go. */
static inline const uintptr_t *mgp_capture_stack(struct mgp_capture_buf *b, unsigned *n)
{
	const struct mgp_capture_conf *c = &mgp_capture_conf;
	int python = mgp_python_on();
	uintptr_t py = python ? mgp_python_current() : 0;
	unsigned twice = c->depth * 2 < MGC_MAX_FRAMES ? c->depth * 2 : MGC_MAX_FRAMES;
	unsigned want = python ? twice : c->depth, ev;
	int got = mgp_capture_unwind(b, py, want, &ev);
	int s = 0;
	while (s < got && b->native[s] >= c->own_lo && b->native[s] < c->own_hi)
		s++;
	unsigned k = got > s ? (unsigned)(got - s) : 0;
	b->id = mgp_unwind_stack_id; /* 0 after unw_backtrace */
	if (python) {
		ev = ev > (unsigned)s ? ev - (unsigned)s : 0; /* the probe's frames are no evaluator's */
		*n = mgp_python_merge(py, b->native + s, k, ev, b->merged, want);
		b->fixed = k < ev ? k : ev; /* as mgp_python_merge puts them first */
		b->fixed = b->fixed < *n ? b->fixed : *n;
		return b->merged;
	}
	*n = k > c->depth ? c->depth : k;
	b->fixed = *n;
	return b->native + s;
}

#endif /* MGP_CAPTURE_H */
