/* SPDX-License-Identifier: MIT */
/* prog_snapshot.c: allocates (heap blocks and an anonymous mapping), takes a snapshot with
 * mgprobe_snapshot(), then reads that snapshot back from its own live segment
 * (/dev/shm/mgprobe.<pid>, the newest ring entry) and prints its fields, for test_snapshot.py to
 * compare with the same snapshot in the trace. Without the probe it prints "no segment". */
#define _GNU_SOURCE
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "mgc_shm_format.h"
#include "mgprobe.h"

static void *blocks[10];

static int print_newest(void)
{
	char name[32];
	mgc_shm_name(getpid(), name, sizeof name);
	int fd = shm_open(name, O_RDONLY, 0);
	if (fd < 0)
		return -1;
	const struct mgc_shm *s = mmap(NULL, sizeof *s, PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	if (s == MAP_FAILED)
		return -1;
	/* The sampler is idle (a long interval): the snapshot just taken is the newest entry. */
	const struct mgc_rec_snapshot *sn = &s->ring[(s->h.ring_head - 1) % MGC_SHM_RING];
	printf("t_ns %" PRIu64 "\nheap %" PRIu64 "\nheap_count %" PRIu64 "\nmmap %" PRIu64 "\n"
	       "rss_anon %" PRIu64 "\nrss_file %" PRIu64 "\nrss_shmem %" PRIu64 "\nfree_kept %" PRIu64 "\n"
	       "allocs_total %" PRIu64 "\nfrees_total %" PRIu64 "\n",
	       sn->t_ns, sn->heap_live_bytes, sn->heap_live_count, sn->mmap_live_bytes, sn->rss_anon,
	       sn->rss_file, sn->rss_shmem, sn->malloc_free_bytes, sn->allocs_total, sn->frees_total);
	munmap((void *)s, sizeof *s);
	return 0;
}

int main(void)
{
	for (int i = 0; i < 10; i++)
		blocks[i] = malloc(1000);
	void *map = mmap(NULL, 3 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	mgprobe_snapshot();
	if (print_newest() < 0)
		printf("no segment\n");
	for (int i = 0; i < 10; i++)
		free(blocks[i]);
	munmap(map, 3 * 4096);
	return 0;
}
