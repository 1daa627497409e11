/* SPDX-License-Identifier: MIT */
/* mge_train.h: the training loop of mgtrain and its one context struct.
 * All of a run's mutable state lives in struct mge_trainer; the engine keeps no globals. */
#ifndef MGE_TRAIN_H
#define MGE_TRAIN_H

#include <stdio.h>

#include "mge_chain.h"
#include "mge_dataset.h"
#include "mge_devtrain.h"
#include "mge_diag.h"
#include "mge_loader.h"
#include "mge_mining.h"
#include "mge_model.h"
#include "mge_optim.h"
#include "mge_options.h"

#define MGE_LOG_EVERY 10   /* steps between log lines */
#define MGE_ACC_WINDOW 50  /* steps averaged for the final accuracy */

/* The run's context: options, data, model, pipeline and each scenario's mechanism. Owned by
 * mge_train_run; one per run, used from the trainer thread only (the loader has its own state). */
struct mge_trainer {
	struct mge_options opt;
	FILE *out;                      /* the log (stdout) */
	struct mge_dataset data;        /* training set, PNG-encoded */
	struct mge_dataset valset;      /* held-out set (validation scenario only) */
	struct mge_pool *pool;          /* parameters, gradients, optimizer state, activations */
	struct mge_model model;
	struct mge_optim optim;
	struct mge_loader *loader;
	struct mge_devtrain *dev;       /* --device cuda: the model on the GPU (mge_devtrain.h), else NULL */
	struct mge_mining mining;       /* late-leak */
	struct mge_diag diag;           /* slow-leak */
	struct mge_chain chain;         /* retention */
	double win_loss, win_acc;       /* sums over the current log window */
	int win_steps;
	double acc_hist[MGE_ACC_WINDOW];/* per-step accuracy, ring */
	double logged_loss;             /* mean loss of the last logged window */
};

/* Runs the whole training described by `o`, logging to `out`. Returns 0, or -errno with a one-line
 * reason (static storage) in *what. */
int mge_train_run(const struct mge_options *o, FILE *out, const char **what);

#endif /* MGE_TRAIN_H */
