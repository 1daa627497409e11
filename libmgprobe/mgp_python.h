/* SPDX-License-Identifier: MIT */
/* mgp_python.h: Python frames in the probe's stacks. In a CPython 3.11, 3.12 or 3.13 process the
 * hook reads the calling thread's own frame chain (no GIL, no Python API: only that thread
 * changes it, and its frames hold their code objects) and puts Python frames (code object id,
 * instruction offset: mgc_pyframe_make) in place of the interpreter's native frames. Everything
 * here is allocation-free, lock-free on the fast path, bounded and validated; anything unexpected
 * falls back to native frames with one notice for the trace. Never calls malloc, stdio or dlsym
 * after start-up. */
#ifndef MGP_PYTHON_H
#define MGP_PYTHON_H

#include <stddef.h>
#include <stdint.h>

/* At start-up (single-threaded, dlsym allowed): finds a supported interpreter in the process
 * and reserves the code registry. `enabled` 0 turns Python frames off. Returns 1 when Python
 * frames are on, 0 when off (no interpreter, turned off, or an unsupported one: then a notice is
 * pending). */
int mgp_python_init(int enabled);

/* 1 while Python frames are being read. */
int mgp_python_on(void);

/* The interpreter's minor version (11, 12, 13) while Python frames are on. */
unsigned mgp_python_minor(void);

/* The calling thread's innermost Python frame, 0 when it has none (or Python frames are off).
 * Hook-safe. */
uintptr_t mgp_python_current(void);

/* The interpreter's frame evaluator: return addresses in (lo, hi] are its frames (0, 0 while
 * Python frames are off). */
void mgp_python_evaluator(uintptr_t *lo, uintptr_t *hi);

/* The index of the first of ips[from..n) in the interpreter's frame evaluator (a native frame
 * that runs Python frames); n when none is. */
unsigned mgp_python_first_evaluator(const uintptr_t *ips, unsigned from, unsigned n);

/* Merges the native stack ips[0..n) (innermost first, probe frames removed) with the Python frames
 * from `cur` (mgp_python_current) into out (at most cap frames); returns how many. `ev` is the
 * index of the first frame in the frame evaluator (mgp_python_first_evaluator; n when none, as
 * when cur is 0): the native frames before it stay (c10::alloc_cpu, libffi); then come all
 * the thread's Python frames, and nothing after them: the native frames between and around Python
 * frames are left out (the interpreter's own, and the rare other module's, such as a C extension
 * calling back into Python), so the native stack need only be unwound up to the first evaluator
 * frame. With cur 0 it copies the native stack. Hook-safe: no malloc, no locks (but a mutex the
 * first time a code object is seen), no I/O. */
unsigned mgp_python_merge(uintptr_t cur, const uintptr_t *ips, unsigned n, unsigned ev, uintptr_t *out,
			  unsigned cap);

/* A notice for the trace about Python frames (turned off, or an interpreter that is not
 * supported), copied into buf once; 1 when there was one. Writer lock held. */
int mgp_python_take_notice(char *buf, size_t cap);

#endif /* MGP_PYTHON_H */
