/* SPDX-License-Identifier: MIT */
/* mgprobe.h: the step API a program calls to make training steps the x axis of its memory trace.
 * Safe to call with or without the probe: without libmgprobe.so loaded every call is a no-op
 * (the functions are weak references, resolved only when the probe is preloaded).
 *
 *   #include "mgprobe.h"
 *   for (uint64_t s = 0; s < steps; s++) { mgprobe_step(s); train_one_step(); }
 *
 * From Python, with the probe preloaded: ctypes.CDLL(None).mgprobe_step(ctypes.c_uint64(s)).
 *
 * What weak references can and cannot do (tests/probe/test_weak.py runs each case):
 * - A position-independent program (PIE, Debian's and most distributions' default) or shared
 *   library: the dynamic loader resolves the references when it loads the caller, against the
 *   preloaded probe. That holds for a library loaded later with dlopen too.
 * - A program built without -fPIE/-pie (non-PIE, e.g. -fno-pie -no-pie): the linker resolves
 *   undefined weak references to 0 when it links the program, for good, so every call stays a
 *   no-op even under the probe: allocations are traced, steps and labels are not. Build it as
 *   PIE, or look the functions up at run time: dlsym(RTLD_DEFAULT, "mgprobe_step").
 * - A statically linked program has no dynamic loader, so nothing loads the probe into it: the
 *   calls are no-ops and nothing is traced (`mgprobe run` says so in one line).
 * - The probe must be preloaded (LD_PRELOAD or `mgprobe run`): a dlopen of libmgprobe.so by the
 *   program itself comes too late to interpose malloc and to satisfy references already bound.
 */
#ifndef MGPROBE_H
#define MGPROBE_H

#include <stdint.h>

/* The version of mg this header comes with (`mgprobe --version` prints the same). The functions
 * below exist since 0.1.0. */
#define MGPROBE_VERSION_MAJOR 0
#define MGPROBE_VERSION_MINOR 1
#define MGPROBE_VERSION_PATCH 0
#define MGPROBE_VERSION_HEX                                                                       \
	((MGPROBE_VERSION_MAJOR << 16) | (MGPROBE_VERSION_MINOR << 8) | MGPROBE_VERSION_PATCH)

#ifdef __cplusplus
extern "C" {
#endif

/* Marks the start of training step `step` and takes a snapshot (synchronously, on the calling
 * thread): allocations from now on are born in `step`. Steps should increase; a smaller value is
 * recorded as given. Thread-safe; not async-signal-safe. */
void mgprobe_step(uint64_t step) __attribute__((weak));

/* Labels the current phase ("validation", "checkpoint", "train"); the label holds until the next
 * call. The string is copied (at most 31 bytes kept). Thread-safe. */
void mgprobe_label(const char *label) __attribute__((weak));

/* Takes a snapshot now, outside the sampler's interval. Thread-safe. */
void mgprobe_snapshot(void) __attribute__((weak));

/* Returns 1 when the probe is loaded and recording, else 0. */
int mgprobe_active(void) __attribute__((weak));

#ifdef __cplusplus
}
#endif

/* Without the probe the weak references are null: these wrappers make every call a no-op then.
 * A function-like macro does not expand inside its own body, so the inner call is the function. */
#ifndef MGPROBE_BUILDING_PROBE
#define mgprobe_step(s) (mgprobe_step ? mgprobe_step(s) : (void)0)
#define mgprobe_label(l) (mgprobe_label ? mgprobe_label(l) : (void)0)
#define mgprobe_snapshot() (mgprobe_snapshot ? mgprobe_snapshot() : (void)0)
#define mgprobe_active() (mgprobe_active ? mgprobe_active() : 0)
#endif

#endif /* MGPROBE_H */
