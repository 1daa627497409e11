/* SPDX-License-Identifier: MIT */
/* mge_validate.h: the validation pass of the `validation` scenario: decode the whole held-out set at
 * full resolution, evaluate it, free it all again: a large, short-lived allocation every K steps. */
#ifndef MGE_VALIDATE_H
#define MGE_VALIDATE_H

#include <stddef.h>

#include "mge_dataset.h"
#include "mge_model.h"

#define MGE_VALIDATE_EVERY 50       /* steps between passes */
#define MGE_VALIDATE_PER_SHAPE 32   /* 800 held-out images */

struct mge_validate_result {
	double accuracy;
	size_t peak_bytes;              /* decoded bytes held at the peak of the pass */
	double peak_rss_mb;             /* VmRSS at that peak, < 0 if unknown */
};

/* Runs one pass over `vs` in batches of `batch`, labelled "validation" for the probe (the label is
 * set back to "train" before returning). Returns 0 or -ENOMEM; frees everything it allocated. */
int mge_validate_run(struct mge_model *m, const struct mge_dataset *vs, int batch,
		     struct mge_validate_result *res);

#endif /* MGE_VALIDATE_H */
