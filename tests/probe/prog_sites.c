/* SPDX-License-Identifier: MIT */
/* prog_sites.c: 50 allocations of 100 bytes from 50 distinct stacks (recursion depth 0..49, within
 * the default depth of 64 frames), all kept, for the limits: the site table's size
 * (MGPROBE_MAX_SITES) and the stack depth (--depth). */
#include <stdio.h>
#include <stdlib.h>

#define NOINLINE __attribute__((noinline))
#define N 50

void *blocks[N];

NOINLINE static void *leaf_alloc(void)
{
	return malloc(100);
}

NOINLINE static void *descend(int d)
{
	void *p = d == 0 ? leaf_alloc() : descend(d - 1);
	__asm__ volatile("" : : "r"(p) : "memory"); /* not a tail call */
	return p;
}

int main(void)
{
	for (int i = 0; i < N; i++)
		blocks[i] = descend(i);
	printf("%d blocks\n", N);
	return 0;
}
