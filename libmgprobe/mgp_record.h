/* SPDX-License-Identifier: MIT */
/* mgp_record.h: what the hooks record, as a chain of small steps that can each change alone:
 * capture the stack (mgp_capture) -> intern it as a site (mgp_sites) -> enter the block in the
 * live table (mgp_live) or the mapping in the range set (mgp_mmaps) -> the site's counters, as a
 * delta in the thread's own record (mgp_thread), which it holds from the lookup to the delta.
 * Called by the hooks only while mgp_recording() and not mgp_guarded(); keeps errno; never calls
 * malloc, stdio or a blocking lock. Out of memory for the tables stops recording with one line. */
#ifndef MGP_RECORD_H
#define MGP_RECORD_H

#include <stddef.h>
#include <stdint.h>

#include "mgp_live.h"

/* The site of the calling stack for this kind code (mgc_kind_make): CUDA kinds only (their sites
 * are never evicted, so the id outlives the call). */
uint32_t mgp_record_site(unsigned kind);

/* A new heap block p of n bytes. */
void mgp_record_alloc(void *p, size_t n);

/* A heap block p is freed (called before the real free). */
void mgp_record_free(void *p);

/* realloc in three steps: take the old block out of the table before the real call (once it
 * returns, another thread may be handed the same address): 1 when it was tracked; then either
 * put it back (the call failed) or count it gone. */
int mgp_record_take(void *p, struct mgp_entry *en);
void mgp_record_restore(const struct mgp_entry *en);
void mgp_record_gone(const struct mgp_entry *en);

/* Anonymous private mappings: a new one (MAP_FIXED may replace tracked memory), an munmap, an
 * mremap of `old` to `addr`. */
void mgp_record_mmap(void *addr, size_t len, int prot, int flags);
void mgp_record_munmap(void *addr, size_t len);
void mgp_record_mremap(void *old, size_t old_size, void *addr, size_t new_size);

/* The probe's tables are full: recording stops, with one line. */
void mgp_record_oom(void);

#endif /* MGP_RECORD_H */
