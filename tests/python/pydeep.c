/* SPDX-License-Identifier: MIT */
/* pydeep.c: a native library for tests/python's "deep" mode, called from Python through ctypes: it
 * allocates below `depth` frames of its own, so the first frame of the interpreter's frame evaluator
 * lies deeper than the probe's first unwind reaches (mgp_capture.h, MGP_CAPTURE_FIRST). Nothing
 * else; it never frees what it returns. */
#include <stdlib.h>
#include <string.h>

void *pydeep_alloc(int depth, size_t n);

/* n touched bytes, allocated under depth + 1 frames of this function. */
__attribute__((noinline, visibility("default"))) void *pydeep_alloc(int depth, size_t n)
{
	if (depth > 0) {
		void *p = pydeep_alloc(depth - 1, n);
		__asm__ volatile("" ::: "memory"); /* no tail call: keep the frame */
		return p;
	}
	void *p = malloc(n);
	if (p)
		memset(p, 1, n);
	return p;
}
