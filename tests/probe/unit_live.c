/* SPDX-License-Identifier: MIT */
/* unit_live.c: the live table (mgp_live.c) linked from the probe's own objects, without a traced
 * program: one shard filled to 4/5 of its slots does not double (issue 16: the table's memory
 * follows the live blocks), every entry comes back with its size, site and bucket (a size from
 * 4 GiB up too), and the emptied shard shrinks to its first size. Single-threaded. */
#include <stdint.h>

#include "mg_test.h"
#include "mgp_live.h"

#define BASE 0x7f1200000000ull /* one 64 KiB region: one shard */
#define N 800u                 /* over 7/10 of 1024 slots, under 4/5 */
#define FULL 820u              /* over 4/5 */

int main(void)
{
	unsigned bad = 0;
	for (uint64_t i = 0; i < N; i++)
		bad += mgp_live_insert(BASE + 16 * i, 24 + i, (uint32_t)(1000 + i), (unsigned)(i % 32)) != 0;
	MG_EQ(bad, 0, "inserts that failed");
	MG_EQ(mgp_live_count(), N);
	MG_EQ(mgp_live_bytes_used(), 1024 * 16, "the shard's slots for 800 blocks");
	MG_EQ(mgp_live_insert(BASE + 16 * N, 5ull << 30, 7, 3), 0, "a block of 5 GiB");
	for (uint64_t i = N + 1; i < FULL - 1; i++)
		bad += mgp_live_insert(BASE + 16 * i, 24 + i, (uint32_t)(1000 + i), (unsigned)(i % 32)) != 0;
	MG_EQ(mgp_live_bytes_used(), 1024 * 16, "819 blocks: 4/5 of the slots");
	bad += mgp_live_insert(BASE + 16 * (FULL - 1), 24 + FULL - 1, 1000 + FULL - 1, (FULL - 1) % 32) != 0;
	MG_EQ(bad, 0, "inserts that failed");
	MG_EQ(mgp_live_bytes_used(), 2048 * 16, "past 4/5 full, the shard doubles");

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
	MG_EQ(mgp_live_bytes_used(), 16 * 16, "the emptied shard back at its first size");
	return mg_test_done("probe-unit-live");
}
