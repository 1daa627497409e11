/* SPDX-License-Identifier: MIT */
/* mge_optim.h: AdamW over the model's parameters. Its state (first and second moments) is
 * allocated at the first step, from the model's pool, as torch.optim does: part of the warmup. */
#ifndef MGE_OPTIM_H
#define MGE_OPTIM_H

#include "mge_model.h"

struct mge_optim {
	float lr, beta1, beta2, eps, weight_decay;
	uint64_t t;                              /* steps taken */
	struct mge_tensor *m[2 * MGE_LAYERS];    /* NULL until the first step */
	struct mge_tensor *v[2 * MGE_LAYERS];
};

void mge_optim_init(struct mge_optim *o, float lr);

/* Applies one AdamW update from the model's gradients. Returns 0 or -ENOMEM (first step only). */
int mge_optim_step(struct mge_optim *o, struct mge_model *model);

/* Returns the state tensors to their pool. */
void mge_optim_free(struct mge_optim *o);

#endif /* MGE_OPTIM_H */
