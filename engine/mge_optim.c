/* SPDX-License-Identifier: MIT */
/* mge_optim.c: AdamW with decoupled weight decay (no decay on biases).
 * It must never allocate after the first step: the state is made once and then updated in place. */
#include "mge_optim.h"

#include <errno.h>
#include <math.h>
#include <string.h>

void mge_optim_init(struct mge_optim *o, float lr)
{
	memset(o, 0, sizeof(*o));
	o->lr = lr;
	o->beta1 = 0.9f;
	o->beta2 = 0.999f;
	o->eps = 1e-8f;
	o->weight_decay = 1e-4f;
}

int mge_optim_step(struct mge_optim *o, struct mge_model *model)
{
	float c1, c2;

	o->t++;
	c1 = 1.0f - powf(o->beta1, (float)o->t);
	c2 = 1.0f - powf(o->beta2, (float)o->t);
	for (int i = 0; i < 2 * MGE_LAYERS; i++) {
		struct mge_tensor *p = i & 1 ? model->b[i / 2] : model->w[i / 2];
		const struct mge_tensor *g = i & 1 ? model->gb[i / 2] : model->gw[i / 2];
		float wd = i & 1 ? 0.0f : o->weight_decay;

		if (!o->m[i]) {
			o->m[i] = mge_tensor_zeros(model->pool, p->ndim, p->dims);
			o->v[i] = mge_tensor_zeros(model->pool, p->ndim, p->dims);
			if (!o->m[i] || !o->v[i])
				return -ENOMEM;
		}
		for (size_t k = 0; k < p->numel; k++) {
			float gk = g->data[k];
			float *mk = &o->m[i]->data[k], *vk = &o->v[i]->data[k];
			*mk = o->beta1 * *mk + (1.0f - o->beta1) * gk;
			*vk = o->beta2 * *vk + (1.0f - o->beta2) * gk * gk;
			p->data[k] -= o->lr * (wd * p->data[k] + (*mk / c1) / (sqrtf(*vk / c2) + o->eps));
		}
	}
	return 0;
}

void mge_optim_free(struct mge_optim *o)
{
	for (int i = 0; i < 2 * MGE_LAYERS; i++) {
		mge_tensor_free(o->m[i]);
		mge_tensor_free(o->v[i]);
		o->m[i] = o->v[i] = NULL;
	}
}
