/* SPDX-License-Identifier: MIT */
/* mge_validate.c: the full-resolution validation pass (decode all, evaluate, free all).
 * It must free every byte it allocates before returning: the scenario is a sawtooth, not a leak. */
#include "mge_validate.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "mge_augment.h"
#include "mge_memstat.h"
#include "mge_png.h"
#include "mgprobe.h"

int mge_validate_run(struct mge_model *m, const struct mge_dataset *vs, int batch,
		     struct mge_validate_result *res)
{
	size_t *off = NULL, total = 0;
	uint8_t *raw = NULL;
	float *full = NULL;
	int correct = 0, err = -ENOMEM;

	memset(res, 0, sizeof(*res));
	mgprobe_label("validation");
	off = malloc((size_t)vs->count * sizeof(*off));
	if (!off)
		goto out;
	for (int i = 0; i < vs->count; i++) {
		off[i] = total;
		total += (size_t)vs->images[i].w * (size_t)vs->images[i].h * 3;
	}
	/* Every held-out image decoded and converted up front, as an eval dataset cached in RAM. */
	raw = malloc(total);
	full = malloc(total * sizeof(float));
	if (!raw || !full)
		goto out;
	for (int i = 0; i < vs->count; i++) {
		const struct mge_image *im = &vs->images[i];
		err = mge_png_decode(im->png, im->png_len, raw + off[i], im->w, im->h);
		if (err)
			goto out;
		mge_augment_to_planar(raw + off[i], im->w, im->h, full + off[i]);
	}
	res->peak_bytes = total * (1 + sizeof(float));
	res->peak_rss_mb = mge_memstat_rss_mb();
	mgprobe_snapshot();
	err = -ENOMEM;
	for (int i0 = 0; i0 < vs->count; i0 += batch) {
		int n = vs->count - i0 < batch ? vs->count - i0 : batch;
		int dims[4] = { n, 3, MGE_RES, MGE_RES }, preds[64];
		struct mge_tensor *x = mge_tensor_new(m->pool, 4, dims);
		if (!x)
			goto out;
		for (int k = 0; k < n; k++) {
			const struct mge_image *im = &vs->images[i0 + k];
			struct mge_crop c = mge_augment_full_crop(im->w, im->h);
			mge_augment_resample(full + off[i0 + k], im->w, im->h, &c,
					     x->data + (size_t)k * 3 * MGE_RES * MGE_RES, MGE_RES);
		}
		if (mge_model_predict(m, x, preds)) {
			mge_tensor_free(x);
			goto out;
		}
		mge_tensor_free(x);
		for (int k = 0; k < n; k++)
			correct += preds[k] == vs->images[i0 + k].label;
	}
	res->accuracy = vs->count ? (double)correct / vs->count : 0.0;
	err = 0;
out:
	free(full);
	free(raw);
	free(off);
	mgprobe_label("train");
	return err;
}
