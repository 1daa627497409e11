/* SPDX-License-Identifier: MIT */
/* mge_chain.h: the trainer-side augmentation chain of the `retention` scenario (colour jitter on
 * the full-resolution sources, then the crop), with one augmentation record kept per sample.
 * Its memory is all plain malloc: what glibc keeps after the frees is the scenario's point. */
#ifndef MGE_CHAIN_H
#define MGE_CHAIN_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "mge_loader.h"

#define MGE_CHAIN_MAX_STAGES 12
#define MGE_CHAIN_RECORD_BYTES 2048   /* above glibc's tcache sizes, so records stay where made */

struct mge_chain {
	pthread_t thread;    /* the augmentation thread: its malloc arena is the one that retains */
	pthread_mutex_t lock;
	pthread_cond_t wake, done;
	struct mge_batch *job;
	int result, stop, started;
	uint64_t seed;
	void **records;      /* per data set index: the parameters of its last augmentation */
	int count;
	size_t records_live;
};

/* Starts the augmentation thread. 0 or -errno. `count` is the data set's size. */
int mge_chain_init(struct mge_chain *c, uint64_t seed, int count);

/* Makes b->x from b->src: per image, 2 + 2 * epoch stages (at most MGE_CHAIN_MAX_STAGES) of colour
 * jitter, each a new full-resolution float image, all alive until the batch is done; then the random
 * resized crop of the last stage. Replaces each image's record. Runs on the augmentation thread and
 * returns when it is done (the step waits, as for a device stream). Returns 0 or -ENOMEM. */
int mge_chain_apply(struct mge_chain *c, struct mge_batch *b);

void mge_chain_free(struct mge_chain *c);

#endif /* MGE_CHAIN_H */
