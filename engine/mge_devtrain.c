/* SPDX-License-Identifier: MIT */
/* mge_devtrain.c: `--device cuda`: batches from the CPU loader copied into device blocks each
 * step, the device model's step, and the `leak` scenario's device variant (the collator's device
 * cache). It must free every per-step block before the step returns, except those the cache keeps:
 * the cache is the only thing that makes the allocator's segments grow after the first step. */
#include "mge_devtrain.h"

#include <stdlib.h>
#include <string.h>

#include "mge_cuda.h"
#include "mge_devalloc.h"
#include "mge_devmodel.h"

struct mge_devtrain {
	struct mge_dev dev;
	struct mge_devalloc *alloc;
	struct mge_devmodel model;
	int leak;
	struct mge_devbuf **cache;      /* leak: every batch's sources, on the device, never evicted */
	size_t cache_len, cache_cap;
};

int mge_devtrain_probe(char *err, size_t errlen)
{
	return mge_cuda_probe(err, errlen);
}

int mge_devtrain_start(struct mge_devtrain **out, const struct mge_model *host, const struct mge_optim *opt,
		       int leak, const char **what)
{
	struct mge_devtrain *dt = calloc(1, sizeof(*dt));
	struct mge_devalloc_backend be = {
		.name = "cuda", .segment_alloc = mge_cuda_segment_alloc, .segment_free = mge_cuda_segment_free,
	};
	int err;

	*out = NULL;
	if (!dt) {
		*what = "cannot set up the device";
		return -ENOMEM;
	}
	be.ctx = &dt->dev;
	dt->leak = leak;
	dt->alloc = mge_devalloc_new(&be);
	if (!dt->alloc) {
		free(dt);
		*what = "cannot set up the device";
		return -ENOMEM;
	}
	err = mge_devmodel_init(&dt->model, &dt->dev, dt->alloc, host, opt);
	if (err) {
		*what = err == -ENOMEM ? "out of device memory for the model" : mge_dev_strerror(&dt->dev);
		mge_devtrain_stop(dt);
		return err;
	}
	*out = dt;
	return 0;
}

/* leak, --device cuda: the collator's device cache. It uploads the batch's decoded sources
 * (n * h * w * 3 bytes, 0.84 to 2.3 MiB at scale 1) into a block of the caching allocator, for a
 * device-side augmentation that never comes, and keeps the block in a list nothing evicts: the
 * allocator reserves a new segment every dozen steps or so, from this function.
 * noinline, noclone: a frame of its own under its own name in every stack of those cudaMallocs. */
__attribute__((noinline, noclone))
static int mge_collate_device_cache(struct mge_devtrain *dt, const struct mge_images *src)
{
	size_t bytes = (size_t)src->n * (size_t)src->h * (size_t)src->w * 3;
	struct mge_devbuf *buf;
	int err;

	if (dt->cache_len == dt->cache_cap) {
		size_t cap = dt->cache_cap ? dt->cache_cap * 2 : 64;
		struct mge_devbuf **c = realloc(dt->cache, cap * sizeof(*c));
		if (!c)
			return -ENOMEM;
		dt->cache = c;
		dt->cache_cap = cap;
	}
	err = mge_devalloc_alloc(dt->alloc, bytes, &buf);
	if (err)
		return err;
	dt->cache[dt->cache_len++] = buf;
	err = mge_dev_upload(&dt->dev, buf->ptr, src->pixels, bytes);
	return err;
}

int mge_devtrain_step(struct mge_devtrain *dt, const struct mge_batch *b, float *losses, float *loss,
		      int *correct, const char **what)
{
	size_t xbytes = b->x->numel * sizeof(float);
	int32_t labels[MGE_MAX_BATCH];
	struct mge_devbuf *x = NULL, *lab = NULL;
	int err;

	for (int k = 0; k < b->n; k++)
		labels[k] = b->labels[k];
	err = mge_devalloc_alloc(dt->alloc, xbytes, &x);
	if (!err)
		err = mge_devalloc_alloc(dt->alloc, (size_t)b->n * sizeof(int32_t), &lab);
	if (!err)
		err = mge_dev_upload(&dt->dev, x->ptr, b->x->data, xbytes);
	if (!err)
		err = mge_dev_upload(&dt->dev, lab->ptr, labels, (size_t)b->n * sizeof(int32_t));
	if (!err)
		err = mge_devmodel_train_step(&dt->model, x->ptr, lab->ptr, b->n, losses, loss, correct);
	if (!err)
		err = mge_devmodel_optim_step(&dt->model);
	mge_devalloc_free(dt->alloc, x);
	mge_devalloc_free(dt->alloc, lab);
	if (!err && dt->leak)
		err = mge_collate_device_cache(dt, b->src);
	if (err)
		*what = err == -EIO ? mge_dev_strerror(&dt->dev) : "out of device memory in the training step";
	return err;
}

void mge_devtrain_log(const struct mge_devtrain *dt, size_t *tensors, double *reserved_mib)
{
	struct mge_devalloc_stats st;

	mge_devalloc_stats(dt->alloc, &st);
	*tensors = mge_devmodel_tensors(&dt->model);
	*reserved_mib = (double)st.reserved_bytes / (1024.0 * 1024.0);
}

void mge_devtrain_stop(struct mge_devtrain *dt)
{
	if (!dt)
		return;
	for (size_t i = 0; i < dt->cache_len; i++)
		mge_devalloc_free(dt->alloc, dt->cache[i]);
	free(dt->cache);
	mge_devmodel_free(&dt->model);
	mge_devalloc_destroy(dt->alloc);
	free(dt);
}
