/* SPDX-License-Identifier: MIT */
/* prog_sample.c: what sampled mode (mgprobe run --sample 64K) must get right, run in exact mode
 * too: 100,000 small blocks kept (an estimate within its band); 200 blocks of 100 bytes grown by
 * realloc to 300 KiB (over 4R: always recorded), then half shrunk back to 64 bytes and half freed
 * (realloc across recorded and unrecorded); 8 anonymous mappings of 64 KiB (never sampled). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define NOINLINE __attribute__((noinline))
#define NSMALL 100000
#define NGROW 200
#define NMAP 8

static void *small[NSMALL], *grown[NGROW], *maps[NMAP];

NOINLINE static void *keep_small(void)
{
	return malloc(256);
}

NOINLINE static void *start_small(void)
{
	return malloc(100);
}

NOINLINE static void *grow_big(void *p)
{
	return realloc(p, 300 << 10);
}

NOINLINE static void *shrink_back(void *p)
{
	return realloc(p, 64);
}

NOINLINE static void *map_some(void)
{
	return mmap(NULL, 64 << 10, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
}

int main(void)
{
	for (int i = 0; i < NSMALL; i++)
		if (!(small[i] = keep_small()))
			return 1;
	for (int i = 0; i < NGROW; i++)
		if (!(grown[i] = start_small()) || !(grown[i] = grow_big(grown[i])))
			return 1;
	for (int i = 0; i < NGROW; i++) {
		if (i % 2 == 0) {
			free(grown[i]);
			grown[i] = NULL;
		} else if (!(grown[i] = shrink_back(grown[i]))) {
			return 1;
		}
	}
	for (int i = 0; i < NMAP; i++)
		if ((maps[i] = map_some()) == MAP_FAILED)
			return 1;
	printf("%d small, %d grown, %d mappings\n", NSMALL, NGROW, NMAP);
	return 0;
}
