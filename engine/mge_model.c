/* SPDX-License-Identifier: MIT */
/* mge_model.c: forward and backward of mgtrain's CNN in plain loops (no BLAS), written so the inner
 * loops vectorise at -O2. It must never keep an activation past the call that made it: everything
 * but parameters and gradients goes back to the pool before returning. */
#include "mge_model.h"

#include <errno.h>
#include <math.h>
#include <string.h>

#include "mge_rng.h"

#define MAX_W MGE_RES   /* widest feature map */

static struct mge_tensor *new4(struct mge_pool *p, int a, int b, int c, int d)
{
	int dims[4] = { a, b, c, d };
	return mge_tensor_new(p, 4, dims);
}

int mge_model_init(struct mge_model *m, struct mge_pool *pool, int classes, uint64_t seed)
{
	static const int chans[4] = { 3, 8, 16, 32 };
	struct mge_rng r;
	int side = MGE_RES >> 3;

	memset(m, 0, sizeof(*m));
	m->pool = pool;
	m->classes = classes;
	memcpy(m->chans, chans, sizeof(chans));
	mge_rng_init(&r, seed, 0x3e19, 0, 0);
	for (int l = 0; l < MGE_LAYERS; l++) {
		int fan_in = l < 3 ? chans[l] * 9 : chans[3] * side * side;
		int dims[2] = { l < 3 ? chans[l + 1] : classes, fan_in };
		float a = sqrtf(6.0f / (float)fan_in);

		m->w[l] = mge_tensor_new(pool, 2, dims);
		m->b[l] = mge_tensor_zeros(pool, 1, dims);
		if (!m->w[l] || !m->b[l]) {
			mge_model_free(m);
			return -ENOMEM;
		}
		for (size_t i = 0; i < m->w[l]->numel; i++)
			m->w[l]->data[i] = mge_rng_range(&r, -a, a);
	}
	return 0;
}

void mge_model_free(struct mge_model *m)
{
	for (int l = 0; l < MGE_LAYERS; l++) {
		mge_tensor_free(m->w[l]);
		mge_tensor_free(m->b[l]);
		mge_tensor_free(m->gw[l]);
		mge_tensor_free(m->gb[l]);
		m->w[l] = m->b[l] = m->gw[l] = m->gb[l] = NULL;
	}
}

/* out[n, co, s, s] = b + conv3x3(in[n, ci, s, s], w[co, ci, 3, 3]), zero padding 1; then ReLU. */
static void conv_relu_forward(const float *in, const float *w, const float *bias, float *out,
			      int n, int ci, int co, int s)
{
	size_t plane = (size_t)s * (size_t)s;

	for (int b = 0; b < n; b++) {
		for (int o = 0; o < co; o++) {
			float *op = out + ((size_t)b * (size_t)co + (size_t)o) * plane;
			for (size_t i = 0; i < plane; i++)
				op[i] = bias[o];
			for (int c = 0; c < ci; c++) {
				const float *ip = in + ((size_t)b * (size_t)ci + (size_t)c) * plane;
				const float *wk = w + ((size_t)o * (size_t)ci + (size_t)c) * 9;
				for (int ky = 0; ky < 3; ky++) {
					int y0 = ky == 0 ? 1 : 0, y1 = ky == 2 ? s - 1 : s;
					for (int kx = 0; kx < 3; kx++) {
						float wv = wk[ky * 3 + kx];
						int x0 = kx == 0 ? 1 : 0, x1 = kx == 2 ? s - 1 : s;
						for (int y = y0; y < y1; y++) {
							float *orow = op + (size_t)y * (size_t)s;
							const float *irow = ip + (size_t)(y + ky - 1) * (size_t)s + (kx - 1);
							for (int x = x0; x < x1; x++)
								orow[x] += wv * irow[x];
						}
					}
				}
			}
			for (size_t i = 0; i < plane; i++)
				op[i] = op[i] > 0.0f ? op[i] : 0.0f;
		}
	}
}

/* Gradients of conv_relu_forward. d holds dL/d(out) and is masked by the ReLU in place. gw/gb are
 * overwritten; din (may be NULL for the first layer) is overwritten. */
static void conv_relu_backward(const float *in, const float *w, const float *out, float *d,
			       float *gw, float *gb, float *din, int n, int ci, int co, int s)
{
	size_t plane = (size_t)s * (size_t)s;

	memset(gw, 0, (size_t)co * (size_t)ci * 9 * sizeof(float));
	memset(gb, 0, (size_t)co * sizeof(float));
	if (din)
		memset(din, 0, (size_t)n * (size_t)ci * plane * sizeof(float));
	for (int b = 0; b < n; b++) {
		for (int o = 0; o < co; o++) {
			float *dp = d + ((size_t)b * (size_t)co + (size_t)o) * plane;
			const float *op = out + ((size_t)b * (size_t)co + (size_t)o) * plane;
			float sb = 0.0f;
			for (size_t i = 0; i < plane; i++) {
				dp[i] = op[i] > 0.0f ? dp[i] : 0.0f;
				sb += dp[i];
			}
			gb[o] += sb;
			for (int c = 0; c < ci; c++) {
				const float *ip = in + ((size_t)b * (size_t)ci + (size_t)c) * plane;
				float *dip = din ? din + ((size_t)b * (size_t)ci + (size_t)c) * plane : NULL;
				float *gk = gw + ((size_t)o * (size_t)ci + (size_t)c) * 9;
				const float *wk = w + ((size_t)o * (size_t)ci + (size_t)c) * 9;
				for (int ky = 0; ky < 3; ky++) {
					int y0 = ky == 0 ? 1 : 0, y1 = ky == 2 ? s - 1 : s;
					for (int kx = 0; kx < 3; kx++) {
						int x0 = kx == 0 ? 1 : 0, x1 = kx == 2 ? s - 1 : s;
						float wv = wk[ky * 3 + kx];
						float acc[MAX_W] = { 0 };
						float sum = 0.0f;
						for (int y = y0; y < y1; y++) {
							const float *drow = dp + (size_t)y * (size_t)s;
							const float *irow = ip + (size_t)(y + ky - 1) * (size_t)s + (kx - 1);
							/* Per-lane accumulators: a vectorisable sum of products. */
							for (int x = x0; x < x1; x++)
								acc[x] += drow[x] * irow[x];
							if (dip) {
								float *dirow = dip + (size_t)(y + ky - 1) * (size_t)s + (kx - 1);
								for (int x = x0; x < x1; x++)
									dirow[x] += wv * drow[x];
							}
						}
						for (int x = 0; x < s; x++)
							sum += acc[x];
						gk[ky * 3 + kx] += sum;
					}
				}
			}
		}
	}
}

/* 2x2 max-pool: out[n, c, s/2, s/2]; idx records the winning input offset within the plane. */
static void maxpool_forward(const float *in, float *out, int32_t *idx, int n, int c, int s)
{
	int h = s / 2;

	for (size_t p = 0; p < (size_t)n * (size_t)c; p++) {
		const float *ip = in + p * (size_t)s * (size_t)s;
		float *op = out + p * (size_t)h * (size_t)h;
		int32_t *xp = idx + p * (size_t)h * (size_t)h;
		for (int y = 0; y < h; y++) {
			for (int x = 0; x < h; x++) {
				int best = (2 * y) * s + 2 * x;
				int cand[3] = { best + 1, best + s, best + s + 1 };
				for (int k = 0; k < 3; k++)
					if (ip[cand[k]] > ip[best])
						best = cand[k];
				op[y * h + x] = ip[best];
				xp[y * h + x] = best;
			}
		}
	}
}

static void maxpool_backward(const float *dout, const int32_t *idx, float *din, int n, int c, int s)
{
	int h = s / 2;

	memset(din, 0, (size_t)n * (size_t)c * (size_t)s * (size_t)s * sizeof(float));
	for (size_t p = 0; p < (size_t)n * (size_t)c; p++) {
		float *dp = din + p * (size_t)s * (size_t)s;
		for (int i = 0; i < h * h; i++)
			dp[idx[p * (size_t)h * (size_t)h + (size_t)i]] += dout[p * (size_t)h * (size_t)h + (size_t)i];
	}
}

/* The activations one forward pass keeps for backward. */
struct acts {
	struct mge_tensor *conv[3], *pool[3], *idx[3], *logits;
};

static void acts_free(struct acts *a)
{
	for (int l = 0; l < 3; l++) {
		mge_tensor_free(a->conv[l]);
		mge_tensor_free(a->pool[l]);
		mge_tensor_free(a->idx[l]);
	}
	mge_tensor_free(a->logits);
	memset(a, 0, sizeof(*a));
}

static int forward(struct mge_model *m, const struct mge_tensor *x, struct acts *a)
{
	int n = x->dims[0], s = MGE_RES;
	const float *in = x->data;
	int feat = m->chans[3] * (MGE_RES >> 3) * (MGE_RES >> 3);
	int ldims[2] = { n, m->classes };

	memset(a, 0, sizeof(*a));
	for (int l = 0; l < 3; l++) {
		int ci = m->chans[l], co = m->chans[l + 1];
		a->conv[l] = new4(m->pool, n, co, s, s);
		a->pool[l] = new4(m->pool, n, co, s / 2, s / 2);
		a->idx[l] = new4(m->pool, n, co, s / 2, s / 2);
		if (!a->conv[l] || !a->pool[l] || !a->idx[l])
			goto oom;
		conv_relu_forward(in, m->w[l]->data, m->b[l]->data, a->conv[l]->data, n, ci, co, s);
		maxpool_forward(a->conv[l]->data, a->pool[l]->data, mge_tensor_i32(a->idx[l]), n, co, s);
		in = a->pool[l]->data;
		s /= 2;
	}
	a->logits = mge_tensor_new(m->pool, 2, ldims);
	if (!a->logits)
		goto oom;
	for (int b = 0; b < n; b++) {
		const float *f = in + (size_t)b * (size_t)feat;
		for (int k = 0; k < m->classes; k++) {
			const float *wr = m->w[3]->data + (size_t)k * (size_t)feat;
			float z = m->b[3]->data[k];
			for (int j = 0; j < feat; j++)
				z += wr[j] * f[j];
			a->logits->data[b * m->classes + k] = z;
		}
	}
	return 0;
oom:
	acts_free(a);
	return -ENOMEM;
}

static int argmax(const float *v, int n)
{
	int best = 0;

	for (int i = 1; i < n; i++)
		if (v[i] > v[best])
			best = i;
	return best;
}

static int ensure_grads(struct mge_model *m)
{
	/* Gradients appear at the first backward, as in PyTorch: part of the warmup. */
	for (int l = 0; l < MGE_LAYERS; l++) {
		if (!m->gw[l])
			m->gw[l] = mge_tensor_new(m->pool, m->w[l]->ndim, m->w[l]->dims);
		if (!m->gb[l])
			m->gb[l] = mge_tensor_new(m->pool, m->b[l]->ndim, m->b[l]->dims);
		if (!m->gw[l] || !m->gb[l])
			return -ENOMEM;
	}
	return 0;
}

/* Softmax cross-entropy over n rows of C logits: each row's loss in losses, the gradient of the
 * batch's mean loss in dl, the rows whose largest logit is the label counted in *correct.
 * Returns the losses' sum. */
static double softmax_xent(const float *logits, const int *labels, int n, int C, float *dl, float *losses,
			   int *correct)
{
	double total = 0.0;
	*correct = 0;
	for (int b = 0; b < n; b++) {
		const float *z = logits + b * C;
		float *g = dl + b * C;
		float mx = z[argmax(z, C)], sum = 0.0f;
		for (int k = 0; k < C; k++) {
			g[k] = expf(z[k] - mx);
			sum += g[k];
		}
		for (int k = 0; k < C; k++)
			g[k] /= sum;
		losses[b] = -logf(g[labels[b]] > 1e-30f ? g[labels[b]] : 1e-30f);
		total += losses[b];
		*correct += argmax(z, C) == labels[b];
		g[labels[b]] -= 1.0f;
		for (int k = 0; k < C; k++)
			g[k] /= (float)n;
	}
	return total;
}

/* The linear head's backward pass: its weight and bias gradients from the features f (n rows of
 * feat) and the logits' gradient dl, and the features' gradient into dfeat. */
static void head_backward(struct mge_model *m, const float *f, const float *dl, float *dfeat, int n, int feat)
{
	int C = m->classes;
	memset(m->gw[3]->data, 0, m->gw[3]->numel * sizeof(float));
	memset(m->gb[3]->data, 0, m->gb[3]->numel * sizeof(float));
	memset(dfeat, 0, (size_t)n * (size_t)feat * sizeof(float));
	for (int b = 0; b < n; b++) {
		for (int k = 0; k < C; k++) {
			float g = dl[b * C + k];
			float *gwr = m->gw[3]->data + (size_t)k * (size_t)feat;
			const float *wr = m->w[3]->data + (size_t)k * (size_t)feat;
			const float *fr = f + (size_t)b * (size_t)feat;
			float *dfr = dfeat + (size_t)b * (size_t)feat;
			m->gb[3]->data[k] += g;
			for (int j = 0; j < feat; j++) {
				gwr[j] += g * fr[j];
				dfr[j] += g * wr[j];
			}
		}
	}
}

int mge_model_train_step(struct mge_model *m, const struct mge_tensor *x, const int *labels,
			 float *losses, float *loss, int *correct)
{
	struct acts a;
	int n = x->dims[0], C = m->classes;
	int feat = m->chans[3] * (MGE_RES >> 3) * (MGE_RES >> 3);
	struct mge_tensor *dl = NULL, *dfeat = NULL, *dconv = NULL, *dpool = NULL;
	int ldims[2] = { n, C }, err = -ENOMEM, s;

	if (ensure_grads(m) || forward(m, x, &a))
		return -ENOMEM;
	dl = mge_tensor_new(m->pool, 2, ldims);
	if (!dl)
		goto out;
	*loss = (float)(softmax_xent(a.logits->data, labels, n, C, dl->data, losses, correct) / n);

	/* Linear head. */
	int fdims[4] = { n, m->chans[3], MGE_RES >> 3, MGE_RES >> 3 };
	dfeat = mge_tensor_new(m->pool, 4, fdims);
	if (!dfeat)
		goto out;
	head_backward(m, a.pool[2]->data, dl->data, dfeat->data, n, feat);
	/* Convolution blocks, last to first. dfeat is dL/d(pool output) of the current block. */
	s = MGE_RES >> 2;
	for (int l = 2; l >= 0; l--) {
		int ci = m->chans[l], co = m->chans[l + 1];
		const float *in = l ? a.pool[l - 1]->data : x->data;
		dconv = new4(m->pool, n, co, s, s);
		if (!dconv)
			goto out;
		maxpool_backward(dfeat->data, mge_tensor_i32(a.idx[l]), dconv->data, n, co, s);
		mge_tensor_free(dfeat);
		dfeat = NULL;
		if (l) {
			dpool = new4(m->pool, n, ci, s, s);
			if (!dpool)
				goto out;
		}
		conv_relu_backward(in, m->w[l]->data, a.conv[l]->data, dconv->data, m->gw[l]->data,
				   m->gb[l]->data, dpool ? dpool->data : NULL, n, ci, co, s);
		mge_tensor_free(dconv);
		dconv = NULL;
		dfeat = dpool;
		dpool = NULL;
		s *= 2;
	}
	err = 0;
out:
	mge_tensor_free(dl);
	mge_tensor_free(dfeat);
	mge_tensor_free(dconv);
	mge_tensor_free(dpool);
	acts_free(&a);
	return err;
}

int mge_model_predict(struct mge_model *m, const struct mge_tensor *x, int *preds)
{
	struct acts a;

	if (forward(m, x, &a))
		return -ENOMEM;
	for (int b = 0; b < x->dims[0]; b++)
		preds[b] = argmax(a.logits->data + b * m->classes, m->classes);
	acts_free(&a);
	return 0;
}
