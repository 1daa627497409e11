/* SPDX-License-Identifier: MIT */
/* mgp_record.c: the recording chain of mgp_record.h. Every function runs inside a hook, with the
 * recursion guard entered around anything that may allocate (libunwind), and restores errno: the
 * program must see exactly what the real call did. Never calls malloc, stdio or a blocking lock. */
#define _GNU_SOURCE
#include "mgp_record.h"

#include <errno.h>
#include <sys/mman.h>

#include "mgp_capture.h"
#include "mgp_mmaps.h"
#include "mgp_os.h"
#include "mgp_state.h"
#include "mgp_step.h"

void mgp_record_oom(void)
{
	if (mgp_state_stop())
		mgp_log("out of memory for the probe's own tables: recording stopped, the program runs on");
}

/* Capture, then intern. Inline into the recording functions: see mgp_capture.h. */
static inline uint32_t site_of_caller(unsigned kind)
{
	struct mgp_capture_buf buf;
	unsigned n;
	const uintptr_t *ips = mgp_capture_stack(&buf, &n);
	return mgp_sites_intern(ips, n, kind);
}

uint32_t mgp_record_site(unsigned kind)
{
	return site_of_caller(kind);
}

void mgp_record_alloc(void *p, size_t n)
{
	int e = errno;
	mgp_guard_enter();
	uint32_t site = site_of_caller(MGC_KIND_HEAP);
	uint32_t birth = mgp_step_birth();
	if (__builtin_expect(mgp_live_insert((uint64_t)(uintptr_t)p, n, site, birth) == 0, 1))
		mgp_site_on_alloc(mgp_site_get(site), n, birth);
	else
		mgp_record_oom();
	mgp_guard_leave();
	errno = e;
}

void mgp_record_restore(const struct mgp_entry *en)
{
	int e = errno;
	if (mgp_live_insert(en->ptr, en->size, en->site, en->birth) < 0) {
		mgp_record_gone(en);
		mgp_record_oom();
	}
	errno = e;
}

static inline uint64_t page_round(size_t n)
{
	return ((uint64_t)n + 4095u) & ~(uint64_t)4095u;
}

/* A piece of a tracked mapping went away: the whole mapping (`last`) or some of its bytes. */
static void mmap_removed(uint32_t site, uint64_t bytes, uint32_t birth, int last)
{
	if (last)
		mgp_site_on_free(mgp_site_get(site), bytes, birth);
	else
		mgp_site_on_shrink(mgp_site_get(site), bytes, birth);
}

/* [a, a+n) is now a new private anonymous mapping made by the calling stack. */
static void mapping_added(uint64_t a, uint64_t n)
{
	uint32_t site = site_of_caller(MGC_KIND_MMAP);
	uint32_t birth = mgp_step_birth();
	if (mgp_mmaps_add(a, n, site, birth) == 0)
		mgp_site_on_alloc(mgp_site_get(site), n, birth);
	else
		mgp_record_oom();
}

void mgp_record_mmap(void *addr, size_t len, int prot, int flags)
{
	int e = errno;
	mgp_guard_enter();
	uint64_t a = (uint64_t)(uintptr_t)addr, n = page_round(len);
	mgp_mmaps_remove(a, n, mmap_removed); /* MAP_FIXED may replace tracked memory */
	/* PROT_NONE is address space reserved, not memory (the CUDA driver reserves 100+ GiB so): a
	 * part committed later with MAP_FIXED is counted then; one made usable by mprotect is not. */
	if ((flags & MAP_ANONYMOUS) && (flags & MAP_TYPE) == MAP_PRIVATE && prot != PROT_NONE)
		mapping_added(a, n);
	mgp_guard_leave();
	errno = e;
}

void mgp_record_munmap(void *addr, size_t len)
{
	int e = errno;
	mgp_mmaps_remove((uint64_t)(uintptr_t)addr, page_round(len), mmap_removed);
	errno = e;
}

void mgp_record_mremap(void *old, size_t old_size, void *addr, size_t new_size)
{
	int e = errno;
	mgp_guard_enter();
	if (mgp_mmaps_remove((uint64_t)(uintptr_t)old, page_round(old_size), mmap_removed)) {
		/* Moved or resized tracked memory: a new allocation at this call site. */
		uint64_t a = (uint64_t)(uintptr_t)addr, n = page_round(new_size);
		mgp_mmaps_remove(a, n, mmap_removed);
		mapping_added(a, n);
	}
	mgp_guard_leave();
	errno = e;
}
