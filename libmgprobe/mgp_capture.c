/* SPDX-License-Identifier: MIT */
/* mgp_capture.c: finds the probe's own code once at start-up, for the inline stack capture of
 * mgp_capture.h. Never called from a hook. */
#define _GNU_SOURCE
#include "mgp_capture.h"

#include "mgp_elf.h"

struct mgp_capture_conf mgp_capture_conf;

void mgp_capture_init(unsigned depth)
{
	uint64_t lo, hi;
	mgp_elf_module_of((const void *)&mgp_capture_init, &lo, &hi);
	mgp_capture_conf.own_lo = lo;
	mgp_capture_conf.own_hi = hi;
	mgp_capture_conf.depth = depth;
}
