/* SPDX-License-Identifier: MIT */
/* prog_day.c: a day of training at 10 steps/s, fast: 864,000 calls of mgprobe_step (argv[1]
 * overrides the count) with a training-like pattern per step: a batch (input, labels), four
 * activations and their gradients, allocated and freed; an optimizer state made once; a metrics
 * history that grows 16 bytes a step (a slow leak); every 1000 steps a validation pass under a
 * label. For the trace's size per day (test_day.py, docs/BENCHMARKS.md). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mgprobe.h"

#define NOINLINE __attribute__((noinline))

NOINLINE static void *batch(size_t n)
{
	return malloc(n);
}

NOINLINE static void *activation(size_t n)
{
	return malloc(n);
}

NOINLINE static void *gradient(size_t n)
{
	return calloc(1, n);
}

NOINLINE static void validate(void)
{
	void *v = malloc(1 << 20);
	memset(v, 1, 4096);
	free(v);
}

static double *history;
static size_t nhistory, caphistory;

NOINLINE static void record_metrics(double loss)
{
	if (nhistory + 2 > caphistory) {
		caphistory = caphistory ? caphistory * 2 : 1024;
		history = realloc(history, caphistory * sizeof *history);
	}
	history[nhistory++] = loss;
	history[nhistory++] = loss * 2;
}

int main(int argc, char **argv)
{
	uint64_t steps = argc > 1 ? strtoull(argv[1], NULL, 10) : 864000;
	void *optimizer = malloc(4 << 20);
	double loss = 1.0;
	for (uint64_t s = 0; s < steps; s++) {
		if (mgprobe_step)
			mgprobe_step(s);
		void *x = batch(64 << 10), *y = batch(512);
		void *act[4], *grad[4];
		for (int l = 0; l < 4; l++)
			act[l] = activation((size_t)(16 << 10) >> l);
		for (int l = 3; l >= 0; l--)
			grad[l] = gradient((size_t)(16 << 10) >> l);
		for (int l = 0; l < 4; l++) {
			free(act[l]);
			free(grad[l]);
		}
		free(x);
		free(y);
		loss *= 0.999999;
		record_metrics(loss);
		if (s % 1000 == 999 && mgprobe_label) {
			mgprobe_label("validation");
			validate();
			mgprobe_label("train");
		}
	}
	free(optimizer);
	printf("%llu steps, %zu metrics\n", (unsigned long long)steps, nhistory);
	free(history);
	return 0;
}
