/* SPDX-License-Identifier: MIT */
/* mgp_mmaps.h: live anonymous private mappings as a sorted set of page ranges, each owned by the
 * site that mapped it. munmap and mremap may cut any part of a range, so ranges split. Guarded by
 * one mutex: mmap is a system call already, never the malloc fast path. Never calls malloc. */
#ifndef MGP_MMAPS_H
#define MGP_MMAPS_H

#include <stdint.h>

/* Called (with the mmaps lock held) for every piece removed: `bytes` of a range owned by `site`,
 * born in cohort `bucket`; `last` is 1 when that was the mapping's last tracked byte (the mapping
 * is freed), 0 when part of it stays. */
typedef void (*mgp_mmaps_removed_fn)(void *ctx, uint32_t site, uint64_t bytes, uint32_t bucket,
				     int last);

/* Adds [addr, addr+len) owned by site. 0 or -ENOMEM. The caller removes overlaps first. */
int mgp_mmaps_add(uint64_t addr, uint64_t len, uint32_t site, uint32_t bucket);

/* Removes whatever tracked memory lies in [addr, addr+len), reporting each piece. Returns the
 * number of bytes removed. */
uint64_t mgp_mmaps_remove(uint64_t addr, uint64_t len, mgp_mmaps_removed_fn fn, void *ctx);

void mgp_mmaps_lock(void);
void mgp_mmaps_unlock(void);

#endif /* MGP_MMAPS_H */
