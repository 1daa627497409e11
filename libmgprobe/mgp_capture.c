/* SPDX-License-Identifier: MIT */
/* mgp_capture.c: finds the probe's own code once at start-up, for the inline stack capture of
 * mgp_capture.h. Never called from a hook. */
#define _GNU_SOURCE
#include "mgp_capture.h"

#include <link.h>

#include "mgp_elf.h"

struct mgp_capture_conf mgp_capture_conf;

struct own_query {
	uintptr_t addr, lo, hi;
};

static int own_phdr(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct own_query *q = arg;
	uint64_t lo, hi;
	(void)size;
	if (mgp_elf_range(info, &lo, &hi) == 0 && q->addr >= lo && q->addr < hi) {
		q->lo = lo;
		q->hi = hi;
		return 1;
	}
	return 0;
}

void mgp_capture_init(unsigned depth)
{
	struct own_query q = {(uintptr_t)&mgp_capture_init, 0, 0};
	dl_iterate_phdr(own_phdr, &q);
	mgp_capture_conf.own_lo = q.lo;
	mgp_capture_conf.own_hi = q.hi;
	mgp_capture_conf.depth = depth;
}
