/* SPDX-License-Identifier: MIT */
/* mgc_stats.c: the classifier's statistics and fits (contracts in mgc_stats.h). Pure computation:
 * no I/O, no globals; only the public entry points allocate, and none ever aborts. */
#include "mgc_stats.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

enum {
	MGC_BINSEG_MAX = 32, /* change points binary segmentation can return */
	MGC_TAU_GRID = 40,   /* saturating-exponential time constants tried */
};
static const double MGC_PROFILE_CHI2 = 6.635; /* chi^2(1) at 99%: the tau confidence set */

/* ---------------------------------------------------------------- order statistics */

/* k-th smallest (0-based) of a[0..n), reordering a. Hoare quickselect, median-of-three pivot. */
double mgc_kth(double *a, size_t n, size_t k)
{
	size_t lo = 0, hi = n - 1;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		double p0 = a[lo], p1 = a[mid], p2 = a[hi];
		double pivot = p0 < p1 ? (p1 < p2 ? p1 : (p0 < p2 ? p2 : p0)) : (p0 < p2 ? p0 : (p1 < p2 ? p2 : p1));
		size_t i = lo, j = hi;
		while (i <= j) {
			while (a[i] < pivot)
				i++;
			while (a[j] > pivot)
				j--;
			if (i <= j) {
				double t = a[i];
				a[i] = a[j];
				a[j] = t;
				i++;
				if (j == 0)
					break;
				j--;
			}
		}
		if (k <= j)
			hi = j;
		else if (k >= i)
			lo = i;
		else
			return a[k];
	}
	return a[k];
}

/* Median of a[0..n), reordering a; NAN for n == 0. */
double mgc_median_inplace(double *a, size_t n)
{
	if (n == 0)
		return NAN;
	double hi = mgc_kth(a, n, n / 2);
	if (n & 1)
		return hi;
	double lo = a[0];
	for (size_t i = 1; i < n / 2; i++) /* after selection a[0..n/2) holds the smaller half */
		if (a[i] > lo)
			lo = a[i];
	return 0.5 * (lo + hi);
}

double mgc_median_copy(const double *v, size_t n, double *scratch)
{
	memcpy(scratch, v, n * sizeof(double));
	return mgc_median_inplace(scratch, n);
}

double mgc_mad_scratch(const double *v, size_t n, double *scratch)
{
	if (n == 0)
		return NAN;
	double med = mgc_median_copy(v, n, scratch);
	for (size_t i = 0; i < n; i++)
		scratch[i] = fabs(v[i] - med);
	return mgc_median_inplace(scratch, n);
}

/* sigma = 1.4826 MAD(dy)/sqrt(2); scratch holds 2n doubles. */
double mgc_noise_scratch(const double *y, size_t n, double *scratch)
{
	if (n < 3)
		return 0;
	double *d = scratch + n;
	for (size_t i = 0; i + 1 < n; i++)
		d[i] = y[i + 1] - y[i];
	return 1.4826 * mgc_mad_scratch(d, n - 1, scratch) / sqrt(2.0);
}

double mgc_mad(const double *v, size_t n)
{
	if (!v || n == 0)
		return NAN;
	double *s = malloc(n * sizeof(double));
	if (!s)
		return NAN;
	double r = mgc_mad_scratch(v, n, s);
	free(s);
	return r;
}

double mgc_noise_sigma(const double *y, size_t n)
{
	if (!y || n < 3)
		return 0;
	double *s = malloc(2 * n * sizeof(double));
	if (!s)
		return NAN;
	double r = mgc_noise_scratch(y, n, s);
	free(s);
	return r;
}

/* ---------------------------------------------------------------- Theil-Sen and Mann-Kendall */

static int mgc_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* Trend of n points; `pairs` holds n(n-1)/2 doubles, `scratch` n doubles. `var_infl` >= 1
 * multiplies Var S for the interval (autocorrelation); the reported var_s is the plain one. */
void mgc_trend_core(const double *x, const double *y, size_t n, double z, double var_infl,
		    double *pairs, double *scratch, struct mgc_trend *t)
{
	size_t np = 0;
	double s = 0;
	if (n < 2) { /* no pair: no trend */
		memset(t, 0, sizeof(*t));
		t->intercept = n ? y[0] : 0;
		return;
	}
	for (size_t i = 0; i < n; i++)
		for (size_t j = i + 1; j < n; j++) {
			double dy = y[j] - y[i];
			s += (dy > 0) - (dy < 0);
			pairs[np++] = dy / (x[j] - x[i]);
		}
	/* tie groups of y */
	memcpy(scratch, y, n * sizeof(double));
	qsort(scratch, n, sizeof(double), mgc_cmp_double);
	double dn = (double)n, ties = 0;
	for (size_t i = 0; i < n;) {
		size_t k = i + 1;
		while (k < n && scratch[k] == scratch[i])
			k++;
		double tg = (double)(k - i);
		ties += tg * (tg - 1) * (2 * tg + 5);
		i = k;
	}
	double var = (dn * (dn - 1) * (2 * dn + 5) - ties) / 18.0;
	t->s = s;
	t->var_s = var;
	t->z = (s == 0 || var <= 0) ? 0 : (s - (s > 0 ? 1 : -1)) / sqrt(var);
	double dnp = (double)np;
	double c = z * sqrt(var * var_infl);
	double m1 = floor((dnp - c) / 2 + 0.5), m2 = floor((dnp + c) / 2 + 1 + 0.5);
	if (m1 < 1)
		m1 = 1;
	if (m2 > dnp)
		m2 = dnp;
	if (m1 > dnp)
		m1 = dnp;
	if (m2 < 1)
		m2 = 1;
	t->slope = mgc_median_inplace(pairs, np);
	t->slope_lo = mgc_kth(pairs, np, (size_t)m1 - 1);
	t->slope_hi = mgc_kth(pairs, np, (size_t)m2 - 1);
	for (size_t i = 0; i < n; i++)
		scratch[i] = y[i] - t->slope * x[i];
	t->intercept = mgc_median_inplace(scratch, n);
}

int mgc_trend(const double *x, const double *y, size_t n, double z, struct mgc_trend *out)
{
	if (!x || !y || !out || n < 2 || !(z >= 0))
		return -EINVAL;
	double *pairs = malloc((n * (n - 1) / 2 + n) * sizeof(double));
	if (!pairs)
		return -ENOMEM;
	mgc_trend_core(x, y, n, z, 1.0, pairs, pairs + n * (n - 1) / 2, out);
	free(pairs);
	return 0;
}

/* ---------------------------------------------------------------- least squares on prefix sums */

void mgc_sums_fill(struct mgc_sums *p, const double *t, const double *y, size_t n)
{
	p->t[0] = p->tt[0] = p->y[0] = p->ty[0] = p->yy[0] = 0;
	for (size_t i = 0; i < n; i++) {
		p->t[i + 1] = p->t[i] + t[i];
		p->tt[i + 1] = p->tt[i] + t[i] * t[i];
		p->y[i + 1] = p->y[i] + y[i];
		p->ty[i + 1] = p->ty[i] + t[i] * y[i];
		p->yy[i + 1] = p->yy[i] + y[i] * y[i];
	}
}

/* Residual sum of squares of the least-squares line over points [a, b). */
double mgc_sums_rss(const struct mgc_sums *p, size_t a, size_t b)
{
	double k = (double)(b - a);
	if (b <= a + 1)
		return 0;
	double st = p->t[b] - p->t[a], sy = p->y[b] - p->y[a];
	double stt = p->tt[b] - p->tt[a] - st * st / k;
	double sty = p->ty[b] - p->ty[a] - st * sy / k;
	double syy = p->yy[b] - p->yy[a] - sy * sy / k;
	double rss = stt > 0 ? syy - sty * sty / stt : syy;
	return rss > 0 ? rss : 0;
}

/* ---------------------------------------------------------------- change points */

size_t mgc_binseg(const struct mgc_sums *p, size_t n, double beta, size_t lmin, size_t max_cp,
		  size_t *cp)
{
	size_t ncp = 0;
	size_t bounds[MGC_BINSEG_MAX + 2] = {0, n};
	size_t nb = 2;
	if (max_cp > MGC_BINSEG_MAX)
		max_cp = MGC_BINSEG_MAX;
	while (ncp < max_cp) {
		double best_gain = beta;
		size_t best_at = 0, best_seg = 0;
		for (size_t s = 0; s + 1 < nb; s++) {
			size_t a = bounds[s], b = bounds[s + 1];
			if (b - a < 2 * lmin)
				continue;
			double whole = mgc_sums_rss(p, a, b);
			for (size_t c = a + lmin; c + lmin <= b; c++) {
				double g = whole - mgc_sums_rss(p, a, c) - mgc_sums_rss(p, c, b);
				if (g > best_gain) {
					best_gain = g;
					best_at = c;
					best_seg = s;
				}
			}
		}
		if (!best_at)
			break;
		memmove(bounds + best_seg + 2, bounds + best_seg + 1, (nb - best_seg - 1) * sizeof(size_t));
		bounds[best_seg + 1] = best_at;
		nb++;
		ncp++;
	}
	for (size_t i = 0; i < ncp; i++)
		cp[i] = bounds[i + 1];
	return ncp;
}

/* ---------------------------------------------------------------- model fits */

/* y = a + b f over n points; returns RSS and writes a, b. */
double mgc_fit2(const double *f, const double *y, size_t n, double *a, double *b)
{
	double sf = 0, sy = 0;
	for (size_t i = 0; i < n; i++) {
		sf += f[i];
		sy += y[i];
	}
	double mf = sf / (double)n, my = sy / (double)n, sff = 0, sfy = 0, syy = 0;
	for (size_t i = 0; i < n; i++) {
		double df = f[i] - mf, dy = y[i] - my;
		sff += df * df;
		sfy += df * dy;
		syy += dy * dy;
	}
	*b = sff > 0 ? sfy / sff : 0;
	*a = my - *b * mf;
	double rss = sff > 0 ? syy - sfy * sfy / sff : syy;
	return rss > 0 ? rss : 0;
}

void mgc_exp_profile(const double *x, const double *y, size_t n, double sigma2, double *f,
		     struct mgc_expfit *e)
{
	double span = x[n - 1] - x[0];
	double rss[MGC_TAU_GRID], lev[MGC_TAU_GRID], tau[MGC_TAU_GRID];
	double a, b;
	for (size_t i = 0; i < n; i++)
		f[i] = (x[i] - x[0]) / span;
	e->rss_lin = mgc_fit2(f, y, n, &a, &b);
	e->rss_min = e->rss_lin;
	e->tau_hat = INFINITY;
	e->level_hat = INFINITY;
	for (int g = 0; g < MGC_TAU_GRID; g++) {
		/* tau from span/20 to 100 span */
		tau[g] = span * 0.05 * pow(2000.0, (double)g / (MGC_TAU_GRID - 1));
		double r = span / tau[g];
		for (size_t i = 0; i < n; i++)
			f[i] = -expm1(-(x[i] - x[0]) / tau[g]) / r; /* -> t/span as tau grows */
		rss[g] = mgc_fit2(f, y, n, &a, &b);
		if (b <= 0) { /* not saturating from below: the model degenerates to a constant */
			lev[g] = INFINITY;
			rss[g] = INFINITY;
			continue;
		}
		lev[g] = a + b / r;
		if (rss[g] < e->rss_min) {
			e->rss_min = rss[g];
			e->tau_hat = tau[g];
			e->level_hat = lev[g];
		}
	}
	double thr = e->rss_min + MGC_PROFILE_CHI2 * sigma2;
	e->tau_lo = INFINITY;
	e->level_lo = INFINITY;
	int top_in = e->rss_lin <= thr;
	for (int g = 0; g < MGC_TAU_GRID; g++) {
		if (rss[g] > thr)
			continue;
		if (tau[g] < e->tau_lo)
			e->tau_lo = tau[g];
		if (lev[g] < e->level_lo)
			e->level_lo = lev[g];
		if (g == MGC_TAU_GRID - 1)
			top_in = 1;
	}
	e->identified = !top_in && isfinite(e->tau_hat);
}

/* Linear then flat, y = a + b min(t, psi), psi over the points of [0, n). Returns the best psi's
 * index (the last rising point) and writes the RSS gain over a straight line. */
size_t mgc_hinge(const double *t, size_t n, const struct mgc_sums *p, double *rss_out)
{
	size_t best = n - 1;
	double best_rss = mgc_sums_rss(p, 0, n);
	double ny = p->y[n];
	for (size_t k = 1; k + 2 < n; k++) {
		double psi = t[k], after = (double)(n - k - 1);
		double su = p->t[k + 1] + psi * after;
		double suu = p->tt[k + 1] + psi * psi * after;
		double suy = p->ty[k + 1] + psi * (ny - p->y[k + 1]);
		double dn = (double)n;
		double suc = suu - su * su / dn, suyc = suy - su * ny / dn;
		double syy = p->yy[n] - ny * ny / dn;
		double rss = suc > 0 ? syy - suyc * suyc / suc : syy;
		if (rss < best_rss) {
			best_rss = rss;
			best = k;
		}
	}
	*rss_out = best_rss;
	return best;
}

