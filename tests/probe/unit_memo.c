/* SPDX-License-Identifier: MIT */
/* unit_memo.c: each thread's memo of its last interned stack and site, and its recent sites
 * (mgp_sites_intern), never answer with a site that left the lookups. Linked from the probe's own objects, without a traced
 * program, and driven step by step as the writer drives the table, so no timing decides anything:
 * a site is unlinked and freed while the main thread's memo still names it, another thread's new
 * stack is given its id, and the main thread's stack must then get a site of its own, with its own
 * frames; a site that retired (its stack given back) while the memo names it comes back with its
 * stack in memory. */
#include <pthread.h>
#include <stdint.h>

#include "mg_test.h"
#include "mgp_sites.h"
#include "mgp_stacks.h"
#include "mgp_tcache.h"

#define DEPTH 3u

static const uintptr_t stack_one[DEPTH] = {0x500000u, 0x300000u, 0x200000u};
static const uintptr_t stack_two[DEPTH] = {0x600000u, 0x300000u, 0x200000u};

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
	return mg_test_done("probe-unit-memo");
}
