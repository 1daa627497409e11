/* SPDX-License-Identifier: MIT */
/* mgp_mmaps.c: sorted array of disjoint anonymous-mapping ranges with split-on-remove. The array
 * lives in kernel memory and doubles when full. Never calls malloc or a hooked function. */
#include "mgp_mmaps.h"

#include <errno.h>
#include <pthread.h>
#include <string.h>

#include "mgp_os.h"

/* One piece of a mapping. A partial munmap splits a mapping into pieces that share its `map`
 * serial and are marked `split`; the mapping is gone (one free) when its last piece goes. */
struct range {
	uint64_t start, end;
	uint32_t site, bucket;
	uint32_t map;
	uint32_t split;
};

/* The tracked mappings, sorted by address, under `lock`. */
static struct {
	struct range *r;
	uint64_t n, cap;
	uint32_t serial;
	pthread_mutex_t lock;
} maps = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* First index whose end > addr. */
static uint64_t lower(uint64_t addr)
{
	uint64_t lo = 0, hi = maps.n;
	while (lo < hi) {
		uint64_t mid = (lo + hi) / 2;
		if (maps.r[mid].end <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static int reserve(uint64_t need)
{
	if (need <= maps.cap)
		return 0;
	uint64_t ncap = maps.cap ? maps.cap * 2 : 1024;
	while (ncap < need)
		ncap *= 2;
	struct range *nr = mgp_os_alloc(ncap * sizeof *nr);
	if (!nr)
		return -ENOMEM;
	if (maps.n)
		memcpy(nr, maps.r, maps.n * sizeof *nr);
	mgp_os_free(maps.r, maps.cap * sizeof *maps.r);
	maps.r = nr;
	maps.cap = ncap;
	return 0;
}

int mgp_mmaps_add(uint64_t addr, uint64_t len, uint32_t site, uint32_t bucket)
{
	if (len == 0)
		return 0;
	pthread_mutex_lock(&maps.lock);
	if (reserve(maps.n + 1) < 0) {
		pthread_mutex_unlock(&maps.lock);
		return -ENOMEM;
	}
	uint64_t i = lower(addr);
	memmove(&maps.r[i + 1], &maps.r[i], (maps.n - i) * sizeof *maps.r);
	if (++maps.serial == 0)
		maps.serial = 1;
	maps.r[i] = (struct range){addr, addr + len, site, bucket, maps.serial, 0};
	maps.n++;
	pthread_mutex_unlock(&maps.lock);
	return 0;
}

/* Whether a piece of mapping `map` is still tracked. Only split mappings get here, so the scan
 * costs nothing for the common whole-mapping munmap. */
static int other_piece(uint32_t map)
{
	for (uint64_t k = 0; k < maps.n; k++)
		if (maps.r[k].map == map)
			return 1;
	return 0;
}

uint64_t mgp_mmaps_remove(uint64_t addr, uint64_t len, mgp_mmaps_removed_fn fn, void *ctx)
{
	uint64_t end = addr + len, removed = 0;
	if (len == 0)
		return 0;
	pthread_mutex_lock(&maps.lock);
	uint64_t i = lower(addr);
	while (i < maps.n && maps.r[i].start < end) {
		struct range *r = &maps.r[i];
		uint64_t cs = r->start > addr ? r->start : addr;
		uint64_t ce = r->end < end ? r->end : end;
		uint64_t cut = ce - cs;
		int split = cs > r->start && ce < r->end;
		if (split && reserve(maps.n + 1) < 0) {
			/* Out of memory for a split: leave the range whole (overstated, never negative). */
			i++;
			continue;
		}
		r = &maps.r[i];
		removed += cut;
		struct range was = *r;
		int last = 0;
		if (split) {
			/* A hole in the middle: split in two. */
			memmove(&maps.r[i + 2], &maps.r[i + 1], (maps.n - i - 1) * sizeof *maps.r);
			maps.r[i + 1] = (struct range){ce, r->end, r->site, r->bucket, r->map, 1};
			r->end = cs;
			r->split = 1;
			maps.n++;
			i += 2;
		} else if (cs > r->start) {
			r->end = cs;
			i++;
		} else if (ce < r->end) {
			r->start = ce;
			i++;
		} else {
			memmove(&maps.r[i], &maps.r[i + 1], (maps.n - i - 1) * sizeof *maps.r);
			maps.n--;
			last = !was.split || !other_piece(was.map);
		}
		if (fn)
			fn(ctx, was.site, cut, was.bucket, last);
	}
	pthread_mutex_unlock(&maps.lock);
	return removed;
}

void mgp_mmaps_lock(void)
{
	pthread_mutex_lock(&maps.lock);
}

void mgp_mmaps_unlock(void)
{
	pthread_mutex_unlock(&maps.lock);
}
