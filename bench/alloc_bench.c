/* SPDX-License-Identifier: MIT */
/* alloc_bench.c: an allocation-heavy program for measuring the probe's cost per malloc+free pair
 * at a known stack depth. It times only its own loop and prints "ns_per_pair N"; it never
 * depends on the probe. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

struct job {
	long pairs;
	int depth;
	double ns;
};

static volatile uintptr_t sink;

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* The loop runs `depth` frames below the thread's entry, so every malloc sees a stack that deep. */
__attribute__((noinline)) static void work(struct job *j, int depth)
{
	if (depth > 0) {
		work(j, depth - 1);
		__asm__ volatile("" ::: "memory"); /* no tail call: keep the frame */
		return;
	}
	void *keep[16] = {0};
	double t0 = now();
	for (long i = 0; i < j->pairs; i++) {
		size_t n = 16 + (size_t)((i * 37) & 511);
		void *p = malloc(n);
		sink += (uintptr_t)p;
		/* Keep a few alive so the allocator's fast path is not a single recycled block. */
		void **slot = &keep[i & 15];
		free(*slot);
		*slot = p;
	}
	j->ns = (now() - t0) / (double)j->pairs;
	for (int k = 0; k < 16; k++)
		free(keep[k]);
}

static void *run(void *arg)
{
	struct job *j = arg;
	work(j, j->depth);
	return NULL;
}

int main(int argc, char **argv)
{
	int threads = argc > 1 ? atoi(argv[1]) : 1;
	long pairs = argc > 2 ? atol(argv[2]) : 2000000;
	int depth = argc > 3 ? atoi(argv[3]) : 12;
	if (threads < 1 || threads > 64 || pairs < 1 || depth < 0 || depth > 200) {
		fprintf(stderr, "usage: alloc_bench [THREADS 1..64] [PAIRS] [DEPTH 0..200]\n");
		return 2;
	}
	pthread_t t[64];
	struct job j[64];
	for (int i = 0; i < threads; i++) {
		j[i] = (struct job){.pairs = pairs, .depth = depth};
		pthread_create(&t[i], NULL, run, &j[i]);
	}
	double sum = 0;
	for (int i = 0; i < threads; i++) {
		pthread_join(t[i], NULL);
		sum += j[i].ns;
	}
	printf("ns_per_pair %.1f\n", sum / threads);
	return 0;
}
