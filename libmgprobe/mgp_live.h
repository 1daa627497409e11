/* SPDX-License-Identifier: MIT */
/* mgp_live.h: the live-allocation table, pointer -> (size, site, birth step). Sharded by pointer
 * hash, each shard a small spinlock around an open-addressing table: no global lock on the
 * allocation fast path. Never calls malloc; grows with memory from the kernel. */
#ifndef MGP_LIVE_H
#define MGP_LIVE_H

#include <stdint.h>

struct mgp_entry {
	uint64_t ptr;
	uint64_t size;
	uint32_t site;
	uint32_t birth; /* birth step, saturated at UINT32_MAX */
};

/* Inserts ptr (not already present). 0, or -ENOMEM when the shard cannot grow. */
int mgp_live_insert(uint64_t ptr, uint64_t size, uint32_t site, uint32_t birth);

/* Removes ptr and copies its entry to *out. 1 if found, 0 if ptr is not tracked. */
int mgp_live_remove(uint64_t ptr, struct mgp_entry *out);

/* fork: take every shard lock in the prepare handler, release them in parent and child. */
void mgp_live_lock_all(void);
void mgp_live_unlock_all(void);

#endif /* MGP_LIVE_H */
