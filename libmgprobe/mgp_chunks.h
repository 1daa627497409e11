/* SPDX-License-Identifier: MIT */
/* mgp_chunks.h: an array that grows by chunks mapped from the kernel as indices are first used,
 * so the probe reserves address space as it needs it (never a large reservation up front) and
 * an element never moves once it exists: lock-free readers index it while a writer grows it.
 * Growing is serialized by the caller; reading needs nothing. Never calls malloc. */
#ifndef MGP_CHUNKS_H
#define MGP_CHUNKS_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>

#include "mgp_os.h"

#define MGP_CHUNKS_MAX 4096u

struct mgp_chunks {
	size_t esize;  /* element bytes */
	unsigned shift; /* elements per chunk: 1 << shift */
	char *chunk[MGP_CHUNKS_MAX];
};

/* The element at i, which must exist (an index below what mgp_chunks_ensure has covered, seen
 * through a release store of the caller's count). */
static inline void *mgp_chunk_at(const struct mgp_chunks *c, uint64_t i)
{
	char *base = __atomic_load_n(&c->chunk[i >> c->shift], __ATOMIC_ACQUIRE);
	return base + (i & ((1ull << c->shift) - 1)) * c->esize;
}

/* The element at i if its chunk is mapped, else NULL (for readers that may run ahead). */
static inline void *mgp_chunk_find(const struct mgp_chunks *c, uint64_t i)
{
	if ((i >> c->shift) >= MGP_CHUNKS_MAX)
		return NULL;
	char *base = __atomic_load_n(&c->chunk[i >> c->shift], __ATOMIC_ACQUIRE);
	return base ? base + (i & ((1ull << c->shift) - 1)) * c->esize : NULL;
}

/* Maps the chunk holding index i (zeroed) if it is not mapped yet. 0, or -ENOMEM (no memory, the
 * probe's budget, or i beyond MGP_CHUNKS_MAX chunks). Callers serialize it. */
static inline int mgp_chunks_ensure(struct mgp_chunks *c, uint64_t i)
{
	uint64_t k = i >> c->shift;
	if (k >= MGP_CHUNKS_MAX)
		return -ENOMEM;
	if (c->chunk[k])
		return 0;
	char *p = (char *)mgp_os_alloc(c->esize << c->shift);
	if (!p)
		return -ENOMEM;
	__atomic_store_n(&c->chunk[k], p, __ATOMIC_RELEASE);
	return 0;
}

/* Unmaps the chunks wholly past the first n elements, but never the first chunk: a list that a
 * burst grew (an import's 10^5 sites to evict or retire) gives its pages back once it is short
 * again. Only for a list whose chunks were mapped in order (mgp_chunks_ensure of each index in
 * turn) and that no one reads without the caller's lock. */
static inline void mgp_chunks_shrink(struct mgp_chunks *c, uint64_t n)
{
	size_t bytes = c->esize << c->shift;
	for (uint64_t k = n ? ((n - 1) >> c->shift) + 1 : 1; k < MGP_CHUNKS_MAX && c->chunk[k]; k++) {
		mgp_os_free(c->chunk[k], bytes);
		c->chunk[k] = NULL;
	}
}

/* Gives every chunk's pages back (they read as zero again) without unmapping: a forked child's
 * copy of a table it starts afresh. */
static inline void mgp_chunks_discard(struct mgp_chunks *c)
{
	for (unsigned k = 0; k < MGP_CHUNKS_MAX; k++)
		if (c->chunk[k])
			mgp_os_discard(c->chunk[k], c->esize << c->shift);
}

#endif /* MGP_CHUNKS_H */
