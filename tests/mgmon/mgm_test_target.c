/* SPDX-License-Identifier: MIT */
/* mgm_test_target.c: a small training-like loop for the mgmon tests, with step markers.
 * `leak` keeps 64 KB per step from mgm_test_collate_leak (a leak with a known function name);
 * `healthy` grows a cache for 40 steps, then holds it (a plateau) while per-step temporaries are
 * freed; `both` does both. It must keep its memory shape exact: the tests rely on it.
 *
 *   mgm_test_target leak|healthy|both [PERIOD_MS [STEPS [stop]]]   (STEPS 0 = run until killed)
 * A leak is never freed, not even at exit: its final state still shows it. With `stop` it stops
 * itself (SIGSTOP) after its last step, before its teardown, until it is continued. With
 * MGM_TEST_SITES=N (at most 512) each step ends by allocating and freeing 100 bytes from N
 * distinct stacks: N more sites, none holding memory at a marker, and more sites than a thread's
 * delta table holds, so the step's changes reach the site counters on its own thread. */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mgprobe.h"

struct kept {
	struct kept *next;
	char data[];
};

static __attribute__((noinline)) struct kept *mgm_test_collate_leak(struct kept *history)
{
	struct kept *k = malloc(sizeof *k + 64 * 1024);
	if (!k)
		return history;
	memset(k->data, 1, 64 * 1024);
	k->next = history;
	return k;
}

static __attribute__((noinline)) struct kept *mgm_test_warmup_cache(struct kept *cache, uint64_t step)
{
	if (step >= 40)
		return cache;
	struct kept *k = malloc(sizeof *k + 256 * 1024);
	if (!k)
		return cache;
	memset(k->data, 2, 256 * 1024);
	k->next = cache;
	return k;
}

static __attribute__((noinline)) void mgm_test_temporaries(void)
{
	void *p[16];
	for (int i = 0; i < 16; i++) {
		p[i] = malloc(4096 + (size_t)i * 512);
		if (p[i])
			memset(p[i], 3, 4096);
	}
	for (int i = 0; i < 16; i++)
		free(p[i]);
}

/* Churn from 16 leaves under 0 to 31 recursive frames: up to 512 distinct stacks. */
#define LEAF(k)                                                                                   \
	static __attribute__((noinline)) void mgm_test_churn##k(void)                             \
	{                                                                                         \
		void *volatile p = malloc(100);                                                   \
		free(p);                                                                          \
	}
LEAF(0) LEAF(1) LEAF(2) LEAF(3) LEAF(4) LEAF(5) LEAF(6) LEAF(7)
LEAF(8) LEAF(9) LEAF(10) LEAF(11) LEAF(12) LEAF(13) LEAF(14) LEAF(15)
static void (*const churn_leaf[16])(void) = {
	mgm_test_churn0, mgm_test_churn1, mgm_test_churn2, mgm_test_churn3, mgm_test_churn4,
	mgm_test_churn5, mgm_test_churn6, mgm_test_churn7, mgm_test_churn8, mgm_test_churn9,
	mgm_test_churn10, mgm_test_churn11, mgm_test_churn12, mgm_test_churn13, mgm_test_churn14,
	mgm_test_churn15};

static __attribute__((noinline)) void mgm_test_churn_at(int depth, int leaf)
{
	if (depth == 0)
		churn_leaf[leaf]();
	else
		mgm_test_churn_at(depth - 1, leaf);
	__asm__ volatile("" ::: "memory"); /* not a tail call: each depth is its own stack */
}

static void mgm_test_churn(int sites)
{
	for (int i = 0; i < sites && i < 512; i++)
		mgm_test_churn_at(i / 16, i % 16);
}

int main(int argc, char **argv)
{
	if (argc < 2 || (strcmp(argv[1], "leak") && strcmp(argv[1], "healthy") && strcmp(argv[1], "both"))) {
		fprintf(stderr, "usage: mgm_test_target leak|healthy|both [PERIOD_MS [STEPS [stop]]]\n");
		return 2;
	}
	int leak = strcmp(argv[1], "healthy") != 0, warm = strcmp(argv[1], "leak") != 0;
	long period = argc > 2 ? atol(argv[2]) : 10;
	long steps = argc > 3 ? atol(argv[3]) : 0;
	const char *many = getenv("MGM_TEST_SITES");
	int sites = many ? atoi(many) : 0;
	struct kept *kept = NULL, *cache = NULL;
	struct timespec ts = {period / 1000, (period % 1000) * 1000000L};
	for (uint64_t s = 1; steps == 0 || (long)s <= steps; s++) {
		mgprobe_step(s);
		mgm_test_temporaries();
		if (leak)
			kept = mgm_test_collate_leak(kept);
		if (warm)
			cache = mgm_test_warmup_cache(cache, s);
		mgm_test_churn(sites);
		nanosleep(&ts, NULL);
	}
	if (argc > 4 && !strcmp(argv[4], "stop")) {
		/* The last marker left its sites' part of the live segment to the probe's sampler
		 * thread: a snapshot in the same step publishes it now (and keeps the step's point). */
		mgprobe_snapshot();
		raise(SIGSTOP);
	}
	while (cache) {
		struct kept *n = cache->next;
		free(cache);
		cache = n;
	}
	return 0;
}
