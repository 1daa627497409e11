/* SPDX-License-Identifier: MIT */
/* prog_steps.c: a training-like loop for the report tests (test_diff.py, test_exports.py,
 * test_html.py): STEPS steps marked with mgprobe_step, a pool that warms up over steps 1 to 40
 * (64 KiB per step, then flat), and a batch of 32 KiB per step (train_step) that remember_batch
 * keeps forever (the leak) unless --fixed. --workers N forks N workers before the loop, each
 * running it too: the first keeps leaking, the others are fixed, and the parent runs fixed.
 * Built three ways by meson, so that the same code has different addresses (-O0, and -O2 with an
 * extra function) and different line numbers (MG_SHIFT_LINES): a diff must match its sites by
 * symbolized stack. --kept-sites N (test_json_compact.py) first makes N distinct start-up sites
 * (at most 4096) that keep 48 bytes each for the whole run, and a 256 KiB scratch block freed
 * halfway through the loop.
 *
 * usage: prog_steps [--steps N] [--fixed] [--workers N] [--kept-sites N] */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "mgprobe.h"

#define NOINLINE __attribute__((noinline))
#define POOL_BLOCK (64 * 1024)
#define POOL_STEPS 40
#define BATCH_BYTES (32 * 1024)

void *pool[POOL_STEPS];     /* not static: the stores, and so the allocations, must stay */
void **history;             /* the leak: every batch kept */
size_t history_len;

NOINLINE static void warm_pool(uint64_t step)
{
	if (step >= 1 && step <= POOL_STEPS) {
		pool[step - 1] = malloc(POOL_BLOCK);
		memset(pool[step - 1], 1, POOL_BLOCK);
	}
}

#ifdef MG_SHIFT_LINES
#line 1000 /* the same code, further down its file: as after a fix that adds lines above it */
#endif
NOINLINE static void remember_batch(void *batch)
{
	void **h = realloc(history, (history_len + 1) * sizeof *h);
	if (!h)
		exit(1);
	history = h;
	history[history_len++] = batch;
}

NOINLINE static void train_step(uint64_t step, int fixed)
{
	char *batch = malloc(BATCH_BYTES);
	memset(batch, (int)(step & 0xff), BATCH_BYTES);
	warm_pool(step);
	if (fixed)
		free(batch);
	else
		remember_batch(batch);
}

#define KEPT_LEVELS 12 /* 2^12 distinct stacks */
void *kept[1u << KEPT_LEVELS];
void *scratch;

NOINLINE static void keep_block(unsigned i)
{
	kept[i] = malloc(48);
	memset(kept[i], 2, 48);
}

/* Site i: a stack of KEPT_LEVELS calls of level from one of two lines each, as i's bits say. */
NOINLINE static void level(unsigned depth, unsigned path, unsigned i)
{
	if (depth == 0)
		keep_block(i);
	else if (path & 1)
		level(depth - 1, path >> 1, i);
	else
		level(depth - 1, path >> 1, i);
}

NOINLINE static void make_scratch(void)
{
	scratch = malloc(256 * 1024);
	memset(scratch, 3, 256 * 1024);
}

static void run(uint64_t steps, int fixed)
{
	for (uint64_t s = 1; s <= steps; s++) {
		mgprobe_step(s);
		if (s == steps / 2) {
			free(scratch);
			scratch = NULL;
		}
		train_step(s, fixed);
		usleep(500);
	}
}

#ifdef MG_EXTRA_FUNCTION
/* Only in the build that must differ in layout: code before main moves main's addresses. */
NOINLINE int extra_function(int x);
NOINLINE int extra_function(int x)
{
	volatile int acc = 0;
	for (int i = 0; i < x; i++)
		acc += i * 7;
	return acc;
}
#endif

int main(int argc, char **argv)
{
	uint64_t steps = 300;
	int fixed = 0, workers = 0;
	unsigned kept_sites = 0;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--steps") && i + 1 < argc)
			steps = strtoull(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--fixed"))
			fixed = 1;
		else if (!strcmp(argv[i], "--workers") && i + 1 < argc)
			workers = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--kept-sites") && i + 1 < argc &&
			 (kept_sites = (unsigned)atoi(argv[++i])) <= 1u << KEPT_LEVELS)
			continue;
		else {
			fprintf(stderr, "usage: prog_steps [--steps N] [--fixed] [--workers N] [--kept-sites N]\n");
			return 2;
		}
	}
	for (unsigned i = 0; i < kept_sites; i++)
		level(KEPT_LEVELS, i, i);
	if (kept_sites)
		make_scratch();
#ifdef MG_EXTRA_FUNCTION
	if (extra_function(3) != 21)
		return 1;
#endif
	for (int w = 0; w < workers; w++) {
		pid_t pid = fork();
		if (pid < 0)
			return 1;
		if (pid == 0) {
			run(steps, w != 0);
			return 0;
		}
	}
	run(steps, fixed || workers > 0);
	for (int w = 0; w < workers; w++) {
		int st;
		if (wait(&st) < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
			return 1;
	}
	printf("done: %llu steps\n", (unsigned long long)steps);
	return 0;
}
