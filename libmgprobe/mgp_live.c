/* SPDX-License-Identifier: MIT */
/* mgp_live.c: sharded open-addressing hash table of live allocations with linear probing and
 * backward-shift deletion (mgc_oa_delete: no tombstones, so churn never degrades it). A shard's
 * spin lock is held only for the table operation itself; the one call out of this file it covers
 * is growing the shard, a raw mmap/munmap (mgp_os_alloc), never a hooked function. Never calls
 * malloc. */
#include "mgp_live.h"

#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "mgc_hash.h"
#include "mgp_os.h"
#include "mgp_spin.h"

#define NSHARDS 4096u
#define REGION_SHIFT 16u  /* 64 KiB of address space per shard choice */
#define INITIAL_CAP 16u
#define BIG_SIZE 0xffffffffu /* size field of an entry whose size is in the big table */
#define BIG_CAP 256u
/* A shard doubles past 4/5 full (it was 7/10): the torch sample's 3.3 * 10^5 live blocks took
 * 11 MiB of slots at 7/10, 9.5 at 4/5 (issue 16). A miss then scans ~13 slots on average in a
 * shard at its fullest (16 bytes each, a few cache lines, in order), and a fresh doubling leaves
 * it 2/5 full. */
#define MAX_LOAD_NUM 4u
#define MAX_LOAD_DEN 5u

/* 16 bytes: the pointer, the size (or BIG_SIZE), the site and bucket packed. */
struct slot {
	uint64_t ptr;
	uint32_t size;
	uint32_t site_bucket; /* site << 5 | bucket */
};

struct shard {
	int lock;
	uint32_t cap;   /* power of two, 0 until first insert */
	uint32_t count;
	uint32_t pad;
	struct slot *tab;
	uint64_t pad2[5];
} __attribute__((aligned(64)));

static struct shard shards[NSHARDS];

/* Sizes of 4 GiB and more, by pointer, under one lock: rare (huge mallocs, device memory). */
static struct {
	int lock;
	uint32_t n;
	struct {
		uint64_t ptr, size;
	} e[BIG_CAP];
} big;

static inline uint64_t ptr_hash(uint64_t p)
{
	p >>= 4;
	p *= 0x9e3779b97f4a7c15ull;
	return p ^ (p >> 29);
}

static inline struct shard *shard_of(uint64_t ptr)
{
	return &shards[mgc_mix64(ptr >> REGION_SHIFT) & (NSHARDS - 1)];
}

static uint64_t slot_home(const void *e)
{
	return ptr_hash(((const struct slot *)e)->ptr);
}

static int slot_empty(const void *e)
{
	return ((const struct slot *)e)->ptr == 0;
}

static void put(struct slot *tab, uint64_t mask, const struct slot *e)
{
	uint64_t i = ptr_hash(e->ptr) & mask;
	while (tab[i].ptr)
		i = (i + 1) & mask;
	tab[i] = *e;
}

/* Tables under a page come from a pool of 64 KiB blocks, by size class (16 to 128 slots), so a
 * shard with a few entries costs 256 bytes, not a page: 4096 shards would otherwise hold 16 MiB
 * of mostly empty pages. A freed small table goes back to its class's list, never to the kernel. */
#define POOL_BLOCK (64u << 10)
#define POOL_CLASSES 4u /* INITIAL_CAP << k slots, k < POOL_CLASSES: up to 2 KiB */
static struct {
	int lock;
	uint32_t left;      /* bytes left in the current block */
	char *block;
	void *free[POOL_CLASSES];
} pool;

static unsigned pool_class(uint32_t cap)
{
	return (unsigned)__builtin_ctz(cap / INITIAL_CAP);
}

static struct slot *table_alloc(uint32_t cap)
{
	size_t bytes = (size_t)cap * sizeof(struct slot);
	if (cap >= INITIAL_CAP << POOL_CLASSES)
		return mgp_os_alloc(bytes);
	unsigned k = pool_class(cap);
	void *p = NULL;
	mgp_spin_lock(&pool.lock);
	if (pool.free[k]) {
		p = pool.free[k];
		pool.free[k] = *(void **)p;
	} else {
		if (pool.left < bytes && (pool.block = mgp_os_alloc(POOL_BLOCK)) != NULL)
			pool.left = POOL_BLOCK;
		if (pool.block && pool.left >= bytes) {
			p = pool.block + POOL_BLOCK - pool.left;
			pool.left -= (uint32_t)bytes;
		}
	}
	mgp_spin_unlock(&pool.lock);
	if (p)
		memset(p, 0, bytes);
	return p;
}

static void table_free(struct slot *t, uint32_t cap)
{
	if (!t)
		return;
	if (cap >= INITIAL_CAP << POOL_CLASSES) {
		mgp_os_free(t, (size_t)cap * sizeof *t);
		return;
	}
	unsigned k = pool_class(cap);
	mgp_spin_lock(&pool.lock);
	*(void **)t = pool.free[k];
	pool.free[k] = t;
	mgp_spin_unlock(&pool.lock);
}

/* Rehashes the shard into a table of ncap slots (grown, or shrunk when mostly empty). */
static int resize(struct shard *s, uint32_t ncap)
{
	struct slot *nt = table_alloc(ncap);
	if (!nt)
		return -ENOMEM;
	for (uint32_t i = 0; i < s->cap; i++)
		if (s->tab[i].ptr)
			put(nt, ncap - 1, &s->tab[i]);
	table_free(s->tab, s->cap);
	s->tab = nt;
	s->cap = ncap;
	return 0;
}

static int big_put(uint64_t ptr, uint64_t size)
{
	int r = -ENOMEM;
	mgp_spin_lock(&big.lock);
	if (big.n < BIG_CAP) {
		big.e[big.n].ptr = ptr;
		big.e[big.n++].size = size;
		r = 0;
	}
	mgp_spin_unlock(&big.lock);
	return r;
}

static uint64_t big_take(uint64_t ptr)
{
	uint64_t size = 0;
	mgp_spin_lock(&big.lock);
	for (uint32_t i = 0; i < big.n; i++) {
		if (big.e[i].ptr == ptr) {
			size = big.e[i].size;
			big.e[i] = big.e[--big.n];
			break;
		}
	}
	mgp_spin_unlock(&big.lock);
	return size;
}

int mgp_live_insert(uint64_t ptr, uint64_t size, uint32_t site, unsigned bucket)
{
	struct shard *s = shard_of(ptr);
	struct slot e = {.ptr = ptr, .size = size < BIG_SIZE ? (uint32_t)size : BIG_SIZE,
			 .site_bucket = site << 5 | bucket};
	if (e.size == BIG_SIZE && big_put(ptr, size) < 0)
		return -ENOMEM;
	mgp_spin_lock(&s->lock);
	if ((uint64_t)(s->count + 1) * MAX_LOAD_DEN > (uint64_t)s->cap * MAX_LOAD_NUM &&
	    resize(s, s->cap ? s->cap * 2 : INITIAL_CAP) < 0) {
		mgp_spin_unlock(&s->lock);
		if (e.size == BIG_SIZE)
			big_take(ptr);
		return -ENOMEM;
	}
	put(s->tab, s->cap - 1, &e);
	s->count++;
	mgp_spin_unlock(&s->lock);
	return 0;
}

int mgp_live_remove(uint64_t ptr, struct mgp_entry *out)
{
	struct shard *s = shard_of(ptr);
	mgp_spin_lock(&s->lock);
	if (!s->cap) {
		mgp_spin_unlock(&s->lock);
		return 0;
	}
	uint64_t mask = s->cap - 1;
	uint64_t i = ptr_hash(ptr) & mask;
	for (;;) {
		if (!s->tab[i].ptr) {
			mgp_spin_unlock(&s->lock);
			return 0;
		}
		if (s->tab[i].ptr == ptr)
			break;
		i = (i + 1) & mask;
	}
	struct slot e = s->tab[i];
	s->tab[mgc_oa_delete(s->tab, sizeof *s->tab, mask, i, slot_home, slot_empty)].ptr = 0;
	s->count--;
	/* A shard a burst filled (an import) shrinks back as it empties: at an eighth full it halves
	 * (a quarter full then, far from growing again); out of memory, it simply stays. */
	if (s->cap > INITIAL_CAP && s->count * 8 < s->cap)
		resize(s, s->cap / 2);
	mgp_spin_unlock(&s->lock);
	*out = (struct mgp_entry){.ptr = ptr, .size = e.size, .site = e.site_bucket >> 5,
				  .bucket = e.site_bucket & 31};
	if (e.size == BIG_SIZE)
		out->size = big_take(ptr);
	return 1;
}

uint64_t mgp_live_count(void)
{
	uint64_t n = 0;
	for (unsigned i = 0; i < NSHARDS; i++)
		n += __atomic_load_n(&shards[i].count, __ATOMIC_RELAXED);
	return n;
}

uint64_t mgp_live_bytes_used(void)
{
	uint64_t n = 0;
	for (unsigned i = 0; i < NSHARDS; i++)
		n += (uint64_t)__atomic_load_n(&shards[i].cap, __ATOMIC_RELAXED) * sizeof(struct slot);
	return n;
}

void mgp_live_lock_all(void)
{
	for (unsigned i = 0; i < NSHARDS; i++)
		mgp_spin_lock(&shards[i].lock);
	mgp_spin_lock(&big.lock);
	mgp_spin_lock(&pool.lock);
}

void mgp_live_unlock_all(void)
{
	mgp_spin_unlock(&pool.lock);
	mgp_spin_unlock(&big.lock);
	for (unsigned i = 0; i < NSHARDS; i++)
		mgp_spin_unlock(&shards[i].lock);
}
