/* SPDX-License-Identifier: MIT */
/* mge_devtrain.h: the trainer's device side for `--device cuda`: the caching allocator over
 * cudaMalloc, the model on the device, the per-step copy of each batch into allocator blocks, and
 * the collator's device cache of the `leak` scenario. Built only with CUDA (MG_HAVE_CUDA); without
 * it every function is a stub that says so, so callers need no #if. Trainer thread only. */
#ifndef MGE_DEVTRAIN_H
#define MGE_DEVTRAIN_H

#include <errno.h>
#include <stdio.h>

#include "mg_config.h"
#include "mge_loader.h"
#include "mge_model.h"
#include "mge_optim.h"

struct mge_devtrain;

#if MG_HAVE_CUDA

/* 0 when a GPU is usable; -ENODEV with one line naming the CUDA error in err[0..errlen). */
int mge_devtrain_probe(char *err, size_t errlen);

/* Puts `host`'s parameters (mge_model_init's) on the device and sets up AdamW with `opt`'s
 * constants. leak: the collator's device cache keeps every batch's sources. 0 or -errno with a
 * one-line reason (static storage) in *what. */
int mge_devtrain_start(struct mge_devtrain **out, const struct mge_model *host, const struct mge_optim *opt,
		       int leak, const char **what);

/* One step on batch b: copy it to the device, train, AdamW, free the step's blocks (and, in the
 * leak scenario, keep a device copy of its sources). losses[b->n], loss and correct as
 * mge_model_train_step's. 0 or -errno with a one-line reason in *what. */
int mge_devtrain_step(struct mge_devtrain *dt, const struct mge_batch *b, float *losses, float *loss,
		      int *correct, const char **what);

/* The log's figures: device tensors held by the model and optimizer, reserved MiB (segments). */
void mge_devtrain_log(const struct mge_devtrain *dt, size_t *tensors, double *reserved_mib);

/* Frees everything, segments included. NULL is ignored. */
void mge_devtrain_stop(struct mge_devtrain *dt);

#else /* !MG_HAVE_CUDA */

static inline int mge_devtrain_probe(char *err, size_t errlen)
{
	snprintf(err, errlen, "built without CUDA (nvcc not found at build time, or -Dcuda=disabled)");
	return -ENOSYS;
}

static inline int mge_devtrain_start(struct mge_devtrain **out, const struct mge_model *host,
				     const struct mge_optim *opt, int leak, const char **what)
{
	*out = NULL;
	*what = "built without CUDA";
	return -ENOSYS;
}

static inline int mge_devtrain_step(struct mge_devtrain *dt, const struct mge_batch *b, float *losses,
				    float *loss, int *correct, const char **what)
{
	*what = "built without CUDA";
	return -ENOSYS;
}

static inline void mge_devtrain_log(const struct mge_devtrain *dt, size_t *tensors, double *reserved_mib)
{
	*tensors = 0;
	*reserved_mib = 0.0;
}

static inline void mge_devtrain_stop(struct mge_devtrain *dt)
{
}

#endif /* MG_HAVE_CUDA */

#endif /* MGE_DEVTRAIN_H */
