/* SPDX-License-Identifier: MIT */
/* mge_diag.c: weight histograms and an activation reservoir per step (scenario `slow-leak`).
 * The history must grow by exactly one record per step and the reservoir must be freed at the next
 * step: the scenario is a small leak hidden under noise, and both halves are its point. */
#include "mge_diag.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mge_rng.h"

void mge_diag_init(struct mge_diag *d, uint64_t seed, double scale)
{
	memset(d, 0, sizeof(*d));
	d->seed = seed;
	d->scale = scale;
}

__attribute__((noinline))
static int mge_diag_append_history(struct mge_diag *d, uint64_t step, const struct mge_model *m)
{
	size_t bytes = (size_t)(MGE_DIAG_RECORD_BYTES * d->scale);
	size_t bins = (bytes - sizeof(struct mge_diag_record)) / sizeof(float) / MGE_LAYERS;
	struct mge_diag_record *r = malloc(sizeof(*r) + bins * MGE_LAYERS * sizeof(float));

	if (!r)
		return -ENOMEM;
	r->step = step;
	r->bins = bins;
	memset(r->hist, 0, bins * MGE_LAYERS * sizeof(float));
	for (int l = 0; l < MGE_LAYERS; l++) {
		float *h = r->hist + (size_t)l * bins;
		const struct mge_tensor *w = m->w[l];
		for (size_t i = 0; i < w->numel; i++) {
			/* Bins over [-1, 1). */
			float v = (w->data[i] + 1.0f) * 0.5f * (float)bins;
			size_t k = v <= 0.0f ? 0 : v >= (float)bins ? bins - 1 : (size_t)v;
			h[k] += 1.0f;
		}
	}
	r->next = d->history;
	d->history = r;
	d->records++;
	d->history_bytes += sizeof(*r) + bins * MGE_LAYERS * sizeof(float);
	return 0;
}

int mge_diag_record_step(struct mge_diag *d, uint64_t step, const struct mge_model *m,
			 const struct mge_tensor *x)
{
	struct mge_rng r;
	size_t lo = (size_t)(MGE_DIAG_RESERVOIR_MIN * d->scale), hi = (size_t)(MGE_DIAG_RESERVOIR_MAX * d->scale);
	size_t bytes, n;

	mge_rng_init(&r, d->seed, 0xd1a9, step, 0);
	bytes = lo + (size_t)(mge_rng_unit(&r) * (float)(hi - lo));
	free(d->reservoir);
	d->reservoir = malloc(bytes);
	d->reservoir_bytes = d->reservoir ? bytes : 0;
	if (!d->reservoir)
		return -ENOMEM;
	n = bytes / sizeof(float);
	for (size_t i = 0; i < n; i++)
		d->reservoir[i] = x->data[mge_rng_below(&r, (uint32_t)x->numel)];
	return mge_diag_append_history(d, step, m);
}

void mge_diag_free(struct mge_diag *d)
{
	while (d->history) {
		struct mge_diag_record *n = d->history->next;
		free(d->history);
		d->history = n;
	}
	free(d->reservoir);
	memset(d, 0, sizeof(*d));
}
