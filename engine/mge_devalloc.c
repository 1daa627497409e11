/* SPDX-License-Identifier: MIT */
/* mge_devalloc.c: the device caching allocator (segments split into blocks, best fit, coalescing on
 * free, nothing given back before empty_cache). Its bookkeeping lives in host memory only: it must
 * never read or write the segments themselves, which are device memory under the CUDA backend. */
#include "mge_devalloc.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

struct segment;

struct block {
	struct mge_devbuf buf;       /* first: a devbuf pointer is a block pointer */
	struct segment *seg;
	size_t offset;
	int free;
	struct block *prev, *next;   /* neighbours in the segment, by offset */
};

struct segment {
	void *base;
	size_t size;
	int small;                   /* of the small pool (requests <= 1 MiB) */
	struct block *first;
	struct segment *next;        /* segments oldest first */
};

struct mge_devalloc {
	struct mge_devalloc_backend be;
	struct segment *segs, *last;
	struct mge_devalloc_stats st;
};

static int host_segment_alloc(void *ctx, size_t bytes, void **out)
{
	*out = malloc(bytes);
	return *out ? 0 : -ENOMEM;
}

static void host_segment_free(void *ctx, void *base, size_t bytes)
{
	free(base);
}

const struct mge_devalloc_backend mge_devalloc_host_backend = {
	.name = "host", .segment_alloc = host_segment_alloc, .segment_free = host_segment_free,
};

size_t mge_devalloc_round(size_t bytes)
{
	if (bytes < MGE_DEVALLOC_MIN_BLOCK)
		return MGE_DEVALLOC_MIN_BLOCK;
	return (bytes + MGE_DEVALLOC_MIN_BLOCK - 1) / MGE_DEVALLOC_MIN_BLOCK * MGE_DEVALLOC_MIN_BLOCK;
}

size_t mge_devalloc_segment_bytes(size_t bytes)
{
	size_t r = mge_devalloc_round(bytes);

	if (r <= MGE_DEVALLOC_SMALL_SIZE)
		return MGE_DEVALLOC_SMALL_SEGMENT;
	if (r < MGE_DEVALLOC_MIN_LARGE_ALLOC)
		return MGE_DEVALLOC_LARGE_SEGMENT;
	return (r + MGE_DEVALLOC_ROUND_LARGE - 1) / MGE_DEVALLOC_ROUND_LARGE * MGE_DEVALLOC_ROUND_LARGE;
}

struct mge_devalloc *mge_devalloc_new(const struct mge_devalloc_backend *be)
{
	struct mge_devalloc *a = calloc(1, sizeof(*a));

	if (!a)
		return NULL;
	a->be = *be;
	return a;
}

static void release_segment(struct mge_devalloc *a, struct segment *s)
{
	a->be.segment_free(a->be.ctx, s->base, s->size);
	a->st.segments--;
	a->st.reserved_bytes -= s->size;
	a->st.segment_frees++;
	for (struct block *b = s->first, *n; b; b = n) {
		n = b->next;
		if (b->free)
			a->st.cached_blocks--;
		else
			a->st.active_blocks--;
		free(b);
	}
	free(s);
}

void mge_devalloc_destroy(struct mge_devalloc *a)
{
	if (!a)
		return;
	for (struct segment *s = a->segs, *n; s; s = n) {
		n = s->next;
		release_segment(a, s);
	}
	free(a);
}

size_t mge_devalloc_empty_cache(struct mge_devalloc *a)
{
	struct segment **link = &a->segs;
	size_t n = 0;

	a->last = NULL;
	while (*link) {
		struct segment *s = *link;
		if (s->first->free && !s->first->next) {
			*link = s->next;
			release_segment(a, s);
			n++;
		} else {
			a->last = s;
			link = &s->next;
		}
	}
	return n;
}

/* The smallest free block of the pool that holds `size`; the first met (oldest segment, lowest
 * offset) among blocks of equal size. */
static struct block *best_fit(struct mge_devalloc *a, int small, size_t size)
{
	struct block *best = NULL;

	for (struct segment *s = a->segs; s; s = s->next) {
		if (s->small != small)
			continue;
		for (struct block *b = s->first; b; b = b->next)
			if (b->free && b->buf.size >= size && (!best || b->buf.size < best->buf.size))
				best = b;
	}
	return best;
}

/* A new segment for a request of `size` (rounded), as one free block. NULL when the backend has
 * no memory or the host none for the bookkeeping. */
static struct block *new_segment(struct mge_devalloc *a, int small, size_t size)
{
	size_t bytes = mge_devalloc_segment_bytes(size);
	struct segment *s = calloc(1, sizeof(*s));
	struct block *b = calloc(1, sizeof(*b));

	if (!s || !b || a->be.segment_alloc(a->be.ctx, bytes, &s->base)) {
		free(s);
		free(b);
		return NULL;
	}
	s->size = bytes;
	s->small = small;
	s->first = b;
	b->seg = s;
	b->buf.ptr = s->base;
	b->buf.size = bytes;
	b->free = 1;
	if (a->last)
		a->last->next = s;
	else
		a->segs = s;
	a->last = s;
	a->st.segments++;
	a->st.segment_allocs++;
	a->st.cached_blocks++;
	a->st.reserved_bytes += bytes;
	if (a->st.reserved_bytes > a->st.peak_reserved_bytes)
		a->st.peak_reserved_bytes = a->st.reserved_bytes;
	return b;
}

/* Splits `size` bytes off the front of free block b when the rest is worth keeping apart. */
static int split(struct mge_devalloc *a, struct block *b, size_t size)
{
	size_t rest = b->buf.size - size;
	struct block *r;

	if (b->seg->small ? rest < MGE_DEVALLOC_MIN_BLOCK : rest <= MGE_DEVALLOC_SMALL_SIZE)
		return 0;
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->seg = b->seg;
	r->offset = b->offset + size;
	r->buf.ptr = (char *)b->seg->base + r->offset;
	r->buf.size = rest;
	r->free = 1;
	r->prev = b;
	r->next = b->next;
	if (b->next)
		b->next->prev = r;
	b->next = r;
	b->buf.size = size;
	a->st.cached_blocks++;
	return 0;
}

int mge_devalloc_alloc(struct mge_devalloc *a, size_t bytes, struct mge_devbuf **out)
{
	size_t size;
	int small;
	struct block *b;

	*out = NULL;
	if (bytes > SIZE_MAX / 2)
		return -ENOMEM;
	size = mge_devalloc_round(bytes);
	small = size <= MGE_DEVALLOC_SMALL_SIZE;
	b = best_fit(a, small, size);
	if (!b)
		b = new_segment(a, small, size);
	if (!b && mge_devalloc_empty_cache(a))
		b = new_segment(a, small, size);
	if (!b || split(a, b, size))
		return -ENOMEM;
	b->free = 0;
	a->st.cached_blocks--;
	a->st.active_blocks++;
	a->st.allocated_bytes += b->buf.size;
	if (a->st.allocated_bytes > a->st.peak_allocated_bytes)
		a->st.peak_allocated_bytes = a->st.allocated_bytes;
	*out = &b->buf;
	return 0;
}

/* Folds free block n into its free predecessor b. */
static void merge_next(struct mge_devalloc *a, struct block *b)
{
	struct block *n = b->next;

	b->buf.size += n->buf.size;
	b->next = n->next;
	if (n->next)
		n->next->prev = b;
	free(n);
	a->st.cached_blocks--;
}

void mge_devalloc_free(struct mge_devalloc *a, struct mge_devbuf *buf)
{
	struct block *b = (struct block *)(void *)buf;

	if (!buf)
		return;
	b->free = 1;
	a->st.allocated_bytes -= b->buf.size;
	a->st.active_blocks--;
	a->st.cached_blocks++;
	if (b->next && b->next->free)
		merge_next(a, b);
	if (b->prev && b->prev->free)
		merge_next(a, b->prev);
}

void mge_devalloc_stats(const struct mge_devalloc *a, struct mge_devalloc_stats *st)
{
	*st = a->st;
}
