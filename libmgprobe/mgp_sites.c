/* SPDX-License-Identifier: MIT */
/* mgp_sites.c: the site table of mgp_sites.h. Lookups read a table of 32-bit slots (8 bits of the
 * stack's hash, the site id in the low 24) lock-free and confirm a hit with a second hash in the
 * site; a new stack is inserted under a mutex and published with a release store of its slot.
 * The table grows by replacement: the old one is freed after a grace period. Eviction removes a
 * slot first and frees the site only after every thread has left its lookups. Must never call
 * malloc or free. */
#include "mgp_sites.h"

#include <errno.h>
#include <pthread.h>
#include <string.h>

#include "mgp_os.h"
#include "mgp_spin.h"
#include "mgp_stacks.h"
#include "mgp_tcache.h"

#define TRUNC_FRAMES 12u   /* stack depth kept once the table is nearly full */
#define ID_BITS 24u
#define ID_MASK ((1u << ID_BITS) - 1)
#define SITE_SHIFT 12u     /* 4096 sites per chunk */
#define RETIRED_MAX 40u
#define COH_SHIFT 8u       /* 256 cohort arrays per chunk */
#define RETIRE_LIVE_MAX (64u << 10) /* a site holding this much keeps its stack (mgmon shows it) */

/* A lookup table: mask + 1 slots, replaced whole when it grows. */
struct index {
	uint64_t mask;
	uint64_t used;
	uint32_t slot[];
};

struct mgp_chunks mgp_site_ids = {.esize = sizeof(struct mgp_site), .shift = SITE_SHIFT};
/* A site's innermost node, apart from its identity; a free site's links the next free id. */
struct mgp_chunks mgp_site_leaves = {.esize = sizeof(uint32_t), .shift = SITE_SHIFT};
struct mgp_chunks mgp_site_cnts = {.esize = sizeof(struct mgp_site_counts), .shift = SITE_SHIFT};
struct mgp_chunks mgp_site_vars = {.esize = sizeof(uint64_t), .shift = SITE_SHIFT};

/* Evicting: a site that held nothing and was not written, seen at `ops` allocations + frees. */
struct candidate {
	uint32_t id;
	uint32_t pad;
	uint64_t ops;
};

/* Retiring: a site whose stack was taken from lookups, and that stack's innermost node. */
struct retiring {
	uint32_t id;
	uint32_t leaf;
};

/* The site table. New stacks and eviction take `lock`; lookups and counters are lock-free. */
static struct {
	struct index *index;
	struct index *retired[RETIRED_MAX]; /* replaced tables, freed after a grace period */
	uint32_t nretired;
	uint32_t max_sites;
	uint32_t high;       /* one past the highest id used; ids below are readable */
	uint32_t used;       /* sites in use */
	uint32_t free;       /* first free id (its leaf field links the next), 0 = none */
	uint32_t trunc_at;   /* from this many sites in use, new stacks keep only TRUNC_FRAMES */
	uint32_t inherited;  /* a forked child: ids below were its parent's (never evicted here) */
	uint32_t created;    /* sites made since the last eviction */
	int said_full;       /* the one line about a full table is written (under lock) */
	uint64_t *dirty_words, *dirty_sum; /* changed-site bitmap: a bit per site, a bit per word */
	struct mgp_chunks cand;  /* eviction candidates (writer) */
	uint32_t ncand;
	struct mgp_chunks gone;  /* ids unlinked or detached, to free once empty */
	uint32_t ngone;
	struct mgp_chunks ret;   /* sites retiring (writer) */
	uint32_t nret;
	uint32_t retire_from;    /* sites in use from which quiet written ones retire */
	uint32_t nretired_sites; /* sites retired so far */
	uint32_t unlinks;        /* changes when sites are taken out of lookups or retired: the
				    threads' memos and recent sites are stale */
	struct mgp_chunks coh;   /* full cohort arrays (MGC_COHORTS u64 each) */
	uint32_t coh_high, coh_free;
	int coh_lock;
	struct mgp_totals tot;   /* atomics */
	struct mgc_devmem_cell cells[32]; /* CUDA bytes by kind, under cells_lock */
	uint32_t ncells;
	int cells_lock;
	pthread_mutex_t lock;
} table = {.lock = PTHREAD_MUTEX_INITIALIZER,
	   .cand = {.esize = sizeof(struct candidate), .shift = 12},
	   .gone = {.esize = sizeof(uint32_t), .shift = 14},
	   .ret = {.esize = sizeof(struct retiring), .shift = 12},
	   .coh = {.esize = MGC_COHORTS * sizeof(uint64_t), .shift = COH_SHIFT}};

/* Two independent hashes of a stack, one multiply per frame each on independent chains (the fast
 * path hashes every allocation's stack), then a full mix. */
static inline void hash_stack(const uintptr_t *ips, unsigned n, unsigned kind, uint64_t *h1, uint64_t *h2)
{
	uint64_t a = 0x9e3779b97f4a7c15ull ^ (uint64_t)kind ^ ((uint64_t)n << 8);
	uint64_t b = 0x2545f4914f6cdd1dull + ((uint64_t)kind << 16) + n;
	for (unsigned i = 0; i < n; i++) {
		a = (a ^ (uint64_t)ips[i]) * 0x9e3779b97f4a7c15ull;
		b = (b + (uint64_t)ips[i]) * 0xbf58476d1ce4e5b9ull;
		b ^= b >> 29;
	}
	*h1 = mgc_mix64(a);
	*h2 = mgc_mix64(b) | 1; /* never 0: a free site's fp */
}

static struct index *index_new(uint64_t nslots)
{
	struct index *ix = mgp_os_alloc(sizeof *ix + nslots * sizeof ix->slot[0]);
	if (ix)
		ix->mask = nslots - 1;
	return ix;
}

static void index_free(struct index *ix)
{
	if (ix)
		mgp_os_free(ix, sizeof *ix + (ix->mask + 1) * sizeof ix->slot[0]);
}

int mgp_sites_init(uint32_t max_sites)
{
	size_t dwords = ((size_t)mgp_sites_capacity(max_sites) + 63) / 64, dsum = (dwords + 63) / 64;
	table.index = index_new(1024);
	table.dirty_words = mgp_os_alloc(dwords * 8);
	table.dirty_sum = mgp_os_alloc(dsum * 8);
	if (!table.index || !table.dirty_words || !table.dirty_sum || mgp_stacks_init() < 0 ||
	    mgp_chunks_ensure(&mgp_site_ids, 0) < 0 || mgp_chunks_ensure(&mgp_site_leaves, 0) < 0 ||
	    mgp_chunks_ensure(&mgp_site_cnts, 0) < 0)
		return -ENOMEM;
	table.max_sites = max_sites;
	/* The last eighth of the table is kept for short stacks, so that a program that makes hundreds
	 * of thousands of distinct stacks at start-up (libtorch's operator registration does) still
	 * gives the sites that appear later (a leak in the training loop) their own site and innermost
	 * frames instead of the frameless overflow site. A small table (MGPROBE_MAX_SITES below
	 * 65536, set to save memory or in tests) has no such reserve. */
	table.trunc_at = max_sites >= 65536 ? max_sites - max_sites / 8 : UINT32_MAX;
	/* Retirement saves memory where there are many sites (PyTorch's import leaves 2 * 10^5 that
	 * hold a little and never change); below that every stack stays in memory, for mgmon. The
	 * frame tree is compacted once a quarter as many node ids are free (and over half of them:
	 * mgp_stacks_compact_due): the torch sample's tree ends its import with ~10^4 nodes in use
	 * among ~6 * 10^4 ids, 1.3 MiB of chunks and index that a threshold of retire_from kept for
	 * the whole run. */
	table.retire_from = max_sites / 16;
	/* id 0 is "none"; id 1 is the overflow site used when the table is full. */
	table.used = 1;
	__atomic_store_n(&table.high, 2, __ATOMIC_RELEASE);
	return 0;
}

uint32_t mgp_sites_count(void)
{
	return __atomic_load_n(&table.high, __ATOMIC_ACQUIRE);
}

uint32_t mgp_sites_used(void)
{
	return __atomic_load_n(&table.used, __ATOMIC_RELAXED);
}

uint64_t mgp_sites_index_bytes(void)
{
	return sizeof *table.index + (table.index->mask + 1) * sizeof table.index->slot[0];
}

uint32_t mgp_sites_created(void)
{
	return __atomic_load_n(&table.created, __ATOMIC_RELAXED);
}

unsigned mgp_site_frames(uint32_t id, uint64_t *out, unsigned cap)
{
	return mgp_stacks_walk(mgp_site_leaf(id), out, cap);
}

/* A site's innermost node, to change it (sites lock held). */
static inline uint32_t *leaf_of(uint32_t id)
{
	return (uint32_t *)mgp_chunk_at(&mgp_site_leaves, id);
}

/* A site's variance (sampled runs), its chunk mapped by the first delta that carries one, from
 * any thread: the loser of a race gives its chunk back. */
static void var_add(uint32_t id, int64_t v)
{
	char **slot = &mgp_site_vars.chunk[id >> SITE_SHIFT];
	if (!__atomic_load_n(slot, __ATOMIC_ACQUIRE)) {
		size_t bytes = mgp_site_vars.esize << SITE_SHIFT;
		char *p = mgp_os_alloc(bytes), *none = NULL;
		if (!p)
			return; /* the band is lost, the counts stay exact */
		if (!__atomic_compare_exchange_n(slot, &none, p, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
			mgp_os_free(p, bytes);
	}
	__atomic_fetch_add((uint64_t *)mgp_chunk_at(&mgp_site_vars, id), (uint64_t)v, __ATOMIC_RELAXED);
}

static void var_zero(uint32_t id)
{
	uint64_t *v = mgp_chunk_find(&mgp_site_vars, id);
	if (v)
		__atomic_store_n(v, 0, __ATOMIC_RELAXED);
}

/* ---- lookup and insertion ---- */

/* A slot holds the site id in the low 24 bits and the top 8 bits of the stack's first hash above
 * them (a probe that meets another stack's slot reads that site's identity once in 256). A site's
 * home in the table comes from its second hash, which its identity keeps (fp), so the table grows
 * and deletes with the identities, never the stacks; 4 bytes a slot instead of 8 (issue 16: the
 * torch sample's 2.7 * 10^5 site ids take a table of 512k slots). A hit is confirmed by 8 bits
 * of the first hash and the 63 of the second, the depth and the kind. */
static inline uint32_t slot_make(uint64_t h1, uint32_t id)
{
	return (uint32_t)(h1 >> 56) << ID_BITS | id;
}

static inline uint64_t home_of(uint64_t h2, uint64_t mask)
{
	return (h2 >> 1) & mask; /* bit 0 of h2 is always set */
}

static inline uint64_t slot_home(uint32_t slot, uint64_t mask)
{
	return home_of(mgp_site_get(slot & ID_MASK)->fp, mask);
}

static inline int same_site(uint32_t slot, uint64_t h1, uint64_t h2, unsigned n, unsigned kind)
{
	if (slot >> ID_BITS != (uint32_t)(h1 >> 56))
		return 0;
	const struct mgp_site *s = mgp_site_get(slot & ID_MASK);
	return s->fp == h2 && s->nframes == n && s->kind == kind;
}

/* The id of a linked site for the hashes, or 0. Lock-free. */
static inline uint32_t lookup(const struct index *ix, uint64_t h1, uint64_t h2, unsigned n,
			      unsigned kind)
{
	for (uint64_t i = home_of(h2, ix->mask);; i = (i + 1) & ix->mask) {
		uint32_t s = __atomic_load_n(&ix->slot[i], __ATOMIC_ACQUIRE);
		if (!s)
			return 0;
		if (same_site(s, h1, h2, n, kind))
			return s & ID_MASK;
	}
}

static void slot_put(struct index *ix, uint32_t slot)
{
	uint64_t i = slot_home(slot, ix->mask);
	while (ix->slot[i])
		i = (i + 1) & ix->mask;
	__atomic_store_n(&ix->slot[i], slot, __ATOMIC_RELEASE);
	ix->used++;
}

/* The first hash of a site's stack, re-derived from the stack (relinking an evicted site). */
static uint64_t site_h1(uint32_t id)
{
	uint64_t f[MGC_MAX_FRAMES];
	uintptr_t u[MGC_MAX_FRAMES];
	const struct mgp_site *s = mgp_site_get(id);
	unsigned n = mgp_stacks_walk(*leaf_of(id), f, MGC_MAX_FRAMES);
	for (unsigned i = 0; i < n; i++)
		u[i] = (uintptr_t)f[i];
	uint64_t h1, h2;
	hash_stack(u, n, s->kind, &h1, &h2);
	return h1;
}

/* Keeps the table at most half full: a new one twice the size replaces it (lock held). */
static int index_room(void)
{
	struct index *ix = table.index;
	if ((ix->used + 1) * 2 <= ix->mask + 1)
		return 0;
	if (table.nretired == RETIRED_MAX)
		return -ENOMEM;
	struct index *nx = index_new((ix->mask + 1) * 2);
	if (!nx)
		return -ENOMEM;
	for (uint64_t i = 0; i <= ix->mask; i++)
		if (ix->slot[i])
			slot_put(nx, ix->slot[i]);
	__atomic_store_n(&table.index, nx, __ATOMIC_RELEASE);
	table.retired[table.nretired++] = ix;
	return 0;
}

/* A free id, its chunks mapped; 0 when none (*full: because the table, or for a CUDA kind its
 * room, is full). Lock held. */
static uint32_t take_id(int cuda, int *full)
{
	uint32_t id = table.free;
	if (id) {
		table.free = *leaf_of(id);
		return id;
	}
	id = table.high;
	*full = id >= (cuda ? mgp_sites_capacity(table.max_sites) : table.max_sites);
	if (*full || mgp_chunks_ensure(&mgp_site_ids, id) < 0 || mgp_chunks_ensure(&mgp_site_leaves, id) < 0 ||
	    mgp_chunks_ensure(&mgp_site_cnts, id) < 0)
		return 0;
	return id;
}

/* The overflow site, for a stack that found no room; the first time the table was full, a line
 * (after the lock is released: the caller says it). */
static uint32_t no_room(int full, int *say)
{
	*say = full && !table.said_full;
	table.said_full |= full;
	return MGC_SITE_OVERFLOW;
}

static uint32_t insert(const uintptr_t *ips, unsigned n, unsigned kind, uint64_t h1, uint64_t h2, int *say)
{
	uint32_t id = lookup(table.index, h1, h2, n, kind);
	if (id)
		return id;
	uint32_t leaf;
	int full = 0;
	if (index_room() < 0 || !(id = take_id(mgc_kind_is_cuda(kind) != 0, &full)))
		return no_room(full, say);
	if (mgp_stacks_intern(ips, n, &leaf) < 0) {
		if (id == table.high)
			return 1;
		*leaf_of(id) = table.free; /* back on the free list */
		table.free = id;
		return 1;
	}
	struct mgp_site *s = (struct mgp_site *)mgp_site_get(id);
	*s = (struct mgp_site){.fp = h2, .nframes = (uint16_t)n, .kind = (uint16_t)kind};
	__atomic_store_n(leaf_of(id), leaf, __ATOMIC_RELAXED); /* published with its slot */
	struct mgp_site_counts *c = mgp_site_counts(id);
	memset(c, 0, sizeof *c); /* in use (MGP_SITE_LINKED), nothing done */
	var_zero(id);
	table.used++;
	table.created++;
	if (id == table.high)
		__atomic_store_n(&table.high, id + 1, __ATOMIC_RELEASE);
	slot_put(table.index, slot_make(h1, id));
	return id;
}

/* A retired site seen again: its stack interned again, under the lock (the id and counters
 * never left). Out of memory, it goes on without frames in memory (the trace has them), and *bare
 * says so: such an answer is not noted. */
static uint32_t revive(uint32_t id, const uintptr_t *ips, unsigned n, int *bare)
{
	uint32_t leaf;
	pthread_mutex_lock(&table.lock);
	if (!*leaf_of(id) && mgp_stacks_intern(ips, n, &leaf) == 0)
		__atomic_store_n(leaf_of(id), leaf, __ATOMIC_RELEASE);
	*bare = !*leaf_of(id);
	pthread_mutex_unlock(&table.lock);
	return id;
}

/* An answer a thread noted (its memo, its recent sites), still the table's: no site has been taken
 * out of lookups or retired since it was noted (an id could have been freed and given to another
 * stack; a retired site, with no stack in memory, goes the long way, to be revived). Only sites
 * with a stack in memory are noted, so a hit reads nothing of the site's (its leaf was a cache
 * miss of every hit in the torch sample's steps). */
static inline uint32_t still_found(uint32_t id, uint32_t noted, uint32_t unlinks)
{
	return noted == unlinks ? id : 0;
}

/* Each thread's last interned stack and its site, in its block of caches (mgp_tcache.h): a stack
 * interned again right away (a loop's allocation) skips the hashing and the shared table's two
 * cache misses. With the identity of the native frames it came from (mgp_unwind_stack_id), the
 * same identity says its first `fixed` frames are the same, and only the rest (a Python stack's
 * Python frames; none in a native stack) are compared. 64 frames at most. */
#define MEMO_FRAMES 64u
struct memo {
	uint32_t id; /* 0: none */
	uint32_t unlinks;
	uint16_t n, kind;
	uint32_t fixed;
	uint64_t stack_id; /* 0: none */
	uintptr_t ips[MEMO_FRAMES];
};
_Static_assert(sizeof(struct memo) <= MGP_TCACHE_MEMO_BYTES, "the memo's part of the block");

static inline uint32_t memo_hit(const struct memo *m, const uintptr_t *ips, unsigned n, unsigned kind,
				uint32_t unlinks, uint64_t stack_id, unsigned fixed)
{
	if (m->id == 0 || m->n != n || m->kind != kind)
		return 0;
	unsigned i = stack_id && m->stack_id == stack_id && m->fixed == fixed ? fixed : 0;
	for (; i < n; i++)
		if (m->ips[i] != ips[i])
			return 0;
	return still_found(m->id, m->unlinks, unlinks);
}

static inline void memo_put(struct memo *m, const uintptr_t *ips, unsigned n, unsigned kind, uint32_t id,
			    uint32_t unlinks, uint64_t stack_id, unsigned fixed)
{
	m->id = 0;
	if (id < 2 || n > MEMO_FRAMES) /* 0 and 1: no site (out of room, out of memory) */
		return;
	memcpy(m->ips, ips, n * sizeof *ips);
	m->n = (uint16_t)n;
	m->kind = (uint16_t)kind;
	m->unlinks = unlinks;
	m->fixed = fixed;
	m->stack_id = stack_id;
	m->id = id;
}

/* Each thread's last sites found, direct-mapped by the stack's first hash, in its block of caches
 * (mgp_tcache.h: not in TLS, which small thread stacks pay for): the answer the shared table gave
 * for the same hashes, valid while still_found. In the torch sample's steps the shared table's
 * slot (2 MiB) was a cache miss half of the time the lookup took. 16 bytes an entry, so that 2048
 * fit the part (256 of 32 bytes hit 41% of the steps' lookups): the first hash whole, the site id
 * with the second hash's top 8 bits above it (a hit is confirmed by 72 bits, as the shared
 * table's is by 71: the depth and the kind are in both hashes). No intern runs nested on one
 * thread (the hooks' guard), so an entry is never read half written. */
#define RECENT_BITS 11u
struct recent {
	uint64_t h1;
	uint32_t id_h2; /* the id, the top 8 bits of the second hash above it; 0: empty */
	uint32_t unlinks;
};
_Static_assert(sizeof(struct recent) << RECENT_BITS <= MGP_TCACHE_BIG, "the sites' part of the block");

/* This thread's entry for h1 in its block b, or NULL (no block). */
static inline struct recent *recent_of(char *b, uint64_t h1)
{
	if (!b)
		return NULL;
	return &((struct recent *)(void *)(b + MGP_TCACHE_SITES))[h1 & ((1u << RECENT_BITS) - 1)];
}

static inline uint32_t recent_key(uint64_t h2, uint32_t id)
{
	return (uint32_t)(h2 >> 56) << ID_BITS | id;
}

static inline uint32_t recent_hit(const struct recent *r, uint64_t h1, uint64_t h2, uint32_t unlinks)
{
	if (!r || r->h1 != h1 || r->id_h2 >> ID_BITS != (uint32_t)(h2 >> 56) || !(r->id_h2 & ID_MASK))
		return 0;
	return still_found(r->id_h2 & ID_MASK, r->unlinks, unlinks);
}

static inline void recent_put(struct recent *r, uint64_t h1, uint64_t h2, uint32_t id, uint32_t unlinks)
{
	if (r)
		*r = (struct recent){h1, recent_key(h2, id), unlinks};
}

static uint32_t intern(char *b, const uintptr_t *ips, unsigned n, unsigned kind, uint32_t unlinks, int *bare);

uint32_t mgp_sites_intern_known(const uintptr_t *ips, unsigned n, unsigned kind, uint64_t stack_id,
				unsigned fixed)
{
	char *b = mgp_tcache_block();
	struct memo *m = b ? (struct memo *)(void *)(b + MGP_TCACHE_MEMO) : NULL;
	uint32_t unlinks = __atomic_load_n(&table.unlinks, __ATOMIC_RELAXED);
	uint32_t id = m ? memo_hit(m, ips, n, kind, unlinks, stack_id, fixed) : 0;
	if (id)
		return id;
	int bare = 0;
	id = intern(b, ips, n, kind, unlinks, &bare);
	if (m && !bare)
		memo_put(m, ips, n, kind, id, unlinks, stack_id, fixed);
	return id;
}

uint32_t mgp_sites_intern(const uintptr_t *ips, unsigned n, unsigned kind)
{
	return mgp_sites_intern_known(ips, n, kind, 0, 0);
}

/* The lookup proper: the thread's recent sites, the shared table, then under the lock a new site.
 * unlinks: table.unlinks before the lookup began; *bare set when the site has frames but none in
 * memory (retired, and not revived for want of memory). Only sites with their stack in memory are
 * noted (still_found). */
static uint32_t intern(char *b, const uintptr_t *ips, unsigned n, unsigned kind, uint32_t unlinks, int *bare)
{
	uint64_t h1, h2;
	hash_stack(ips, n, kind, &h1, &h2);
	struct recent *r = recent_of(b, h1);
	uint32_t id = recent_hit(r, h1, h2, unlinks);
	if (id)
		return id;
	id = lookup(__atomic_load_n(&table.index, __ATOMIC_ACQUIRE), h1, h2, n, kind);
	if (__builtin_expect(id != 0, 1)) {
		if (__builtin_expect(n && !mgp_site_leaf(id), 0))
			return revive(id, ips, n, bare);
		recent_put(r, h1, h2, id, unlinks);
		return id;
	}
	if (n > TRUNC_FRAMES && !mgc_kind_is_cuda(kind) &&
	    __atomic_load_n(&table.used, __ATOMIC_RELAXED) >= table.trunc_at)
		return intern(b, ips, TRUNC_FRAMES, kind, unlinks, bare);
	int say = 0;
	pthread_mutex_lock(&table.lock);
	id = insert(ips, n, kind, h1, h2, &say);
	pthread_mutex_unlock(&table.lock);
	if (say)
		mgp_log("the site table is full (MGPROBE_MAX_SITES=%u): allocations from new stacks "
			"go unattributed, into one site without a stack (the report says how many); "
			"raise MGPROBE_MAX_SITES", table.max_sites);
	else if (id >= 2 && n && !mgp_site_leaf(id)) /* found retired under the lock */
		return revive(id, ips, n, bare);
	else if (id >= 2) /* 1: no site (out of room, out of memory) */
		recent_put(r, h1, h2, id, unlinks);
	return id;
}

/* ---- counters ---- */

static inline void mark(uint32_t id, unsigned bits)
{
	struct mgp_site_counts *c = mgp_site_counts(id);
	if ((__atomic_load_n(&c->dirty, __ATOMIC_RELAXED) & bits) != bits)
		__atomic_fetch_or(&c->dirty, (uint8_t)bits, __ATOMIC_RELAXED);
	uint64_t bit = 1ull << (id & 63);
	uint64_t *w = &table.dirty_words[id >> 6];
	/* Already marked (the common case for a busy site): a plain load, no write. */
	if (__atomic_load_n(w, __ATOMIC_RELAXED) & bit)
		return;
	__atomic_fetch_or(w, bit, __ATOMIC_RELEASE);
	__atomic_fetch_or(&table.dirty_sum[id >> 12], 1ull << ((id >> 6) & 63), __ATOMIC_RELEASE);
}

void mgp_sites_mark(uint32_t id, unsigned bits)
{
	mark(id, bits);
}

/* The full cohort array of a site, made on first need. NULL when out of memory. */
static uint64_t *cohort_array(struct mgp_site_counts *c)
{
	uint32_t x = __atomic_load_n(&c->coh_ext, __ATOMIC_ACQUIRE);
	if (x)
		return mgp_chunk_at(&table.coh, x - 1);
	mgp_spin_lock(&table.coh_lock);
	x = c->coh_ext;
	if (!x) {
		uint32_t k = table.coh_free;
		if (k)
			table.coh_free = (uint32_t)*(uint64_t *)mgp_chunk_at(&table.coh, k - 1);
		else if (mgp_chunks_ensure(&table.coh, table.coh_high) == 0)
			k = ++table.coh_high;
		if (k) {
			memset(mgp_chunk_at(&table.coh, k - 1), 0, MGC_COHORTS * sizeof(uint64_t));
			__atomic_store_n(&c->coh_ext, k, __ATOMIC_RELEASE);
		}
		x = k;
	}
	mgp_spin_unlock(&table.coh_lock);
	return x ? mgp_chunk_at(&table.coh, x - 1) : NULL;
}

/* The first bucket a site uses costs nothing (its bytes are the live bytes less the others'):
 * most sites only ever have one. */
static void cohort_add(struct mgp_site_counts *c, unsigned bucket, int64_t d)
{
	uint8_t b = __atomic_load_n(&c->coh0, __ATOMIC_ACQUIRE);
	if (!b) {
		uint8_t want = 0;
		__atomic_compare_exchange_n(&c->coh0, &want, (uint8_t)(bucket + 1), 0, __ATOMIC_ACQ_REL,
					    __ATOMIC_ACQUIRE);
		b = want ? want : (uint8_t)(bucket + 1);
	}
	if (b == bucket + 1)
		return;
	uint64_t *a = cohort_array(c);
	if (a) /* else the bucket is lost, the site's live bytes stay exact */
		__atomic_fetch_add(&a[bucket], (uint64_t)d, __ATOMIC_RELAXED);
}

uint64_t mgp_site_cohort(const struct mgp_site_counts *c, unsigned k)
{
	uint8_t b = __atomic_load_n(&c->coh0, __ATOMIC_ACQUIRE);
	uint32_t x = __atomic_load_n(&c->coh_ext, __ATOMIC_ACQUIRE);
	const uint64_t *a = x ? mgp_chunk_at(&table.coh, x - 1) : NULL;
	if (k + 1 != b)
		return a ? __atomic_load_n(&a[k], __ATOMIC_RELAXED) : 0;
	uint64_t v = __atomic_load_n(&c->live_bytes, __ATOMIC_RELAXED);
	for (unsigned j = 0; a && j < MGC_COHORTS; j++)
		if (j != k)
			v -= __atomic_load_n(&a[j], __ATOMIC_RELAXED);
	return v;
}

/* Which of the totals' slots a site's kind counts in: heap, anonymous mmap, CUDA. */
static unsigned total_slot(unsigned kind)
{
	return kind == MGC_KIND_MMAP ? 1 : mgc_kind_is_cuda(kind) ? 2 : 0;
}

static void cell_add(uint16_t kind, int64_t dbytes, int64_t dcount)
{
	mgp_spin_lock(&table.cells_lock);
	uint32_t c = 0;
	while (c < table.ncells && table.cells[c].kind != kind)
		c++;
	if (c == table.ncells && table.ncells < 32)
		table.cells[table.ncells++] = (struct mgc_devmem_cell){.kind = kind};
	if (c < table.ncells) {
		table.cells[c].bytes += (uint64_t)dbytes;
		table.cells[c].count += (uint32_t)dcount;
	}
	mgp_spin_unlock(&table.cells_lock);
}

void mgp_site_apply(const struct mgp_delta *d)
{
	uint32_t id = d->key >> 5;
	struct mgp_site_counts *c = mgp_site_counts(id);
	int64_t dcount = (int64_t)(d->allocs - d->frees);
	uint64_t before = __atomic_fetch_add(&c->live_bytes, (uint64_t)d->live, __ATOMIC_RELAXED);
	if (d->allocs) {
		__atomic_fetch_add(&c->allocs, d->allocs, __ATOMIC_RELAXED);
		__atomic_fetch_add(&c->alloc_bytes, d->alloc_bytes, __ATOMIC_RELAXED);
	}
	if (d->frees)
		__atomic_fetch_add(&c->frees, d->frees, __ATOMIC_RELAXED);
	if (d->var)
		var_add(id, d->var);
	if (d->live)
		cohort_add(c, d->key & 31, d->live);
	uint64_t top = before + (uint64_t)d->peak, peak = __atomic_load_n(&c->peak_bytes, __ATOMIC_RELAXED);
	while (top > peak && top < (1ull << 62) &&
	       !__atomic_compare_exchange_n(&c->peak_bytes, &peak, top, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
	unsigned kind = mgp_site_get(id)->kind, k = total_slot(kind);
	__atomic_fetch_add(&table.tot.live[k], (uint64_t)d->live, __ATOMIC_RELAXED);
	__atomic_fetch_add(&table.tot.count[k], (uint64_t)dcount, __ATOMIC_RELAXED);
	__atomic_fetch_add(&table.tot.allocs, d->allocs, __ATOMIC_RELAXED);
	__atomic_fetch_add(&table.tot.frees, d->frees, __ATOMIC_RELAXED);
	if (k == 2)
		cell_add((uint16_t)kind, d->live, dcount);
	if (__atomic_load_n(&c->quiet, __ATOMIC_RELAXED))
		__atomic_store_n(&c->quiet, 0, __ATOMIC_RELAXED);
	mark(id, d->live || dcount ? MGP_SITE_LIVE : MGP_SITE_CHURN);
}

void mgp_site_on_alloc(uint32_t site, uint64_t size, unsigned bucket)
{
	struct mgp_delta d = {.key = mgp_delta_key(site, bucket), .allocs = 1, .alloc_bytes = size,
			      .live = (int64_t)size, .peak = (int64_t)size};
	mgp_site_apply(&d);
}

void mgp_site_on_free(uint32_t site, uint64_t size, unsigned bucket)
{
	struct mgp_delta d = {.key = mgp_delta_key(site, bucket), .frees = 1, .live = -(int64_t)size};
	mgp_site_apply(&d);
}

void mgp_sites_totals(struct mgp_totals *out)
{
	for (unsigned k = 0; k < 3; k++) {
		out->live[k] = __atomic_load_n(&table.tot.live[k], __ATOMIC_RELAXED);
		out->count[k] = __atomic_load_n(&table.tot.count[k], __ATOMIC_RELAXED);
	}
	out->allocs = __atomic_load_n(&table.tot.allocs, __ATOMIC_RELAXED);
	out->frees = __atomic_load_n(&table.tot.frees, __ATOMIC_RELAXED);
}

uint32_t mgp_sites_cuda_cells(struct mgc_devmem_cell *out, uint32_t max)
{
	mgp_spin_lock(&table.cells_lock);
	uint32_t n = table.ncells < max ? table.ncells : max;
	memcpy(out, table.cells, n * sizeof *out);
	mgp_spin_unlock(&table.cells_lock);
	return n;
}

uint32_t mgp_sites_take_dirty(uint32_t *ids)
{
	uint32_t n = 0; /* the CUDA room's ids too */
	size_t dwords = ((size_t)mgp_sites_capacity(table.max_sites) + 63) / 64, dsum = (dwords + 63) / 64;
	for (size_t k = 0; k < dsum; k++) {
		if (!__atomic_load_n(&table.dirty_sum[k], __ATOMIC_RELAXED))
			continue;
		uint64_t sum = __atomic_exchange_n(&table.dirty_sum[k], 0, __ATOMIC_ACQUIRE);
		while (sum) {
			size_t wi = k * 64 + (size_t)__builtin_ctzll(sum);
			sum &= sum - 1;
			uint64_t bits = __atomic_exchange_n(&table.dirty_words[wi], 0, __ATOMIC_ACQUIRE);
			while (bits) {
				ids[n++] = (uint32_t)(wi * 64 + (size_t)__builtin_ctzll(bits));
				bits &= bits - 1;
			}
		}
	}
	return n;
}

/* ---- eviction ---- */

static void retire_end(void);

static int holds_nothing(const struct mgp_site_counts *c)
{
	return __atomic_load_n(&c->live_bytes, __ATOMIC_RELAXED) == 0 &&
	       __atomic_load_n(&c->allocs, __ATOMIC_RELAXED) == __atomic_load_n(&c->frees, __ATOMIC_RELAXED);
}

static uint64_t ops(const struct mgp_site_counts *c)
{
	return __atomic_load_n(&c->allocs, __ATOMIC_RELAXED) + __atomic_load_n(&c->frees, __ATOMIC_RELAXED);
}

/* The sites being evicted (unlinked, or detached and waiting to be empty), by id. */
static void push_gone(uint32_t id)
{
	if (mgp_chunks_ensure(&table.gone, table.ngone) == 0)
		*(uint32_t *)mgp_chunk_at(&table.gone, table.ngone++) = id;
	else
		mgp_site_counts(id)->state = MGP_SITE_DETACHED; /* lost track: it stays, empty */
}

/* Takes a linked site out of the lookup table (lock held). */
static void unlink_site(uint32_t id)
{
	struct index *ix = table.index;
	uint64_t i = home_of(mgp_site_get(id)->fp, ix->mask);
	while ((ix->slot[i] & ID_MASK) != id)
		i = (i + 1) & ix->mask;
	/* Backward-shift deletion, each move one atomic store: a lookup racing with it may miss its
	 * site and go to the locked path, which finds it, but never reads a torn slot. */
	for (uint64_t j = (i + 1) & ix->mask; ix->slot[j]; j = (j + 1) & ix->mask) {
		uint64_t k = slot_home(ix->slot[j], ix->mask);
		if (((j - k) & ix->mask) >= ((j - i) & ix->mask)) {
			__atomic_store_n(&ix->slot[i], ix->slot[j], __ATOMIC_RELEASE);
			i = j;
		}
	}
	__atomic_store_n(&ix->slot[i], 0, __ATOMIC_RELEASE);
	ix->used--;
	__atomic_add_fetch(&table.unlinks, 1, __ATOMIC_RELAXED);
	mgp_site_counts(id)->state = MGP_SITE_UNLINKED;
	push_gone(id);
}

static int push_candidate(uint32_t id, uint64_t o)
{
	if (mgp_chunks_ensure(&table.cand, table.ncand) < 0)
		return -ENOMEM;
	*(struct candidate *)mgp_chunk_at(&table.cand, table.ncand++) = (struct candidate){id, 0, o};
	return 0;
}

void mgp_sites_evict_unlink(int (*written)(uint32_t id), int quiet_too)
{
	pthread_mutex_lock(&table.lock);
	/* Last pass's candidates that stayed quiet (the same allocations and frees) and empty; the
	 * others changed, so they are among the changed sites below. */
	for (uint32_t i = 0; i < table.ncand && quiet_too; i++) {
		struct candidate *cd = mgp_chunk_at(&table.cand, i);
		struct mgp_site_counts *c = mgp_site_counts(cd->id);
		if (c->state == MGP_SITE_LINKED && !written(cd->id) && holds_nothing(c) && ops(c) == cd->ops &&
		    __atomic_load_n(&c->allocs, __ATOMIC_RELAXED) < MGP_SITES_KEEP_ALLOCS)
			unlink_site(cd->id);
	}
	if (quiet_too)
		table.ncand = 0;
	/* The sites changed since the last snapshot (peeked, not taken: the snapshot takes them). */
	size_t dwords = ((size_t)table.high + 63) / 64;
	for (size_t w = 0; w < dwords; w++) {
		for (uint64_t bits = __atomic_load_n(&table.dirty_words[w], __ATOMIC_RELAXED); bits; bits &= bits - 1) {
			uint32_t id = (uint32_t)(w * 64 + (size_t)__builtin_ctzll(bits));
			struct mgp_site_counts *c = mgp_site_counts(id);
			uint64_t allocs = __atomic_load_n(&c->allocs, __ATOMIC_RELAXED);
			if (id < 2 || id < table.inherited || c->state != MGP_SITE_LINKED || written(id) ||
			    !holds_nothing(c) ||
			    allocs >= MGP_SITES_KEEP_ALLOCS || mgc_kind_is_cuda(mgp_site_get(id)->kind))
				continue;
			if (allocs <= 1)
				unlink_site(id); /* one allocation, freed: a start-up transient */
			else if (quiet_too)
				push_candidate(id, ops(c));
		}
	}
	table.created = 0;
	mgp_chunks_shrink(&table.cand, table.ncand);
	pthread_mutex_unlock(&table.lock);
}

/* Gives an empty site's cohort array back (no delta of the site may be in flight). */
static void cohort_free(struct mgp_site_counts *c)
{
	if (c->coh_ext) {
		mgp_spin_lock(&table.coh_lock);
		*(uint64_t *)mgp_chunk_at(&table.coh, c->coh_ext - 1) = table.coh_free;
		table.coh_free = c->coh_ext;
		mgp_spin_unlock(&table.coh_lock);
	}
	__atomic_store_n(&c->coh_ext, 0, __ATOMIC_RELEASE);
	__atomic_store_n(&c->coh0, 0, __ATOMIC_RELEASE);
}

/* Frees an unlinked site that stayed empty: its stack, cohort array and id. */
static void free_site(uint32_t id)
{
	struct mgp_site *s = (struct mgp_site *)mgp_site_get(id);
	struct mgp_site_counts *c = mgp_site_counts(id);
	mgp_stacks_release(*leaf_of(id));
	cohort_free(c);
	__atomic_fetch_and(&table.dirty_words[id >> 6], ~(1ull << (id & 63)), __ATOMIC_RELAXED);
	memset(c, 0, sizeof *c);
	c->state = MGP_SITE_FREE;
	*s = (struct mgp_site){0};
	*leaf_of(id) = table.free;
	table.free = id;
	table.used--;
}

/* An unlinked site that was given an allocation while it was being evicted: back into lookups,
 * unless a newer site has its stack by now (then it stays detached until it is empty). */
static int relink(uint32_t id)
{
	const struct mgp_site *s = mgp_site_get(id);
	uint64_t h1 = site_h1(id);
	if (lookup(table.index, h1, s->fp, s->nframes, s->kind) || index_room() < 0)
		return 0;
	slot_put(table.index, slot_make(h1, id));
	mgp_site_counts(id)->state = MGP_SITE_LINKED;
	return 1;
}

void mgp_sites_evict_free(int (*written)(uint32_t id))
{
	pthread_mutex_lock(&table.lock);
	for (uint32_t r = 0; r < table.nretired; r++)
		index_free(table.retired[r]);
	table.nretired = 0;
	uint32_t keep = 0;
	for (uint32_t i = 0; i < table.ngone; i++) {
		uint32_t id = *(uint32_t *)mgp_chunk_at(&table.gone, i);
		struct mgp_site_counts *c = mgp_site_counts(id);
		if (written(id))
			c->state = MGP_SITE_DETACHED; /* in the trace now: it stays */
		else if (holds_nothing(c))
			free_site(id);
		else if (c->state == MGP_SITE_DETACHED || !relink(id)) {
			c->state = MGP_SITE_DETACHED;
			*(uint32_t *)mgp_chunk_at(&table.gone, keep++) = id;
		}
	}
	table.ngone = keep;
	mgp_chunks_shrink(&table.gone, keep);
	pthread_mutex_unlock(&table.lock);
	retire_end();
}

/* ---- retirement ---- */

uint32_t mgp_sites_retired(void)
{
	return __atomic_load_n(&table.nretired_sites, __ATOMIC_RELAXED);
}

/* Whether site id may retire: written, linked, holding under RETIRE_LIVE_MAX, with a stack in
 * memory, not CUDA. */
static int retirable(uint32_t id, int (*written)(uint32_t id))
{
	const struct mgp_site *s = mgp_site_get(id);
	const struct mgp_site_counts *c = mgp_site_counts(id);
	return *leaf_of(id) && c->state == MGP_SITE_LINKED &&
	       __atomic_load_n(&c->live_bytes, __ATOMIC_RELAXED) < RETIRE_LIVE_MAX &&
	       !mgc_kind_is_cuda(s->kind) && written(id);
}

/* An unwritten site that held nothing through two scans: evicted (the changed-site pass of
 * mgp_sites_evict_unlink sees only sites that changed, and one that went quiet between passes
 * would stay). */
static int evictable(uint32_t id, int (*written)(uint32_t id))
{
	const struct mgp_site_counts *c = mgp_site_counts(id);
	return c->state == MGP_SITE_LINKED && holds_nothing(c) &&
	       __atomic_load_n(&c->allocs, __ATOMIC_RELAXED) < MGP_SITES_KEEP_ALLOCS &&
	       !mgc_kind_is_cuda(mgp_site_get(id)->kind) && !written(id);
}

struct mgp_retire_scan mgp_sites_retire_begin(int (*written)(uint32_t id))
{
	struct mgp_retire_scan scan = {0, 0};
	if (table.used < table.retire_from)
		return scan;
	pthread_mutex_lock(&table.lock);
	uint32_t high = table.high;
	for (uint32_t id = table.inherited > 2 ? table.inherited : 2; id < high; id++) {
		int evict = 0;
		/* Retired (no stack in memory) and written: neither retires nor is evicted. Decided
		 * from 4 bytes and a bit, not the 48 of its counters: the torch sample's ~2.2 * 10^5
		 * retired sites were 12 MiB read by every tick's scan. */
		if (!*leaf_of(id) && written(id))
			continue;
		if (!retirable(id, written) && !(evict = evictable(id, written)))
			continue;
		struct mgp_site_counts *c = mgp_site_counts(id);
		if (!__atomic_load_n(&c->quiet, __ATOMIC_RELAXED)) {
			__atomic_store_n(&c->quiet, 1, __ATOMIC_RELAXED); /* retires at the next scan */
			scan.marked++;
			continue;
		}
		scan.taken++;
		if (evict) {
			unlink_site(id);
			continue;
		}
		if (mgp_chunks_ensure(&table.ret, table.nret) < 0) {
			scan.taken--;
			break;
		}
		*(struct retiring *)mgp_chunk_at(&table.ret, table.nret++) = (struct retiring){id, *leaf_of(id)};
		__atomic_store_n(leaf_of(id), 0, __ATOMIC_RELEASE);
		__atomic_add_fetch(&table.unlinks, 1, __ATOMIC_RELEASE); /* the threads' notes of it */
	}
	pthread_mutex_unlock(&table.lock);
	return scan;
}

static void retire_end(void)
{
	pthread_mutex_lock(&table.lock);
	for (uint32_t i = 0; i < table.nret; i++) {
		const struct retiring *r = mgp_chunk_at(&table.ret, i);
		uint32_t *leaf = leaf_of(r->id);
		struct mgp_site_counts *c = mgp_site_counts(r->id);
		if (!*leaf && !__atomic_load_n(&c->quiet, __ATOMIC_RELAXED)) {
			/* Changed through a lookup made before `begin`: it keeps its stack. */
			__atomic_store_n(leaf, r->leaf, __ATOMIC_RELEASE);
			continue;
		}
		mgp_stacks_release(r->leaf); /* a revived site holds a reference of its own */
		if (*leaf)
			continue;
		if (holds_nothing(c))
			cohort_free(c);
		table.nretired_sites++;
	}
	table.nret = 0;
	mgp_chunks_shrink(&table.ret, 0);
	pthread_mutex_unlock(&table.lock);
}

int mgp_sites_compact(void)
{
	pthread_mutex_lock(&table.lock);
	int done = table.nret == 0 && mgp_stacks_compact_due(table.retire_from / 4) && mgp_stacks_compact_start() == 0;
	for (uint32_t id = 2; done && id < table.high; id++) {
		uint32_t *leaf = leaf_of(id);
		if (mgp_site_counts(id)->state != MGP_SITE_FREE && *leaf)
			__atomic_store_n(leaf, mgp_stacks_compact_move(*leaf), __ATOMIC_RELEASE);
	}
	if (done)
		mgp_stacks_compact_finish();
	pthread_mutex_unlock(&table.lock);
	return done;
}

void mgp_sites_forget_cuda(void)
{
	/* The parent's CUDA calls and GPU memory are not the child's: its CUDA sites are emptied,
	 * counts too, for a child whose trace stands alone (a child whose trace refers to the parent's
	 * starts its counters afresh, and readers take its CUDA sites from zero). */
	uint32_t n = mgp_sites_count();
	for (uint32_t id = 1; id < n; id++) {
		struct mgp_site_counts *c = mgp_site_counts(id);
		if (c->state == MGP_SITE_FREE || !mgc_kind_is_cuda(mgp_site_get(id)->kind) || !c->allocs)
			continue;
		c->live_bytes = c->allocs = c->alloc_bytes = c->frees = c->peak_bytes = 0;
		var_zero(id);
		if (c->coh_ext)
			memset(mgp_chunk_at(&table.coh, c->coh_ext - 1), 0, MGC_COHORTS * sizeof(uint64_t));
		mark(id, MGP_SITE_LIVE);
	}
	table.tot.live[2] = table.tot.count[2] = 0;
	for (uint32_t k = 0; k < table.ncells; k++)
		table.cells[k].bytes = table.cells[k].count = 0;
	table.ncells = 0;
}

/* A table's chunks replaced by new zeroed pages (a forked child's counters start afresh). */
static int fresh_chunks(struct mgp_chunks *t)
{
	for (unsigned k = 0; k < MGP_CHUNKS_MAX; k++) {
		if (!t->chunk[k])
			continue; /* the variances' chunks need not be consecutive */
		size_t bytes = t->esize << t->shift;
		char *fresh = mgp_os_alloc(bytes);
		if (!fresh)
			return -ENOMEM;
		mgp_os_free(t->chunk[k], bytes);
		t->chunk[k] = fresh;
	}
	return 0;
}

int mgp_sites_forked(void)
{
	table.inherited = table.high;
	table.free = 0; /* new sites go to fresh pages, not the parent's */
	table.ncand = table.ngone = table.nret = 0;
	table.created = 0;
	if (fresh_chunks(&mgp_site_cnts) < 0 || fresh_chunks(&mgp_site_vars) < 0)
		return -ENOMEM;
	for (unsigned k = 0; k < MGP_CHUNKS_MAX; k++) {
		mgp_os_free(table.coh.chunk[k], table.coh.esize << table.coh.shift);
		table.coh.chunk[k] = NULL;
	}
	table.coh_high = table.coh_free = 0;
	mgp_stacks_forked();
	return 0;
}

void mgp_sites_lock(void)
{
	pthread_mutex_lock(&table.lock);
}

void mgp_sites_unlock(void)
{
	pthread_mutex_unlock(&table.lock);
}
