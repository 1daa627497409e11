/* SPDX-License-Identifier: MIT */
/* mge_diag.h: per-step training diagnostics, the mechanism of the `slow-leak` scenario.
 * Each step samples a random amount of activations into a reservoir kept until the next step
 * (large step-to-step noise) and appends a small histogram record to a history that is never
 * trimmed (a small, steady leak). */
#ifndef MGE_DIAG_H
#define MGE_DIAG_H

#include <stddef.h>
#include <stdint.h>

#include "mge_model.h"

#define MGE_DIAG_RECORD_BYTES (64u << 10)   /* per step at --scale 1 */
#define MGE_DIAG_RESERVOIR_MIN (1u << 20)   /* reservoir size range at --scale 1 */
#define MGE_DIAG_RESERVOIR_MAX (9u << 20)

struct mge_diag_record {
	struct mge_diag_record *next;
	uint64_t step;
	size_t bins;
	float hist[];            /* MGE_LAYERS histograms of the weights, bins each */
};

struct mge_diag {
	uint64_t seed;
	double scale;
	struct mge_diag_record *history;   /* newest first; never trimmed */
	size_t records, history_bytes;
	float *reservoir;                  /* this step's sample; freed at the next step */
	size_t reservoir_bytes;
};

void mge_diag_init(struct mge_diag *d, uint64_t seed, double scale);

/* Records step `step`: replaces the reservoir (random size) with samples of the batch `x`, and
 * appends one histogram record of the model's weights. Returns 0 or -ENOMEM. */
int mge_diag_record_step(struct mge_diag *d, uint64_t step, const struct mge_model *m,
			 const struct mge_tensor *x);

void mge_diag_free(struct mge_diag *d);

#endif /* MGE_DIAG_H */
