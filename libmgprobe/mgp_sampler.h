/* SPDX-License-Identifier: MIT */
/* mgp_sampler.h: the sampler thread, which takes a snapshot every interval and publishes the live
 * segment's site part of each step marker's snapshot off the marker's thread. It blocks every
 * signal (the program's signals go to the program's threads), runs inside the recursion guard, and
 * must never write but through the writer lock. */
#ifndef MGP_SAMPLER_H
#define MGP_SAMPLER_H

#include <stdint.h>

/* Starts the thread (detached). When it cannot start, one line: snapshots are then taken only at
 * step markers and exit. */
void mgp_sampler_start(uint32_t interval_ms);

/* 1 when this process's sampler thread runs (and will do what a step marker leaves it). */
int mgp_sampler_alive(void);

/* Tells the sampler thread that a step marker left the live segment's site part
 * (mgp_shm_publish_pending): it does it within 5 ms while markers come (it polls for a second
 * after each; within 100 ms after a pause). One atomic store: no wake-up call, which on a busy
 * machine put the program's thread behind the sampler for up to a scheduler slice (6 to 22 ms
 * seen at load 11 on 2 CPUs). Never blocks. */
void mgp_sampler_kick(void);

#endif /* MGP_SAMPLER_H */
