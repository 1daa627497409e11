/* SPDX-License-Identifier: MIT */
/* mgprobe.h: the step API a program calls to make training steps the x axis of its memory trace.
 * Safe to call with or without the probe: without libmgprobe.so loaded every call is a no-op
 * (the functions are weak references resolved only when the probe is preloaded).
 *
 *   #include "mgprobe.h"
 *   for (uint64_t s = 0; s < steps; s++) { mgprobe_step(s); train_one_step(); }
 *
 * From Python, with the probe preloaded: ctypes.CDLL(None).mgprobe_step(ctypes.c_uint64(s)).
 */
#ifndef MGPROBE_H
#define MGPROBE_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Marks the start of training step `step` and takes a snapshot (synchronously, on the calling
 * thread): allocations from now on are born in `step`. Steps should increase; a smaller value is
 * recorded as given. Thread-safe; not async-signal-safe. */
void mgprobe_step(uint64_t step) __attribute__((weak));

/* Labels the current phase ("validation", "checkpoint", "train"); the label holds until the next
 * call. The string is copied (at most 63 bytes kept). Thread-safe. */
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
