/* SPDX-License-Identifier: MIT */
/* mge_loader.c: sampler, loader threads (decode -> augment -> collate) and the prefetch queue.
 * The `leak` scenario lives here (mge_collate_batch keeps every decoded batch). Nothing here may
 * make a batch's content depend on thread timing. */
#include "mge_loader.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "mge_augment.h"
#include "mge_model.h"
#include "mge_png.h"
#include "mge_rng.h"

struct worker {
	struct mge_loader *l;
	pthread_t tid;
	int id;
	int started;
	struct mge_pool *pool;          /* this worker's caching allocator (a worker process's, in PyTorch) */
	struct mge_images **history;    /* leak: every batch this worker decoded, never evicted */
	size_t history_len, history_cap;
	size_t history_bytes;
};

struct mge_loader {
	struct mge_loader_config cfg;
	int per_shape_batches;          /* batches per source size per epoch */
	int batches_per_epoch;
	int shape_order[MGE_SHAPES];    /* source sizes by area, smallest first (epoch 0's curriculum) */
	pthread_mutex_t lock;
	pthread_cond_t produced, consumed;
	struct mge_batch *slots[MGE_PREFETCH];
	uint64_t next;                  /* next batch the trainer takes */
	int stop;
	int error;                      /* first worker error (-errno), 0 if none */
	struct worker *workers;
};

void mge_images_ref(struct mge_images *im)
{
	atomic_fetch_add(&im->refs, 1);
}

void mge_images_unref(struct mge_images *im)
{
	if (im && atomic_fetch_sub(&im->refs, 1) == 1)
		free(im);
}

void mge_batch_release(struct mge_batch *b)
{
	if (!b)
		return;
	mge_tensor_free(b->x);
	mge_images_unref(b->src);
	free(b);
}

int mge_loader_batches_per_epoch(const struct mge_loader *l)
{
	return l->batches_per_epoch;
}

/* The sampler. Each batch holds images of one source size (bucketing, as detection and
 * multi-resolution pipelines do). Epoch 0 visits the sizes smallest first (a size curriculum), so
 * the allocator meets every size during epoch 0 and never a new one after; later epochs shuffle. */
static void plan_batch(const struct mge_loader *l, uint64_t index, int *sample, int *epoch_out)
{
	int bpe = l->batches_per_epoch, B = l->cfg.batch;
	uint64_t epoch = index / (uint64_t)bpe;
	int j = (int)(index % (uint64_t)bpe);
	int order[MGE_SHAPES * MGE_PER_SHAPE];
	int shape, q, k[MGE_PER_SHAPE];
	struct mge_rng r;

	if (epoch == 0) {
		shape = l->shape_order[j / l->per_shape_batches];
		q = j % l->per_shape_batches;
	} else {
		for (int i = 0; i < bpe; i++)
			order[i] = i;
		mge_rng_init(&r, l->cfg.seed, 0x5a3b, epoch, 0);
		mge_rng_shuffle(&r, order, bpe);
		shape = order[j] / l->per_shape_batches;
		q = order[j] % l->per_shape_batches;
	}
	/* Within a size, a fresh permutation of its images every epoch. */
	for (int i = 0; i < MGE_PER_SHAPE; i++)
		k[i] = i;
	mge_rng_init(&r, l->cfg.seed, 0x5a3c, epoch, (uint64_t)shape);
	mge_rng_shuffle(&r, k, MGE_PER_SHAPE);
	for (int t = 0; t < B; t++)
		sample[t] = shape + MGE_SHAPES * k[q * B + t];
	*epoch_out = (int)epoch;
}

/* The usual path: the full-resolution float batch is a pooled tensor ([n, 3, h, w], one size class
 * per source size), freed back to this worker's pool once the crops are made. */
static int augment_pooled(struct worker *w, const struct mge_images *src, struct mge_rng *r,
			  struct mge_tensor *x)
{
	int dims[4] = { src->n, 3, src->h, src->w };
	struct mge_tensor *full = mge_tensor_new(w->pool, 4, dims);
	size_t img = (size_t)src->h * (size_t)src->w * 3;

	if (!full)
		return -ENOMEM;
	for (int k = 0; k < src->n; k++) {
		float *f = full->data + (size_t)k * img;
		struct mge_crop c = mge_augment_random_crop(r, src->w, src->h);
		mge_augment_to_planar(src->pixels + (size_t)k * img, src->w, src->h, f);
		mge_augment_resample(f, src->w, src->h, &c, x->data + (size_t)k * 3 * MGE_RES * MGE_RES, MGE_RES);
	}
	mge_tensor_free(full);
	return 0;
}

/* leak: the collator keeps a reference to every batch it decodes, in a history that nothing ever
 * evicts. The batch itself is released by the trainer as usual, so the trainer's tensor count stays
 * flat; the decoded sources (malloc'd in mge_collate_batch) stay alive, one batch per step. */
static int history_keep(struct worker *w, struct mge_images *src)
{
	if (w->history_len == w->history_cap) {
		size_t cap = w->history_cap ? w->history_cap * 2 : 64;
		struct mge_images **h = realloc(w->history, cap * sizeof(*h));
		if (!h)
			return -ENOMEM;
		w->history = h;
		w->history_cap = cap;
	}
	mge_images_ref(src);
	w->history[w->history_len++] = src;
	w->history_bytes += sizeof(*src) + (size_t)src->n * (size_t)src->h * (size_t)src->w * 3;
	return 0;
}

/* Makes batch `index`: decode its PNGs into one malloc'd buffer, augment (random resized crop,
 * flip) and collate the crops into a [n, 3, R, R] tensor from this worker's pool. */
/* noinline: the function must be a frame of its own in every call stack, so that a memory
 * profiler names it as the leaking site of the `leak` scenario. */
__attribute__((noinline))
static int mge_collate_batch(struct worker *w, uint64_t index, struct mge_batch **out)
{
	const struct mge_loader *l = w->l;
	const struct mge_dataset *ds = l->cfg.ds;
	int n = l->cfg.batch, epoch, err;
	int sample[MGE_MAX_BATCH];
	int xdims[4] = { n, 3, MGE_RES, MGE_RES };
	struct mge_images *src;
	struct mge_batch *b;
	struct mge_rng r;
	size_t img;

	plan_batch(l, index, sample, &epoch);
	img = (size_t)ds->images[sample[0]].h * (size_t)ds->images[sample[0]].w * 3;
	/* The decoded sources of the whole batch: the allocation the `leak` scenario never frees. */
	src = malloc(sizeof(*src) + (size_t)n * img);
	if (!src)
		return -ENOMEM;
	atomic_init(&src->refs, 1);
	src->n = n;
	src->h = ds->images[sample[0]].h;
	src->w = ds->images[sample[0]].w;
	for (int k = 0; k < n; k++) {
		const struct mge_image *im = &ds->images[sample[k]];
		err = mge_png_decode(im->png, im->png_len, src->pixels + (size_t)k * img, src->w, src->h);
		if (err) {
			free(src);
			return err;
		}
	}
	b = calloc(1, sizeof(*b));
	if (!b) {
		free(src);
		return -ENOMEM;
	}
	b->x = mge_tensor_new(w->pool, 4, xdims);
	if (!b->x) {
		free(b);
		free(src);
		return -ENOMEM;
	}
	mge_rng_init(&r, l->cfg.seed, 0xa067, index, 0);
	/* retention: the trainer makes the crops itself, through its augmentation chain (mge_chain.c). */
	err = l->cfg.scenario == MGE_SCENARIO_RETENTION ? 0 : augment_pooled(w, src, &r, b->x);
	if (!err && l->cfg.scenario == MGE_SCENARIO_LEAK)
		err = history_keep(w, src);
	if (err) {
		mge_tensor_free(b->x);
		free(b);
		free(src);
		return err;
	}
	b->index = index;
	b->epoch = epoch;
	b->n = n;
	b->h = src->h;
	b->w = src->w;
	b->src = src;
	for (int k = 0; k < n; k++) {
		b->sample[k] = sample[k];
		b->labels[k] = ds->images[sample[k]].label;
	}
	*out = b;
	return 0;
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct mge_loader *l = w->l;

	/* Batch b is made by worker b % threads: which thread makes a batch never varies. */
	for (uint64_t b = (uint64_t)w->id; b < l->cfg.batches; b += (uint64_t)l->cfg.threads) {
		struct mge_batch *batch = NULL;
		int err;

		pthread_mutex_lock(&l->lock);
		while (!l->stop && b >= l->next + MGE_PREFETCH)
			pthread_cond_wait(&l->consumed, &l->lock);
		pthread_mutex_unlock(&l->lock);
		if (l->stop)
			break;
		err = mge_collate_batch(w, b, &batch);
		pthread_mutex_lock(&l->lock);
		if (err) {
			if (!l->error)
				l->error = err;
		} else if (l->stop) {
			mge_batch_release(batch);
		} else {
			l->slots[b % MGE_PREFETCH] = batch;
		}
		pthread_cond_broadcast(&l->produced);
		pthread_mutex_unlock(&l->lock);
		if (err)
			break;
	}
	return NULL;
}

int mge_loader_next(struct mge_loader *l, struct mge_batch **out)
{
	struct mge_batch *b;
	int err = 0;

	*out = NULL;
	if (l->next >= l->cfg.batches)
		return -ENODATA;
	pthread_mutex_lock(&l->lock);
	for (;;) {
		b = l->slots[l->next % MGE_PREFETCH];
		if (b && b->index == l->next)
			break;
		if (l->error) {
			err = l->error;
			break;
		}
		pthread_cond_wait(&l->produced, &l->lock);
	}
	if (!err) {
		l->slots[l->next % MGE_PREFETCH] = NULL;
		l->next++;
		*out = b;
		pthread_cond_broadcast(&l->consumed);
	}
	pthread_mutex_unlock(&l->lock);
	return err;
}

/* Source sizes ordered by area, then index: epoch 0's curriculum. Insertion sort of 25. */
static void sort_shapes_by_area(const struct mge_dataset *ds, int *order)
{
	for (int i = 0; i < MGE_SHAPES; i++) {
		int s = i, j = i;
		long a = (long)ds->sides[s / MGE_SIDES] * ds->sides[s % MGE_SIDES];
		while (j > 0) {
			int p = order[j - 1];
			long ap = (long)ds->sides[p / MGE_SIDES] * ds->sides[p % MGE_SIDES];
			if (ap <= a)
				break;
			order[j] = p;
			j--;
		}
		order[j] = s;
	}
}

int mge_loader_start(struct mge_loader **out, const struct mge_loader_config *cfg)
{
	struct mge_loader *l;
	int err = 0;

	*out = NULL;
	if (cfg->batch < 1 || cfg->batch > MGE_MAX_BATCH || cfg->batch > MGE_PER_SHAPE ||
	    cfg->threads < 1 || cfg->ds->count != MGE_SHAPES * MGE_PER_SHAPE)
		return -EINVAL;
	l = calloc(1, sizeof(*l));
	if (!l)
		return -ENOMEM;
	l->cfg = *cfg;
	l->per_shape_batches = MGE_PER_SHAPE / cfg->batch;
	l->batches_per_epoch = MGE_SHAPES * l->per_shape_batches;
	sort_shapes_by_area(cfg->ds, l->shape_order);
	pthread_mutex_init(&l->lock, NULL);
	pthread_cond_init(&l->produced, NULL);
	pthread_cond_init(&l->consumed, NULL);
	l->workers = calloc((size_t)cfg->threads, sizeof(*l->workers));
	if (!l->workers) {
		mge_loader_stop(l);
		return -ENOMEM;
	}
	for (int i = 0; i < cfg->threads; i++) {
		struct worker *w = &l->workers[i];
		w->l = l;
		w->id = i;
		w->pool = mge_pool_new("loader");
		if (!w->pool) {
			err = -ENOMEM;
			break;
		}
	}
	for (int i = 0; i < cfg->threads && !err; i++) {
		err = -pthread_create(&l->workers[i].tid, NULL, worker_main, &l->workers[i]);
		l->workers[i].started = !err;
	}
	if (err) {
		mge_loader_stop(l);
		return err;
	}
	*out = l;
	return 0;
}

void mge_loader_stats(struct mge_loader *l, struct mge_loader_stats *st)
{
	memset(st, 0, sizeof(*st));
	for (int i = 0; i < l->cfg.threads; i++) {
		struct mge_pool_stats ps;
		mge_pool_stats(l->workers[i].pool, &ps);
		st->pool_reserved_bytes += ps.reserved_bytes;
		st->history_bytes += l->workers[i].history_bytes;
	}
}

void mge_loader_stop(struct mge_loader *l)
{
	if (!l)
		return;
	pthread_mutex_lock(&l->lock);
	l->stop = 1;
	pthread_cond_broadcast(&l->consumed);
	pthread_cond_broadcast(&l->produced);
	pthread_mutex_unlock(&l->lock);
	for (int i = 0; l->workers && i < l->cfg.threads; i++)
		if (l->workers[i].started)
			pthread_join(l->workers[i].tid, NULL);
	for (int i = 0; i < MGE_PREFETCH; i++)
		mge_batch_release(l->slots[i]);
	for (int i = 0; l->workers && i < l->cfg.threads; i++) {
		struct worker *w = &l->workers[i];
		for (size_t k = 0; k < w->history_len; k++)
			mge_images_unref(w->history[k]);
		free(w->history);
		mge_pool_destroy(w->pool);
	}
	free(l->workers);
	pthread_cond_destroy(&l->produced);
	pthread_cond_destroy(&l->consumed);
	pthread_mutex_destroy(&l->lock);
	free(l);
}
