/* SPDX-License-Identifier: MIT */
/* mge_model.h: the small CNN mgtrain trains, with forward and backward written out by hand:
 * 3 x (conv 3x3 pad 1, ReLU, max-pool 2) then a linear head and softmax cross-entropy,
 * on MGE_RES x MGE_RES RGB crops. */
#ifndef MGE_MODEL_H
#define MGE_MODEL_H

#include "mge_tensor.h"

#define MGE_RES 32          /* training crop side */
#define MGE_LAYERS 4        /* 3 convolutions + the linear head */

struct mge_model {
	struct mge_pool *pool;               /* parameters, gradients and activations come from it */
	int classes;
	int chans[4];                        /* 3, then each convolution's output channels */
	struct mge_tensor *w[MGE_LAYERS], *b[MGE_LAYERS];
	struct mge_tensor *gw[MGE_LAYERS], *gb[MGE_LAYERS]; /* NULL until the first backward */
};

/* Creates the parameters (He-uniform from `seed`) in `pool`. Returns 0 or -ENOMEM. */
int mge_model_init(struct mge_model *m, struct mge_pool *pool, int classes, uint64_t seed);

/* Frees parameters and gradients back to the pool. */
void mge_model_free(struct mge_model *m);

/* One training pass over x [n, 3, MGE_RES, MGE_RES]: forward, softmax cross-entropy against
 * labels, backward into m->gw / m->gb (overwritten, not accumulated). Writes each sample's loss to
 * losses[n], the mean loss to *loss and the number of correct predictions to *correct.
 * Activations come from and go back to m->pool within the call. Returns 0 or -ENOMEM. */
int mge_model_train_step(struct mge_model *m, const struct mge_tensor *x, const int *labels,
			 float *losses, float *loss, int *correct);

/* Forward only: writes the predicted class of each of the n samples to preds[n]. 0 or -ENOMEM. */
int mge_model_predict(struct mge_model *m, const struct mge_tensor *x, int *preds);

/* Number of parameter tensors (weights and biases). */
static inline int mge_model_param_count(void)
{
	return 2 * MGE_LAYERS;
}

#endif /* MGE_MODEL_H */
