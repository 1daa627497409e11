/* SPDX-License-Identifier: MIT */
/* leaky_cache.c: a small example "training loop" for trying mg: a buffer pool that warms up and
 * levels off, per-step scratch memory that is freed, and a memo cache that is never evicted (the
 * leak). Steps are marked with mgprobe_step(); it runs the same without the probe. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mgprobe.h"

#define POOL_SLOTS 64

struct pool {
	void *slot[POOL_SLOTS];
	size_t size[POOL_SLOTS];
};

struct memo {
	struct memo *next;
	uint64_t key;
	char value[];
};

/* Returns a buffer of at least n bytes from the pool, growing it while new sizes appear. */
__attribute__((noinline)) static void *pool_get(struct pool *p, size_t n)
{
	unsigned k = 0;
	while (k < POOL_SLOTS - 1 && p->size[k] && p->size[k] < n)
		k++;
	if (p->size[k] < n) {
		free(p->slot[k]);
		p->slot[k] = malloc(n);
		p->size[k] = n;
	}
	return p->slot[k];
}

/* Remembers every result forever: the leak. */
__attribute__((noinline)) static struct memo *memo_remember(struct memo *head, uint64_t key, size_t n)
{
	struct memo *m = malloc(sizeof *m + n);
	if (!m)
		return head;
	m->next = head;
	m->key = key;
	memset(m->value, (int)(key & 0xff), n);
	return m;
}

__attribute__((noinline)) static double scratch_step(uint64_t step)
{
	size_t n = 256 * 1024 + (step % 7) * 4096;
	double *s = malloc(n);
	if (!s)
		return 0;
	double acc = 0;
	for (size_t i = 0; i < n / sizeof *s; i++) {
		s[i] = (double)(i ^ step);
		acc += s[i];
	}
	free(s);
	return acc;
}

int main(int argc, char **argv)
{
	unsigned steps = argc > 1 ? (unsigned)strtoul(argv[1], NULL, 10) : 200;
	struct pool pool = {0};
	struct memo *memo = NULL;
	double acc = 0;
	for (uint64_t step = 0; step < steps; step++) {
		mgprobe_step(step);
		/* Warmup: the pool sees larger batch sizes for the first ~40 steps, then none. */
		size_t batch = (size_t)(step < 40 ? step + 1 : 40) * 64 * 1024;
		char *b = pool_get(&pool, batch);
		memset(b, 1, batch);
		acc += scratch_step(step);
		memo = memo_remember(memo, step, 96 * 1024);
		if (step % 20 == 0)
			printf("step %llu acc %.0f\n", (unsigned long long)step, acc);
	}
	printf("done: steps=%u\n", steps);
	return 0;
}
