/* SPDX-License-Identifier: MIT */
/* prog_attrib.c: allocates from three named functions with known counts and sizes (malloc with
 * some frees, calloc never freed, realloc chains) across step markers, so the driver can check
 * every site counter, the cohorts and the source lines exactly. The SITE: comments mark the lines
 * the driver expects in frames[0]. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "mgprobe.h"

#define NOINLINE __attribute__((noinline))

void *keep[64]; /* not static: the stores, and so the allocations, must stay */
static volatile int nchains = 2; /* volatile: the loop over it stays a loop, one call site */
static int nkeep;

/* 10 x malloc(100); frees 6 of them after all are made: peak 1000, 400 live in 4 blocks. */
NOINLINE static void make_small(void)
{
	void *p[10];
	for (int i = 0; i < 10; i++)
		p[i] = malloc(100); /* SITE:make_small */
	for (int i = 0; i < 10; i++) {
		if (i % 5 < 3)
			free(p[i]);
		else
			keep[nkeep++] = p[i];
	}
}

/* 7 x calloc(5, 48), none freed: 1680 bytes live in 7 blocks. */
NOINLINE static void make_zeroed(void)
{
	for (int i = 0; i < 7; i++) {
		unsigned char *p = calloc(5, 48); /* SITE:make_zeroed */
		if (p[0] || p[239])
			abort();
		keep[nkeep++] = p;
	}
}

/* One realloc chain 64 -> 1024 (five calls; the first from NULL). */
NOINLINE static void *grow_buffer(void)
{
	void *p = NULL;
	for (size_t n = 64; n <= 1024; n *= 2)
		p = realloc(p, n); /* SITE:grow_buffer */
	return p;
}

int main(void)
{
	make_small();               /* step 0 */
	mgprobe_step(1);
	make_zeroed();              /* step 1 */
	mgprobe_step(5);
	mgprobe_label("validation");
	void *buf[2];
	for (int i = 0; i < nchains; i++) /* one call site: both chains are the same site */
		buf[i] = grow_buffer(); /* step 5 */
	free(buf[1]);               /* the site peaked at 2048; 1024 stays live */
	keep[nkeep++] = buf[0];
	printf("kept %d blocks\n", nkeep);
	return 0;
}
