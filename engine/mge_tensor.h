/* SPDX-License-Identifier: MIT */
/* mge_tensor.h: float tensors served by a caching allocator with size-class pools, as PyTorch's.
 * A freed tensor's block goes back to its pool's free list for its size class and is never returned
 * to malloc while the pool lives: pools grow while new sizes appear and are reused afterwards. */
#ifndef MGE_TENSOR_H
#define MGE_TENSOR_H

#include <stddef.h>
#include <stdint.h>

struct mge_pool;

struct mge_tensor {
	float *data;     /* numel floats (or int32 values: see mge_tensor_i32), malloc-aligned */
	size_t numel;
	int ndim;
	int dims[4];
};

struct mge_pool_stats {
	size_t reserved_bytes;   /* bytes of all blocks the pool got from malloc */
	size_t in_use_bytes;     /* class bytes of the blocks held by live tensors */
	size_t live_tensors;     /* tensors allocated and not yet freed */
	size_t blocks;           /* blocks ever malloc'd (the pool never frees one before destroy) */
	size_t classes;          /* distinct size classes seen */
};

/* Creates an empty pool; `name` (static storage) labels it in messages. NULL + errno on failure. */
struct mge_pool *mge_pool_new(const char *name);

/* Frees the pool and every cached block. Live tensors must have been freed first; returns -EBUSY
 * (and frees nothing) when some are still live. Not thread-safe against concurrent use. */
int mge_pool_destroy(struct mge_pool *p);

/* Snapshot of the counters. Thread-safe. */
void mge_pool_stats(struct mge_pool *p, struct mge_pool_stats *st);

/* The size class a request of `bytes` is served from: 4 classes per power of two up to 1 MiB,
 * whole MiB above. */
size_t mge_pool_class_bytes(size_t bytes);

/* A tensor of the given shape (1..4 dims, each > 0) with uninitialised data, from pool `p`.
 * NULL + errno (ENOMEM, EINVAL) on failure. Thread-safe. */
struct mge_tensor *mge_tensor_new(struct mge_pool *p, int ndim, const int *dims);

/* Same, zero-filled. */
struct mge_tensor *mge_tensor_zeros(struct mge_pool *p, int ndim, const int *dims);

/* Returns t's block to the pool it came from (from any thread). NULL is ignored. */
void mge_tensor_free(struct mge_tensor *t);

/* The data viewed as int32 (same size as float), for indices such as max-pool argmaxes. */
static inline int32_t *mge_tensor_i32(struct mge_tensor *t)
{
	return (int32_t *)(void *)t->data;
}

#endif /* MGE_TENSOR_H */
