/* SPDX-License-Identifier: MIT */
/* prog_stepvalues.c: step markers whose snapshots must carry their own step's values. Before marker
 * s it keeps a block of 1000 * s bytes from before_marker(), right after it one of 100 + s bytes
 * from after_marker(), then sleeps 30 ms (time for any work left by the marker to run, and to see
 * that block). After each marker it prints the newest entry of its own live segment's ring; at the
 * end, after marker STEPS + 1, the segment's grid points. test_stepvalues.py checks both against
 * the trace. Allocates nothing else between the markers; prints only at the end. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "mgc_shm_format.h"
#include "mgprobe.h"

#define STEPS 8
#define NOINLINE __attribute__((noinline))

void *kept[2 * STEPS]; /* not static: the compiler must keep the stores, and so the mallocs */

NOINLINE static void *before_marker(size_t n)
{
	return malloc(n);
}

NOINLINE static void *after_marker(size_t n)
{
	return malloc(n);
}

static const struct mgc_shm *open_segment(void)
{
	char name[32];
	mgc_shm_name(getpid(), name, sizeof name);
	int fd = shm_open(name, O_RDONLY, 0);
	if (fd < 0)
		return NULL;
	const struct mgc_shm *s = mmap(NULL, sizeof *s, PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	return s == MAP_FAILED ? NULL : s;
}

int main(void)
{
	static struct mgc_rec_snapshot ring[STEPS + 1]; /* the newest ring entry after each marker */
	const struct mgc_shm *seg = open_segment();
	for (int s = 1; s <= STEPS; s++) {
		kept[2 * s - 2] = before_marker(1000u * (unsigned)s);
		mgprobe_step((uint64_t)s);
		if (seg) /* written by the marker itself: no sampler involved */
			ring[s] = seg->ring[(seg->h.ring_head - 1) % MGC_SHM_RING];
		kept[2 * s - 1] = after_marker(100u + (unsigned)s);
		struct timespec ts = {0, 30 * 1000000L}; /* > the segment's 20 ms between full publishes */
		nanosleep(&ts, NULL);
	}
	mgprobe_step(STEPS + 1); /* a full publish: whatever step STEPS left is published first */
	if (!seg) {
		printf("no segment\n");
		return 0;
	}
	for (int s = 1; s <= STEPS; s++)
		printf("ring %" PRIu64 " %" PRIu64 " %" PRIu64 "\n", ring[s].step, ring[s].heap_live_bytes,
		       ring[s].heap_live_count);
	for (uint32_t i = 0; i < seg->h.grid_n && i < MGC_SHM_GRID; i++)
		printf("grid %" PRIu64 " %" PRIu64 " %" PRIu64 "\n", seg->grid[i].step,
		       seg->grid[i].heap_live_bytes, seg->grid[i].heap_live_count);
	return 0;
}
