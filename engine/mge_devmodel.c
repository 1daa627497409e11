/* SPDX-License-Identifier: MIT */
/* mge_devmodel.c: forward, backward and AdamW of mgtrain's CNN on the device, step for step the
 * sequence of mge_model.c and mge_optim.c with each loop nest replaced by a kernel. It must free
 * every activation block before a step returns and allocate parameters, gradients and optimizer
 * state once: that is what makes the allocator's segments level off. */
#include "mge_devmodel.h"

#include <errno.h>
#include <math.h>
#include <string.h>

#include "mge_loader.h"

static inline float *fp(const struct mge_devbuf *b)
{
	return (float *)b->ptr;
}

static inline int32_t *ip(const struct mge_devbuf *b)
{
	return (int32_t *)b->ptr;
}

static struct mge_tensor *host_param(const struct mge_model *m, int i)
{
	return i & 1 ? m->b[i / 2] : m->w[i / 2];
}

static struct mge_tensor *host_grad(const struct mge_model *m, int i)
{
	return i & 1 ? m->gb[i / 2] : m->gw[i / 2];
}

/* A block for `count` 4-byte values (floats or int32), NULL when the allocator has none. */
static struct mge_devbuf *alloc4(struct mge_devmodel *dm, size_t count)
{
	struct mge_devbuf *b;

	return mge_devalloc_alloc(dm->alloc, count * 4, &b) ? NULL : b;
}

int mge_devmodel_init(struct mge_devmodel *dm, struct mge_dev *dev, struct mge_devalloc *alloc,
		      const struct mge_model *host, const struct mge_optim *opt)
{
	memset(dm, 0, sizeof(*dm));
	dm->dev = dev;
	dm->alloc = alloc;
	dm->classes = host->classes;
	memcpy(dm->chans, host->chans, sizeof(dm->chans));
	dm->hyper = *opt;
	memset(dm->hyper.m, 0, sizeof(dm->hyper.m));
	memset(dm->hyper.v, 0, sizeof(dm->hyper.v));
	for (int i = 0; i < 2 * MGE_LAYERS; i++) {
		const struct mge_tensor *t = host_param(host, i);
		int err;

		dm->numel[i] = t->numel;
		dm->param[i] = alloc4(dm, t->numel);
		if (!dm->param[i]) {
			mge_devmodel_free(dm);
			return -ENOMEM;
		}
		err = mge_dev_upload(dev, dm->param[i]->ptr, t->data, t->numel * sizeof(float));
		if (err) {
			mge_devmodel_free(dm);
			return err;
		}
	}
	return 0;
}

void mge_devmodel_free(struct mge_devmodel *dm)
{
	for (int i = 0; i < 2 * MGE_LAYERS; i++) {
		mge_devalloc_free(dm->alloc, dm->param[i]);
		mge_devalloc_free(dm->alloc, dm->grad[i]);
		mge_devalloc_free(dm->alloc, dm->m[i]);
		mge_devalloc_free(dm->alloc, dm->v[i]);
		dm->param[i] = dm->grad[i] = dm->m[i] = dm->v[i] = NULL;
	}
}

size_t mge_devmodel_tensors(const struct mge_devmodel *dm)
{
	size_t n = 0;

	for (int i = 0; i < 2 * MGE_LAYERS; i++)
		n += (dm->param[i] != NULL) + (dm->grad[i] != NULL) + (dm->m[i] != NULL) + (dm->v[i] != NULL);
	return n;
}

/* The activations one forward pass keeps for backward (mge_model.c's struct acts). */
struct dacts {
	struct mge_devbuf *conv[3], *pool[3], *idx[3], *logits;
};

static void dacts_free(struct mge_devmodel *dm, struct dacts *a)
{
	for (int l = 0; l < 3; l++) {
		mge_devalloc_free(dm->alloc, a->conv[l]);
		mge_devalloc_free(dm->alloc, a->pool[l]);
		mge_devalloc_free(dm->alloc, a->idx[l]);
	}
	mge_devalloc_free(dm->alloc, a->logits);
	memset(a, 0, sizeof(*a));
}

static int forward(struct mge_devmodel *dm, const float *x, int n, struct dacts *a)
{
	int s = MGE_RES, err = 0, side = MGE_RES >> 3;
	int feat = dm->chans[3] * side * side;
	const float *in = x;

	memset(a, 0, sizeof(*a));
	for (int l = 0; l < 3 && !err; l++) {
		int ci = dm->chans[l], co = dm->chans[l + 1];
		size_t half = (size_t)n * (size_t)co * (size_t)(s / 2) * (size_t)(s / 2);
		a->conv[l] = alloc4(dm, (size_t)n * (size_t)co * (size_t)s * (size_t)s);
		a->pool[l] = alloc4(dm, half);
		a->idx[l] = alloc4(dm, half);
		if (!a->conv[l] || !a->pool[l] || !a->idx[l]) {
			err = -ENOMEM;
			break;
		}
		err = mge_dev_conv_relu_forward(dm->dev, in, fp(dm->param[2 * l]), fp(dm->param[2 * l + 1]),
						fp(a->conv[l]), n, ci, co, s);
		if (!err)
			err = mge_dev_maxpool_forward(dm->dev, fp(a->conv[l]), fp(a->pool[l]), ip(a->idx[l]),
						      n, co, s);
		in = fp(a->pool[l]);
		s /= 2;
	}
	if (!err) {
		a->logits = alloc4(dm, (size_t)n * (size_t)dm->classes);
		err = a->logits ? mge_dev_linear_forward(dm->dev, in, fp(dm->param[6]), fp(dm->param[7]),
							 fp(a->logits), n, feat, dm->classes)
				: -ENOMEM;
	}
	if (err)
		dacts_free(dm, a);
	return err;
}

static int ensure_grads(struct mge_devmodel *dm)
{
	/* Gradients appear at the first backward, as in PyTorch: part of the warmup. */
	for (int i = 0; i < 2 * MGE_LAYERS; i++) {
		if (!dm->grad[i])
			dm->grad[i] = alloc4(dm, dm->numel[i]);
		if (!dm->grad[i])
			return -ENOMEM;
	}
	return 0;
}

/* Backward of the convolution blocks, last to first, from dfeat = dL/d(last pool output), which it
 * frees. */
static int backward_convs(struct mge_devmodel *dm, const float *x, int n, struct dacts *a,
			  struct mge_devbuf *dfeat)
{
	struct mge_devbuf *dconv = NULL, *dpool = NULL;
	int s = MGE_RES >> 2, err = 0;

	for (int l = 2; l >= 0 && !err; l--) {
		int ci = dm->chans[l], co = dm->chans[l + 1];
		const float *in = l ? fp(a->pool[l - 1]) : x;
		dconv = alloc4(dm, (size_t)n * (size_t)co * (size_t)s * (size_t)s);
		if (!dconv) {
			err = -ENOMEM;
			break;
		}
		err = mge_dev_maxpool_backward(dm->dev, fp(dfeat), ip(a->idx[l]), fp(dconv), n, co, s);
		mge_devalloc_free(dm->alloc, dfeat);
		dfeat = NULL;
		if (!err && l) {
			dpool = alloc4(dm, (size_t)n * (size_t)ci * (size_t)s * (size_t)s);
			if (!dpool)
				err = -ENOMEM;
		}
		if (!err)
			err = mge_dev_conv_relu_backward(dm->dev, in, fp(dm->param[2 * l]), fp(a->conv[l]),
							 fp(dconv), fp(dm->grad[2 * l]), fp(dm->grad[2 * l + 1]),
							 dpool ? fp(dpool) : NULL, n, ci, co, s);
		mge_devalloc_free(dm->alloc, dconv);
		dconv = NULL;
		dfeat = dpool;
		dpool = NULL;
		s *= 2;
	}
	mge_devalloc_free(dm->alloc, dfeat);
	return err;
}

int mge_devmodel_train_step(struct mge_devmodel *dm, const float *x, const int32_t *labels, int n,
			    float *losses, float *loss, int *correct)
{
	struct dacts a;
	int C = dm->classes, side = MGE_RES >> 3, err;
	int feat = dm->chans[3] * side * side;
	struct mge_devbuf *dl = NULL, *dlosses = NULL, *dcorrect = NULL, *dfeat = NULL;
	int32_t hits[MGE_MAX_BATCH];
	double total = 0.0;

	if (n < 1 || n > MGE_MAX_BATCH)
		return -EINVAL;
	err = ensure_grads(dm);
	if (err)
		return err;
	err = forward(dm, x, n, &a);
	if (err)
		return err;
	dl = alloc4(dm, (size_t)n * (size_t)C);
	dlosses = alloc4(dm, (size_t)n);
	dcorrect = alloc4(dm, (size_t)n);
	dfeat = alloc4(dm, (size_t)n * (size_t)feat);
	err = dl && dlosses && dcorrect && dfeat ? 0 : -ENOMEM;
	if (!err)
		err = mge_dev_softmax_xent(dm->dev, fp(a.logits), labels, fp(dl), fp(dlosses), ip(dcorrect), n, C);
	if (!err)
		err = mge_dev_linear_backward(dm->dev, fp(a.pool[2]), fp(dm->param[6]), fp(dl), fp(dm->grad[6]),
					      fp(dm->grad[7]), fp(dfeat), n, feat, C);
	if (!err) {
		err = backward_convs(dm, x, n, &a, dfeat);
		dfeat = NULL;
	}
	/* The copies back wait for the kernels: a fault in any of them shows here. */
	if (!err)
		err = mge_dev_download(dm->dev, losses, dlosses->ptr, (size_t)n * sizeof(float));
	if (!err)
		err = mge_dev_download(dm->dev, hits, dcorrect->ptr, (size_t)n * sizeof(int32_t));
	if (!err) {
		*correct = 0;
		for (int b = 0; b < n; b++) {
			total += losses[b];
			*correct += hits[b];
		}
		*loss = (float)(total / n);
	}
	mge_devalloc_free(dm->alloc, dl);
	mge_devalloc_free(dm->alloc, dlosses);
	mge_devalloc_free(dm->alloc, dcorrect);
	mge_devalloc_free(dm->alloc, dfeat);
	dacts_free(dm, &a);
	return err;
}

int mge_devmodel_optim_step(struct mge_devmodel *dm)
{
	struct mge_optim *o = &dm->hyper;
	struct mge_dev_adamw h;
	int err = 0;

	o->t++;
	h = (struct mge_dev_adamw){
		.lr = o->lr, .beta1 = o->beta1, .beta2 = o->beta2, .eps = o->eps,
		.c1 = 1.0f - powf(o->beta1, (float)o->t), .c2 = 1.0f - powf(o->beta2, (float)o->t),
	};
	for (int i = 0; i < 2 * MGE_LAYERS && !err; i++) {
		size_t bytes = dm->numel[i] * sizeof(float);

		if (!dm->m[i]) {
			dm->m[i] = alloc4(dm, dm->numel[i]);
			dm->v[i] = alloc4(dm, dm->numel[i]);
			if (!dm->m[i] || !dm->v[i])
				return -ENOMEM;
			err = mge_dev_zero(dm->dev, dm->m[i]->ptr, bytes);
			if (!err)
				err = mge_dev_zero(dm->dev, dm->v[i]->ptr, bytes);
		}
		h.wd = i & 1 ? 0.0f : o->weight_decay;
		if (!err)
			err = mge_dev_adamw(dm->dev, fp(dm->param[i]), fp(dm->grad[i]), fp(dm->m[i]), fp(dm->v[i]),
					    dm->numel[i], &h);
	}
	return err;
}

int mge_devmodel_download(struct mge_devmodel *dm, struct mge_model *host)
{
	int err = 0;

	for (int i = 0; i < 2 * MGE_LAYERS && !err; i++) {
		struct mge_tensor *p = host_param(host, i), *g = host_grad(host, i);
		err = mge_dev_download(dm->dev, p->data, dm->param[i]->ptr, dm->numel[i] * sizeof(float));
		if (!err && g && dm->grad[i])
			err = mge_dev_download(dm->dev, g->data, dm->grad[i]->ptr, dm->numel[i] * sizeof(float));
	}
	return err;
}
