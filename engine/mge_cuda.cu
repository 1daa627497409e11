/* SPDX-License-Identifier: MIT */
/* mge_cuda.cu: mgtrain's device code: the CUDA runtime calls and the model's kernels, one thread
 * per output element. Each element function mirrors, for one output, the CPU loop of mge_model.c or
 * mge_optim.c in the same order of operations: it must never be "optimised" into another order
 * (shared-memory tiling, reductions across threads), which would make GPU and CPU losses part. */
#include "mge_cuda.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <cuda_runtime_api.h>

#define THREADS 256

/* ---- running an element function: one thread per element, or a host loop ---- */

template <typename Op>
__global__ void each_element(Op op, size_t count)
{
	size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;

	if (i < count)
		op(i);
}

static int failed(struct mge_dev *d, cudaError_t e)
{
	if (e == cudaSuccess)
		return 0;
	if (!d->cuda_err)
		d->cuda_err = (int)e;
	return -EIO;
}

template <typename Op>
static int run(struct mge_dev *d, const Op &op, size_t count)
{
	if (d->host) {
		for (size_t i = 0; i < count; i++)
			op(i);
		return 0;
	}
	if (!count)
		return 0;
	each_element<<<(unsigned)((count + THREADS - 1) / THREADS), THREADS>>>(op, count);
	return failed(d, cudaGetLastError());
}

/* ---- runtime ---- */

extern "C" int mge_cuda_probe(char *err, size_t errlen)
{
	int n = 0;
	cudaError_t e = cudaGetDeviceCount(&n);

	if (e != cudaSuccess) {
		snprintf(err, errlen, "no usable GPU: cudaGetDeviceCount: %s (%s)", cudaGetErrorString(e),
			 cudaGetErrorName(e));
		return -ENODEV;
	}
	if (n < 1) {
		snprintf(err, errlen, "no usable GPU: cudaGetDeviceCount found no CUDA device");
		return -ENODEV;
	}
	/* Make the context now, so that a broken device fails here and not in the first step. */
	e = cudaSetDevice(0);
	if (e == cudaSuccess)
		e = cudaFree(NULL);
	if (e != cudaSuccess) {
		snprintf(err, errlen, "no usable GPU: device 0: %s (%s)", cudaGetErrorString(e),
			 cudaGetErrorName(e));
		return -ENODEV;
	}
	return 0;
}

extern "C" const char *mge_dev_strerror(const struct mge_dev *d)
{
	return d->cuda_err ? cudaGetErrorString((cudaError_t)d->cuda_err) : "no CUDA error";
}

extern "C" int mge_cuda_segment_alloc(void *ctx, size_t bytes, void **out)
{
	cudaError_t e = cudaMalloc(out, bytes);

	if (e == cudaErrorMemoryAllocation) {
		(void)cudaGetLastError(); /* out of memory is not sticky: clear it */
		return -ENOMEM;
	}
	return failed((struct mge_dev *)ctx, e) ? -ENOMEM : 0;
}

extern "C" void mge_cuda_segment_free(void *ctx, void *base, size_t bytes)
{
	failed((struct mge_dev *)ctx, cudaFree(base));
}

static int copy(struct mge_dev *d, void *dst, const void *src, size_t bytes, cudaMemcpyKind kind)
{
	if (d->host) {
		memcpy(dst, src, bytes);
		return 0;
	}
	return failed(d, cudaMemcpy(dst, src, bytes, kind));
}

extern "C" int mge_dev_upload(struct mge_dev *d, void *dst, const void *src, size_t bytes)
{
	return copy(d, dst, src, bytes, cudaMemcpyHostToDevice);
}

extern "C" int mge_dev_download(struct mge_dev *d, void *dst, const void *src, size_t bytes)
{
	return copy(d, dst, src, bytes, cudaMemcpyDeviceToHost);
}

extern "C" int mge_dev_zero(struct mge_dev *d, void *p, size_t bytes)
{
	if (d->host) {
		memset(p, 0, bytes);
		return 0;
	}
	return failed(d, cudaMemset(p, 0, bytes));
}

/* ---- the model's element functions ---- */

/* 3x3 kernel tap (ky, kx) reads input row y + ky - 1 of output row y: the CPU loops run y over
 * [ky == 0 ? 1 : 0, ky == 2 ? s - 1 : s). */
__host__ __device__ static inline bool tap_ok(int y, int k, int s)
{
	return y >= (k == 0 ? 1 : 0) && y < (k == 2 ? s - 1 : s);
}

/* Element i of an [n, c, s, s] tensor: sample b, channel ch, row y, column x. */
struct nchw {
	size_t b;
	int ch, y, x;
};

__host__ __device__ static inline nchw unpack(size_t i, int c, int s)
{
	size_t plane = (size_t)s * (size_t)s;
	nchw e;

	e.x = (int)(i % (size_t)s);
	e.y = (int)(i / (size_t)s % (size_t)s);
	e.ch = (int)(i / plane % (size_t)c);
	e.b = i / plane / (size_t)c;
	return e;
}

struct conv_forward {
	const float *in, *w, *bias;
	float *out;
	int ci, co, s;

	/* Element i = out[b, o, y, x]: bias, then the taps channel by channel, then ReLU. */
	__host__ __device__ void operator()(size_t i) const
	{
		size_t plane = (size_t)s * (size_t)s;
		nchw e = unpack(i, co, s);
		size_t b = e.b;
		int o = e.ch, y = e.y, x = e.x;
		float v = bias[o];

		for (int c = 0; c < ci; c++) {
			const float *ip = in + (b * (size_t)ci + (size_t)c) * plane;
			const float *wk = w + ((size_t)o * (size_t)ci + (size_t)c) * 9;
			for (int ky = 0; ky < 3; ky++)
				for (int kx = 0; kx < 3; kx++)
					if (tap_ok(y, ky, s) && tap_ok(x, kx, s))
						v += wk[ky * 3 + kx] * ip[(size_t)(y + ky - 1) * (size_t)s + (size_t)(x + kx - 1)];
		}
		out[i] = v > 0.0f ? v : 0.0f;
	}
};

struct maxpool_forward {
	const float *in;
	float *out;
	int32_t *idx;
	int s;

	/* Element i = out[p, y, x] of plane p. */
	__host__ __device__ void operator()(size_t i) const
	{
		int h = s / 2;
		size_t p = i / ((size_t)h * (size_t)h);
		int y = (int)(i % ((size_t)h * (size_t)h)) / h, x = (int)(i % (size_t)h);
		const float *ip = in + p * (size_t)s * (size_t)s;
		int best = (2 * y) * s + 2 * x;
		int cand[3] = { best + 1, best + s, best + s + 1 };

		for (int k = 0; k < 3; k++)
			if (ip[cand[k]] > ip[best])
				best = cand[k];
		out[i] = ip[best];
		idx[i] = best;
	}
};

struct linear_forward {
	const float *f, *w, *b;
	float *z;
	int feat, classes;

	/* Element i = z[n, k]. */
	__host__ __device__ void operator()(size_t i) const
	{
		size_t n = i / (size_t)classes, k = i % (size_t)classes;
		const float *wr = w + k * (size_t)feat, *fr = f + n * (size_t)feat;
		float v = b[k];

		for (int j = 0; j < feat; j++)
			v += wr[j] * fr[j];
		z[i] = v;
	}
};

__host__ __device__ static inline int argmax(const float *v, int n)
{
	int best = 0;

	for (int i = 1; i < n; i++)
		if (v[i] > v[best])
			best = i;
	return best;
}

struct softmax_xent {
	const float *z;
	const int32_t *labels;
	float *g, *losses;
	int32_t *correct;
	int n, classes;

	/* Element i = sample i. */
	__host__ __device__ void operator()(size_t i) const
	{
		const float *zi = z + i * (size_t)classes;
		float *gi = g + i * (size_t)classes;
		int label = labels[i], top = argmax(zi, classes);
		float mx = zi[top], sum = 0.0f;

		for (int k = 0; k < classes; k++) {
			gi[k] = expf(zi[k] - mx);
			sum += gi[k];
		}
		for (int k = 0; k < classes; k++)
			gi[k] /= sum;
		losses[i] = -logf(gi[label] > 1e-30f ? gi[label] : 1e-30f);
		correct[i] = top == label;
		gi[label] -= 1.0f;
		for (int k = 0; k < classes; k++)
			gi[k] /= (float)n;
	}
};

struct linear_backward_params {
	const float *f, *g;
	float *gw, *gb;
	int n, feat, classes;

	/* Element i = gw[k, j], summed over the batch; gb[k] by the j == 0 element. */
	__host__ __device__ void operator()(size_t i) const
	{
		size_t k = i / (size_t)feat, j = i % (size_t)feat;
		float v = 0.0f;

		for (int b = 0; b < n; b++)
			v += g[(size_t)b * (size_t)classes + k] * f[(size_t)b * (size_t)feat + j];
		gw[i] = v;
		if (j == 0) {
			float vb = 0.0f;
			for (int b = 0; b < n; b++)
				vb += g[(size_t)b * (size_t)classes + k];
			gb[k] = vb;
		}
	}
};

struct linear_backward_input {
	const float *w, *g;
	float *dfeat;
	int feat, classes;

	/* Element i = dfeat[b, j], summed over the classes. */
	__host__ __device__ void operator()(size_t i) const
	{
		size_t b = i / (size_t)feat, j = i % (size_t)feat;
		float v = 0.0f;

		for (int k = 0; k < classes; k++)
			v += g[b * (size_t)classes + (size_t)k] * w[(size_t)k * (size_t)feat + j];
		dfeat[i] = v;
	}
};

struct maxpool_backward {
	const float *dout;
	const int32_t *idx;
	float *din;
	int s;

	/* Element i = dout[p, y, x]: its input (one per 2x2 window, so no two threads meet). */
	__host__ __device__ void operator()(size_t i) const
	{
		size_t h2 = (size_t)(s / 2) * (size_t)(s / 2);

		din[i / h2 * (size_t)s * (size_t)s + (size_t)idx[i]] += dout[i];
	}
};

struct relu_mask {
	const float *out;
	float *d;

	__host__ __device__ void operator()(size_t i) const
	{
		d[i] = out[i] > 0.0f ? d[i] : 0.0f;
	}
};

struct conv_backward_bias {
	const float *d;
	float *gb;
	int n, co, s;

	/* Element o = gb[o]: per sample the plane's sum, then summed over the batch. */
	__host__ __device__ void operator()(size_t o) const
	{
		size_t plane = (size_t)s * (size_t)s;
		float v = 0.0f;

		for (int b = 0; b < n; b++) {
			const float *dp = d + ((size_t)b * (size_t)co + o) * plane;
			float sb = 0.0f;
			for (size_t i = 0; i < plane; i++)
				sb += dp[i];
			v += sb;
		}
		gb[o] = v;
	}
};

struct conv_backward_weight {
	const float *in, *d;
	float *gw;
	int n, ci, co, s;

	/* Element i = gw[o, c, ky, kx]. Per sample the CPU keeps one partial sum per column x (over
	 * the rows), then adds the columns in order: the same here. */
	__host__ __device__ void operator()(size_t i) const
	{
		size_t plane = (size_t)s * (size_t)s;
		int kx = (int)(i % 3), ky = (int)(i / 3 % 3), c = (int)(i / 9 % (size_t)ci);
		size_t o = i / 9 / (size_t)ci;
		float v = 0.0f;

		for (int b = 0; b < n; b++) {
			const float *dp = d + ((size_t)b * (size_t)co + o) * plane;
			const float *ip = in + ((size_t)b * (size_t)ci + (size_t)c) * plane;
			float sum = 0.0f;
			for (int x = 0; x < s; x++) {
				float col = 0.0f;
				if (tap_ok(x, kx, s))
					for (int y = 0; y < s; y++)
						if (tap_ok(y, ky, s))
							col += dp[(size_t)y * (size_t)s + (size_t)x] *
							       ip[(size_t)(y + ky - 1) * (size_t)s + (size_t)(x + kx - 1)];
				sum += col;
			}
			v += sum;
		}
		gw[i] = v;
	}
};

struct conv_backward_input {
	const float *w, *d;
	float *din;
	int ci, co, s;

	/* Element i = din[b, c, Y, X]: the output channels in order, then the taps (ky, kx) whose
	 * output (Y - ky + 1, X - kx + 1) the CPU loops visit. */
	__host__ __device__ void operator()(size_t i) const
	{
		size_t plane = (size_t)s * (size_t)s;
		nchw e = unpack(i, ci, s);
		size_t b = e.b;
		int c = e.ch, Y = e.y, X = e.x;
		float v = 0.0f;

		for (int o = 0; o < co; o++) {
			const float *dp = d + (b * (size_t)co + (size_t)o) * plane;
			const float *wk = w + ((size_t)o * (size_t)ci + (size_t)c) * 9;
			for (int ky = 0; ky < 3; ky++) {
				int y = Y - ky + 1;
				for (int kx = 0; kx < 3; kx++) {
					int x = X - kx + 1;
					if (y >= 0 && x >= 0 && tap_ok(y, ky, s) && tap_ok(x, kx, s))
						v += wk[ky * 3 + kx] * dp[(size_t)y * (size_t)s + (size_t)x];
				}
			}
		}
		din[i] = v;
	}
};

struct adamw {
	float *p, *m, *v;
	const float *g;
	struct mge_dev_adamw h;

	__host__ __device__ void operator()(size_t k) const
	{
		float gk = g[k];

		m[k] = h.beta1 * m[k] + (1.0f - h.beta1) * gk;
		v[k] = h.beta2 * v[k] + (1.0f - h.beta2) * gk * gk;
		p[k] -= h.lr * (h.wd * p[k] + (m[k] / h.c1) / (sqrtf(v[k] / h.c2) + h.eps));
	}
};

/* ---- launchers ---- */

static size_t count4(int a, int b, int c, int d)
{
	return (size_t)a * (size_t)b * (size_t)c * (size_t)d;
}

extern "C" int mge_dev_conv_relu_forward(struct mge_dev *d, const float *in, const float *w,
					 const float *bias, float *out, int n, int ci, int co, int s)
{
	return run(d, conv_forward{ in, w, bias, out, ci, co, s }, count4(n, co, s, s));
}

extern "C" int mge_dev_maxpool_forward(struct mge_dev *d, const float *in, float *out, int32_t *idx,
				       int n, int c, int s)
{
	return run(d, maxpool_forward{ in, out, idx, s }, count4(n, c, s / 2, s / 2));
}

extern "C" int mge_dev_linear_forward(struct mge_dev *d, const float *f, const float *w, const float *b,
				      float *z, int n, int feat, int classes)
{
	return run(d, linear_forward{ f, w, b, z, feat, classes }, count4(n, classes, 1, 1));
}

extern "C" int mge_dev_softmax_xent(struct mge_dev *d, const float *z, const int32_t *labels, float *g,
				    float *losses, int32_t *correct, int n, int classes)
{
	return run(d, softmax_xent{ z, labels, g, losses, correct, n, classes }, (size_t)n);
}

extern "C" int mge_dev_linear_backward(struct mge_dev *d, const float *f, const float *w, const float *g,
				       float *gw, float *gb, float *dfeat, int n, int feat, int classes)
{
	int err = run(d, linear_backward_params{ f, g, gw, gb, n, feat, classes }, count4(classes, feat, 1, 1));

	return err ? err : run(d, linear_backward_input{ w, g, dfeat, feat, classes }, count4(n, feat, 1, 1));
}

extern "C" int mge_dev_maxpool_backward(struct mge_dev *d, const float *dout, const int32_t *idx,
					float *din, int n, int c, int s)
{
	int err = mge_dev_zero(d, din, count4(n, c, s, s) * sizeof(float));

	return err ? err : run(d, maxpool_backward{ dout, idx, din, s }, count4(n, c, s / 2, s / 2));
}

extern "C" int mge_dev_conv_relu_backward(struct mge_dev *d, const float *in, const float *w,
					  const float *out, float *dd, float *gw, float *gb, float *din,
					  int n, int ci, int co, int s)
{
	int err = run(d, relu_mask{ out, dd }, count4(n, co, s, s));

	if (!err)
		err = run(d, conv_backward_bias{ dd, gb, n, co, s }, (size_t)co);
	if (!err)
		err = run(d, conv_backward_weight{ in, dd, gw, n, ci, co, s }, count4(co, ci, 9, 1));
	if (!err && din)
		err = run(d, conv_backward_input{ w, dd, din, ci, co, s }, count4(n, ci, s, s));
	return err;
}

extern "C" int mge_dev_adamw(struct mge_dev *d, float *p, const float *g, float *m, float *v, size_t numel,
			     const struct mge_dev_adamw *h)
{
	return run(d, adamw{ p, m, v, g, *h }, numel);
}
