/* SPDX-License-Identifier: MIT */
/* unit_memo.c: each thread's memo of its last interned stack and site, and its recent sites
 * (mgp_sites_intern), never answer with a site that left the lookups. Linked from the probe's own objects, without a traced
 * program, and driven step by step as the writer drives the table, so no timing decides anything:
 * a site is unlinked and freed while the main thread's memo still names it, another thread's new
 * stack is given its id, and the main thread's stack must then get a site of its own, with its own
 * frames; a site that retired (its stack given back) while the memo or only the recent sites name
 * it comes back with its stack in memory. And the memo's trust in the unwinder's identity of the native frames
 * (mgp_sites_intern_known): only the frames it vouches for go uncompared, only under the same
 * identity and the same count of native frames, and never under identity 0. */
#include <pthread.h>
#include <stdint.h>

#include "mg_test.h"
#include "mgp_sites.h"
#include "mgp_stacks.h"
#include "mgp_tcache.h"

#define DEPTH 3u

static const uintptr_t stack_one[DEPTH] = {0x500000u, 0x300000u, 0x200000u};
static const uintptr_t stack_two[DEPTH] = {0x600000u, 0x300000u, 0x200000u};
static const uintptr_t stack_three[DEPTH] = {0x680000u, 0x300000u, 0x200000u};

static uint32_t intern(const uintptr_t *ips)
{
	return mgp_sites_intern(ips, DEPTH, MGC_KIND_HEAP);
}

static int never_written(uint32_t id)
{
	(void)id;
	return 0;
}

static int always_written(uint32_t id)
{
	(void)id;
	return 1;
}

/* 1 when site id holds the stack ips in memory. */
static int holds(uint32_t id, const uintptr_t *ips)
{
	uint64_t f[8];
	unsigned n = mgp_site_frames(id, f, 8);
	return n == DEPTH && f[0] == ips[0] && f[1] == ips[1] && f[2] == ips[2];
}

static void *other_thread(void *out)
{
	*(uint32_t *)out = intern(stack_two);
	return NULL;
}

/* What the writer does to a site that made one allocation and freed it: takes its change, then
 * unlinks it and, once it stayed empty, frees its id. */
static void evict(uint32_t id)
{
	static uint32_t taken[16];
	struct mgp_delta d = {.key = mgp_delta_key(id, 0), .allocs = 1, .frees = 1, .alloc_bytes = 16};
	mgp_site_apply(&d);
	mgp_sites_take_dirty(taken);
	mgp_sites_mark(id, MGP_SITE_LIVE); /* the writer took it but left it for eviction */
	mgp_sites_evict_unlink(never_written, 0);
	mgp_sites_evict_free(never_written);
}

int main(void)
{
	MG_EQ(mgp_sites_init(16), 0); /* retirement from 16 / 16 sites in use */
	mgp_tcache_init();
	MG_TRUE(mgp_tcache_block() != NULL, "this thread's block of caches (its recent sites)");
	uint32_t a = intern(stack_one);
	MG_TRUE(a >= 2 && intern(stack_one) == a, "stack s interned, found again (from the memo)");
	evict(a);
	MG_EQ(mgp_sites_used(), 1, "sites in use once s's is freed (the overflow site)");

	uint32_t b = 0;
	pthread_t th;
	MG_EQ(pthread_create(&th, NULL, other_thread, &b), 0);
	MG_EQ(pthread_join(th, NULL), 0);
	MG_EQ(b, a, "another thread's new stack t given s's freed id");
	MG_TRUE(holds(b, stack_two), "t's site holds t's frames");

	/* This thread's memo still says s -> a: it must not answer. */
	uint32_t c = intern(stack_one);
	MG_TRUE(c >= 2 && c != b, "s after its site was freed and its id reused: a site of its own (%u, t's %u)",
		c, b);
	MG_TRUE(holds(c, stack_one), "s's new site holds s's frames");
	MG_TRUE(holds(b, stack_two), "t's site still holds t's frames");
	MG_EQ(intern(stack_one), c, "s found again");
	MG_EQ(mgp_sites_used(), 3, "sites in use: s's, t's and the overflow site");

	/* Retired while the memo names it: the same id again, its stack back in memory. */
	MG_EQ(intern(stack_one), c, "s interned last");
	static uint32_t taken[16];
	mgp_sites_take_dirty(taken);
	for (int pass = 0; pass < 2; pass++) { /* quiet at the first scan, retired at the second */
		mgp_sites_retire_begin(always_written);
		mgp_sites_evict_free(always_written);
	}
	MG_EQ(mgp_sites_retired(), 2, "sites retired (s's and t's)");
	MG_EQ(mgp_site_leaf(c), 0, "s's site without its stack in memory");
	MG_EQ(intern(stack_one), c, "s after retiring: the same id");
	MG_TRUE(holds(c, stack_one), "s's retired site revived with its frames");

	/* Retired while only the recent sites name it (the memo names u): revived as well. */
	uint32_t u = intern(stack_three);
	MG_TRUE(u >= 2 && u != c, "stack u: a site of its own (%u, s's %u)", u, c);
	MG_EQ(intern(stack_one), c, "s found again");
	MG_EQ(intern(stack_three), u, "u found again: the memo names u, the recent sites s");
	mgp_sites_take_dirty(taken);
	for (int pass = 0; pass < 2; pass++) {
		mgp_sites_retire_begin(always_written);
		mgp_sites_evict_free(always_written);
	}
	MG_EQ(mgp_site_leaf(c), 0, "s's site retired again, without its stack in memory");
	MG_EQ(intern(stack_one), c, "s after retiring, noted in the recent sites: the same id");
	MG_TRUE(holds(c, stack_one), "s's site revived with its frames, not taken from the recent sites' note");

	/* Stacks as a capture makes them: `fixed` native frames, then (Python) frames of their own. */
	static const uintptr_t nat_a[DEPTH] = {0x710000u, 0x720000u, 0x730000u};
	static const uintptr_t nat_b[DEPTH] = {0x710000u, 0x720000u, 0x740000u};
	static const uintptr_t nat_c[DEPTH] = {0x750000u, 0x720000u, 0x740000u};
	uint32_t na = mgp_sites_intern_known(nat_a, DEPTH, MGC_KIND_HEAP, 7, 2);
	MG_EQ(mgp_sites_intern_known(nat_a, DEPTH, MGC_KIND_HEAP, 7, 2), na, "the same stack, identity and count");
	uint32_t nb = mgp_sites_intern_known(nat_b, DEPTH, MGC_KIND_HEAP, 7, 2);
	MG_TRUE(nb >= 2 && nb != na, "a frame past the vouched ones differs: a site of its own (%u, %u)", nb, na);
	MG_TRUE(holds(nb, nat_b), "its site holds its frames");
	uint32_t nc = mgp_sites_intern_known(nat_c, DEPTH, MGC_KIND_HEAP, 7, 3);
	MG_TRUE(nc >= 2 && nc != nb, "the same identity, another count of native frames: all compared (%u, %u)",
		nc, nb);
	MG_TRUE(holds(nc, nat_c), "its site holds its frames");
	static const uintptr_t nat_d[DEPTH] = {0x760000u, 0x720000u, 0x740000u};
	uint32_t nd = mgp_sites_intern_known(nat_d, DEPTH, MGC_KIND_HEAP, 0, 3); /* the memo: d, identity 0 */
	MG_TRUE(nd >= 2 && nd != nc && holds(nd, nat_d), "a new stack under identity 0: its own site");
	MG_EQ(mgp_sites_intern_known(nat_a, DEPTH, MGC_KIND_HEAP, 0, 3), na, "identity 0 vouches for nothing");
	return mg_test_done("probe-unit-memo");
}
