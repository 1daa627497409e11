/* SPDX-License-Identifier: MIT */
/* unit_sites.c: the site table's lookup (mgp_sites.c) linked from the probe's own objects, without
 * a traced program: 200,000 distinct stacks keep their ids through the table's growth and through
 * the eviction of every other one (deletions move slots whose homes come from the identities),
 * and the table costs 4 bytes a slot, at most half full (issue 16). Single-threaded. */
#include <stdint.h>
#include <stdio.h>

#include "mg_test.h"
#include "mgp_sites.h"

#define N 200000u
#define DEPTH 3u

static uint32_t ids[N];

/* Stack i: its own innermost frame under two frames every stack shares. */
static uint32_t intern(uint32_t i)
{
	uintptr_t ips[DEPTH] = {0x400000u + 16u * i, 0x300000u, 0x200000u};
	return mgp_sites_intern(ips, DEPTH, MGC_KIND_HEAP);
}

static int never_written(uint32_t id)
{
	(void)id;
	return 0;
}

/* An allocation and its free: the site changed, holds nothing, made one allocation (a start-up
 * transient, so the writer's eviction takes it). */
static void churn(uint32_t id)
{
	struct mgp_delta d = {.key = mgp_delta_key(id, 0), .allocs = 1, .frees = 1, .alloc_bytes = 16};
	mgp_site_apply(&d);
}

static void check_found(const char *when)
{
	unsigned moved = 0;
	for (uint32_t i = 1; i < N; i += 2)
		moved += intern(i) != ids[i];
	MG_EQ(moved, 0, "%s: odd stacks whose id changed", when);
}

int main(void)
{
	MG_EQ(mgp_sites_init(1u << 20), 0);
	unsigned bad = 0;
	for (uint32_t i = 0; i < N; i++) {
		ids[i] = intern(i);
		bad += ids[i] < 2 || (i && ids[i] == ids[i - 1]);
	}
	MG_EQ(bad, 0, "stacks without an id of their own");
	MG_EQ(mgp_sites_used(), N + 1, "sites in use (the overflow site too)");
	check_found("after growing");
	/* 200,001 sites at most half full: 524,288 slots of 4 bytes, and the table's header. */
	MG_EQ(mgp_sites_index_bytes(), 16 + 524288u * 4, "the lookup table's bytes");

	for (uint32_t i = 0; i < N; i += 2)
		churn(ids[i]);
	static uint32_t taken[N + 2];
	MG_EQ(mgp_sites_take_dirty(taken), N / 2, "sites changed");
	for (uint32_t i = 0; i < N; i += 2)
		mgp_sites_mark(ids[i], MGP_SITE_LIVE); /* the writer took them but left them for eviction */
	mgp_sites_evict_unlink(never_written, 0);
	mgp_sites_evict_free(never_written);
	MG_EQ(mgp_sites_used(), N / 2 + 1, "sites in use after evicting the even ones");
	check_found("after evicting");

	unsigned fresh = 0;
	for (uint32_t i = 0; i < N; i += 2) {
		uint32_t id = intern(i);
		fresh += id >= 2 && intern(i) == id;
	}
	MG_EQ(fresh, N / 2, "evicted stacks interned again, each found again");
	check_found("after interning the evicted stacks again");
	MG_EQ(mgp_sites_used(), N + 1, "sites in use at the end");
	return mg_test_done("probe-unit-sites");
}
