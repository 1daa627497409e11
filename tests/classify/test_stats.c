/* SPDX-License-Identifier: MIT */
/* test_stats.c: the classifier's statistics against values computed by hand, its input contract,
 * the seeds' two real runs, and its speed on a 2000-point series. Prints expected and actual
 * values on every failure; never depends on anything but libmgcore. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "classify_test.h"
#include "mgc_classify.h"
#include "mgc_format.h"

CT_DEFINE_FAILURES;

#define MIB 1048576.0
#define GIB 1073741824.0

static void test_theil_sen_mann_kendall(void)
{
	/* pairwise slopes of y = 1 3 2 5 4 at x = 1..5, sorted:
	 * -1 -1 1/3 1/2 3/4 1 1 4/3 2 3: median (3/4 + 1)/2 = 0.875.
	 * S = 8 concordant - 2 discordant = 6; Var S = 5*4*15/18 = 16.667; Z = 5/sqrt(16.667) = 1.2247.
	 * 95% interval: C = 1.96 * 4.0825 = 8.00; ranks (10-8)/2 = 1 and (10+8)/2+1 = 10: -1 and 3.
	 * Intercept: median of y - 0.875 x = 0.125 1.25 -0.625 1.5 -0.375 -> 0.125. */
	const double x[] = {1, 2, 3, 4, 5}, y[] = {1, 3, 2, 5, 4};
	struct mgc_trend t;
	CT_INT(mgc_trend(x, y, 5, 1.959964, &t), 0);
	CT_NEAR(t.slope, 0.875, 1e-12);
	CT_NEAR(t.s, 6, 0);
	CT_NEAR(t.var_s, 300.0 / 18.0, 1e-12);
	CT_NEAR(t.z, 5 / sqrt(300.0 / 18.0), 1e-12);
	CT_NEAR(t.slope_lo, -1, 1e-12);
	CT_NEAR(t.slope_hi, 3, 1e-12);
	CT_NEAR(t.intercept, 0.125, 1e-12);

	/* ties: y = 1 1 2 2 3: S = 8 (two tied pairs count 0); Var S = (300 - 2*(2*1*9))/18 = 14.667 */
	const double yt[] = {1, 1, 2, 2, 3};
	CT_INT(mgc_trend(x, yt, 5, 1.959964, &t), 0);
	CT_NEAR(t.s, 8, 0);
	CT_NEAR(t.var_s, 264.0 / 18.0, 1e-12);
	/* slopes: 0 .5 .5 1/3 | .5 .5 2/3 | 0 .5 | 1 -> sorted 0 0 1/3 .5 .5 .5 .5 .5 2/3 1: median .5 */
	CT_NEAR(t.slope, 0.5, 1e-12);

	/* uneven x: slopes of (0,0) (1,2) (4,5): 2, 5/4, 1/3 -> median 1.25 */
	const double xu[] = {0, 1, 4}, yu[] = {0, 2, 5};
	CT_INT(mgc_trend(xu, yu, 3, 1.959964, &t), 0);
	CT_NEAR(t.slope, 1.25, 1e-12);

	/* a perfect decreasing line: S = -n(n-1)/2 = -10, every slope -2 */
	const double yd[] = {10, 8, 6, 4, 2};
	CT_INT(mgc_trend(x, yd, 5, 1.959964, &t), 0);
	CT_NEAR(t.s, -10, 0);
	CT_NEAR(t.slope, -2, 1e-12);
	CT_NEAR(t.slope_lo, -2, 1e-12);
	CT_NEAR(t.slope_hi, -2, 1e-12);
	CT_NEAR(t.z, -9 / sqrt(300.0 / 18.0), 1e-12);

	CT_INT(mgc_trend(x, y, 1, 1.96, &t), -EINVAL);
	CT_INT(mgc_trend(NULL, y, 5, 1.96, &t), -EINVAL);
}

static void test_mad_noise(void)
{
	const double v[] = {1, 2, 3, 4, 100}; /* median 3; deviations 2 1 0 1 97 -> 1 */
	CT_NEAR(mgc_mad(v, 5), 1, 0);
	const double w[] = {4, 1, 3, 2}; /* median 2.5; deviations 1.5 1.5 .5 .5 -> 1 */
	CT_NEAR(mgc_mad(w, 4), 1, 0);
	CT_TRUE(isnan(mgc_mad(v, 0)), "MAD of nothing is NaN");
	/* y = 0 1 3 6 10 15: differences 1..5, median 3, MAD 1 -> 1.4826/sqrt 2 */
	const double y[] = {0, 1, 3, 6, 10, 15};
	CT_NEAR(mgc_noise_sigma(y, 6), 1.4826 / sqrt(2.0), 1e-12);
	CT_NEAR(mgc_noise_sigma(y, 2), 0, 0);
}

static void test_contract(void)
{
	struct mgc_fit f;
	struct mgc_classify_opts o = {.x_is_steps = 1};
	const double x[] = {0, 1, 2}, y[] = {1, 2, 3}, xb[] = {0, 2, 1}, yn[] = {1, NAN, 3};
	CT_INT(mgc_classify(x, y, 0, &o, &f), -EINVAL);
	CT_INT(mgc_classify(NULL, y, 3, &o, &f), -EINVAL);
	CT_INT(mgc_classify(xb, y, 3, &o, &f), -EINVAL);
	CT_INT(mgc_classify(x, yn, 3, &o, &f), -EINVAL);
	CT_INT(mgc_classify(x, y, 3, NULL, &f), 0); /* NULL options: defaults */
	CT_INT(mgc_classify(x, y, 1, &o, &f), 0);
	CT_STR(mgc_verdict_name(f.verdict), "stable");
	CT_STR(mgc_verdict_name(MGC_VERDICT_RETENTION), "retention");
	/* a constant series: stable, whatever its length */
	double cx[50], cy[50];
	for (int i = 0; i < 50; i++) {
		cx[i] = i;
		cy[i] = 5 * GIB;
	}
	CT_INT(mgc_classify(cx, cy, 50, &o, &f), 0);
	CT_STR(mgc_verdict_name(f.verdict), "stable");
}

/* The seeds' run 1: a straight climb observed for 70-80 steps. Must be `growing` with an OOM
 * projection against 32 GB (about step 160-175), never `leak`. */
static void test_seed_run1(void)
{
	const double mb[] = {5552, 7159, 8851, 10375, 12000, 13757, 15559, 17412};
	double x[8], y[8];
	for (int i = 0; i < 8; i++) {
		x[i] = 10.0 * (i + 1);
		y[i] = mb[i] * MIB;
	}
	struct mgc_classify_opts o = {.limit = 32 * GIB, .x_is_steps = 1};
	for (size_t n = 7; n <= 8; n++) {
		struct mgc_fit f;
		CT_INT(mgc_classify(x, y, n, &o, &f), 0);
		CT_STR(mgc_verdict_name(f.verdict), "growing");
		double oom = x[n - 1] + f.x_to_oom;
		CT_TRUE(oom > 150 && oom < 185, "run 1 to step %g: OOM projected at step %g, expected 150..185",
			x[n - 1], oom);
		CT_TRUE(isfinite(f.decidable_at) && f.decidable_at > x[n - 1],
			"decidable_at %g should lie ahead of step %g", f.decidable_at, x[n - 1]);
		CT_NEAR(f.slope, 170 * MIB, 15 * MIB);
		printf("seed run 1 to step %g: %s, slope %.0f MiB/step, OOM at step %.0f: %s\n", x[n - 1],
		       mgc_verdict_name(f.verdict), f.slope / MIB, oom, f.why);
	}
}

/* The seeds' run 2 to step 240: `plateau`, levelling at step 80-90 near 17.4 GB (17,0xx-17,7xx MB). */
static void test_seed_run2(void)
{
	const double mb[] = {5434,  7017,  8721,  10375, 12000, 13757, 15559, 17412, 17658, 17693, 17694, 17694,
			     17437, 17437, 17437, 17378, 17378, 17229, 17229, 17051, 17052, 17041, 17033, 17032};
	double x[24], y[24];
	for (int i = 0; i < 24; i++) {
		x[i] = 10.0 * (i + 1);
		y[i] = mb[i] * MIB;
	}
	struct mgc_classify_opts o = {.limit = 32 * GIB, .x_is_steps = 1};
	struct mgc_fit f;
	CT_INT(mgc_classify(x, y, 24, &o, &f), 0);
	CT_STR(mgc_verdict_name(f.verdict), "plateau");
	CT_TRUE(f.plateau_at >= 80 && f.plateau_at <= 90, "plateau_at %g, expected 80..90", f.plateau_at);
	CT_TRUE(f.plateau_level >= 17000 * MIB && f.plateau_level <= 17800 * MIB,
		"plateau_level %.0f MB, expected 17000..17800", f.plateau_level / MIB);
	CT_TRUE(f.confidence >= 0.8, "confidence %g", f.confidence);
	printf("seed run 2 to step 240: %s at step %g, level %.0f MB, confidence %.2f: %s\n",
	       mgc_verdict_name(f.verdict), f.plateau_at, f.plateau_level / MIB, f.confidence, f.why);
	/* up to step 80 the same data are a straight line: growing, not leak */
	CT_INT(mgc_classify(x, y, 8, &o, &f), 0);
	CT_STR(mgc_verdict_name(f.verdict), "growing");
}

/* mgreport classifies thousands of sites: a 2000-point series must take well under a few ms. */
/* Sampled data (opts.sample_rate = R): a site whose estimated growth is under
 * MGC_SAMPLED_LEAK_RATES x R is `growing`, not `leak`; the same series at a smaller R, or exact,
 * is a leak. A clean leak: 100 KiB kept every step for 300 steps (29.3 MiB). */
static void test_sampled_floor(void)
{
	enum { N = 300 };
	double x[N], y[N];
	uint64_t coh[MGC_COHORTS] = {0};
	for (int i = 0; i < N; i++) {
		x[i] = i + 1;
		y[i] = (i + 1) * 102400.0;
		coh[mgc_cohort_bucket((uint64_t)i + 1)] += 102400;
	}
	struct mgc_site_evidence ev = {x, y, N, coh, MGC_COHORTS, N, N, 0, N};
	struct mgc_fit f;
	struct mgc_classify_opts o = {.x_is_steps = 1};
	CT_INT(mgc_classify_site(&ev, &o, &f), 0);
	CT_INT(f.verdict, MGC_VERDICT_LEAK);
	o.sample_rate = 1 * MIB; /* 9 MiB < 29.3 MiB: still a leak */
	CT_INT(mgc_classify_site(&ev, &o, &f), 0);
	CT_INT(f.verdict, MGC_VERDICT_LEAK);
	o.sample_rate = 4 * MIB; /* 36 MiB > 29.3 MiB: within the estimate's noise */
	CT_INT(mgc_classify_site(&ev, &o, &f), 0);
	CT_INT(f.verdict, MGC_VERDICT_GROWING);
}

static void test_speed(void)
{
	enum { N = 2000, REPS = 20 };
	double *x = malloc(N * sizeof(double)), *y = malloc(N * sizeof(double));
	if (!x || !y) {
		ct_failures++;
		free(x);
		free(y);
		return;
	}
	unsigned s = 12345;
	for (int i = 0; i < N; i++) {
		s = s * 1103515245u + 12345u;
		x[i] = i;
		y[i] = 4 * GIB + 3 * GIB * -expm1(-i / 300.0) + (double)(s >> 8) / 16777216.0 * 50 * MIB;
	}
	struct mgc_classify_opts o = {.limit = 32 * GIB, .x_is_steps = 1};
	struct mgc_fit f;
	struct timespec a, b;
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (int r = 0; r < REPS; r++)
		CT_INT(mgc_classify(x, y, N, &o, &f), 0);
	clock_gettime(CLOCK_MONOTONIC, &b);
	double ms = ((double)(b.tv_sec - a.tv_sec) * 1e3 + (double)(b.tv_nsec - a.tv_nsec) / 1e6) / REPS;
	printf("2000-point series: %.3f ms per classification (%s, %zu points used)\n", ms,
	       mgc_verdict_name(f.verdict), f.npoints);
	CT_TRUE(ms < 5.0, "%.3f ms per 2000-point classification, expected < 5 ms", ms);
	CT_STR(mgc_verdict_name(f.verdict), "plateau");
	free(x);
	free(y);
}

int main(void)
{
	test_theil_sen_mann_kendall();
	test_mad_noise();
	test_contract();
	test_seed_run1();
	test_seed_run2();
	test_sampled_floor();
	test_speed();
	if (ct_failures)
		fprintf(stderr, "%d check(s) failed\n", ct_failures);
	return ct_failures ? 1 : 0;
}
