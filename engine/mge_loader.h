/* SPDX-License-Identifier: MIT */
/* mge_loader.h: the data pipeline: a sampler, loader threads that decode, augment and collate
 * batches, and a bounded prefetch queue that hands them to the trainer in order.
 * Batch b's content depends only on the seed and b, never on which thread made it. */
#ifndef MGE_LOADER_H
#define MGE_LOADER_H

#include <stdatomic.h>
#include <stdint.h>

#include "mge_dataset.h"
#include "mge_options.h"
#include "mge_tensor.h"

#define MGE_MAX_BATCH 64
#define MGE_PREFETCH 4       /* batches in flight: queued or being made */

/* A batch's decoded source images (one malloc: this header then n * h * w * 3 RGB8 bytes).
 * Reference-counted: the batch holds one reference, and whoever else keeps the pixels another. */
struct mge_images {
	atomic_int refs;
	int n, h, w;
	uint8_t pixels[];
};

struct mge_batch {
	uint64_t index;             /* 0-based batch number: training step index + 1 */
	int epoch;                  /* 0-based */
	int n, h, w;                /* images, and their source size (all equal within a batch) */
	struct mge_tensor *x;       /* [n, 3, MGE_RES, MGE_RES] augmented crops, normalised
	                               (retention: unfilled, the trainer's chain makes them) */
	struct mge_images *src;     /* the decoded sources (one reference) */
	int labels[MGE_MAX_BATCH];
	int sample[MGE_MAX_BATCH];  /* data set index of each image */
};

struct mge_loader_config {
	const struct mge_dataset *ds;
	int batch;                  /* 1..MGE_MAX_BATCH, at most MGE_PER_SHAPE */
	int threads;
	uint64_t seed;
	uint64_t batches;           /* how many batches to make in all */
	enum mge_scenario scenario; /* leak keeps every decoded batch; retention leaves x unfilled */
};

struct mge_loader_stats {
	size_t pool_reserved_bytes; /* sum over the workers' caching pools */
	size_t history_bytes;       /* decoded batches the collator still references (leak) */
};

struct mge_loader;

/* Starts cfg->threads loader threads. Returns 0 or -errno; *out is NULL on failure. */
int mge_loader_start(struct mge_loader **out, const struct mge_loader_config *cfg);

/* Blocks for the next batch in order. 0, -ENODATA after the last, or -errno if a worker failed.
 * The caller owns the batch and gives it back with mge_batch_release. Trainer thread only. */
int mge_loader_next(struct mge_loader *l, struct mge_batch **out);

/* Batches per epoch (the sampler drops each source size's incomplete last batch). */
int mge_loader_batches_per_epoch(const struct mge_loader *l);

/* Counters for the log and the docs. Thread-safe enough for logging (values may be a batch old). */
void mge_loader_stats(struct mge_loader *l, struct mge_loader_stats *st);

/* Stops and joins the threads and frees everything, queued batches included. NULL is ignored. */
void mge_loader_stop(struct mge_loader *l);

/* Frees a batch: its crops go back to their pool, its reference on the sources is dropped. */
void mge_batch_release(struct mge_batch *b);

/* Takes and drops a reference on decoded sources; the last drop frees them. */
void mge_images_ref(struct mge_images *im);
void mge_images_unref(struct mge_images *im);

#endif /* MGE_LOADER_H */
