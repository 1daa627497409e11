/* SPDX-License-Identifier: MIT */
/* unit_sites.c: the site table's lookup (mgp_sites.c) linked from the probe's own objects, without
 * a traced program: 200,000 distinct stacks keep their ids through the table's growth and through
 * the eviction of every other one (deletions move slots whose homes come from the identities),
 * and the table costs 4 bytes a slot, at most half full; retirement gives every stack back without
 * writing a byte of any site's identity (a forked worker shares those pages with its parent), and
 * the same stacks find the same ids again, frames and all (issue 16); each retirement scan says
 * how many sites it found quiet and how many stacks it took, which the writer's rule for a pass
 * soon reads; the frame tree is compacted once a quarter of retire_from's node ids are free.
 * Single-threaded. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "mg_test.h"
#include "mgp_os.h"
#include "mgp_sites.h"
#include "mgp_stacks.h"
#include "mgp_tcache.h"
#include "mgp_writer.h"

#define N 200000u
#define DEPTH 3u

static uint32_t ids[N];
static struct mgp_site before[N];

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

static int always_written(uint32_t id)
{
	(void)id;
	return 1;
}

/* The writer's rule for a pass soon after this one (mgp_writer_soon): after a burst's pass that
 * found the import's last sites quiet, and after any pass that took many stacks; never for sites
 * found quiet at a tick (a training loop's, every second), and never more than
 * MGP_WRITER_SOON_PASSES in a row. */
static void check_soon(void)
{
	struct mgp_retire_scan many_quiet = {.marked = MGP_WRITER_SOON_SITES};
	struct mgp_retire_scan many_taken = {.taken = MGP_WRITER_SOON_SITES};
	struct mgp_retire_scan few = {.taken = MGP_WRITER_SOON_SITES - 1, .marked = MGP_WRITER_SOON_SITES - 1};
	MG_EQ(mgp_writer_soon(MGP_MAINTAIN_BURST, many_quiet, 0), 1, "a burst's pass that found many quiet");
	MG_EQ(mgp_writer_soon(MGP_MAINTAIN_SOON, many_quiet, 1), 1, "a soon pass that found many quiet");
	MG_EQ(mgp_writer_soon(MGP_MAINTAIN_TICK, many_quiet, 0), 0, "a tick that found many quiet");
	MG_EQ(mgp_writer_soon(MGP_MAINTAIN_TICK, many_taken, 0), 1, "a tick that took many stacks");
	MG_EQ(mgp_writer_soon(MGP_MAINTAIN_BURST, few, 0), 0, "a pass that did little");
	MG_EQ(mgp_writer_soon(MGP_MAINTAIN_SOON, many_taken, MGP_WRITER_SOON_PASSES - 1), 1,
	      "the last soon pass allowed in a row");
	MG_EQ(mgp_writer_soon(MGP_MAINTAIN_SOON, many_taken, MGP_WRITER_SOON_PASSES), 0,
	      "one soon pass more than allowed in a row");
}

/* The frame tree is compacted once a quarter of retire_from (MGPROBE_MAX_SITES / 16: 65,536
 * here) node ids are free, and over half of them: 30,000 stacks made and retired after a first
 * compaction leave 30,000 ids free, which the previous threshold (retire_from itself) kept for
 * the rest of the run. */
static void check_compaction(void)
{
	MG_EQ(mgp_sites_compact(), 1, "the tree compacted once every stack went back");
	for (uint32_t i = 0; i < 30000; i++)
		intern(N + i);
	for (int pass = 0; pass < 2; pass++) { /* quiet at the first scan, retired at the second */
		mgp_sites_retire_begin(always_written);
		mgp_sites_evict_free(always_written);
	}
	MG_EQ(mgp_stacks_nodes(), 0, "frame nodes left once the new stacks went back");
	MG_EQ(mgp_stacks_high() > 30000, 1, "node ids given out for the new stacks");
	MG_EQ(mgp_sites_compact(), 1, "the tree compacted with 30,000 node ids free");
	MG_EQ(mgp_stacks_high(), 1, "node ids after that compaction (none in use)");
}

static void check_found(const char *when)
{
	unsigned moved = 0;
	for (uint32_t i = 1; i < N; i += 2)
		moved += intern(i) != ids[i];
	MG_EQ(moved, 0, "%s: odd stacks whose id changed", when);
}

/* The dirty sites a scan takes (the writer's buffer). */
static uint32_t taken[N + 2];

/* N stacks interned, each its own site, all found. */
static void grow(void)
{
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
}

/* The even sites evicted, their lookup tables and lists given back, then interned again. */
static void evict(void)
{
	for (uint32_t i = 0; i < N; i += 2)
		churn(ids[i]);
	MG_EQ(mgp_sites_take_dirty(taken), N / 2, "sites changed");
	for (uint32_t i = 0; i < N; i += 2)
		mgp_sites_mark(ids[i], MGP_SITE_LIVE); /* the writer took them but left them for eviction */
	mgp_sites_evict_free(never_written); /* the replaced lookup tables go back */
	uint64_t mapped = mgp_os_mapped();
	mgp_sites_evict_unlink(never_written, 0);
	mgp_sites_evict_free(never_written);
	MG_EQ(mgp_sites_used(), N / 2 + 1, "sites in use after evicting the even ones");
	/* 100,000 ids to free took 7 chunks of the list (64 KiB each); all but the first go back. */
	MG_EQ(mgp_os_mapped() - mapped, 64 << 10, "bytes the eviction left mapped");
	check_found("after evicting");

	unsigned fresh = 0;
	for (uint32_t i = 0; i < N; i += 2) {
		uint32_t id = intern(i);
		fresh += id >= 2 && intern(i) == id;
	}
	MG_EQ(fresh, N / 2, "evicted stacks interned again, each found again");
	check_found("after interning the evicted stacks again");
	MG_EQ(mgp_sites_used(), N + 1, "sites in use before retiring");
}

/* Every site retired over three scans: its stack given back, its identity kept. */
static void retire(void)
{
	for (uint32_t i = 0; i < N; i++) {
		ids[i] = intern(i);
		memcpy(&before[i], mgp_site_get(ids[i]), sizeof before[i]);
	}
	mgp_sites_take_dirty(taken);
	/* Quiet at the first scan, retired at the second; a site that changed in between waits for a
	 * third. Each scan says what it did: what the writer's next pass may give back. */
	struct mgp_retire_scan scan = mgp_sites_retire_begin(always_written);
	MG_EQ(scan.marked, N, "sites the first scan found quiet");
	MG_EQ(scan.taken, 0, "stacks the first scan took");
	mgp_sites_evict_free(always_written);
	for (uint32_t i = 0; i < N; i += 100)
		churn(ids[i]);
	scan = mgp_sites_retire_begin(always_written);
	MG_EQ(scan.taken, N - N / 100, "stacks the second scan took (the unchanged sites)");
	MG_EQ(scan.marked, N / 100, "sites the second scan found quiet (those changed since the first)");
	mgp_sites_evict_free(always_written);
	MG_EQ(mgp_sites_retired(), N - N / 100, "sites retired after two scans");
	scan = mgp_sites_retire_begin(always_written);
	MG_EQ(scan.taken, N / 100, "stacks the third scan took");
	MG_EQ(scan.marked, 0, "sites the third scan found quiet");
	mgp_sites_evict_free(always_written);
	scan = mgp_sites_retire_begin(always_written);
	MG_EQ(scan.taken + scan.marked, 0, "what a scan after them all found to do");
	MG_EQ(mgp_sites_retired(), N, "sites retired");
	check_soon();
	MG_EQ(mgp_stacks_nodes(), 0, "frame nodes left once every stack went back");
	unsigned stackless = 0, same = 0;
	for (uint32_t i = 0; i < N; i++) {
		stackless += mgp_site_leaf(ids[i]) == 0;
		same += memcmp(&before[i], mgp_site_get(ids[i]), sizeof before[i]) == 0;
	}
	MG_EQ(stackless, N, "retired sites without a stack in memory");
	MG_EQ(same, N, "identities left as they were by retirement");
}

/* Retired stacks interned again: the same id, the whole stack. */
static void intern_retired(void)
{
	unsigned whole = 0;
	for (uint32_t i = 0; i < N; i += 1000) {
		uint64_t f[8];
		uint32_t id = intern(i);
		whole += id == ids[i] && mgp_site_frames(id, f, 8) == DEPTH && f[0] == 0x400000u + 16u * i &&
			 f[2] == 0x200000u;
	}
	MG_EQ(whole, N / 1000, "retired stacks interned again: the same id, the whole stack");
}

int main(void)
{
	MG_EQ(mgp_sites_init(1u << 20), 0);
	mgp_tcache_init(); /* the thread's recent sites, as in the probe */
	grow();
	evict();
	retire();
	intern_retired();
	check_compaction();
	return mg_test_done("probe-unit-sites");
}
