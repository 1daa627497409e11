/* SPDX-License-Identifier: MIT */
/* mgp_sites.h: allocation sites: call stacks interned to dense ids, each with atomic counters and
 * cohorts (live bytes by birth-step bucket). Lookups are lock-free; only a new stack takes a
 * mutex. Never calls malloc: all tables are reserved once from the kernel. */
#ifndef MGP_SITES_H
#define MGP_SITES_H

#include <stdint.h>

#include "mgc_format.h"

struct mgp_site {
	uint64_t live_bytes;  /* atomics, relaxed */
	uint64_t allocs;
	uint64_t alloc_bytes;
	uint64_t frees;
	uint64_t peak_bytes;
	uint64_t cohorts[MGC_COHORTS];
	uint64_t hash;        /* immutable once published */
	uint32_t frames_off;  /* index of the first frame in the frame arena */
	uint16_t nframes;
	uint16_t kind;
	uint32_t id;
};

/* Changed-site bitmap: a bit per site, and a summary bit per 64-site word, set after a site's
 * counters change so a snapshot visits only the sites that changed. */
extern uint64_t *mgp_sites_dirty_words;
extern uint64_t *mgp_sites_dirty_sum;

static inline void mgp_site_mark(const struct mgp_site *s)
{
	uint32_t id = s->id;
	uint64_t bit = 1ull << (id & 63);
	uint64_t *w = &mgp_sites_dirty_words[id >> 6];
	/* Already marked (the common case for a busy site): a plain load, no write. */
	if (__atomic_load_n(w, __ATOMIC_RELAXED) & bit)
		return;
	__atomic_fetch_or(w, bit, __ATOMIC_RELEASE);
	__atomic_fetch_or(&mgp_sites_dirty_sum[id >> 12], 1ull << ((id >> 6) & 63), __ATOMIC_RELEASE);
}

/* Takes the ids of the sites changed since the last call (clearing their bits) into ids, which
 * must hold max_sites entries; returns how many. A site changing meanwhile is either taken now or
 * left marked for the next call. Writer lock held. */
uint32_t mgp_sites_take_dirty(uint32_t *ids);

/* CUDA allocations keep their own room beyond MGPROBE_MAX_SITES: a program whose start-up fills
 * the table (PyTorch's import and CUDA's initialisation make over a million stacks) still gets
 * every CUDA allocation site with its whole stack, the stack a GPU leak is found by. */
#define MGP_CUDA_SPARE_SITES 16384u
#define MGP_CUDA_SPARE_FRAMES (MGP_CUDA_SPARE_SITES * 128u)

/* The ids a table for max_sites sites may hand out (the CUDA room included): the size of every
 * per-site array. */
static inline uint32_t mgp_sites_capacity(uint32_t max_sites)
{
	return max_sites + MGP_CUDA_SPARE_SITES;
}

/* Reserves the tables for up to max_sites sites (and the CUDA room). 0 or -ENOMEM. Call once,
 * single-threaded. */
int mgp_sites_init(uint32_t max_sites);

/* Returns the id (>= 1) of the site for this stack and kind, creating it if new. When the table
 * is full, returns the overflow site (id 1, a stack of zero frames) so totals stay exact; CUDA
 * kinds go on in their own room (MGP_CUDA_SPARE_SITES), never truncated, and take the overflow
 * site only when that is full too. */
uint32_t mgp_sites_intern(const uintptr_t *ips, unsigned n, unsigned kind);

/* The site with this id (1 <= id < mgp_sites_count()). */
struct mgp_site *mgp_site_get(uint32_t id);
const uint64_t *mgp_site_frames(const struct mgp_site *s);

/* One past the highest published id: sites [1, count) are complete and readable. */
uint32_t mgp_sites_count(void);

static inline void mgp_site_on_alloc(struct mgp_site *s, uint64_t size, uint64_t birth_step)
{
	__atomic_fetch_add(&s->allocs, 1, __ATOMIC_RELAXED);
	__atomic_fetch_add(&s->alloc_bytes, size, __ATOMIC_RELAXED);
	__atomic_fetch_add(&s->cohorts[mgc_cohort_bucket(birth_step)], size, __ATOMIC_RELAXED);
	uint64_t live = __atomic_add_fetch(&s->live_bytes, size, __ATOMIC_RELAXED);
	uint64_t peak = __atomic_load_n(&s->peak_bytes, __ATOMIC_RELAXED);
	while (live > peak &&
	       !__atomic_compare_exchange_n(&s->peak_bytes, &peak, live, 1, __ATOMIC_RELAXED,
					    __ATOMIC_RELAXED))
		;
	mgp_site_mark(s);
}

/* Part of a live allocation went away (a partial munmap): its bytes, not the allocation. */
static inline void mgp_site_on_shrink(struct mgp_site *s, uint64_t size, uint64_t birth_step)
{
	__atomic_fetch_sub(&s->cohorts[mgc_cohort_bucket(birth_step)], size, __ATOMIC_RELAXED);
	__atomic_fetch_sub(&s->live_bytes, size, __ATOMIC_RELAXED);
	mgp_site_mark(s);
}

static inline void mgp_site_on_free(struct mgp_site *s, uint64_t size, uint64_t birth_step)
{
	__atomic_fetch_add(&s->frees, 1, __ATOMIC_RELAXED);
	mgp_site_on_shrink(s, size, birth_step);
}

/* fork: the prepare handler takes the insert lock so no stack is half-published in the child. */
void mgp_sites_lock(void);
void mgp_sites_unlock(void);

#endif /* MGP_SITES_H */
