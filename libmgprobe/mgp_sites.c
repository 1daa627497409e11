/* SPDX-License-Identifier: MIT */
/* mgp_sites.c: the stack-interning table. Open addressing over (hash, id) slots read lock-free;
 * a new stack is inserted under a mutex and published with a release store of its hash, so a
 * reader that sees the hash sees a complete site. Must never call malloc or free. */
#include "mgp_sites.h"

#include <errno.h>
#include <pthread.h>
#include <string.h>

#include "mgp_os.h"

#define FRAME_ARENA_FRAMES (16u << 20) /* at least 128 MiB of address space, touched as used */
#define FRAMES_PER_SITE 48u            /* arena frames reserved per site (torch averages ~45) */
#define TRUNC_FRAMES 12u               /* stack depth kept once the table is nearly full */

struct slot {
	uint64_t hash; /* 0 = empty; published last, with release */
	uint32_t id;
	uint32_t pad;
};

/* The site table: new stacks are inserted under `lock`; lookups and counters are lock-free. */
static struct {
	struct slot *slots;
	uint64_t mask;
	struct mgp_site *sites;
	uint32_t max_sites;
	uint32_t count;        /* next id; ids < count are published */
	uint32_t trunc_at;     /* from this id on, new stacks keep only TRUNC_FRAMES frames */
	uint64_t *frames;
	uint64_t frames_cap, frames_trunc_at;
	uint64_t frames_used;
	int said_full;         /* the one line about a full table is written (under lock) */
	pthread_mutex_t lock;
} table = {.lock = PTHREAD_MUTEX_INITIALIZER};

uint64_t *mgp_sites_dirty_words;
uint64_t *mgp_sites_dirty_sum;

/* One multiply per frame on the dependency chain (the fast path hashes every allocation's
 * stack), then a full mix once. */
static uint64_t hash_stack(const uintptr_t *ips, unsigned n, unsigned kind)
{
	uint64_t h = 0x9e3779b97f4a7c15ull ^ (uint64_t)kind ^ ((uint64_t)n << 8);
	for (unsigned i = 0; i < n; i++)
		h = (h ^ (uint64_t)ips[i]) * 0x9e3779b97f4a7c15ull;
	h = mgc_mix64(h);
	return h ? h : 1;
}

int mgp_sites_init(uint32_t max_sites)
{
	uint32_t cap = mgp_sites_capacity(max_sites);
	uint64_t nslots = 1;
	while (nslots < (uint64_t)cap * 2)
		nslots <<= 1;
	table.slots = mgp_os_alloc(nslots * sizeof(struct slot));
	table.sites = mgp_os_alloc((size_t)cap * sizeof(struct mgp_site));
	uint64_t frames_cap = (uint64_t)max_sites * FRAMES_PER_SITE;
	if (frames_cap < FRAME_ARENA_FRAMES)
		frames_cap = FRAME_ARENA_FRAMES;
	uint64_t frames_all = frames_cap + MGP_CUDA_SPARE_FRAMES;
	table.frames = mgp_os_alloc((size_t)frames_all * sizeof(uint64_t));
	size_t dwords = ((size_t)cap + 63) / 64, dsum = (dwords + 63) / 64;
	mgp_sites_dirty_words = mgp_os_alloc(dwords * 8);
	mgp_sites_dirty_sum = mgp_os_alloc(dsum * 8);
	if (!table.slots || !table.sites || !table.frames || !mgp_sites_dirty_words || !mgp_sites_dirty_sum) {
		mgp_os_free(mgp_sites_dirty_words, dwords * 8);
		mgp_os_free(mgp_sites_dirty_sum, dsum * 8);
		mgp_sites_dirty_words = mgp_sites_dirty_sum = NULL;
		mgp_os_free(table.slots, nslots * sizeof(struct slot));
		mgp_os_free(table.sites, (size_t)cap * sizeof(struct mgp_site));
		mgp_os_free(table.frames, (size_t)frames_all * sizeof(uint64_t));
		table.slots = NULL;
		table.sites = NULL;
		table.frames = NULL;
		return -ENOMEM;
	}
	table.mask = nslots - 1;
	table.max_sites = max_sites;
	/* The last eighth of the table (and of the frame arena) is kept for short stacks, so that a
	 * program that makes hundreds of thousands of distinct stacks at start-up (libtorch's operator
	 * registration does) still gives the sites that appear later (a leak in the training loop)
	 * their own site and innermost frames instead of the frameless overflow site. A small table
	 * (MGPROBE_MAX_SITES below 65536, set to save memory or in tests) has no such reserve. */
	int reserve = max_sites >= 65536;
	table.trunc_at = reserve ? max_sites - max_sites / 8 : UINT32_MAX;
	table.frames_cap = frames_cap;
	table.frames_trunc_at = reserve ? frames_cap - frames_cap / 8 : UINT64_MAX;
	/* id 0 is "none"; id 1 is the overflow site used when the table is full. */
	table.sites[MGC_SITE_OVERFLOW].hash = 0;
	table.sites[MGC_SITE_OVERFLOW].nframes = 0;
	table.sites[MGC_SITE_OVERFLOW].id = MGC_SITE_OVERFLOW;
	__atomic_store_n(&table.count, 2, __ATOMIC_RELEASE);
	return 0;
}

static int same_stack(const struct mgp_site *s, uint64_t h, const uintptr_t *ips, unsigned n,
		      unsigned kind)
{
	if (s->hash != h || s->nframes != n || s->kind != kind)
		return 0;
	const uint64_t *f = table.frames + s->frames_off;
	for (unsigned i = 0; i < n; i++)
		if (f[i] != (uint64_t)ips[i])
			return 0;
	return 1;
}

uint32_t mgp_sites_intern(const uintptr_t *ips, unsigned n, unsigned kind)
{
	uint64_t h = hash_stack(ips, n, kind);
	int cuda = mgc_kind_is_cuda(kind) != 0;
	int nearly_full = !cuda && n > TRUNC_FRAMES &&
			  (__atomic_load_n(&table.count, __ATOMIC_RELAXED) >= table.trunc_at ||
			   __atomic_load_n(&table.frames_used, __ATOMIC_RELAXED) >= table.frames_trunc_at);
	uint64_t i = h & table.mask;
	for (;;) {
		uint64_t sh = __atomic_load_n(&table.slots[i].hash, __ATOMIC_ACQUIRE);
		if (sh == 0)
			break;
		if (sh == h) {
			uint32_t id = table.slots[i].id;
			if (same_stack(&table.sites[id], h, ips, n, kind))
				return id;
		}
		i = (i + 1) & table.mask;
	}
	if (nearly_full)
		return mgp_sites_intern(ips, TRUNC_FRAMES, kind);

	/* Not found: insert under the lock, re-probing since another thread may have won. */
	pthread_mutex_lock(&table.lock);
	i = h & table.mask;
	for (;;) {
		uint64_t sh = table.slots[i].hash;
		if (sh == 0)
			break;
		if (sh == h) {
			uint32_t id = table.slots[i].id;
			if (same_stack(&table.sites[id], h, ips, n, kind)) {
				pthread_mutex_unlock(&table.lock);
				return id;
			}
		}
		i = (i + 1) & table.mask;
	}
	uint32_t id = table.count;
	if (!cuda && n > TRUNC_FRAMES && (id >= table.trunc_at || table.frames_used + n > table.frames_trunc_at)) {
		pthread_mutex_unlock(&table.lock);
		return mgp_sites_intern(ips, TRUNC_FRAMES, kind);
	}
	if (id >= (cuda ? mgp_sites_capacity(table.max_sites) : table.max_sites) ||
	    table.frames_used + n > table.frames_cap + (cuda ? MGP_CUDA_SPARE_FRAMES : 0)) {
		int said = table.said_full;
		table.said_full = 1;
		pthread_mutex_unlock(&table.lock);
		if (!said)
			mgp_log("the site table is full (MGPROBE_MAX_SITES=%u): allocations from new stacks "
				"go unattributed, into one site without a stack (the report says how many); "
				"raise MGPROBE_MAX_SITES", table.max_sites);
		return MGC_SITE_OVERFLOW;
	}
	struct mgp_site *s = &table.sites[id];
	s->frames_off = table.frames_used;
	for (unsigned k = 0; k < n; k++)
		table.frames[table.frames_used + k] = (uint64_t)ips[k];
	__atomic_store_n(&table.frames_used, table.frames_used + n, __ATOMIC_RELAXED);
	s->nframes = (uint16_t)n;
	s->kind = (uint16_t)kind;
	s->id = id;
	s->hash = h;
	table.slots[i].id = id;
	__atomic_store_n(&table.slots[i].hash, h, __ATOMIC_RELEASE);
	__atomic_store_n(&table.count, id + 1, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&table.lock);
	return id;
}

uint32_t mgp_sites_take_dirty(uint32_t *ids)
{
	uint32_t n = 0; /* the CUDA room's ids too */
	size_t dwords = ((size_t)mgp_sites_capacity(table.max_sites) + 63) / 64, dsum = (dwords + 63) / 64;
	for (size_t k = 0; k < dsum; k++) {
		if (!__atomic_load_n(&mgp_sites_dirty_sum[k], __ATOMIC_RELAXED))
			continue;
		uint64_t sum = __atomic_exchange_n(&mgp_sites_dirty_sum[k], 0, __ATOMIC_ACQUIRE);
		while (sum) {
			size_t wi = k * 64 + (size_t)__builtin_ctzll(sum);
			sum &= sum - 1;
			uint64_t bits = __atomic_exchange_n(&mgp_sites_dirty_words[wi], 0, __ATOMIC_ACQUIRE);
			while (bits) {
				ids[n++] = (uint32_t)(wi * 64 + (size_t)__builtin_ctzll(bits));
				bits &= bits - 1;
			}
		}
	}
	return n;
}

struct mgp_site *mgp_site_get(uint32_t id)
{
	return &table.sites[id];
}

const uint64_t *mgp_site_frames(const struct mgp_site *s)
{
	return table.frames + s->frames_off;
}

uint32_t mgp_sites_count(void)
{
	return table.sites ? __atomic_load_n(&table.count, __ATOMIC_ACQUIRE) : 0;
}

void mgp_sites_lock(void)
{
	pthread_mutex_lock(&table.lock);
}

void mgp_sites_unlock(void)
{
	pthread_mutex_unlock(&table.lock);
}
