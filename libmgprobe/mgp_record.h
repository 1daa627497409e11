/* SPDX-License-Identifier: MIT */
/* mgp_record.h: what the hooks record, as a chain of small steps that can each change alone:
 * capture the stack (mgp_capture) -> intern it as a site (mgp_sites) -> enter the block in the
 * live table (mgp_live) or the mapping in the range set (mgp_mmaps) -> update the site's counters.
 * Called by the hooks only while mgp_recording() and not mgp_guarded(); keeps errno; never calls
 * malloc, stdio or a blocking lock. Out of memory for the tables stops recording with one line. */
#ifndef MGP_RECORD_H
#define MGP_RECORD_H

#include <stddef.h>
#include <stdint.h>

#include "mgp_live.h"
#include "mgp_sites.h"

/* The site of the calling stack for this kind code (mgc_kind_make). */
uint32_t mgp_record_site(unsigned kind);

/* A new heap block p of n bytes. */
void mgp_record_alloc(void *p, size_t n);

/* A block leaves the site's counters (it was freed, or realloc moved it). */
static inline void mgp_record_gone(const struct mgp_entry *en)
{
	mgp_site_on_free(mgp_site_get(en->site), en->size, en->birth);
}

/* A heap block p is freed (called before the real free). */
static inline void mgp_record_free(void *p)
{
	struct mgp_entry en;
	if (mgp_live_remove((uint64_t)(uintptr_t)p, &en))
		mgp_record_gone(&en);
}

/* realloc failed after its old block was taken out of the table: the block is live again. */
void mgp_record_restore(const struct mgp_entry *en);

/* Anonymous private mappings: a new one (MAP_FIXED may replace tracked memory), an munmap, an
 * mremap of `old` to `addr`. */
void mgp_record_mmap(void *addr, size_t len, int prot, int flags);
void mgp_record_munmap(void *addr, size_t len);
void mgp_record_mremap(void *old, size_t old_size, void *addr, size_t new_size);

/* The probe's tables are full: recording stops, with one line. */
void mgp_record_oom(void);

#endif /* MGP_RECORD_H */
