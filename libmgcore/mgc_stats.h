/* SPDX-License-Identifier: MIT */
/* mgc_stats.h: the robust statistics and model fits the growth classifier is built from (order
 * statistics, noise, Theil-Sen with Mann-Kendall, least squares on prefix sums, binary
 * segmentation, a saturating-exponential profile, a linear-then-flat hinge). Pure functions on the
 * caller's arrays: no I/O, no globals, thread-safe; the public ones allocate their own scratch,
 * the internal ones (used by mgc_classify.c) take it from the caller and never allocate. */
#ifndef MGC_STATS_H
#define MGC_STATS_H

#include <stddef.h>

/* ---- public: exported for tests and for tools that want the raw numbers ---- */

struct mgc_trend {
	double slope;      /* Theil-Sen: median of the pairwise slopes (y_j - y_i)/(x_j - x_i) */
	double slope_lo;   /* rank confidence interval: slopes number (N - C)/2 and (N + C)/2 + 1 */
	double slope_hi;   /*   (1-based, rounded) of the N sorted ones, C = z * sqrt(var_s) */
	double intercept;  /* median of y_i - slope * x_i */
	double s;          /* Mann-Kendall S = sum over i < j of sgn(y_j - y_i) */
	double var_s;      /* Var S with the tie correction (no autocorrelation correction) */
	double z;          /* (S - sgn S)/sqrt(var_s); 0 when S == 0 */
};

/* Theil-Sen slope with its rank-based interval at normal quantile `z` (1.96 for 95%) and the
 * Mann-Kendall statistic of (x[i], y[i]), i < n, x strictly increasing. O(n^2) time; allocates
 * n(n-1)/2 doubles. Returns 0, -EINVAL (n < 2, NULL) or -ENOMEM. */
int mgc_trend(const double *x, const double *y, size_t n, double z, struct mgc_trend *out);

/* Median absolute deviation from the median (unscaled) of v[0..n); NAN for n == 0 or no memory. */
double mgc_mad(const double *v, size_t n);

/* Step-to-step noise: 1.4826 * MAD(first differences) / sqrt(2); 0 for n < 3, NAN for no memory. */
double mgc_noise_sigma(const double *y, size_t n);

/* ---- internal to libmgcore: scratch from the caller ---- */

/* k-th smallest (0-based) of a[0..n), reordering a. */
double mgc_kth(double *a, size_t n, size_t k);
/* Median of a[0..n) reordering a, or of v[0..n) through scratch[n]; NAN for n == 0. */
double mgc_median_inplace(double *a, size_t n);
double mgc_median_copy(const double *v, size_t n, double *scratch);
/* Unscaled MAD of v[0..n) through scratch[n]. */
double mgc_mad_scratch(const double *v, size_t n, double *scratch);
/* mgc_noise_sigma through scratch[2n]. */
double mgc_noise_scratch(const double *y, size_t n, double *scratch);

/* Trend of n points; `pairs` holds n(n-1)/2 doubles, `scratch` n. `var_infl` >= 1 multiplies
 * Var S for the interval (autocorrelation); the reported var_s is the plain one. */
void mgc_trend_core(const double *x, const double *y, size_t n, double z, double var_infl,
		    double *pairs, double *scratch, struct mgc_trend *t);

/* Prefix sums of t, t^2, y, t*y, y^2 (t and y centred and scaled by the caller), n + 1 each. */
struct mgc_sums {
	double *t, *tt, *y, *ty, *yy;
};
void mgc_sums_fill(struct mgc_sums *p, const double *t, const double *y, size_t n);
/* Residual sum of squares of the least-squares line over points [a, b). */
double mgc_sums_rss(const struct mgc_sums *p, size_t a, size_t b);

/* Binary segmentation with a per-segment linear cost and penalty `beta`, segments of at least
 * `lmin` points, at most `max_cp` (<= 32) change points, written sorted into cp[] (each the index
 * of the first point of a new segment). Returns their number. */
size_t mgc_binseg(const struct mgc_sums *p, size_t n, double beta, size_t lmin, size_t max_cp,
		  size_t *cp);

/* y = a + b f over n points; returns the RSS and writes a, b. */
double mgc_fit2(const double *f, const double *y, size_t n, double *a, double *b);

/* The saturating exponential A - B exp(-t/tau), profiled over a log grid of tau from span/20 to
 * 100 span, on points with t = x - x[0] >= 0 (one rising stretch). */
struct mgc_expfit {
	double rss_min;   /* best RSS over the grid and the straight line */
	double rss_lin;   /* straight line (tau -> infinity) */
	double tau_hat;   /* best tau; INFINITY when the line is best */
	double tau_lo;    /* smallest tau in the 99% profile-likelihood set */
	double level_lo;  /* lowest asymptote A in that set; INFINITY if none finite */
	double level_hat; /* asymptote of the best fit; INFINITY when the line is best */
	int identified;   /* the set stays below the top of the grid and excludes the line */
};
/* f: scratch of n doubles; sigma2: the noise variance the likelihood uses. */
void mgc_exp_profile(const double *x, const double *y, size_t n, double sigma2, double *f,
		     struct mgc_expfit *e);

/* Linear then flat, y = a + b min(t, psi), psi over the points of [0, n) (prefix sums of t, y in
 * p). Returns the best psi's index (the last rising point) and writes its RSS. */
size_t mgc_hinge(const double *t, size_t n, const struct mgc_sums *p, double *rss_out);

#endif /* MGC_STATS_H */
