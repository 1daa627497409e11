/* SPDX-License-Identifier: MIT */
/* mgp_sampler.h: the sampler thread, which takes a snapshot every interval and publishes the live
 * segment's site part of each step marker's snapshot off the marker's thread. It blocks every signal
 * (the program's signals go to the program's threads), runs inside the recursion guard, and must
 * never write but through the writer lock. */
#ifndef MGP_SAMPLER_H
#define MGP_SAMPLER_H

#include <stdint.h>

/* Starts the thread (detached). When it cannot start, one line: snapshots are then taken only at
 * step markers and exit. */
void mgp_sampler_start(uint32_t interval_ms);

/* 1 when this process's sampler thread runs (and will do what a step marker leaves it). */
int mgp_sampler_alive(void);

/* Wakes the sampler thread to publish the live segment's site part that a step marker left
 * (mgp_shm_publish_pending). Call without the writer lock, which the sampler takes: one atomic
 * exchange and, when the sampler was not already woken, one futex wake. Never blocks. */
void mgp_sampler_kick(void);

#endif /* MGP_SAMPLER_H */
