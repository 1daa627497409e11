/* SPDX-License-Identifier: MIT */
/* mgp_live.h: the live-allocation table, pointer -> (size, site, cohort bucket). Sharded by
 * address region (every 64 KiB of address space goes to one shard), each shard a small spin lock
 * around an open-addressing table: no global lock on the allocation fast path, and a program
 * that reuses a few hot regions (every training loop) touches a few shards' pages, so a forked
 * child does not get copies of the rest. Entries take 12 bytes (a slot keeps only the address bits
 * its shard does not stand for); sizes from 128 MiB up and the rare pointer a slot cannot hold are
 * kept in a side table. A shard's table grows with its entries and shrinks as they go (an
 * import's burst leaves nothing behind), and tables under a page share pages, so the table's
 * memory follows the live blocks, not the shards. Never calls malloc; grows with memory from the
 * kernel. */
#ifndef MGP_LIVE_H
#define MGP_LIVE_H

#include <stdint.h>

struct mgp_entry {
	uint64_t ptr;
	uint64_t size;
	uint32_t site;
	uint32_t bucket; /* cohort bucket of its birth step (mgc_cohort_bucket) */
};

/* Inserts ptr (not already present). 0, or -ENOMEM when the shard cannot grow. */
int mgp_live_insert(uint64_t ptr, uint64_t size, uint32_t site, unsigned bucket);

/* Removes ptr and copies its entry to *out. 1 if found, 0 if ptr is not tracked. */
int mgp_live_remove(uint64_t ptr, struct mgp_entry *out);

/* Live entries now (all shards; a moment's sum), and the bytes the table holds. */
uint64_t mgp_live_count(void);
uint64_t mgp_live_bytes_used(void);

/* fork: take every shard lock in the prepare handler, release them in parent and child. */
void mgp_live_lock_all(void);
void mgp_live_unlock_all(void);

#endif /* MGP_LIVE_H */
