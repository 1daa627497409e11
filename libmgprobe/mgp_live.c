/* SPDX-License-Identifier: MIT */
/* mgp_live.c: sharded open-addressing hash table of live allocations with linear probing and
 * backward-shift deletion (no tombstones, so churn never degrades it). A shard lock is held only
 * for the table operation itself, never across a call out of this file. Never calls malloc. */
#include "mgp_live.h"

#include <errno.h>
#include <sched.h>
#include <stddef.h>

#include "mgp_os.h"

#define NSHARDS 256u
#define INITIAL_CAP 1024u

struct shard {
	int lock;
	uint32_t pad;
	uint64_t cap; /* power of two, 0 until first insert */
	uint64_t count;
	struct mgp_entry *tab;
} __attribute__((aligned(64)));

static struct shard shards[NSHARDS];

static inline uint64_t ptr_hash(uint64_t p)
{
	p >>= 4;
	p *= 0x9e3779b97f4a7c15ull;
	return p ^ (p >> 29);
}

static inline void spin_lock(int *l)
{
	unsigned spins = 0;
	while (__atomic_exchange_n(l, 1, __ATOMIC_ACQUIRE)) {
		while (__atomic_load_n(l, __ATOMIC_RELAXED)) {
			if (++spins < 64)
				__builtin_ia32_pause();
			else
				sched_yield();
		}
	}
}

static inline void spin_unlock(int *l)
{
	__atomic_store_n(l, 0, __ATOMIC_RELEASE);
}

static inline struct shard *shard_of(uint64_t h)
{
	return &shards[h >> 56];
}

static void put(struct mgp_entry *tab, uint64_t mask, const struct mgp_entry *e)
{
	uint64_t i = ptr_hash(e->ptr) & mask;
	while (tab[i].ptr)
		i = (i + 1) & mask;
	tab[i] = *e;
}

static int grow(struct shard *s)
{
	uint64_t ncap = s->cap ? s->cap * 2 : INITIAL_CAP;
	struct mgp_entry *nt = mgp_os_alloc(ncap * sizeof *nt);
	if (!nt)
		return -ENOMEM;
	for (uint64_t i = 0; i < s->cap; i++)
		if (s->tab[i].ptr)
			put(nt, ncap - 1, &s->tab[i]);
	mgp_os_free(s->tab, s->cap * sizeof *s->tab);
	s->tab = nt;
	s->cap = ncap;
	return 0;
}

int mgp_live_insert(uint64_t ptr, uint64_t size, uint32_t site, uint32_t birth)
{
	uint64_t h = ptr_hash(ptr);
	struct shard *s = shard_of(h);
	struct mgp_entry e = {.ptr = ptr, .size = size, .site = site, .birth = birth};
	spin_lock(&s->lock);
	if ((s->count + 1) * 10 > s->cap * 7 && grow(s) < 0) {
		spin_unlock(&s->lock);
		return -ENOMEM;
	}
	put(s->tab, s->cap - 1, &e);
	s->count++;
	spin_unlock(&s->lock);
	return 0;
}

int mgp_live_remove(uint64_t ptr, struct mgp_entry *out)
{
	uint64_t h = ptr_hash(ptr);
	struct shard *s = shard_of(h);
	spin_lock(&s->lock);
	if (!s->cap) {
		spin_unlock(&s->lock);
		return 0;
	}
	uint64_t mask = s->cap - 1;
	uint64_t i = h & mask;
	for (;;) {
		if (!s->tab[i].ptr) {
			spin_unlock(&s->lock);
			return 0;
		}
		if (s->tab[i].ptr == ptr)
			break;
		i = (i + 1) & mask;
	}
	*out = s->tab[i];
	/* Backward-shift deletion: pull later entries of the cluster into the hole when their home
	 * slot does not lie cyclically in (hole, j]. */
	uint64_t hole = i, j = i;
	for (;;) {
		j = (j + 1) & mask;
		if (!s->tab[j].ptr)
			break;
		uint64_t home = ptr_hash(s->tab[j].ptr) & mask;
		if (((j - home) & mask) >= ((j - hole) & mask)) {
			s->tab[hole] = s->tab[j];
			hole = j;
		}
	}
	s->tab[hole].ptr = 0;
	s->count--;
	spin_unlock(&s->lock);
	return 1;
}

void mgp_live_lock_all(void)
{
	for (unsigned i = 0; i < NSHARDS; i++)
		spin_lock(&shards[i].lock);
}

void mgp_live_unlock_all(void)
{
	for (unsigned i = 0; i < NSHARDS; i++)
		spin_unlock(&shards[i].lock);
}
