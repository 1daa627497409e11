/* SPDX-License-Identifier: MIT */
/* prog_torture.c: the probe's tables at scale. "stacks": 1,000,000 blocks of 16 bytes, each from
 * a distinct stack (a binary tree of calls 20 deep: node's two call sites make 2^20 paths, the
 * first 10^6 allocate); "blocks": the same 1,000,000 blocks from one stack. All kept live; no
 * stdio (its buffer would be one more block), so the heap is exactly 16,000,000 bytes. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define N 1000000
#define DEPTH 20

#include "prog_tree.h"

static void *blocks[N];
static int n;

NOINLINE static void leaf(void)
{
	if (n < N)
		blocks[n++] = malloc(16);
}

NOINLINE static void one_site(void)
{
	for (int i = 0; i < N; i++)
		blocks[i] = malloc(16);
	n = N;
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "blocks"))
		one_site();
	else
		node(DEPTH);
	int ok = 1;
	for (int i = 0; i < n; i++)
		ok &= blocks[i] != NULL;
	const char *msg = ok && n == N ? "1000000 blocks\n" : "malloc failed\n";
	return write(1, msg, strlen(msg)) > 0 && ok ? 0 : 1;
}
