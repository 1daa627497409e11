/* SPDX-License-Identifier: MIT */
/* mgp_live.c: sharded open-addressing hash table of live allocations with linear probing and
 * backward-shift deletion (mgc_oa_delete: no tombstones, so churn never degrades it). A shard's
 * spin lock is held only for the table operation itself; the one call out of this file it covers
 * is growing the shard, a raw mmap/munmap (mgp_os_alloc), never a hooked function. Never calls
 * malloc. */
#include "mgp_live.h"

#include <errno.h>
#include <stddef.h>

#include "mgc_hash.h"
#include "mgp_os.h"
#include "mgp_spin.h"

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

static uint64_t entry_home(const void *e)
{
	return ptr_hash(((const struct mgp_entry *)e)->ptr);
}

static int entry_empty(const void *e)
{
	return ((const struct mgp_entry *)e)->ptr == 0;
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
	mgp_spin_lock(&s->lock);
	if ((s->count + 1) * 10 > s->cap * 7 && grow(s) < 0) {
		mgp_spin_unlock(&s->lock);
		return -ENOMEM;
	}
	put(s->tab, s->cap - 1, &e);
	s->count++;
	mgp_spin_unlock(&s->lock);
	return 0;
}

int mgp_live_remove(uint64_t ptr, struct mgp_entry *out)
{
	uint64_t h = ptr_hash(ptr);
	struct shard *s = shard_of(h);
	mgp_spin_lock(&s->lock);
	if (!s->cap) {
		mgp_spin_unlock(&s->lock);
		return 0;
	}
	uint64_t mask = s->cap - 1;
	uint64_t i = h & mask;
	for (;;) {
		if (!s->tab[i].ptr) {
			mgp_spin_unlock(&s->lock);
			return 0;
		}
		if (s->tab[i].ptr == ptr)
			break;
		i = (i + 1) & mask;
	}
	*out = s->tab[i];
	s->tab[mgc_oa_delete(s->tab, sizeof *s->tab, mask, i, entry_home, entry_empty)].ptr = 0;
	s->count--;
	mgp_spin_unlock(&s->lock);
	return 1;
}

void mgp_live_lock_all(void)
{
	for (unsigned i = 0; i < NSHARDS; i++)
		mgp_spin_lock(&shards[i].lock);
}

void mgp_live_unlock_all(void)
{
	for (unsigned i = 0; i < NSHARDS; i++)
		mgp_spin_unlock(&shards[i].lock);
}
