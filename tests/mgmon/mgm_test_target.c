/* SPDX-License-Identifier: MIT */
/* mgm_test_target.c: a small training-like loop for the mgmon tests, with step markers.
 * `leak` keeps 64 KB per step from mgm_test_collate_leak (a leak with a known function name);
 * `healthy` grows a cache for 40 steps, then holds it (a plateau) while per-step temporaries are
 * freed; `both` does both. It must keep its memory shape exact: the tests rely on it.
 *
 *   mgm_test_target leak|healthy|both [PERIOD_MS [STEPS [stop]]]   (STEPS 0 = run until killed)
 * A leak is never freed, not even at exit: its final state still shows it. With `stop` it stops
 * itself (SIGSTOP) after its last step, before its teardown, until it is continued. */
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

int main(int argc, char **argv)
{
	if (argc < 2 || (strcmp(argv[1], "leak") && strcmp(argv[1], "healthy") && strcmp(argv[1], "both"))) {
		fprintf(stderr, "usage: mgm_test_target leak|healthy|both [PERIOD_MS [STEPS [stop]]]\n");
		return 2;
	}
	int leak = strcmp(argv[1], "healthy") != 0, warm = strcmp(argv[1], "leak") != 0;
	long period = argc > 2 ? atol(argv[2]) : 10;
	long steps = argc > 3 ? atol(argv[3]) : 0;
	struct kept *kept = NULL, *cache = NULL;
	struct timespec ts = {period / 1000, (period % 1000) * 1000000L};
	for (uint64_t s = 1; steps == 0 || (long)s <= steps; s++) {
		mgprobe_step(s);
		mgm_test_temporaries();
		if (leak)
			kept = mgm_test_collate_leak(kept);
		if (warm)
			cache = mgm_test_warmup_cache(cache, s);
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
