/* SPDX-License-Identifier: MIT */
/* test_site.c: the site classifier's cohort evidence at any current step. A site whose birth
 * buckets all keep survivors at the same rate is a leak, whether the run is at step 400 or the
 * step counter reads near 2^64 or beyond (a double out of an integer's range must never be
 * converted: run under the asan setup too). A sampled site (a Poisson staircase of samples) that
 * leaks is a leak however its samples fall, and one that fills a cache never is. Never reads a
 * file or a clock (its random draws are seeded). */
#include <math.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mg_test.h"
#include "mgc_classify.h"
#include "mgc_format.h"

enum { N = 400 };
#define MIB (1024.0 * 1024.0)

/* A site leaking 1 MiB per step: live bytes rise by 1 MiB a step, and every birth bucket k keeps
 * 1 MiB for each of its 2^(k-1) steps. */
static void check_leak_at(double last_step, const char *since)
{
	static double x[N], live[N];
	uint64_t cohorts[MGC_COHORTS];
	for (size_t i = 0; i < N; i++) {
		x[i] = (double)(i + 1);
		live[i] = MIB * (double)(i + 1);
	}
	for (unsigned k = 0; k < MGC_COHORTS; k++)
		cohorts[k] = (uint64_t)MIB * mgc_cohort_first_step(k);
	struct mgc_site_evidence ev = {.x = x, .live = live, .n = N, .cohorts = cohorts,
				       .ncohorts = MGC_COHORTS, .last_step = last_step,
				       .allocs = N, .frees = 0, .live_count = N};
	struct mgc_classify_opts o = {.x_is_steps = 1};
	struct mgc_fit f;
	MG_EQ(mgc_classify_site(&ev, &o, &f), 0, "step %g", last_step);
	MG_STR(mgc_verdict_name(f.verdict), "leak", "step %g: %s", last_step, f.why);
	MG_NEAR(f.slope, MIB, 1e-9 * MIB, "step %g", last_step);
	MG_TRUE(strstr(f.why, since) != NULL, "step %g: \"%s\" names %s", last_step, f.why, since);
}

/* A sampled site (R = 512 KiB) over 300 steps, as mgtrain's slow-leak under --sample 512K: each
 * sample adds W = 557,734 bytes (a 60 KiB allocation's weight) to the estimate and to its birth
 * bucket; the number of samples a step is Poisson with mean rate(step) / W. Seeded (splitmix64). */
enum { SN = 300 };
static const double SAMPLE_R = 524288.0, SAMPLE_W = 557734.0;

static double uniform(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return (double)((z ^ (z >> 31)) >> 11) * 0x1p-53;
}

static double sampled_slope; /* the last sampled site's growth per step */

/* The verdict on a sampled site of SN steps (x = 1 .. SN), its why in `why` (its growth per step
 * in sampled_slope). */
static const char *sampled_site_verdict(const double *x, const double *live, const uint64_t *cohorts,
					char *why, size_t len)
{
	struct mgc_site_evidence ev = {.x = x, .live = live, .n = SN, .cohorts = cohorts,
				       .ncohorts = MGC_COHORTS, .last_step = SN, .allocs = SN, .live_count = SN};
	struct mgc_classify_opts o = {.x_is_steps = 1, .sample_rate = SAMPLE_R};
	struct mgc_fit f;
	if (mgc_classify_site(&ev, &o, &f))
		return "error";
	snprintf(why, len, "%s", f.why);
	sampled_slope = f.slope;
	return mgc_verdict_name(f.verdict);
}

/* rate(step): bytes per step; tau > 0: a cache filling 16 MiB with that time constant, else a
 * leak of 60 KiB per step. */
static const char *sampled_verdict(uint64_t seed, double tau, char *why, size_t len)
{
	static double x[SN], live[SN];
	uint64_t cohorts[MGC_COHORTS] = {0};
	double sum = 0;
	for (size_t i = 0; i < SN; i++) {
		double t = (double)(i + 1), rate = tau > 0 ? 16 * MIB / tau * exp(-t / tau) : 60 * 1024.0;
		double l = exp(-rate / SAMPLE_W), u = uniform(&seed);
		unsigned k = 0;
		while (u > l) { /* Knuth's Poisson draw */
			k++;
			u *= uniform(&seed);
		}
		sum += k * SAMPLE_W;
		cohorts[mgc_cohort_bucket(i + 1)] += (uint64_t)(k * SAMPLE_W);
		x[i] = t;
		live[i] = sum;
	}
	return sampled_site_verdict(x, live, cohorts, why, len);
}

/* A sampled site that turns its blocks over, as mgtrain's retention scenario's per-image records
 * under --sample 512K: `records` records of 2 KiB, each replaced (freed, a new one allocated)
 * once an epoch of `epoch` steps, at a place in the epoch drawn afresh each epoch; the first epoch
 * fills them. Each new record is sampled with chance p = 1 - exp(-2 KiB / R) and then weighs
 * 2 KiB / p. Live bytes fill for one epoch, then stay level: no leak however the samples fall. */
static const char *turnover_verdict(uint64_t seed, int records, int epoch, char *why, size_t len)
{
	static double x[SN], live[SN];
	static int order[16384], born[16384]; /* born: step of birth while sampled and live, else 0 */
	uint64_t cohorts[MGC_COHORTS] = {0};
	double p = -expm1(-2048.0 / SAMPLE_R), w = 2048.0 / p, sum = 0;
	int per = (records + epoch - 1) / epoch;
	memset(born, 0, sizeof(int) * (size_t)records);
	for (int t = 1; t <= SN; t++) {
		int j = (t - 1) % epoch;
		if (j == 0)
			for (int i = 0; i < records; i++) { /* Fisher-Yates */
				int r = (int)(uniform(&seed) * (i + 1));
				order[i] = order[r];
				order[r] = i;
			}
		for (int q = j * per; q < (j + 1) * per && q < records; q++) {
			int id = order[q];
			if (born[id]) {
				sum -= w;
				cohorts[mgc_cohort_bucket((uint64_t)born[id])] -= (uint64_t)w;
			}
			born[id] = uniform(&seed) < p ? t : 0;
			if (born[id]) {
				sum += w;
				cohorts[mgc_cohort_bucket((uint64_t)t)] += (uint64_t)w;
			}
		}
		x[t - 1] = t;
		live[t - 1] = sum;
	}
	return sampled_site_verdict(x, live, cohorts, why, len);
}

/* 100 seeds of each of mgtrain's retention shape (1,600 records, 50-step epochs) and of longer
 * epochs and more records: mgtrain's shape never a leak, the others at most once in 400 (main's
 * sampled cohort rule said `leak` 7, 15, 33, 52 and 72 times in 100: whenever a sample survived in
 * the newest complete bucket and the series ended on a rise; now one seed of 8,000 records every
 * 120 steps, whose few samples in the older buckets the binomial test cannot tell from a leak's,
 * on a series the fit reads `growing`). */
static void check_turnover(void)
{
	static const int shapes[][2] = {{1600, 50}, {1600, 100}, {8000, 50}, {8000, 120}, {16000, 150}};
	char why[512];
	int others = 0;
	for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
		int leaks = 0;
		for (uint64_t seed = 1; seed <= 100; seed++) {
			const char *v = turnover_verdict(seed, shapes[s][0], shapes[s][1], why, sizeof why);
			leaks += !strcmp(v, "leak");
			if (!strcmp(v, "leak"))
				printf("turnover %d records / %d steps, seed %llu: %s\n", shapes[s][0],
				       shapes[s][1], (unsigned long long)seed, why);
		}
		if (s == 0)
			MG_EQ(leaks, 0, "mgtrain's retention shape (1,600 records every 50 steps) reads leak");
		else
			others += leaks;
	}
	MG_TRUE(others <= 1, "longer turnovers read leak at most once in 400: %d", others);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* 100 seeds of each: every leak but one a leak (main's classifier: 13 `growing` and 1 `plateau`;
 * mostly where one of the three last birth buckets held under half the others' rate of samples by
 * chance; seed 53's samples crowd early by chance, as a warmup's would, at the Laplace test's
 * 1e-3), and no cache filling with a time constant of 20 or 40 steps ever one. A leak's growth per
 * step is its survivors' over the newest two complete birth buckets (about 21 samples): within
 * 15% of the truth at the median, 37% at the 90th percentile; the slope of the live estimate's
 * last segment, read before, was off by 21% and 56% (and 4.5 times at worst). */
static void check_sampled(void)
{
	char why[512];
	int leaks = 0, warm = 0;
	double err[100] = {0};
	size_t nerr = 0;
	for (uint64_t seed = 1; seed <= 100; seed++) {
		const char *v = sampled_verdict(seed, 0, why, sizeof why);
		leaks += !strcmp(v, "leak");
		if (!strcmp(v, "leak"))
			err[nerr++] = fabs(sampled_slope / (60 * 1024.0) - 1);
		if (strcmp(v, "leak"))
			printf("sampled leak, seed %llu: %s: %s\n", (unsigned long long)seed, v, why);
		v = sampled_verdict(seed, seed % 2 ? 20 : 40, why, sizeof why);
		warm += !strcmp(v, "leak");
		if (!strcmp(v, "leak"))
			printf("sampled cache, seed %llu: %s: %s\n", (unsigned long long)seed, v, why);
	}
	MG_TRUE(leaks >= 99, "sampled leaks read leak: %d of 100", leaks);
	qsort(err, nerr, sizeof err[0], cmp_double);
	MG_TRUE(nerr > 0 && err[nerr / 2] < 0.18, "median error of a sampled leak's growth: %.3f", err[nerr / 2]);
	MG_TRUE(nerr > 0 && err[nerr * 9 / 10] < 0.45, "90th percentile error: %.3f", err[nerr * 9 / 10]);
	MG_EQ(warm, 0, "sampled caches read leak");
}

int main(void)
{
	check_sampled();
	check_turnover();
	check_leak_at(400, "born since step 32 ");
	check_leak_at(0x1p53, "born since step 134217728 ");
	check_leak_at(0x1p64, "born since step 134217728 "); /* just beyond uint64_t */
	check_leak_at(1e300, "born since step 134217728 ");
	check_leak_at(INFINITY, "born since step 134217728 ");
	return mg_test_done("classify-site");
}
