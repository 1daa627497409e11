/* SPDX-License-Identifier: MIT */
/* mgp_sample.c: the draws and weights of mgp_sample.h. Each thread draws its exponential gaps
 * from its own xorshift generator, seeded from its stack address and the clock, or from
 * MGPROBE_SAMPLE_SEED and its turn among the threads. Never calls malloc or a lock. */
#include "mgp_sample.h"

#include <errno.h>
#include <math.h>

#include "mgc_hash.h"
#include "mgp_os.h"

struct mgp_sample_conf mgp_sample_conf;
__thread int64_t mgp_sample_left __attribute__((tls_model("initial-exec")));
static __thread uint64_t rng __attribute__((tls_model("initial-exec")));

static uint64_t threads_seeded; /* with a seed: threads that have drawn, in order */
static uint64_t forks;          /* children this process has forked */

int mgp_sample_init(uint64_t rate, uint64_t seed)
{
	if (!rate)
		return 0;
	size_t bytes = ((size_t)1 << MGP_SAMPLE_FILTER_BITS) + (1u << MGP_SAMPLE_REGION_BITS);
	mgp_sample_conf.filter = mgp_os_alloc(bytes);
	if (!mgp_sample_conf.filter)
		return -ENOMEM;
	mgp_sample_conf.always = rate * 4;
	mgp_sample_conf.rate = rate;
	mgp_sample_conf.seed = seed;
	return 0;
}

void mgp_sample_forked(int child)
{
	if (!child) {
		forks++;
		return;
	}
	if (mgp_sample_conf.seed) /* the parent's n-th child: another seed, the same in every run */
		mgp_sample_conf.seed = mgc_mix64(mgp_sample_conf.seed + forks + 1) | 1;
	threads_seeded = forks = 0;
	rng = 0;
}

/* A thread's first draw: the seed and the thread's turn to draw, or its stack and the clock. */
static uint64_t first_seed(void)
{
	if (!mgp_sample_conf.seed)
		return (uint64_t)(uintptr_t)&rng ^ mgp_now_ns();
	uint64_t turn = __atomic_fetch_add(&threads_seeded, 1, __ATOMIC_RELAXED);
	return mgp_sample_conf.seed + turn * 0x9e3779b97f4a7c15ull;
}

/* Uniform in (0, 1]. */
static double uniform(void)
{
	if (!rng)
		rng = mgc_mix64(first_seed()) | 1;
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return (double)(((rng * 0x2545f4914f6cdd1dull) >> 11) + 1) / 9007199254740992.0;
}

/* The next gap: exponential with mean R (at least one byte). */
static int64_t draw(void)
{
	double g = -log(uniform()) * (double)mgp_sample_conf.rate;
	return g < 1.0 ? 1 : g > 9.0e18 ? (int64_t)9.0e18 : (int64_t)g;
}

int mgp_sample_slow(size_t n)
{
	int64_t left = mgp_sample_left;
	if (left == 0) { /* this thread's first allocation: its first gap */
		left = draw();
		if (left > (int64_t)n) {
			mgp_sample_left = left - (int64_t)n;
			return 1;
		}
	}
	mgp_sample_left = draw(); /* a sample point falls in this allocation: record it */
	return 0;
}

void mgp_sample_weigh_sampled(uint64_t n, uint64_t *est_bytes, uint64_t *est_count, int64_t *var)
{
	uint64_t r = mgp_sample_conf.rate;
	double p = -expm1(-(double)n / (double)r); /* 1 - exp(-n/R), exact for small n/R */
	*est_bytes = (uint64_t)llround((double)n / p);
	*est_count = (uint64_t)llround(1.0 / p);
	*var = (int64_t)llround((double)n * (double)n * (1.0 - p) / (p * p * (double)r));
}
