/* SPDX-License-Identifier: MIT */
/* eval_classic.c: the classic labelled set of the growth classifier (77 series of about 2 GiB with a
 * 32 GiB limit, docs/CLASSIFIER.md): every family generated deterministically, every prefix scored
 * against the verdicts acceptable for it. It never reads files or clocks into its figures. */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "eval_set.h"
#include "mgc_classify.h"
#include "mgc_format.h"

#define MAXN 700
#define MIN_PREFIX 8
#define NV 5 /* verdicts */

/* ---------------------------------------------------------------- the labelled series */

enum level {
	L_SERIES,  /* mgc_classify on y */
	L_PROCESS, /* mgc_classify_process on rss (y), live, kept */
	L_SITE,    /* mgc_classify_site on live bytes (y) with cohorts */
};

enum shape {
	S_STABLE,  /* truth stable throughout */
	S_LEAK,    /* flat until onset, then growth that never stops (or stops at t_end: fixed leak) */
	S_WARMUP,  /* growth from onset that ends at t_end (levels) */
	S_RETAIN,  /* process: RSS grows, live flat */
	S_RUN1,    /* the seeds' run 1: the truth turned out to be a warmup not yet over */
};

struct series {
	char name[48];
	const char *family;
	enum level level;
	enum shape shape;
	size_t n;
	double x[MAXN], y[MAXN], live[MAXN], kept[MAXN];
	double x_onset; /* growth starts (leaks, warmups) */
	double x_end;   /* warmup or fixed leak: growth over (remaining rise negligible); INFINITY if never */
	double x_dec;   /* leak: decidable from here (see docs/CLASSIFIER.md) */
	double x_pdec;  /* warmup: plateau decidable from here */
	double slope;   /* leak: true growth per x (for the OOM error), of the floor */
	double sigma;   /* noise */
	double limit;
	/* site cohorts: survival model */
	double site_leak_rate;  /* bytes per step born that never die */
	double site_warm_tau;   /* warmup site: survivors born at step s: A/tau e^{-s/tau} */
	double site_warm_amp;
};

struct evalset {
	struct series *v;
	size_t n, cap;
};

static struct series *add(struct evalset *es, const char *family, const char *name, enum level lv, enum shape sh)
{
	struct series *s = &es->v[es->n < es->cap - 1 ? es->n++ : es->n];
	memset(s, 0, sizeof(*s));
	snprintf(s->name, sizeof(s->name), "%s", name);
	s->family = family;
	s->level = lv;
	s->shape = sh;
	s->x_onset = 0;
	s->x_end = INFINITY;
	s->x_dec = INFINITY;
	s->x_pdec = INFINITY;
	s->limit = 32 * GIB;
	return s;
}

/* Leak decidability (documented in docs/CLASSIFIER.md), the training-like set's knowability with
 * the method's prior stated openly: a rise after the series had settled (flat for half the warmup
 * horizon, 100 steps) is decidable from onset + max(200 steps, 20 samples, the steps until it rose
 * 5 sigma); a rise from the start of the run not before the start horizon (1000 steps: no series
 * here is that long, so those stay `growing` or `leak`, both acceptable). */
#define HORIZON 200.0
#define START_HORIZON 1000.0
static void set_leak_dec(struct series *s, double dx, double r_per_sample)
{
	double settled = s->x_onset - s->x[0];
	if (strcmp(s->name, "plateau-then-leak") == 0)
		settled = s->x_onset - 60; /* the warmup ended at step 60 */
	if (settled < 0.5 * HORIZON) {
		s->x_dec = s->x[0] + START_HORIZON;
		return;
	}
	s->x_dec = s->x_onset + fmax(fmax(HORIZON, 20 * dx), 5 / r_per_sample * dx);
}

/* Plateau decidable: the growth has been over for max(8 samples, a quarter of its duration). */
static void set_plateau_dec(struct series *s, double dx)
{
	double q = 0.25 * (s->x_end - s->x_onset);
	s->x_pdec = s->x_end + (q > 8 * dx ? q : 8 * dx);
}

static void fill_x(struct series *s, size_t n, double x0, double dx)
{
	s->n = n;
	for (size_t i = 0; i < n; i++)
		s->x[i] = x0 + dx * (double)i;
}

/* Stable series: iid, AR(1), random spikes */
static void build_stable(struct evalset *es)
{
	char nm[48];
	struct rng r;
	const double B = 2 * GIB;
	/* stable: iid, AR(1), random spikes */
	for (int k = 0; k < 6; k++) {
		double sig = (k % 3 == 0 ? 5 : k % 3 == 1 ? 20 : 100) * MIB;
		snprintf(nm, sizeof nm, "iid-s%.0f-%d", sig / MIB, k / 3);
		struct series *s = add(es, "stable", nm, L_SERIES, S_STABLE);
		r.s = 1000 + (uint64_t)k;
		fill_x(s, 300, 0, 1);
		s->sigma = sig;
		for (size_t i = 0; i < s->n; i++)
			s->y[i] = B + sig * rng_gauss(&r);
	}
	for (int k = 0; k < 4; k++) {
		double phi = k < 2 ? 0.5 : 0.9, sig = 20 * MIB;
		snprintf(nm, sizeof nm, "ar1-phi%.1f-%d", phi, k & 1);
		struct series *s = add(es, "stable", nm, L_SERIES, S_STABLE);
		r.s = 2000 + (uint64_t)k;
		fill_x(s, 300, 0, 1);
		s->sigma = sig;
		double e = 0;
		for (size_t i = 0; i < s->n; i++) {
			e = phi * e + sqrt(1 - phi * phi) * sig * rng_gauss(&r);
			s->y[i] = B + e;
		}
	}
	for (int k = 0; k < 2; k++) {
		snprintf(nm, sizeof nm, "spikes-%d", k);
		struct series *s = add(es, "stable", nm, L_SERIES, S_STABLE);
		r.s = 3000 + (uint64_t)k;
		fill_x(s, 300, 0, 1);
		s->sigma = 10 * MIB;
		for (size_t i = 0; i < s->n; i++)
			s->y[i] = B + s->sigma * rng_gauss(&r) +
				  (rng_unif(&r) < 0.03 ? (10 + 20 * rng_unif(&r)) * s->sigma : 0);
	}
}

/* Leaks: linear across slope-to-noise ratios, slow under heavy noise, step-wise */
static void build_leaks(struct evalset *es)
{
	char nm[48];
	struct rng r;
	const double B = 2 * GIB;
	/* linear leaks across slope-to-noise ratios */
	const double ratios[] = {0.2, 0.5, 1, 3, 10};
	for (int k = 0; k < 10; k++) {
		double ratio = ratios[k / 2], sig = 20 * MIB;
		snprintf(nm, sizeof nm, "linear-r%g-%d", ratio, k & 1);
		struct series *s = add(es, "leak-linear", nm, L_SERIES, S_LEAK);
		r.s = 4000 + (uint64_t)k;
		fill_x(s, 300, 0, 1);
		s->sigma = sig;
		s->slope = ratio * sig;
		for (size_t i = 0; i < s->n; i++)
			s->y[i] = B + s->slope * s->x[i] + sig * rng_gauss(&r);
		set_leak_dec(s, 1, ratio);
	}
	/* slow leak under heavy noise */
	for (int k = 0; k < 2; k++) {
		snprintf(nm, sizeof nm, "slow-noisy-%d", k);
		struct series *s = add(es, "leak-slow-noisy", nm, L_SERIES, S_LEAK);
		r.s = 5000 + (uint64_t)k;
		fill_x(s, 700, 0, 1);
		s->sigma = 200 * MIB;
		s->slope = 0.1 * s->sigma;
		for (size_t i = 0; i < s->n; i++)
			s->y[i] = B + s->slope * s->x[i] + s->sigma * rng_gauss(&r);
		set_leak_dec(s, 1, 0.1);
	}
	/* step-wise leak: a jump every K steps */
	for (int k = 0; k < 4; k++) {
		size_t K = k < 2 ? 10 : 25;
		snprintf(nm, sizeof nm, "stepwise-K%zu-%d", K, k & 1);
		struct series *s = add(es, "leak-stepwise", nm, L_SERIES, S_LEAK);
		r.s = 6000 + (uint64_t)k;
		fill_x(s, 300, 0, 1);
		s->sigma = 10 * MIB;
		double J = 200 * MIB;
		s->slope = J / (double)K;
		for (size_t i = 0; i < s->n; i++)
			s->y[i] = B + J * (double)(i / K) + s->sigma * rng_gauss(&r);
		/* decidable on the per-step floor: rise per period over the noise, per period */
		set_leak_dec(s, (double)K, J / s->sigma);
	}
}

/* Warmups: exponential and hinge */
static void build_warmups(struct evalset *es)
{
	char nm[48];
	struct rng r;
	const double B = 2 * GIB;
	/* warmups: exponential, hinge, logistic, two-stage, running max of batch shapes */
	const double taus[] = {5, 20, 50, 100, 300, 1000};
	for (int k = 0; k < 12; k++) {
		double tau = taus[k % 6], sig = (k < 6 ? 20 : 60) * MIB, A = 6 * GIB;
		snprintf(nm, sizeof nm, "exp-tau%g-s%.0f", tau, sig / MIB);
		struct series *s = add(es, "warmup-exp", nm, L_SERIES, S_WARMUP);
		r.s = 7000 + (uint64_t)k;
		fill_x(s, 400, 0, 1);
		s->sigma = sig;
		for (size_t i = 0; i < s->n; i++)
			s->y[i] = B + A * -expm1(-s->x[i] / tau) + sig * rng_gauss(&r);
		/* over when the remaining rise is below max(2 sigma, 5% of A) */
		double rem = fmax(2 * sig, 0.05 * A);
		s->x_end = tau * log(A / rem);
		set_plateau_dec(s, 1);
	}
	for (int k = 0; k < 6; k++) {
		double frac = (k % 3 == 0 ? 0.1 : k % 3 == 1 ? 0.3 : 0.6), sig = (k < 3 ? 20 : 60) * MIB;
		snprintf(nm, sizeof nm, "hinge-%.0f%%-s%.0f", frac * 100, sig / MIB);
		struct series *s = add(es, "warmup-hinge", nm, L_SERIES, S_WARMUP);
		r.s = 8000 + (uint64_t)k;
		fill_x(s, 300, 0, 1);
		s->sigma = sig;
		double psi = frac * 300, A = 5 * GIB;
		for (size_t i = 0; i < s->n; i++)
			s->y[i] = B + A * fmin(s->x[i], psi) / psi + sig * rng_gauss(&r);
		s->x_end = psi;
		set_plateau_dec(s, 1);
	}
}

/* Warmups: logistic, two-stage, running max of batch shapes */
static void build_warmup_shapes(struct evalset *es)
{
	char nm[48];
	struct rng r;
	const double B = 2 * GIB;
	for (int k = 0; k < 2; k++) {
		double c = k ? 120 : 60, wd = k ? 25 : 10, A = 4 * GIB;
		snprintf(nm, sizeof nm, "logistic-c%.0f", c);
		struct series *s = add(es, "warmup-logistic", nm, L_SERIES, S_WARMUP);
		r.s = 9000 + (uint64_t)k;
		fill_x(s, 300, 0, 1);
		s->sigma = 20 * MIB;
		for (size_t i = 0; i < s->n; i++)
			s->y[i] = B + A / (1 + exp(-(s->x[i] - c) / wd)) + s->sigma * rng_gauss(&r);
		s->x_onset = c - 3 * wd;
		s->x_end = c + 3 * wd;
		set_plateau_dec(s, 1);
	}
	for (int k = 0; k < 2; k++) {
		snprintf(nm, sizeof nm, "two-stage-%d", k);
		struct series *s = add(es, "warmup-two-stage", nm, L_SERIES, S_WARMUP);
		r.s = 9100 + (uint64_t)k;
		fill_x(s, 400, 0, 1);
		s->sigma = 20 * MIB;
		double p1 = k ? 30 : 50, p2 = k ? 200 : 150;
		for (size_t i = 0; i < s->n; i++) {
			double t = s->x[i];
			s->y[i] = B + 3 * GIB * fmin(t, p1) / p1 + 2 * GIB * fmax(0, fmin(t, p2) - p1) / (p2 - p1) +
				  s->sigma * rng_gauss(&r);
		}
		s->x_end = p2;
		set_plateau_dec(s, 1);
	}
	for (int k = 0; k < 2; k++) {
		snprintf(nm, sizeof nm, "running-max-%d", k);
		struct series *s = add(es, "warmup-runmax", nm, L_SERIES, S_WARMUP);
		r.s = 9200 + (uint64_t)k;
		fill_x(s, 300, 0, 1);
		s->sigma = 10 * MIB;
		/* activation memory of the largest batch shape so far: shapes uniform^(1/4) of 3 GiB */
		double mx = 0, fin = 0;
		double shp[300];
		for (size_t i = 0; i < s->n; i++) {
			shp[i] = pow(rng_unif(&r), 0.25) * 3 * GIB;
			if (shp[i] > mx)
				mx = shp[i];
			s->y[i] = B + mx + s->sigma * rng_gauss(&r);
		}
		fin = mx;
		mx = 0;
		for (size_t i = 0; i < s->n; i++) {
			if (shp[i] > mx)
				mx = shp[i];
			if (mx >= fin - fmax(2 * s->sigma, 0.05 * 3 * GIB)) {
				s->x_end = s->x[i];
				break;
			}
		}
		set_plateau_dec(s, 1);
	}
}

/* Sawtooth with and without a leak, late leaks, fixed leaks */
static void build_sawtooth_late(struct evalset *es)
{
	char nm[48];
	struct rng r;
	const double B = 2 * GIB;
	/* sawtooth: validation spikes or ramp-and-drop every K steps, with and without a leak under it */
	for (int k = 0; k < 8; k++) {
		int leak = k >= 4, ramp = k & 1;
		size_t K = (k & 2) ? 25 : 10;
		snprintf(nm, sizeof nm, "%s-K%zu%s", ramp ? "ramp-drop" : "val-spikes", K, leak ? "-leak" : "");
		struct series *s =
			add(es, leak ? "sawtooth-leak" : "sawtooth", nm, L_SERIES, leak ? S_LEAK : S_STABLE);
		r.s = 10000 + (uint64_t)k;
		fill_x(s, 400, 0, 1);
		s->sigma = 10 * MIB;
		s->slope = leak ? 5 * MIB : 0;
		for (size_t i = 0; i < s->n; i++) {
			size_t ph = i % K;
			double saw = ramp ? 800 * MIB * (double)ph / (double)K : (ph < 2 ? 1 * GIB : 0);
			s->y[i] = B + s->slope * s->x[i] + saw + s->sigma * rng_gauss(&r);
		}
		if (leak)
			set_leak_dec(s, (double)K, s->slope * (double)K / s->sigma);
	}
	/* late-onset leak after a flat stretch */
	for (int k = 0; k < 3; k++) {
		snprintf(nm, sizeof nm, "late-%d", k);
		struct series *s = add(es, "leak-late", nm, L_SERIES, S_LEAK);
		r.s = 11000 + (uint64_t)k;
		fill_x(s, 400, 0, 1);
		s->sigma = 20 * MIB;
		s->x_onset = k == 2 ? 100 : 150;
		s->slope = (k == 1 ? 10 : 20) * MIB;
		for (size_t i = 0; i < s->n; i++)
			s->y[i] = B + s->slope * fmax(0, s->x[i] - s->x_onset) + s->sigma * rng_gauss(&r);
		set_leak_dec(s, 1, s->slope / s->sigma);
	}
	/* a warmup, then later a leak: the plateau must reopen */
	{
		struct series *s = add(es, "leak-late", "plateau-then-leak", L_SERIES, S_LEAK);
		r.s = 11100;
		fill_x(s, 500, 0, 1);
		s->sigma = 20 * MIB;
		s->x_onset = 250;
		s->slope = 20 * MIB;
		for (size_t i = 0; i < s->n; i++)
			s->y[i] = B + 4 * GIB * fmin(s->x[i], 60) / 60 + s->slope * fmax(0, s->x[i] - 250) +
				  s->sigma * rng_gauss(&r);
		set_leak_dec(s, 1, s->slope / s->sigma);
	}
	/* a leak fixed mid-run: truth leak, then plateau */
	for (int k = 0; k < 2; k++) {
		snprintf(nm, sizeof nm, "fixed-%d", k);
		struct series *s = add(es, "leak-fixed", nm, L_SERIES, S_LEAK);
		r.s = 12000 + (uint64_t)k;
		fill_x(s, 400, 0, 1);
		s->sigma = 20 * MIB;
		s->slope = 20 * MIB;
		s->x_end = k ? 120 : 260;
		for (size_t i = 0; i < s->n; i++)
			s->y[i] = B + s->slope * fmin(s->x[i], s->x_end) + s->sigma * rng_gauss(&r);
		set_leak_dec(s, 1, 1);
		set_plateau_dec(s, 1);
	}
}

/* The seeds' real tables (MB read as MiB; machine of 32 GiB) */
static void build_seeds(struct evalset *es)
{
	static const double run1a[] = {5552, 7159, 8851, 10375, 12000, 13757, 15559, 17412};
	static const double run1b[] = {5552, 7159, 8851, 10515, 12227, 13919, 15736};
	static const double run2[] = {5434,  7017,  8721,  10375, 12000, 13757, 15559, 17412,
				      17658, 17693, 17694, 17694, 17437, 17437, 17437, 17378,
				      17378, 17229, 17229, 17051, 17052, 17041, 17033, 17032};
	struct series *s = add(es, "seeds", "seed000-run1", L_SERIES, S_RUN1);
	fill_x(s, 8, 10, 10);
	for (size_t i = 0; i < 8; i++)
		s->y[i] = run1a[i] * MIB;
	s = add(es, "seeds", "seed002-run1", L_SERIES, S_RUN1);
	fill_x(s, 7, 10, 10);
	for (size_t i = 0; i < 7; i++)
		s->y[i] = run1b[i] * MIB;
	s = add(es, "seeds", "seed002-run2", L_SERIES, S_WARMUP);
	fill_x(s, 24, 10, 10);
	for (size_t i = 0; i < 24; i++)
		s->y[i] = run2[i] * MIB;
	s->x_onset = 10;
	s->x_end = 90;
	s->x_pdec = 130; /* CLASSIFY.md: a plateau verdict is safe from about step 130 */
}

/* Process and site levels: retention, live leaks, cohorts */
static void build_process_sites(struct evalset *es)
{
	char nm[48];
	struct rng r;
	/* retention (process level): RSS grows while live stays flat; and controls */
	for (int k = 0; k < 4; k++) {
		int retain = k < 2;
		snprintf(nm, sizeof nm, "%s-%d", retain ? "retention" : "live-leak", k & 1);
		struct series *s = add(es, retain ? "retention" : "process-leak", nm, L_PROCESS,
				       retain ? S_RETAIN : S_LEAK);
		r.s = 13000 + (uint64_t)k;
		fill_x(s, 300, 0, 1);
		s->sigma = 10 * MIB;
		s->slope = 8 * MIB;
		for (size_t i = 0; i < s->n; i++) {
			double t = s->x[i];
			s->live[i] = 3 * GIB + (retain ? 0 : s->slope * t) + s->sigma * rng_gauss(&r);
			s->kept[i] = 100 * MIB + (retain ? s->slope * t : 0) + 2 * MIB * rng_gauss(&r);
			s->y[i] = s->live[i] + s->kept[i] + 500 * MIB;
		}
		if (!retain)
			set_leak_dec(s, 1, s->slope / s->sigma);
	}
	/* sites with cohorts: a leaking site (survivors from every step), a warmup site (a cache that
	 * fills: survivors only from early steps) */
	for (int k = 0; k < 4; k++) {
		int leak = k < 2;
		snprintf(nm, sizeof nm, "site-%s-%d", leak ? "leak" : "warmup", k & 1);
		struct series *s = add(es, leak ? "site-leak" : "site-warmup", nm, L_SITE, leak ? S_LEAK : S_WARMUP);
		r.s = 14000 + (uint64_t)k;
		fill_x(s, 300, 1, 1);
		s->sigma = 64 * 1024;
		/* live = survivors + transient working set with noise */
		s->site_leak_rate = leak ? (k ? 16 : 64) * 1024 : 0;
		s->site_warm_tau = 40;
		s->site_warm_amp = leak ? 0 : 64 * MIB;
		for (size_t i = 0; i < s->n; i++) {
			double t = s->x[i];
			s->y[i] = 4 * MIB + s->site_leak_rate * t + s->site_warm_amp * -expm1(-t / s->site_warm_tau) +
				  s->sigma * rng_gauss(&r);
		}
		if (leak) {
			/* cohorts are exact: half the horizon, at the next birth-bucket boundary */
			s->x_dec = 128;
			s->slope = s->site_leak_rate;
		} else {
			s->x_end = s->site_warm_tau * log(s->site_warm_amp / fmax(2 * s->sigma, 0.05 * s->site_warm_amp));
			set_plateau_dec(s, 1);
		}
	}
}

static void build_set(struct evalset *es)
{
	build_stable(es);
	build_leaks(es);
	build_warmups(es);
	build_warmup_shapes(es);
	build_sawtooth_late(es);
	build_seeds(es);
	build_process_sites(es);
}

/* ---------------------------------------------------------------- truth of one prefix */

#define BIT(v) (1u << (v))

struct truth {
	int cls;          /* the verdict that is right: 0..4 (GROWING = still undecidable) */
	unsigned ok;      /* verdicts that are acceptable */
	int warmup;       /* counts for "false leak on warmups" */
};

static struct truth truth_of(const struct series *s, size_t len)
{
	double xl = s->x[len - 1];
	struct truth t = {MGC_VERDICT_GROWING, BIT(MGC_VERDICT_GROWING), 0};
	switch (s->shape) {
	case S_STABLE:
		t.cls = MGC_VERDICT_STABLE;
		t.ok = BIT(MGC_VERDICT_STABLE);
		break;
	case S_RUN1:
		t.warmup = 1;
		break;
	case S_RETAIN:
		t.cls = MGC_VERDICT_RETENTION;
		t.ok = BIT(MGC_VERDICT_RETENTION) | BIT(MGC_VERDICT_GROWING);
		if (len >= 40)
			t.ok = BIT(MGC_VERDICT_RETENTION);
		break;
	case S_WARMUP:
		t.warmup = 1;
		if (xl < s->x_onset) {
			t.cls = MGC_VERDICT_STABLE;
			t.ok = BIT(MGC_VERDICT_STABLE) | BIT(MGC_VERDICT_GROWING);
		} else if (xl >= s->x_pdec) {
			t.cls = MGC_VERDICT_PLATEAU;
			t.ok = BIT(MGC_VERDICT_PLATEAU);
		} else if (xl >= s->x_end) {
			t.ok |= BIT(MGC_VERDICT_PLATEAU);
		}
		break;
	case S_LEAK:
		if (xl < s->x_onset) {
			t.cls = MGC_VERDICT_STABLE;
			t.ok = BIT(MGC_VERDICT_STABLE);
			/* before a late leak: a plateau reached earlier may still be there */
			if (strcmp(s->name, "plateau-then-leak") == 0) {
				t.cls = MGC_VERDICT_GROWING;
				t.ok = BIT(MGC_VERDICT_GROWING) | BIT(MGC_VERDICT_PLATEAU);
				t.warmup = 1;
				if (xl >= 60 + 8 + 15) {
					t.cls = MGC_VERDICT_PLATEAU;
					t.ok = BIT(MGC_VERDICT_PLATEAU);
				}
			}
			break;
		}
		if (xl >= s->x_end) { /* fixed mid-run */
			if (xl >= s->x_pdec) {
				t.cls = MGC_VERDICT_PLATEAU;
				t.ok = BIT(MGC_VERDICT_PLATEAU);
			} else {
				t.ok = BIT(MGC_VERDICT_GROWING) | BIT(MGC_VERDICT_LEAK) | BIT(MGC_VERDICT_PLATEAU);
			}
			break;
		}
		/* growth since onset: until it is visible, the earlier verdict may stand */
		if (s->slope * (xl - s->x_onset) < 3 * s->sigma + 5 * s->slope)
			t.ok |= BIT(MGC_VERDICT_STABLE) | BIT(MGC_VERDICT_PLATEAU);
		t.ok |= BIT(MGC_VERDICT_LEAK);
		if (xl >= s->x_dec) {
			t.cls = MGC_VERDICT_LEAK;
			t.ok = BIT(MGC_VERDICT_LEAK);
		}
		break;
	}
	return t;
}

/* ---------------------------------------------------------------- running the classifier */

static int classify_prefix(const struct series *s, size_t len, struct mgc_fit *f)
{
	struct mgc_classify_opts o = {.limit = s->limit, .x_is_steps = 1};
	if (s->level == L_PROCESS)
		return mgc_classify_process(s->x, s->y, s->live, s->kept, len, &o, f);
	if (s->level == L_SITE) {
		uint64_t coh[MGC_COHORTS] = {0};
		double last = s->x[len - 1];
		/* survivors by birth step; the transient working set is born in the current step */
		for (size_t i = 0; i < len; i++) {
			double step = s->x[i];
			double born = s->site_leak_rate;
			if (s->site_warm_amp > 0)
				born += s->site_warm_amp / s->site_warm_tau * exp(-step / s->site_warm_tau);
			coh[mgc_cohort_bucket((uint64_t)step)] += (uint64_t)born;
		}
		coh[mgc_cohort_bucket((uint64_t)last)] += 4 * 1048576;
		struct mgc_site_evidence ev = {s->x, s->y, len, coh, MGC_COHORTS, last, 0, 0, 0};
		return mgc_classify_site(&ev, &o, f);
	}
	return mgc_classify(s->x, s->y, len, &o, f);
}

/* ---------------------------------------------------------------- scoring */

struct family_stats {
	const char *family;
	size_t prefixes, ok, flips, series;
	double lat_sum, lat_max;
	size_t lat_n, never;
};

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* Everything counted over the classic set. */
struct classic {
	size_t conf[NV][NV], ok_by_verdict[NV];
	size_t warm_prefixes, warm_false_leak, leak_dec, leak_hit, total, total_ok, flips;
	struct family_stats fam[32];
	size_t nfam;
	double *oom_err;
	size_t noom;
};

static struct family_stats *classic_family(struct classic *c, const char *family)
{
	for (size_t k = 0; k < c->nfam; k++)
		if (strcmp(c->fam[k].family, family) == 0)
			return &c->fam[k];
	if (c->nfam == sizeof(c->fam) / sizeof(c->fam[0]))
		return NULL;
	struct family_stats *fs = &c->fam[c->nfam++];
	memset(fs, 0, sizeof(*fs));
	fs->family = family;
	return fs;
}

/* OOM projection against the truth, for leaks past decidability with a projection. */
static void classic_oom(struct classic *c, const struct series *s, size_t len, const struct mgc_fit *f)
{
	int v = (int)f->verdict;
	if (s->shape != S_LEAK || s->level != L_SERIES || !isfinite(f->x_to_oom) || !(s->slope > 0) ||
	    s->x[len - 1] < s->x_dec || s->x[len - 1] >= s->x_end ||
	    (v != MGC_VERDICT_LEAK && v != MGC_VERDICT_GROWING))
		return;
	double lvl = 0; /* peak level (spikes included) over the last 10 points */
	for (size_t i = len - (len > 10 ? 10 : len); i < len; i++)
		lvl = s->y[i] > lvl ? s->y[i] : lvl;
	double truth_x = (s->limit - lvl) / s->slope;
	if (truth_x > 0 && c->noom < 200000)
		c->oom_err[c->noom++] = fabs(f->x_to_oom - truth_x) / truth_x;
}

/* Scores one prefix's verdict v against the truth; returns whether it was acceptable. */
static int classic_prefix(struct classic *c, struct family_stats *fs, const struct series *s, size_t len,
			  const struct mgc_fit *f)
{
	struct truth t = truth_of(s, len);
	int v = (int)f->verdict, ok = (t.ok & BIT(v)) != 0;
	c->conf[t.cls][v]++;
	c->ok_by_verdict[v] += ok;
	c->total++;
	c->total_ok += ok;
	fs->prefixes++;
	fs->ok += ok;
	if (t.warmup) {
		c->warm_prefixes++;
		c->warm_false_leak += v == MGC_VERDICT_LEAK && !ok;
	}
	if (t.cls == MGC_VERDICT_LEAK) {
		c->leak_dec++;
		c->leak_hit += v == MGC_VERDICT_LEAK;
	}
	classic_oom(c, s, len, f);
	return ok;
}

/* Latency: from the event that makes the final class true (leak onset, growth end) to the prefix
 * (length first_hold, 0 = never) from which the final class holds. */
static void classic_latency(struct family_stats *fs, const struct series *s, int final_cls, size_t first_hold)
{
	if (final_cls == MGC_VERDICT_GROWING)
		return;
	if (!first_hold) {
		fs->never++;
		return;
	}
	double ev = final_cls == MGC_VERDICT_PLATEAU ? s->x_end : final_cls == MGC_VERDICT_LEAK ? s->x_onset : s->x[0];
	double lat = fmax(0, s->x[first_hold - 1] - ev);
	fs->lat_sum += lat;
	fs->lat_n++;
	fs->lat_max = fmax(fs->lat_max, lat);
}

/* Every stride-th prefix of one series; returns 0, or 1 when the classifier failed. */
static int classic_series(struct classic *c, const struct series *s, size_t stride, int verbose)
{
	struct family_stats *fs = classic_family(c, s->family);
	if (!fs)
		return 1;
	fs->series++;
	int prev = -1, final_cls = truth_of(s, s->n).cls;
	size_t first_hold = 0; /* prefix length from which the final class holds */
	size_t minp = s->n < MIN_PREFIX ? 2 : MIN_PREFIX;
	for (size_t len = minp; len <= s->n; len += (len + stride <= s->n || len == s->n) ? stride : s->n - len) {
		struct mgc_fit f;
		int rc = classify_prefix(s, len, &f);
		if (rc) {
			fprintf(stderr, "%s: prefix %zu: classifier returned %d\n", s->name, len, rc);
			return 1;
		}
		int v = (int)f.verdict, ok = classic_prefix(c, fs, s, len, &f);
		if (prev >= 0 && v != prev) {
			fs->flips++;
			c->flips++;
		}
		if (v != final_cls)
			first_hold = 0;
		else if (!first_hold)
			first_hold = len;
		prev = v;
		if (verbose > 1 || (verbose && (len == s->n || (len % 25) == 0 || !ok)))
			printf("  %-22s len %3zu x %6g truth %-8s verdict %-9s %s%s\n", s->name, len, s->x[len - 1],
			       mgc_verdict_name(truth_of(s, len).cls), mgc_verdict_name(f.verdict), ok ? "" : "WRONG ",
			       f.why);
	}
	classic_latency(fs, s, final_cls, first_hold);
	return 0;
}

static void classic_print_families(const struct classic *c)
{
	printf("per family            series prefixes  acceptable  flips  latency mean/max (x)  never\n");
	for (size_t k = 0; k < c->nfam; k++) {
		const struct family_stats *fs = &c->fam[k];
		printf("  %-20s %5zu %8zu   %6.1f%%   %5zu  ", fs->family, fs->series, fs->prefixes,
		       100.0 * (double)fs->ok / (double)fs->prefixes, fs->flips);
		if (fs->lat_n)
			printf("%8.1f / %-8.0f    %5zu\n", fs->lat_sum / (double)fs->lat_n, fs->lat_max, fs->never);
		else
			printf("%8s / %-8s    %5zu\n", "-", "-", fs->never);
	}
}

static void classic_print_confusion(const struct classic *c)
{
	printf("\nconfusion matrix (rows: truth, 'growing' = not yet decidable; columns: verdict)\n");
	printf("  %-10s", "");
	for (int v = 0; v < NV; v++)
		printf("%10s", mgc_verdict_name((enum mgc_verdict)v));
	printf("\n");
	for (int t = 0; t < NV; t++) {
		printf("  %-10s", mgc_verdict_name((enum mgc_verdict)t));
		for (int v = 0; v < NV; v++)
			printf("%10zu", c->conf[t][v]);
		printf("\n");
	}
	printf("\nper class (decidable truth rows; precision counts a verdict right when acceptable)\n");
	for (int k = 0; k < NV; k++) {
		size_t tp = c->conf[k][k], row = 0, col = 0;
		for (int j = 0; j < NV; j++) {
			row += c->conf[k][j];
			col += c->conf[j][k];
		}
		printf("  %-10s precision %6.1f%%  recall %6.1f%%  (%zu truth, %zu verdicts)\n",
		       mgc_verdict_name((enum mgc_verdict)k),
		       col ? 100.0 * (double)c->ok_by_verdict[k] / (double)col : 100.0,
		       row ? 100.0 * (double)tp / (double)row : 100.0, row, col);
	}
}

/* The overall figures and the targets; returns 1 when a target is missed. */
static int classic_print_targets(struct classic *c, size_t nseries)
{
	double false_leak = c->warm_prefixes ? (double)c->warm_false_leak / (double)c->warm_prefixes : 0;
	double recall = c->leak_dec ? (double)c->leak_hit / (double)c->leak_dec : 1;
	qsort(c->oom_err, c->noom, sizeof(double), cmp_d);
	printf("\nacceptable verdicts overall: %.1f%% of %zu prefixes; verdict flips: %zu over %zu series\n",
	       100.0 * (double)c->total_ok / (double)c->total, c->total, c->flips, nseries);
	printf("OOM projection error (leaks once decidable, %zu prefixes): median %.1f%%, p90 %.1f%%\n", c->noom,
	       c->noom ? 100 * c->oom_err[c->noom / 2] : 0.0, c->noom ? 100 * c->oom_err[c->noom * 9 / 10] : 0.0);
	printf("\ntargets\n");
	printf("  false leak on warmups: %.2f%% of %zu prefixes (target < 1%%)  %s\n", 100 * false_leak,
	       c->warm_prefixes, false_leak < 0.01 ? "ok" : "MISSED");
	printf("  leak recall once decidable: %.2f%% of %zu prefixes (target > 97%%)  %s\n", 100 * recall,
	       c->leak_dec, recall > 0.97 ? "ok" : "MISSED");
	return !(false_leak < 0.01) || !(recall > 0.97);
}

int classic_run(int verbose, size_t stride, const char *only)
{
	struct evalset es = {calloc(128, sizeof(struct series)), 0, 128};
	struct classic *c = calloc(1, sizeof(*c));
	double *oom_err = malloc(200000 * sizeof(double));
	int failed = !es.v || !c || !oom_err;
	if (!failed) {
		c->oom_err = oom_err;
		build_set(&es);
	}
	clock_t c0 = clock();
	for (size_t si = 0; si < es.n && !failed; si++)
		if (!only || strstr(es.v[si].name, only) || strstr(es.v[si].family, only))
			failed = classic_series(c, &es.v[si], stride, verbose);
	if (!failed) {
		printf("mg classifier evaluation: %zu series, %zu prefixes scored (min length %d), %.2f s CPU\n\n",
		       es.n, c->total, MIN_PREFIX, (double)(clock() - c0) / CLOCKS_PER_SEC);
		classic_print_families(c);
		classic_print_confusion(c);
		failed = classic_print_targets(c, es.n);
	}
	free(oom_err);
	free(c);
	free(es.v);
	return failed ? 1 : 0;
}
