/* SPDX-License-Identifier: MIT */
/* mgp_sampler.h: the sampler thread, which takes a snapshot every interval. It blocks every signal
 * (the program's signals go to the program's threads), runs inside the recursion guard, and must
 * never write but through the writer lock. */
#ifndef MGP_SAMPLER_H
#define MGP_SAMPLER_H

#include <stdint.h>

/* Starts the thread (detached). When it cannot start, one line: snapshots are then taken only at
 * step markers and exit. */
void mgp_sampler_start(uint32_t interval_ms);

#endif /* MGP_SAMPLER_H */
