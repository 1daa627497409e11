/* SPDX-License-Identifier: MIT */
/* mgp_live.c: sharded open-addressing hash table of live allocations with linear probing and
 * backward-shift deletion (no tombstones, so churn never degrades it). A shard's
 * spin lock is held only for the table operation itself; the one call out of this file it covers
 * is growing the shard, a raw mmap/munmap (mgp_os_alloc), never a hooked function. Never calls
 * malloc. */
#include "mgp_live.h"

#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "mgp_os.h"
#include "mgp_spin.h"

#define NSHARDS 4096u
#define REGION_SHIFT 16u  /* 64 KiB of address space per shard: the shard is bits 16-27 */
#define INITIAL_CAP 16u
#define SIZE_BITS 27u
#define SIZE_SIDE ((1u << SIZE_BITS) - 1) /* size field of a slot whose size is in the side table */
/* A shard doubles past 4/5 full (it was 7/10): the torch sample's 3.3 * 10^5 live blocks took
 * 11 MiB of slots at 7/10, 9.5 at 4/5 (issue 16). A miss then scans ~13 slots on average in a
 * shard at its fullest (12 bytes each, a few cache lines, in order), and a fresh doubling leaves
 * it 2/5 full. */
#define MAX_LOAD_NUM 4u
#define MAX_LOAD_DEN 5u

/* 12 bytes (16 until issue 16's fourth round: the torch sample's 8.8 MiB of slots, 6.4): a
 * pointer's shard is its address bits 16-27, so a slot keeps only the other 37 bits that matter
 * (0-15, 28-47 and 63, CUPTI's key bit: mgp_cupti.h), the size in 27 bits (SIZE_SIDE: from 128
 * MiB up, in the side table) and the site and bucket packed. A pointer with any of bits 48-62
 * set, or whose 37 bits are all zero (the empty slot), is not in a shard at all: its whole entry
 * is in the side table. */
struct slot {
	uint32_t lo;          /* key bits 0-31 */
	uint32_t hi;          /* key bits 32-36, then the size << 5 */
	uint32_t site_bucket; /* site << 5 | bucket */
};
_Static_assert(sizeof(struct slot) == 12, "a live slot is 12 bytes");

#define KEY_HOLE 0x7fff000000000000ull /* address bits a key cannot hold */

static inline uint64_t key_of(uint64_t ptr)
{
	return (ptr & 0xffffu) | ((ptr >> 28) & 0xfffffu) << 16 | (ptr >> 63) << 36;
}

#define KEY_MASK ((1ull << 37) - 1)

static inline uint64_t slot_key(const struct slot *e)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	uint64_t w; /* lo and hi in one load */
	memcpy(&w, e, sizeof w);
	return w & KEY_MASK;
#else
	return e->lo | (uint64_t)(e->hi & 31u) << 32;
#endif
}

/* A key's home slot in a table of cap slots (any cap: the top bits of a multiplicative hash,
 * scaled). */
static inline uint32_t home_of(uint64_t key, uint32_t cap)
{
	uint64_t h = (key >> 4) * 0x9e3779b97f4a7c15ull;
	return (uint32_t)(((h >> 32) * cap) >> 32);
}

static inline uint32_t next_of(uint32_t i, uint32_t cap)
{
	return i + 1 < cap ? i + 1 : 0;
}

struct shard {
	int lock;
	uint32_t cap;   /* slots (cap_for), 0 until first insert */
	uint32_t count;
	uint32_t pad;
	struct slot *tab;
	uint64_t pad2[5];
} __attribute__((aligned(64)));

static struct shard shards[NSHARDS];

/* Entries a slot cannot hold (a size from 128 MiB up, a pointer without a key), whole, under one
 * lock: few (a program's huge blocks, device memory), so a list that doubles and a scan. */
struct side_entry {
	uint64_t ptr, size;
	uint32_t site_bucket, pad;
};
static struct {
	int lock;
	uint32_t n, cap;
	uint32_t whole; /* entries without a slot (counted here, not in a shard) */
	struct side_entry *e;
} side;

static inline struct shard *shard_of(uint64_t ptr)
{
	return &shards[(ptr >> REGION_SHIFT) & (NSHARDS - 1)];
}

static void put(struct slot *tab, uint32_t cap, const struct slot *e)
{
	uint32_t i = home_of(slot_key(e), cap);
	while (slot_key(&tab[i]))
		i = next_of(i, cap);
	tab[i] = *e;
}

/* Empties slot `hole` by backward shift (as mgc_oa_delete, for a table of any size): no
 * tombstones, so churn never degrades it. */
static void slot_delete(struct slot *tab, uint32_t cap, uint32_t hole)
{
	for (uint32_t j = next_of(hole, cap); slot_key(&tab[j]); j = next_of(j, cap)) {
		/* j's entry moves into the hole unless its home lies in (hole, j], cyclically */
		uint32_t k = home_of(slot_key(&tab[j]), cap);
		if (hole < j ? k <= hole || k > j : k <= hole && k > j) {
			tab[hole] = tab[j];
			hole = j;
		}
	}
	tab[hole] = (struct slot){0};
}

/* Table sizes: 16 to 128 slots (a power of two) from the pool below, then as many slots as fill
 * the pages of a power of two's worth (256 -> 341 in one page, 512 -> 682 in two, 1024 and up
 * exactly): 12-byte slots in whole pages, none of a page wasted. */
#define POOL_MAX_CAP 128u

static uint32_t cap_for(uint32_t nominal)
{
	uint64_t bytes = ((uint64_t)nominal * sizeof(struct slot) + 4095u) & ~(uint64_t)4095u;
	return nominal <= POOL_MAX_CAP ? nominal : (uint32_t)(bytes / sizeof(struct slot));
}

static uint32_t cap_grown(uint32_t cap)
{
	if (!cap)
		return INITIAL_CAP;
	return cap_for(cap <= POOL_MAX_CAP ? cap * 2 : 2u << (31 - __builtin_clz(cap)));
}

static uint32_t cap_shrunk(uint32_t cap)
{
	return cap_for(cap <= POOL_MAX_CAP ? cap / 2 : 1u << (30 - __builtin_clz(cap)));
}

/* Tables under a page come from a pool of 64 KiB blocks, by size class (16 to 128 slots), so a
 * shard with a few entries costs 192 bytes, not a page: 4096 shards would otherwise hold 16 MiB
 * of mostly empty pages. A freed small table goes back to its class's list, never to the kernel. */
#define POOL_BLOCK (64u << 10)
#define POOL_CLASSES 4u /* INITIAL_CAP << k slots, k < POOL_CLASSES: up to POOL_MAX_CAP */
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
	if (cap > POOL_MAX_CAP)
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
	if (cap > POOL_MAX_CAP) {
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
		if (slot_key(&s->tab[i]))
			put(nt, ncap, &s->tab[i]);
	table_free(s->tab, s->cap);
	s->tab = nt;
	s->cap = ncap;
	return 0;
}

static int side_put(uint64_t ptr, uint64_t size, uint32_t site_bucket)
{
	int r = 0;
	mgp_spin_lock(&side.lock);
	if (side.n == side.cap) {
		uint32_t ncap = side.cap ? side.cap * 2 : 64;
		struct side_entry *ne = mgp_os_alloc((size_t)ncap * sizeof *ne);
		if (ne) {
			if (side.n)
				memcpy(ne, side.e, (size_t)side.n * sizeof *ne);
			mgp_os_free(side.e, (size_t)side.cap * sizeof *ne);
			side.e = ne;
			side.cap = ncap;
		}
	}
	if (side.n < side.cap)
		side.e[side.n++] = (struct side_entry){.ptr = ptr, .size = size, .site_bucket = site_bucket};
	else
		r = -ENOMEM;
	mgp_spin_unlock(&side.lock);
	return r;
}

static int side_take(uint64_t ptr, struct side_entry *out)
{
	int found = 0;
	mgp_spin_lock(&side.lock);
	for (uint32_t i = 0; i < side.n; i++) {
		if (side.e[i].ptr == ptr) {
			*out = side.e[i];
			side.e[i] = side.e[--side.n];
			found = 1;
			break;
		}
	}
	mgp_spin_unlock(&side.lock);
	return found;
}

/* Whether a pointer's entry goes in its shard (else the side table holds all of it). */
static inline int keyed(uint64_t ptr, uint64_t key)
{
	return !(ptr & KEY_HOLE) && key;
}

int mgp_live_insert(uint64_t ptr, uint64_t size, uint32_t site, unsigned bucket)
{
	uint64_t key = key_of(ptr);
	uint32_t sb = site << 5 | bucket;
	if (!keyed(ptr, key)) {
		int r = side_put(ptr, size, sb);
		if (r == 0)
			__atomic_add_fetch(&side.whole, 1, __ATOMIC_RELAXED);
		return r;
	}
	uint32_t sz = size < SIZE_SIDE ? (uint32_t)size : SIZE_SIDE;
	struct slot e = {.lo = (uint32_t)key, .hi = (uint32_t)(key >> 32) | sz << 5, .site_bucket = sb};
	if (sz == SIZE_SIDE && side_put(ptr, size, sb) < 0)
		return -ENOMEM;
	struct shard *s = shard_of(ptr);
	mgp_spin_lock(&s->lock);
	if ((uint64_t)(s->count + 1) * MAX_LOAD_DEN > (uint64_t)s->cap * MAX_LOAD_NUM &&
	    resize(s, cap_grown(s->cap)) < 0) {
		mgp_spin_unlock(&s->lock);
		struct side_entry gone;
		if (sz == SIZE_SIDE)
			side_take(ptr, &gone);
		return -ENOMEM;
	}
	put(s->tab, s->cap, &e);
	s->count++;
	mgp_spin_unlock(&s->lock);
	return 0;
}

/* Takes key's slot out of shard s; 1 and its copy in *out if it was there. */
static int shard_take(struct shard *s, uint64_t key, struct slot *out)
{
	mgp_spin_lock(&s->lock);
	if (!s->cap) {
		mgp_spin_unlock(&s->lock);
		return 0;
	}
	uint32_t i = home_of(key, s->cap);
	for (;;) {
		uint64_t k = slot_key(&s->tab[i]);
		if (!k) {
			mgp_spin_unlock(&s->lock);
			return 0;
		}
		if (k == key)
			break;
		i = next_of(i, s->cap);
	}
	*out = s->tab[i];
	slot_delete(s->tab, s->cap, i);
	s->count--;
	/* A shard a burst filled (an import) shrinks back as it empties: at an eighth full it halves
	 * (a quarter full then, far from growing again); out of memory, it simply stays. */
	if (s->cap > INITIAL_CAP && s->count * 8 < s->cap)
		resize(s, cap_shrunk(s->cap));
	mgp_spin_unlock(&s->lock);
	return 1;
}

int mgp_live_remove(uint64_t ptr, struct mgp_entry *out)
{
	uint64_t key = key_of(ptr);
	struct side_entry se;
	struct slot e;
	if (!keyed(ptr, key)) {
		if (!side_take(ptr, &se))
			return 0;
		__atomic_sub_fetch(&side.whole, 1, __ATOMIC_RELAXED);
	} else {
		if (!shard_take(shard_of(ptr), key, &e))
			return 0;
		se = (struct side_entry){.ptr = ptr, .size = e.hi >> 5, .site_bucket = e.site_bucket};
		if (se.size == SIZE_SIDE)
			side_take(ptr, &se);
	}
	*out = (struct mgp_entry){.ptr = ptr, .size = se.size, .site = se.site_bucket >> 5,
				  .bucket = se.site_bucket & 31};
	return 1;
}

uint64_t mgp_live_count(void)
{
	uint64_t n = __atomic_load_n(&side.whole, __ATOMIC_RELAXED);
	for (unsigned i = 0; i < NSHARDS; i++)
		n += __atomic_load_n(&shards[i].count, __ATOMIC_RELAXED);
	return n;
}

uint64_t mgp_live_bytes_used(void)
{
	uint64_t n = 0;
	for (unsigned i = 0; i < NSHARDS; i++)
		n += (uint64_t)__atomic_load_n(&shards[i].cap, __ATOMIC_RELAXED) * sizeof(struct slot);
	return n + (uint64_t)__atomic_load_n(&side.cap, __ATOMIC_RELAXED) * sizeof(struct side_entry);
}

void mgp_live_lock_all(void)
{
	for (unsigned i = 0; i < NSHARDS; i++)
		mgp_spin_lock(&shards[i].lock);
	mgp_spin_lock(&side.lock);
	mgp_spin_lock(&pool.lock);
}

void mgp_live_unlock_all(void)
{
	mgp_spin_unlock(&pool.lock);
	mgp_spin_unlock(&side.lock);
	for (unsigned i = 0; i < NSHARDS; i++)
		mgp_spin_unlock(&shards[i].lock);
}
