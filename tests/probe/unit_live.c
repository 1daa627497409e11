/* SPDX-License-Identifier: MIT */
/* unit_live.c: the live table (mgp_live.c) linked from the probe's own objects, without a traced
 * program: one shard filled to 4/5 of its slots does not double (issue 16: the table's memory
 * follows the live blocks), a slot takes 12 bytes and a table between 256 and 1024 slots fills
 * its pages, every entry comes back with its size, site and bucket (sizes and pointers a slot
 * cannot hold too: from 128 MiB up, CUPTI's key bit, address bits 48-62, a key of zero), pointers
 * that differ only in the bits a shard stands for or a slot keeps are told apart, churn against a
 * plain list finds every entry, and the emptied shard shrinks to its first size.
 * Single-threaded. */
#include <stdint.h>

#include "mg_test.h"
#include "mgp_live.h"

#define BASE 0x7f1200000000ull /* one 64 KiB region: one shard */
#define N 800u                 /* over 7/10 of 1024 slots, under 4/5 */
#define FULL 820u              /* over 4/5 */
#define SLOT 12u
#define SIDE_FIRST (64u * 24u) /* the side table's first 64 entries */
#define OTHERS (2u * 16u * SLOT)   /* after edges(): two more shards at their first size */

/* Fills one shard, checks its doubling at 4/5, and empties it. */
static void one_shard(void)
{
	unsigned bad = 0;
	for (uint64_t i = 0; i < N; i++)
		bad += mgp_live_insert(BASE + 16 * i, 24 + i, (uint32_t)(1000 + i), (unsigned)(i % 32)) != 0;
	MG_EQ(bad, 0, "inserts that failed");
	MG_EQ(mgp_live_count(), N);
	MG_EQ(mgp_live_bytes_used(), 1024 * SLOT, "the shard's slots for 800 blocks");
	MG_EQ(mgp_live_insert(BASE + 16 * N, 5ull << 30, 7, 3), 0, "a block of 5 GiB");
	for (uint64_t i = N + 1; i < FULL - 1; i++)
		bad += mgp_live_insert(BASE + 16 * i, 24 + i, (uint32_t)(1000 + i), (unsigned)(i % 32)) != 0;
	MG_EQ(mgp_live_bytes_used(), 1024 * SLOT + SIDE_FIRST, "819 blocks: 4/5 of the slots");
	bad += mgp_live_insert(BASE + 16 * (FULL - 1), 24 + FULL - 1, 1000 + FULL - 1, (FULL - 1) % 32) != 0;
	MG_EQ(bad, 0, "inserts that failed");
	MG_EQ(mgp_live_bytes_used(), 2048 * SLOT + SIDE_FIRST, "past 4/5 full, the shard doubles");

	struct mgp_entry e;
	MG_EQ(mgp_live_remove(BASE + 16 * N, &e), 1);
	MG_EQ(e.size, 5ull << 30, "the big block's size");
	MG_EQ(e.site * 32 + e.bucket, 7 * 32 + 3, "the big block's site and bucket");
	unsigned wrong = 0;
	for (uint64_t i = 0; i < FULL; i++) {
		if (i == N)
			continue;
		int found = mgp_live_remove(BASE + 16 * i, &e);
		wrong += !found || e.ptr != BASE + 16 * i || e.size != 24 + i || e.site != 1000 + i ||
			 e.bucket != i % 32;
	}
	MG_EQ(wrong, 0, "entries not given back as they were put");
	MG_EQ(mgp_live_remove(BASE, &e), 0, "a pointer no longer tracked");
	MG_EQ(mgp_live_count(), 0);
	MG_EQ(mgp_live_bytes_used(), 16 * SLOT + SIDE_FIRST, "the emptied shard back at its first size");
}

/* Pointers and sizes at the edges of what a slot holds, each given back exactly. */
static void edges(void)
{
	static const struct {
		uint64_t ptr, size;
	} cases[] = {
		{BASE + 0x40, (1ull << 27) - 2},             /* the largest size a slot holds */
		{BASE + 0x50, (1ull << 27) - 1},             /* the first kept beside it */
		{BASE + 0x60, 128ull << 20},
		{BASE + 0x40 + (1ull << 28), 1},             /* same shard and offset, bit 28 apart */
		{BASE + 0x40 + (1ull << 47), 2},             /* bit 47 apart */
		{BASE + 0x40 + (1ull << 16), 3},             /* the next shard, the same key */
		{(1ull << 63) | 0x7f0000001000ull, 4u << 20}, /* CUPTI's key bit */
		{0x7f0000001000ull, 5u << 20},               /* the same address without it */
		{(1ull << 52) | 0x1000, 6},                  /* address bits 48-62: no key */
		{0x5430000ull, 7},                           /* a key of zero */
		{0x5430010ull, 8},
	};
	unsigned n = sizeof cases / sizeof cases[0], bad = 0, wrong = 0;
	for (unsigned i = 0; i < n; i++)
		bad += mgp_live_insert(cases[i].ptr, cases[i].size, 40 + i, i) != 0;
	MG_EQ(bad, 0, "inserts that failed");
	MG_EQ(mgp_live_count(), n, "entries, in shards and beside them");
	struct mgp_entry e;
	for (unsigned i = n; i-- > 0;) {
		int found = mgp_live_remove(cases[i].ptr, &e);
		wrong += !found || e.ptr != cases[i].ptr || e.size != cases[i].size || e.site != 40 + i ||
			 e.bucket != i;
		wrong += mgp_live_remove(cases[i].ptr, &e) != 0;
	}
	MG_EQ(wrong, 0, "edge entries not given back exactly once");
	MG_EQ(mgp_live_count(), 0);
	MG_EQ(mgp_live_bytes_used(), 3 * 16 * SLOT + SIDE_FIRST, "three shards at their first size");
}

/* Inserts and removes in one shard through its sizes (341 and 682 slots: not powers of two),
 * against a list of what is in: every present block found with its size, no absent one. */
static void churn(void)
{
	enum { M = 1500 };
	static uint8_t in[M];
	uint64_t x = 12345;
	unsigned wrong = 0, maxcap = 0;
	for (unsigned op = 0; op < 60000; op++) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		unsigned i = (unsigned)(x >> 33) % M;
		/* more inserts in the first half, more removes in the second */
		int want_in = ((x >> 20) % 100) < (op < 30000 ? 70u : 25u);
		struct mgp_entry e;
		if (want_in && !in[i]) {
			wrong += mgp_live_insert(BASE + 16 * i, 100 + i, i, i % 32) != 0;
			in[i] = 1;
		} else if (!want_in) {
			int found = mgp_live_remove(BASE + 16 * i, &e);
			wrong += found != in[i] || (found && (e.size != 100 + i || e.site != i));
			in[i] = 0;
		}
		uint64_t b = mgp_live_bytes_used() - SIDE_FIRST - OTHERS;
		if (b > maxcap)
			maxcap = (unsigned)b;
	}
	MG_EQ(wrong, 0, "churn: entries missed, found twice or changed");
	MG_EQ(maxcap, 2048 * SLOT, "churn: the shard's largest table (~1000 blocks)");
	struct mgp_entry e;
	for (unsigned i = 0; i < M; i++)
		wrong += mgp_live_remove(BASE + 16 * i, &e) != in[i];
	MG_EQ(wrong, 0, "churn: the blocks left");
	MG_EQ(mgp_live_bytes_used(), 16 * SLOT + SIDE_FIRST + OTHERS, "churn: back at the first size");
}

/* The sizes between the pool's 128 slots and 1024: whole pages of 12-byte slots. */
static void page_sizes(void)
{
	unsigned bad = 0;
	for (uint64_t i = 0; i < 103; i++)
		bad += mgp_live_insert(BASE + 16 * i, 1, 1, 0) != 0;
	MG_EQ(mgp_live_bytes_used(), 341 * SLOT + SIDE_FIRST + OTHERS, "103 blocks: 341 slots, one page");
	for (uint64_t i = 103; i < 273; i++)
		bad += mgp_live_insert(BASE + 16 * i, 1, 1, 0) != 0;
	MG_EQ(mgp_live_bytes_used(), 682 * SLOT + SIDE_FIRST + OTHERS, "273 blocks: 682 slots, two pages");
	struct mgp_entry e;
	for (uint64_t i = 0; i < 273; i++)
		bad += mgp_live_remove(BASE + 16 * i, &e) != 1;
	MG_EQ(bad, 0, "inserts and removes that failed");
}

int main(void)
{
	one_shard();
	edges();
	page_sizes();
	churn();
	return mg_test_done("probe-unit-live");
}
