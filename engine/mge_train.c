/* SPDX-License-Identifier: MIT */
/* mge_train.c: mgtrain's training loop: step markers, batches from the loader, forward/backward,
 * AdamW, the scenario hooks, and the log lines. It must keep the log format stable (tests and users
 * parse it) and must give the same losses for the same seed whatever the thread count. */
#include "mge_train.h"

#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "mge_memstat.h"
#include "mge_validate.h"
#include "mgprobe.h"

#define MGE_LR 3e-3f

static void log_step(struct mge_trainer *t, uint64_t step)
{
	struct mge_pool_stats ps;
	double rss = mge_memstat_rss_mb();

	mge_pool_stats(t->pool, &ps);
	if (t->dev) {
		size_t tensors;
		double dev;
		mge_devtrain_log(t->dev, &tensors, &dev);
		fprintf(t->out, "step %" PRIu64 " loss %.4f acc %.3f rss %.1f tensors %zu dev %.1f", step,
			t->win_loss / t->win_steps, t->win_acc / t->win_steps, rss, tensors, dev);
	} else {
		fprintf(t->out, "step %" PRIu64 " loss %.4f acc %.3f rss %.1f tensors %zu", step,
			t->win_loss / t->win_steps, t->win_acc / t->win_steps, rss, ps.live_tensors);
	}
	if (t->opt.malloc_stats) {
		double live, kept;
		mge_memstat_heap_mb(&live, &kept);
		fprintf(t->out, " heap %.1f free %.1f", live, kept);
	}
	fputc('\n', t->out);
	fflush(t->out);
	t->logged_loss = t->win_loss / t->win_steps;
	t->win_loss = t->win_acc = 0.0;
	t->win_steps = 0;
}

static int validate(struct mge_trainer *t, uint64_t step)
{
	struct mge_validate_result res;
	int err = mge_validate_run(&t->model, &t->valset, t->opt.batch, &res);

	if (err)
		return err;
	fprintf(t->out, "validation step %" PRIu64 " accuracy %.3f peak_rss %.1f decoded_mb %.1f\n", step,
		res.accuracy, res.peak_rss_mb, (double)res.peak_bytes / (1024.0 * 1024.0));
	fflush(t->out);
	return 0;
}

static int train_step(struct mge_trainer *t, uint64_t step, const char **what)
{
	struct mge_batch *b;
	float losses[MGE_MAX_BATCH], loss;
	int correct, err;

	err = mge_loader_next(t->loader, &b);
	if (err) {
		*what = "loader failed";
		return err;
	}
	if (t->opt.scenario == MGE_SCENARIO_RETENTION) {
		err = mge_chain_apply(&t->chain, b);
		if (err) {
			*what = "out of memory in the augmentation chain";
			mge_batch_release(b);
			return err;
		}
	}
	*what = "out of memory in the training step";
	if (t->dev) {
		err = mge_devtrain_step(t->dev, b, losses, &loss, &correct, what);
	} else {
		err = mge_model_train_step(&t->model, b->x, b->labels, losses, &loss, &correct);
		if (!err)
			err = mge_optim_step(&t->optim, &t->model);
	}
	if (!err && t->opt.scenario == MGE_SCENARIO_LATE_LEAK)
		err = mge_mining_append(&t->mining, b, losses);
	if (!err && t->opt.scenario == MGE_SCENARIO_SLOW_LEAK)
		err = mge_diag_record_step(&t->diag, step, &t->model, b->x);
	if (err) {
		mge_batch_release(b);
		return err;
	}
	t->win_loss += loss;
	t->win_acc += (double)correct / b->n;
	t->win_steps++;
	t->acc_hist[(step - 1) % MGE_ACC_WINDOW] = (double)correct / b->n;
	mge_batch_release(b);
	return 0;
}

static void teardown(struct mge_trainer *t)
{
	mge_devtrain_stop(t->dev);
	mge_loader_stop(t->loader);
	mge_mining_free(&t->mining);
	mge_diag_free(&t->diag);
	mge_chain_free(&t->chain);
	mge_optim_free(&t->optim);
	mge_model_free(&t->model);
	mge_pool_destroy(t->pool);
	mge_dataset_free(&t->valset);
	mge_dataset_free(&t->data);
}

int mge_train_run(const struct mge_options *o, FILE *out, const char **what)
{
	struct mge_trainer t;
	struct mge_loader_config lc;
	int err;
	uint64_t step;
	double acc = 0.0, window_loss = 0.0;
	uint64_t n;

	memset(&t, 0, sizeof(t));
	t.opt = *o;
	t.out = out;
	mge_diag_init(&t.diag, o->seed, o->scale);
	*what = "";
	err = mge_dataset_make(&t.data, o->seed, 0, MGE_PER_SHAPE, o->scale);
	if (!err && o->scenario == MGE_SCENARIO_VALIDATION)
		err = mge_dataset_make(&t.valset, o->seed, 1, MGE_VALIDATE_PER_SHAPE, o->scale);
	if (!err && o->scenario == MGE_SCENARIO_RETENTION)
		err = mge_chain_init(&t.chain, o->seed, t.data.count);
	if (err) {
		*what = "cannot make the data set";
		goto fail;
	}
	t.pool = mge_pool_new("trainer");
	if (!t.pool || mge_model_init(&t.model, t.pool, MGE_CLASSES, o->seed)) {
		err = -ENOMEM;
		*what = "cannot make the model";
		goto fail;
	}
	mge_optim_init(&t.optim, MGE_LR);
	if (o->device == MGE_DEVICE_CUDA) {
		err = mge_devtrain_start(&t.dev, &t.model, &t.optim, o->scenario == MGE_SCENARIO_LEAK, what);
		if (err)
			goto fail;
		/* The parameters live on the device from here on. */
		mge_model_free(&t.model);
	}
	lc = (struct mge_loader_config){
		.ds = &t.data, .batch = o->batch, .threads = o->threads, .seed = o->seed,
		.batches = o->steps, .scenario = o->scenario,
	};
	/* --device cuda: the leak is the collator's device cache (mge_devtrain.c), not its host one. */
	if (t.dev && o->scenario == MGE_SCENARIO_LEAK)
		lc.scenario = MGE_SCENARIO_HEALTHY;
	err = mge_loader_start(&t.loader, &lc);
	if (err) {
		*what = "cannot start the loader threads";
		goto fail;
	}
	mgprobe_label("train");
	for (step = 1; step <= o->steps; step++) {
		mgprobe_step(step);
		err = train_step(&t, step, what);
		if (err)
			goto fail;
		if (step % MGE_LOG_EVERY == 0)
			log_step(&t, step);
		if (o->scenario == MGE_SCENARIO_VALIDATION && step % MGE_VALIDATE_EVERY == 0) {
			err = validate(&t, step);
			if (err) {
				*what = "out of memory in validation";
				goto fail;
			}
		}
	}
	n = o->steps < MGE_ACC_WINDOW ? o->steps : MGE_ACC_WINDOW;
	for (uint64_t i = 0; i < n; i++)
		acc += t.acc_hist[i];
	/* The loss of the last log window (or of the steps since, when steps % 10 != 0). */
	window_loss = t.win_steps ? t.win_loss / t.win_steps : t.logged_loss;
	fprintf(out, "done: steps=%" PRIu64 " loss=%.4f accuracy=%.3f\n", o->steps, window_loss, acc / (double)n);
	fflush(out);
	teardown(&t);
	return 0;
fail:
	teardown(&t);
	return err;
}
