/* SPDX-License-Identifier: MIT */
/* mge_devmodel.h: mgtrain's CNN and its AdamW on the device: the same model as mge_model.h, its
 * parameters, gradients and optimizer state in blocks of the device caching allocator, the step
 * computed by the kernels of mge_cuda.h. Activations are allocator blocks freed before a step
 * returns, so the allocator's segments level off after the first step, as PyTorch's do. */
#ifndef MGE_DEVMODEL_H
#define MGE_DEVMODEL_H

#include "mge_cuda.h"
#include "mge_devalloc.h"
#include "mge_model.h"
#include "mge_optim.h"

struct mge_devmodel {
	struct mge_dev *dev;
	struct mge_devalloc *alloc;
	int classes;
	int chans[4];
	size_t numel[2 * MGE_LAYERS];               /* of each parameter: w0, b0, w1, b1, ... */
	struct mge_devbuf *param[2 * MGE_LAYERS];
	struct mge_devbuf *grad[2 * MGE_LAYERS];    /* NULL until the first step, as on the CPU */
	struct mge_devbuf *m[2 * MGE_LAYERS], *v[2 * MGE_LAYERS]; /* AdamW, NULL until the first step */
	struct mge_optim hyper;                     /* AdamW's constants and step count (no tensors) */
};

/* Copies the parameters of `host` (mge_model_init's) to the device and takes AdamW's constants
 * from `opt`. Returns 0, -ENOMEM or -EIO (dev->cuda_err says which CUDA error). */
int mge_devmodel_init(struct mge_devmodel *dm, struct mge_dev *dev, struct mge_devalloc *alloc,
		      const struct mge_model *host, const struct mge_optim *opt);

/* As mge_model_train_step over x[n, 3, MGE_RES, MGE_RES] and labels[n], device pointers; losses,
 * loss and correct are host memory. 0, -ENOMEM or -EIO. */
int mge_devmodel_train_step(struct mge_devmodel *dm, const float *x, const int32_t *labels, int n,
			    float *losses, float *loss, int *correct);

/* As mge_optim_step, from the gradients of the last train step. 0, -ENOMEM or -EIO. */
int mge_devmodel_optim_step(struct mge_devmodel *dm);

/* Copies the parameters (and the gradients, where both sides have them) back into `host`'s
 * tensors, whose shapes are the device model's. 0 or -EIO. */
int mge_devmodel_download(struct mge_devmodel *dm, struct mge_model *host);

/* Device tensors held: parameters, gradients, AdamW moments (32 after the first step). */
size_t mge_devmodel_tensors(const struct mge_devmodel *dm);

/* Gives every block back to the allocator. */
void mge_devmodel_free(struct mge_devmodel *dm);

#endif /* MGE_DEVMODEL_H */
