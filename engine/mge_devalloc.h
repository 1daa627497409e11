/* SPDX-License-Identifier: MIT */
/* mge_devalloc.h: mgtrain's device caching allocator, shaped like PyTorch's CUDACachingAllocator:
 * blocks carved out of segments that a backend reserves (cudaMalloc on the GPU, malloc in the unit
 * tests), kept cached when freed and handed back only on mge_devalloc_empty_cache or destroy.
 * It must be exact (the same request sequence always gives the same segments) and never touch the
 * memory it hands out, which may be device memory. */
#ifndef MGE_DEVALLOC_H
#define MGE_DEVALLOC_H

#include <stddef.h>

#define MGE_DEVALLOC_MIN_BLOCK ((size_t)512)                 /* requests are rounded up to it */
#define MGE_DEVALLOC_SMALL_SIZE ((size_t)1 << 20)            /* <= 1 MiB: the small pool */
#define MGE_DEVALLOC_SMALL_SEGMENT ((size_t)2 << 20)         /* small pool's segments */
#define MGE_DEVALLOC_LARGE_SEGMENT ((size_t)20 << 20)        /* large pool's segments ... */
#define MGE_DEVALLOC_MIN_LARGE_ALLOC ((size_t)10 << 20)      /* ... for requests below 10 MiB; */
#define MGE_DEVALLOC_ROUND_LARGE ((size_t)2 << 20)           /* above, the request rounded to 2 MiB */

/* Where segments come from. segment_alloc returns 0 and the segment's base in *out, or -ENOMEM;
 * segment_free gives back exactly what segment_alloc returned. Neither is called concurrently. */
struct mge_devalloc_backend {
	const char *name;
	int (*segment_alloc)(void *ctx, size_t bytes, void **out);
	void (*segment_free)(void *ctx, void *base, size_t bytes);
	void *ctx;
};

/* Host memory (malloc/free): the allocator's logic tested on machines without a GPU. */
extern const struct mge_devalloc_backend mge_devalloc_host_backend;

/* A block handed out. Valid until mge_devalloc_free (or destroy); the caller never writes it. */
struct mge_devbuf {
	void *ptr;    /* segment base + offset: device memory with the CUDA backend */
	size_t size;  /* bytes the block spans: the rounded request, or more when the rest of the
	                 block it came from was too small to split off */
};

struct mge_devalloc_stats {
	size_t segments;          /* segments held now */
	size_t reserved_bytes;    /* their bytes (PyTorch's "reserved") */
	size_t allocated_bytes;   /* bytes of the blocks handed out and not freed ("allocated") */
	size_t peak_reserved_bytes;
	size_t peak_allocated_bytes;
	size_t active_blocks;     /* blocks handed out and not freed */
	size_t cached_blocks;     /* free blocks kept in the segments */
	size_t segment_allocs;    /* segment_alloc calls that succeeded, ever */
	size_t segment_frees;     /* segment_free calls, ever */
};

struct mge_devalloc;

/* A new, empty allocator over `be` (copied). NULL + errno on failure. */
struct mge_devalloc *mge_devalloc_new(const struct mge_devalloc_backend *be);

/* Gives every segment back to the backend and frees the allocator; blocks still handed out become
 * invalid. NULL is ignored. */
void mge_devalloc_destroy(struct mge_devalloc *a);

/* A block of at least `bytes` (rounded up to MGE_DEVALLOC_MIN_BLOCK; 0 counts as 1): the smallest
 * cached free block of its pool that fits (oldest segment, lowest offset first among equals), split
 * when what is left is worth a block of its own (>= 512 B in the small pool, > 1 MiB in the large
 * one); otherwise a new segment. When the backend refuses a segment the cache is emptied and the
 * request tried once more. Returns 0 and *out, or -ENOMEM. One thread at a time. */
int mge_devalloc_alloc(struct mge_devalloc *a, size_t bytes, struct mge_devbuf **out);

/* Returns a block to the cache, merging it with free neighbours of its segment. The segment stays
 * reserved. NULL is ignored. */
void mge_devalloc_free(struct mge_devalloc *a, struct mge_devbuf *b);

/* Gives back every segment that holds no live block (PyTorch's empty_cache). Returns how many. */
size_t mge_devalloc_empty_cache(struct mge_devalloc *a);

void mge_devalloc_stats(const struct mge_devalloc *a, struct mge_devalloc_stats *st);

/* The block size a request of `bytes` is rounded to. */
size_t mge_devalloc_round(size_t bytes);

/* The size of the segment a request of `bytes` would reserve when no cached block fits it. */
size_t mge_devalloc_segment_bytes(size_t bytes);

#endif /* MGE_DEVALLOC_H */
