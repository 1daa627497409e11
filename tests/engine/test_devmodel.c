/* SPDX-License-Identifier: MIT */
/* test_devmodel.c: the device model (engine/mge_devmodel.c) and every kernel's element function
 * of engine/mge_cuda.cu, run on the host (struct mge_dev.host) over the caching allocator's host
 * backend, against the CPU model: the same losses, predictions, gradients and AdamW'd parameters,
 * bit for bit, step after step; and the allocator's segments level off after the first step.
 * Built only with nvcc (the element functions are compiled by it); never needs a GPU. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "mg_test.h"
#include "mge_devmodel.h"
#include "mge_loader.h"
#include "mge_rng.h"

/* Tensors bit for bit: the index of the first difference, or -1. */
static long first_diff(const float *a, const float *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (memcmp(&a[i], &b[i], sizeof(float)))
			return (long)i;
	return -1;
}

static void compare_models(const struct mge_model *cpu, const struct mge_model *dev, int step)
{
	for (int l = 0; l < MGE_LAYERS; l++) {
		long d;
		d = first_diff(cpu->w[l]->data, dev->w[l]->data, cpu->w[l]->numel);
		MG_TRUE(d < 0, "step %d: w[%d] differs at %ld: cpu %.9g dev %.9g", step, l, d,
			d < 0 ? 0.0 : cpu->w[l]->data[d], d < 0 ? 0.0 : dev->w[l]->data[d]);
		d = first_diff(cpu->b[l]->data, dev->b[l]->data, cpu->b[l]->numel);
		MG_TRUE(d < 0, "step %d: b[%d] differs at %ld", step, l, d);
		d = first_diff(cpu->gw[l]->data, dev->gw[l]->data, cpu->gw[l]->numel);
		MG_TRUE(d < 0, "step %d: gw[%d] differs at %ld: cpu %.9g dev %.9g", step, l, d,
			d < 0 ? 0.0 : cpu->gw[l]->data[d], d < 0 ? 0.0 : dev->gw[l]->data[d]);
		d = first_diff(cpu->gb[l]->data, dev->gb[l]->data, cpu->gb[l]->numel);
		MG_TRUE(d < 0, "step %d: gb[%d] differs at %ld", step, l, d);
	}
}

/* Trains a CPU model and a host-emulated device model side by side on the same random batches. */
static void run(int n, int steps, uint64_t seed)
{
	struct mge_pool *pool = mge_pool_new("test");
	struct mge_model cpu, back;
	struct mge_optim opt;
	struct mge_dev dev = { .host = 1 };
	struct mge_devalloc *a = mge_devalloc_new(&mge_devalloc_host_backend);
	struct mge_devmodel dm;
	struct mge_devalloc_stats st, first = { 0 }, one = { 0 };
	int xdims[4] = { n, 3, MGE_RES, MGE_RES };
	struct mge_rng r;

	MG_EQ(mge_model_init(&cpu, pool, 8, seed), 0);
	MG_EQ(mge_model_init(&back, pool, 8, seed + 1), 0);
	for (int l = 0; l < MGE_LAYERS; l++) {
		/* Somewhere to download the device's gradients to. */
		back.gw[l] = mge_tensor_new(pool, back.w[l]->ndim, back.w[l]->dims);
		back.gb[l] = mge_tensor_new(pool, back.b[l]->ndim, back.b[l]->dims);
	}
	mge_optim_init(&opt, 3e-3f);
	MG_EQ(mge_devmodel_init(&dm, &dev, a, &cpu, &opt), 0);
	mge_rng_init(&r, seed, 0x7e57, (uint64_t)n, 0);
	for (int s = 1; s <= steps; s++) {
		struct mge_tensor *x = mge_tensor_new(pool, 4, xdims);
		struct mge_devbuf *dx, *dl;
		int labels[MGE_MAX_BATCH], correct_c, correct_d;
		int32_t labels32[MGE_MAX_BATCH];
		float losses_c[MGE_MAX_BATCH], losses_d[MGE_MAX_BATCH], loss_c, loss_d;

		for (size_t i = 0; i < x->numel; i++)
			x->data[i] = mge_rng_range(&r, -2.0f, 2.0f);
		for (int k = 0; k < n; k++)
			labels32[k] = labels[k] = (int)mge_rng_below(&r, 8);
		MG_EQ(mge_model_train_step(&cpu, x, labels, losses_c, &loss_c, &correct_c), 0);
		MG_EQ(mge_optim_step(&opt, &cpu), 0);

		MG_EQ(mge_devalloc_alloc(a, x->numel * sizeof(float), &dx), 0);
		MG_EQ(mge_devalloc_alloc(a, (size_t)n * sizeof(int32_t), &dl), 0);
		MG_EQ(mge_dev_upload(&dev, dx->ptr, x->data, x->numel * sizeof(float)), 0);
		MG_EQ(mge_dev_upload(&dev, dl->ptr, labels32, (size_t)n * sizeof(int32_t)), 0);
		MG_EQ(mge_devmodel_train_step(&dm, dx->ptr, dl->ptr, n, losses_d, &loss_d, &correct_d), 0);
		MG_EQ(mge_devmodel_optim_step(&dm), 0);
		mge_devalloc_free(a, dx);
		mge_devalloc_free(a, dl);
		mge_tensor_free(x);

		MG_TRUE(first_diff(losses_c, losses_d, (size_t)n) < 0, "n %d step %d: per-sample losses", n, s);
		MG_TRUE(!memcmp(&loss_c, &loss_d, sizeof(float)), "n %d step %d: loss cpu %.9g dev %.9g", n, s,
			loss_c, loss_d);
		MG_EQ(correct_d, correct_c);
		MG_EQ(mge_devmodel_download(&dm, &back), 0);
		compare_models(&cpu, &back, s);
		MG_EQ(mge_devmodel_tensors(&dm), 32);

		/* Activations go back every step: what stays allocated is the 32 tensors. AdamW's
		 * state is born at the end of step 1, in space the activations had: step 2 may
		 * reserve once more, and then no step does (the warmup is over). */
		mge_devalloc_stats(a, &st);
		MG_EQ(st.active_blocks, 32);
		if (s == 1)
			one = st;
		if (s <= 2)
			first = st;
		MG_EQ(st.segment_allocs, first.segment_allocs);
		MG_EQ(st.reserved_bytes, first.reserved_bytes);
	}
	printf("batch %d: segments %zu (%zu after step 1), reserved %.1f MiB, peak allocated %.2f MiB\n", n,
	       st.segments, one.segments, (double)st.reserved_bytes / (1 << 20),
	       (double)st.peak_allocated_bytes / (1 << 20));
	mge_devmodel_free(&dm);
	mge_devalloc_stats(a, &st);
	MG_EQ(st.active_blocks, 0);
	MG_EQ(st.allocated_bytes, 0);
	mge_devalloc_destroy(a);
	mge_model_free(&cpu);
	mge_model_free(&back);
	mge_optim_free(&opt);
	MG_EQ(mge_pool_destroy(pool), 0);
}

int main(void)
{
	run(32, 5, 1);
	run(5, 4, 2);
	run(64, 4, 3); /* the 2 MiB first activation goes to the large pool */
	if (mg_test_failures == 0)
		printf("test_devmodel: the host-emulated device model matches the CPU model bit for bit\n");
	return mg_test_done("engine-devmodel");
}
