/* SPDX-License-Identifier: MIT */
/* mge_chain.c: the `retention` scenario's augmentation chain, run on its own thread (so in its own
 * glibc arena) while the trainer waits, inside a step. Every buffer it allocates for a batch is freed before it returns; only the per-sample records
 * (bounded by the data set size) outlive it. It must never let the live heap grow from step to step:
 * the growth the scenario shows is glibc keeping freed memory, not the program keeping it. */
#include "mge_chain.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "mge_augment.h"
#include "mge_model.h"
#include "mge_rng.h"

static int run_chain(struct mge_chain *c, struct mge_batch *b);

/* The augmentation thread: takes one batch at a time from mge_chain_apply and hands it back. */
static void *chain_main(void *arg)
{
	struct mge_chain *c = arg;

	pthread_mutex_lock(&c->lock);
	for (;;) {
		while (!c->job && !c->stop)
			pthread_cond_wait(&c->wake, &c->lock);
		if (c->stop)
			break;
		pthread_mutex_unlock(&c->lock);
		int err = run_chain(c, c->job);
		pthread_mutex_lock(&c->lock);
		c->result = err;
		c->job = NULL;
		pthread_cond_broadcast(&c->done);
	}
	pthread_mutex_unlock(&c->lock);
	return NULL;
}

int mge_chain_init(struct mge_chain *c, uint64_t seed, int count)
{
	int err;

	memset(c, 0, sizeof(*c));
	c->records = calloc((size_t)count, sizeof(void *));
	if (!c->records)
		return -ENOMEM;
	c->seed = seed;
	c->count = count;
	pthread_mutex_init(&c->lock, NULL);
	pthread_cond_init(&c->wake, NULL);
	pthread_cond_init(&c->done, NULL);
	err = -pthread_create(&c->thread, NULL, chain_main, c);
	if (err) {
		free(c->records);
		c->records = NULL;
		return err;
	}
	c->started = 1;
	return 0;
}

int mge_chain_apply(struct mge_chain *c, struct mge_batch *b)
{
	int err;

	pthread_mutex_lock(&c->lock);
	c->job = b;
	pthread_cond_broadcast(&c->wake);
	while (c->job)
		pthread_cond_wait(&c->done, &c->lock);
	err = c->result;
	pthread_mutex_unlock(&c->lock);
	return err;
}

/* Why RSS climbs: each image's record is allocated after its stage buffers, so it lands above them
 * in the heap; when the stages are freed the records pin the holes, glibc can neither coalesce them
 * into the top chunk nor trim it, and since the chain gets longer every epoch the next batch's
 * stages do not fit the old holes and extend the heap again. */
__attribute__((noinline))
static int run_chain(struct mge_chain *c, struct mge_batch *b)
{
	int stages = 2 + 2 * b->epoch < MGE_CHAIN_MAX_STAGES ? 2 + 2 * b->epoch : MGE_CHAIN_MAX_STAGES;
	size_t img = (size_t)b->h * (size_t)b->w * 3;
	float *bufs[MGE_MAX_BATCH * MGE_CHAIN_MAX_STAGES];
	int nbufs = 0, err = 0;
	struct mge_rng r;

	mge_rng_init(&r, c->seed, 0xc4a1, b->index, 0);
	for (int k = 0; k < b->n && !err; k++) {
		struct mge_crop crop = mge_augment_random_crop(&r, b->w, b->h);
		float *prev = NULL;
		unsigned char *rec;

		for (int s = 0; s < stages; s++) {
			float gain = mge_rng_range(&r, 0.97f, 1.03f), bias = mge_rng_range(&r, -0.03f, 0.03f);
			float *cur = malloc(img * sizeof(float));
			if (!cur) {
				err = -ENOMEM;
				break;
			}
			bufs[nbufs++] = cur;
			if (!prev)
				mge_augment_to_planar(b->src->pixels + (size_t)k * img, b->w, b->h, cur);
			else
				for (size_t i = 0; i < img; i++)
					cur[i] = prev[i] * gain + bias;
			prev = cur;
		}
		if (err)
			break;
		mge_augment_resample(prev, b->w, b->h, &crop, b->x->data + (size_t)k * 3 * MGE_RES * MGE_RES,
				     MGE_RES);
		rec = malloc(MGE_CHAIN_RECORD_BYTES);
		if (!rec) {
			err = -ENOMEM;
			break;
		}
		memset(rec, 0, MGE_CHAIN_RECORD_BYTES);
		memcpy(rec, &crop, sizeof(crop));
		rec[sizeof(crop)] = (unsigned char)stages;
		if (c->records[b->sample[k]])
			free(c->records[b->sample[k]]);
		else
			c->records_live++;
		c->records[b->sample[k]] = rec;
	}
	for (int i = 0; i < nbufs; i++)
		free(bufs[i]);
	return err;
}

void mge_chain_free(struct mge_chain *c)
{
	if (c->started) {
		pthread_mutex_lock(&c->lock);
		c->stop = 1;
		pthread_cond_broadcast(&c->wake);
		pthread_mutex_unlock(&c->lock);
		pthread_join(c->thread, NULL);
		pthread_mutex_destroy(&c->lock);
		pthread_cond_destroy(&c->wake);
		pthread_cond_destroy(&c->done);
	}
	if (c->records)
		for (int i = 0; i < c->count; i++)
			free(c->records[i]);
	free(c->records);
	memset(c, 0, sizeof(*c));
}
