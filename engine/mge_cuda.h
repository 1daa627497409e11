/* SPDX-License-Identifier: MIT */
/* mge_cuda.h: the engine's device code (engine/mge_cuda.cu) as plain C functions: the CUDA runtime
 * calls mgtrain makes, and one launcher per kernel of the model's forward, backward and AdamW.
 * Only mge_cuda.cu includes CUDA headers; this header must stay valid C and C++ without them.
 *
 * Every kernel is one thread per output element running a function that mirrors the CPU loop of
 * mge_model.c / mge_optim.c for that element, in the same order of operations (and nvcc builds
 * with -fmad=false), so the GPU computes what the CPU does. With dev->host set the same element
 * functions run in a loop on the host over host pointers: the tests check them against the CPU
 * model on machines without a GPU. */
#ifndef MGE_CUDA_H
#define MGE_CUDA_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Where device code runs. Launchers return 0, or -EIO after a CUDA error (the first one is kept in
 * cuda_err, a cudaError_t value; mge_dev_strerror names it). Pointers are device pointers, or host
 * pointers when host is set. One thread at a time. */
struct mge_dev {
	int host;       /* 1: run the element functions on the host (tests), 0: on the current GPU */
	int cuda_err;   /* first CUDA error met, 0 if none */
};

/* Checks that a GPU is usable (a device, a driver, a context on device 0). 0, or -ENODEV with one
 * line naming the CUDA error written into err[0..errlen). */
int mge_cuda_probe(char *err, size_t errlen);

/* The first CUDA error's description ("an illegal memory access was encountered", static storage),
 * or "no CUDA error" when none was met. */
const char *mge_dev_strerror(const struct mge_dev *d);

/* Segment backend of mge_devalloc over cudaMalloc/cudaFree; ctx is the struct mge_dev. */
int mge_cuda_segment_alloc(void *ctx, size_t bytes, void **out);
void mge_cuda_segment_free(void *ctx, void *base, size_t bytes);

/* Synchronous copies and fill: 0 or -EIO. */
int mge_dev_upload(struct mge_dev *d, void *dst, const void *src, size_t bytes);
int mge_dev_download(struct mge_dev *d, void *dst, const void *src, size_t bytes);
int mge_dev_zero(struct mge_dev *d, void *p, size_t bytes);

/* out[n,co,s,s] = ReLU(bias + conv3x3(in[n,ci,s,s], w[co,ci,3,3])), zero padding 1. */
int mge_dev_conv_relu_forward(struct mge_dev *d, const float *in, const float *w, const float *bias,
			      float *out, int n, int ci, int co, int s);
/* 2x2 max-pool of in[n,c,s,s]; idx: the winning offset within each input plane. */
int mge_dev_maxpool_forward(struct mge_dev *d, const float *in, float *out, int32_t *idx, int n, int c,
			    int s);
/* z[n,classes] = b + w[classes,feat] . f[n,feat]. */
int mge_dev_linear_forward(struct mge_dev *d, const float *f, const float *w, const float *b, float *z,
			   int n, int feat, int classes);
/* Softmax cross-entropy of z[n,classes] against labels[n]: g = dL/dz (mean over the batch),
 * losses[n], correct[n] (1 when the argmax is the label). */
int mge_dev_softmax_xent(struct mge_dev *d, const float *z, const int32_t *labels, float *g,
			 float *losses, int32_t *correct, int n, int classes);
/* Gradients of the linear head: gw, gb and dfeat[n,feat] (all overwritten). */
int mge_dev_linear_backward(struct mge_dev *d, const float *f, const float *w, const float *g,
			    float *gw, float *gb, float *dfeat, int n, int feat, int classes);
/* din[n,c,s,s] (overwritten) from dout[n,c,s/2,s/2] and the forward's idx. */
int mge_dev_maxpool_backward(struct mge_dev *d, const float *dout, const int32_t *idx, float *din,
			     int n, int c, int s);
/* Gradients of conv_relu_forward: dd = dL/d(out) is masked by the ReLU in place; gw, gb and din
 * (NULL for the first layer) are overwritten. */
int mge_dev_conv_relu_backward(struct mge_dev *d, const float *in, const float *w, const float *out,
			       float *dd, float *gw, float *gb, float *din, int n, int ci, int co, int s);

/* One AdamW step's constants: c1 = 1 - beta1^t, c2 = 1 - beta2^t, wd 0 for biases. */
struct mge_dev_adamw {
	float lr, beta1, beta2, eps, wd, c1, c2;
};
/* p, m, v [numel] updated in place from g, as mge_optim_step does. */
int mge_dev_adamw(struct mge_dev *d, float *p, const float *g, float *m, float *v, size_t numel,
		  const struct mge_dev_adamw *h);

#ifdef __cplusplus
}
#endif

#endif /* MGE_CUDA_H */
