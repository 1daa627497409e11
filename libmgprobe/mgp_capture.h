/* SPDX-License-Identifier: MIT */
/* mgp_capture.h: the calling stack of an allocation, as return addresses, innermost first, with the
 * probe's own frames left out. The first step of recording (capture -> intern -> live table ->
 * counters): what makes a site. Runs inside the hooks: never malloc, stdio or a lock of ours.
 * Inline, because every frame of the probe between the program and unw_backtrace is one more frame
 * to unwind on every allocation. */
#ifndef MGP_CAPTURE_H
#define MGP_CAPTURE_H

#include <stdint.h>

#define UNW_LOCAL_ONLY
#include <libunwind.h>

#include "mgc_format.h"

/* Frames captured beyond the depth, to cover the probe's own (dropped). */
#define MGP_CAPTURE_SLACK 16u

/* What a capture buffer must hold. */
#define MGP_CAPTURE_MAX (MGC_MAX_FRAMES + MGP_CAPTURE_SLACK)

/* Set once by mgp_capture_init, read-only after. */
extern struct mgp_capture_conf {
	unsigned depth;
	uintptr_t own_lo, own_hi; /* the probe's own text: frames in it are not the program's */
} mgp_capture_conf;

/* Sets the depth kept (1..MGC_MAX_FRAMES) and finds the probe's own code, whose frames are left
 * out. Call once at start-up, before recording. */
void mgp_capture_init(unsigned depth);

/* Captures the calling stack into buf (MGP_CAPTURE_MAX entries). Returns where the caller's frames
 * start in buf, and their number (at most the depth) in *n. */
static inline const uintptr_t *mgp_capture_stack(uintptr_t *buf, unsigned *n)
{
	const struct mgp_capture_conf *c = &mgp_capture_conf;
	int got = unw_backtrace((void **)buf, (int)(c->depth + MGP_CAPTURE_SLACK));
	int s = 0;
	while (s < got && buf[s] >= c->own_lo && buf[s] < c->own_hi)
		s++;
	unsigned k = got > s ? (unsigned)(got - s) : 0;
	*n = k > c->depth ? c->depth : k;
	return buf + s;
}

#endif /* MGP_CAPTURE_H */
