/* SPDX-License-Identifier: MIT */
/* mge_mining.h: hard-example mining, the mechanism of the `late-leak` scenario.
 * From epoch MGE_MINING_EPOCH on, every step copies the full-resolution sources of its hardest
 * half of the batch into a replay buffer that grows by realloc and is never capped. */
#ifndef MGE_MINING_H
#define MGE_MINING_H

#include <stddef.h>

#include "mge_loader.h"

#define MGE_MINING_EPOCH 2   /* 0-based: the third epoch; step 101 at the default --batch 32 */

struct mge_mining {
	unsigned char *buf;   /* RGB8 images back to back */
	size_t len;           /* bytes used (== allocated: the buffer grows exactly) */
	size_t images;
};

/* Appends the n/2 highest-loss images of `b` (losses[n]) when b->epoch >= MGE_MINING_EPOCH;
 * does nothing earlier. Returns 0 or -ENOMEM. */
int mge_mining_append(struct mge_mining *m, const struct mge_batch *b, const float *losses);

void mge_mining_free(struct mge_mining *m);

#endif /* MGE_MINING_H */
