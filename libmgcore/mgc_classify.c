/* SPDX-License-Identifier: MIT */
/* mgc_classify.c: the growth classifier (contract in mgc_classify.h, method in docs/CLASSIFIER.md).
 * Pure computation on the caller's arrays: no I/O, no globals, bounded time (inputs are binned to at
 * most 1024 points), and it must never give a confident verdict the evidence cannot support. */
#include "mgc_classify.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mgc_format.h"

/* Sizes and thresholds. Each is explained in docs/CLASSIFIER.md. */
enum {
	MGC_MAX_POINTS = 1024, /* above this the input is binned ... */
	MGC_BIN_POINTS = 512,  /* ... into this many medians */
	MGC_TS_CAP = 256,      /* Theil-Sen runs on at most this many (binned) points */
	MGC_MAX_CP = 6,        /* change points kept */
	MGC_LMIN = 5,          /* shortest segment between change points, in points */
	MGC_MIN_PLATEAU = 5,   /* flat points after the change needed to call a plateau */
	MGC_LEAK_MIN = 20,     /* rising points after the last change needed to call a leak */
	MGC_TAU_GRID = 40,     /* saturating-exponential time constants tried */
	MGC_MIN_PERIODS = 3,   /* a periodic series needs this many periods */
};
static const double MGC_Z95 = 1.959964;
static const double MGC_PROFILE_CHI2 = 6.635; /* chi^2(1) at 99%: the tau confidence set */
static const double MGC_LEAK_K = 10.0;        /* leak: data excludes warmups with tau < K * span */
static const double MGC_LEAK_K_LIMIT = 3.0;   /* ... or tau < K * span and every plateau > limit */
static const double MGC_CP_PENALTY = 3.0;     /* change point penalty, times ln n */

/* ---------------------------------------------------------------- order statistics */

/* k-th smallest (0-based) of a[0..n), reordering a. Hoare quickselect, median-of-three pivot. */
static double mgc_kth(double *a, size_t n, size_t k)
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
static double mgc_median_inplace(double *a, size_t n)
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

static double mgc_median_copy(const double *v, size_t n, double *scratch)
{
	memcpy(scratch, v, n * sizeof(double));
	return mgc_median_inplace(scratch, n);
}

static double mgc_mad_scratch(const double *v, size_t n, double *scratch)
{
	if (n == 0)
		return NAN;
	double med = mgc_median_copy(v, n, scratch);
	for (size_t i = 0; i < n; i++)
		scratch[i] = fabs(v[i] - med);
	return mgc_median_inplace(scratch, n);
}

/* sigma = 1.4826 MAD(dy)/sqrt(2); scratch holds 2n doubles. */
static double mgc_noise_scratch(const double *y, size_t n, double *scratch)
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
static void mgc_trend_core(const double *x, const double *y, size_t n, double z, double var_infl,
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

/* Prefix sums of t, t^2, y, t*y, y^2 (t and y already centred and scaled by the caller). */
struct mgc_sums {
	double *t, *tt, *y, *ty, *yy; /* n + 1 each */
};

static void mgc_sums_fill(struct mgc_sums *p, const double *t, const double *y, size_t n)
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
static double mgc_sums_rss(const struct mgc_sums *p, size_t a, size_t b)
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

/* Binary segmentation with a per-segment linear cost (in units of sigma^2) and penalty `beta`.
 * Writes the change points (index of the first point of each new segment) sorted into cp[] and
 * returns their number. Segments are at least MGC_LMIN points long. */
static size_t mgc_binseg(const struct mgc_sums *p, size_t n, double beta, size_t *cp)
{
	size_t ncp = 0;
	size_t bounds[MGC_MAX_CP + 2] = {0, n};
	size_t nb = 2;
	while (ncp < MGC_MAX_CP) {
		double best_gain = beta;
		size_t best_at = 0, best_seg = 0;
		for (size_t s = 0; s + 1 < nb; s++) {
			size_t a = bounds[s], b = bounds[s + 1];
			if (b - a < 2 * MGC_LMIN)
				continue;
			double whole = mgc_sums_rss(p, a, b);
			for (size_t c = a + MGC_LMIN; c + MGC_LMIN <= b; c++) {
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
static double mgc_fit2(const double *f, const double *y, size_t n, double *a, double *b)
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

/* The saturating exponential A - B exp(-t/tau) profiled over a log grid of tau, on points with
 * t = x - x[0] >= 0 (one rising segment). */
struct mgc_expfit {
	double rss_min;   /* best RSS over the grid and the straight line */
	double rss_lin;   /* straight line (tau -> infinity) */
	double tau_hat;   /* best tau; INFINITY when the line is best */
	double tau_lo;    /* smallest tau in the confidence set */
	double level_lo;  /* lowest asymptote A in the confidence set; INFINITY if none finite */
	double level_hat; /* asymptote of the best fit; INFINITY when the line is best */
	int identified;   /* the confidence set stays below the top of the grid and excludes the line */
};

static void mgc_exp_profile(const double *x, const double *y, size_t n, double sigma2, double *f,
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
static size_t mgc_hinge(const double *t, const double *y, size_t n, const struct mgc_sums *p,
			double *rss_out)
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
	(void)y;
	*rss_out = best_rss;
	return best;
}

/* ---------------------------------------------------------------- the decision */

struct mgc_work {
	double *pairs;   /* MGC_TS_CAP^2/2 */
	double *s1, *s2; /* n each (2n for s1: noise scratch) */
	double *t, *yn;  /* n each: normalized copies */
	double *bx, *by; /* MGC_TS_CAP each: binned segment for Theil-Sen */
	struct mgc_sums sums;
	double *hx, *hy; /* n each */
};

static void mgc_why(struct mgc_fit *out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void mgc_why(struct mgc_fit *out, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(out->why, sizeof(out->why), fmt, ap);
	va_end(ap);
}

/* Human-readable size into buf. */
static const char *mgc_bytes(double v, char *buf, size_t len)
{
	const char *u[] = {"B", "KiB", "MiB", "GiB", "TiB"};
	int i = 0;
	double a = fabs(v);
	while (a >= 1024 && i < 4) {
		a /= 1024;
		v /= 1024;
		i++;
	}
	snprintf(buf, len, a >= 100 || i == 0 ? "%.0f %s" : "%.1f %s", v, u[i]);
	return buf;
}

/* Trend of points [a, b), binned to at most MGC_TS_CAP medians, with the lag-1 autocorrelation
 * correction of the interval. Also returns the robust residual scale around the line. */
static void mgc_seg_trend(const double *x, const double *y, size_t a, size_t b, struct mgc_work *w,
			  struct mgc_trend *tr, double *resid_sigma)
{
	size_t m = b - a;
	const double *sx = x + a, *sy = y + a;
	size_t k = m;
	if (m > MGC_TS_CAP) {
		size_t per = (m + MGC_TS_CAP - 1) / MGC_TS_CAP;
		k = 0;
		for (size_t i = 0; i < m; i += per) {
			size_t e = i + per < m ? i + per : m;
			double mx = 0;
			for (size_t j = i; j < e; j++)
				mx += sx[j];
			w->bx[k] = mx / (double)(e - i);
			w->by[k] = mgc_median_copy(sy + i, e - i, w->s2);
			k++;
		}
		sx = w->bx;
		sy = w->by;
	}
	/* residual autocorrelation from an ordinary line, for the variance inflation */
	double infl = 1.0;
	mgc_trend_core(sx, sy, k, MGC_Z95, 1.0, w->pairs, w->s2, tr);
	double num = 0, den = 0;
	for (size_t i = 0; i < k; i++) {
		double r = sy[i] - tr->intercept - tr->slope * sx[i];
		w->s1[i] = r;
		den += r * r;
		if (i)
			num += r * w->s1[i - 1];
	}
	double rho = den > 0 ? num / den : 0;
	if (rho > 2.0 / sqrt((double)k)) { /* significant positive autocorrelation */
		if (rho > 0.9)
			rho = 0.9;
		infl = (1 + rho) / (1 - rho);
		mgc_trend_core(sx, sy, k, MGC_Z95, infl, w->pairs, w->s2, tr);
	}
	*resid_sigma = 1.4826 * mgc_mad_scratch(w->s1, k, w->s2) * (k < m ? sqrt((double)(m / k)) : 1.0);
}

struct mgc_core_in {
	const double *x, *y;
	size_t n;
	double delta_abs; /* smallest meaningful slope, absolute */
	double rel;       /* ... and relative to the level, per x unit */
	double limit;
	double horizon;   /* longest plausible warmup, x units */
};

static double mgc_dx_median(const double *x, size_t n, double *scratch)
{
	if (n < 2)
		return 1;
	for (size_t i = 0; i + 1 < n; i++)
		scratch[i] = x[i + 1] - x[i];
	return mgc_median_copy(scratch, n - 1, scratch + n);
}

static void mgc_decide(const struct mgc_core_in *in, struct mgc_work *w, struct mgc_fit *out);

/* Judges a reduced series in place of the one in x, y (which in points at and which it
 * overwrites): the k points mx, my (a floor under spikes, or the points left after setting spikes
 * aside, in w's scratch), with spikes every period_x. */
static void decide_reduced(struct mgc_core_in *in, struct mgc_work *w, double *x, double *y,
			   const double *mx, const double *my, size_t k, double period_x, struct mgc_fit *out)
{
	memcpy(w->hy, my, k * sizeof(double));
	memcpy(x, mx, k * sizeof(double));
	memcpy(y, w->hy, k * sizeof(double));
	in->n = k;
	mgc_decide(in, w, out);
	out->period = period_x;
}

/* The core decision on a non-periodic series (see docs/CLASSIFIER.md, "Decision"). */
static void mgc_decide(const struct mgc_core_in *in, struct mgc_work *w, struct mgc_fit *out)
{
	const double *x = in->x, *y = in->y;
	size_t n = in->n;
	char b1[32], b2[32];
	double dx = mgc_dx_median(x, n, w->s1);

	double med_level = mgc_median_copy(y, n, w->s1);
	double sigma = mgc_noise_scratch(y, n, w->s1);
	double floor_sigma = fmax(1.0, 1e-9 * fabs(med_level));
	if (!(sigma > floor_sigma))
		sigma = floor_sigma;
	out->noise = sigma;

	/* change points, in units of sigma; a second pass at the residual scale when the first one
	 * finds the series wandering more than its step noise (autocorrelated noise) */
	size_t cp[MGC_MAX_CP] = {0}, ncp = 0;
	if (n >= 2 * MGC_LMIN) {
		double span = x[n - 1] - x[0];
		double sig_cp = sigma;
		for (int pass = 0; pass < 2; pass++) {
			for (size_t i = 0; i < n; i++) {
				w->t[i] = (x[i] - x[0]) / span;
				w->yn[i] = (y[i] - med_level) / sig_cp;
			}
			mgc_sums_fill(&w->sums, w->t, w->yn, n);
			ncp = mgc_binseg(&w->sums, n, MGC_CP_PENALTY * log((double)n), cp);
			if (pass == 1)
				break;
			/* robust residual scale over the segments */
			size_t a = 0;
			for (size_t s = 0; s <= ncp; s++) {
				size_t b = s < ncp ? cp[s] : n;
				struct mgc_trend tr;
				double rs;
				mgc_seg_trend(x, y, a, b, w, &tr, &rs);
				for (size_t i = a; i < b; i++)
					w->hy[i] = y[i] - tr.intercept - tr.slope * x[i];
				a = b;
			}
			double rsig = 1.4826 * mgc_mad_scratch(w->hy, n, w->s1);
			if (!(rsig > 1.5 * sigma))
				break;
			sig_cp = rsig;
		}
	}
	/* Trailing change points between two flat stretches at nearly the same level (a prefetch
	 * queue draining at the end of a run, a cache trimmed once) do not start a new regime: merge
	 * them, so a long plateau is not judged on its last few points. */
	if (ncp >= 1) {
		double ymin = y[0], ymax = y[0];
		for (size_t i = 1; i < n; i++) {
			ymin = fmin(ymin, y[i]);
			ymax = fmax(ymax, y[i]);
		}
		double range = ymax - ymin;
		while (ncp >= 1 && range > 0) {
			size_t pa = ncp >= 2 ? cp[ncp - 2] : 0, pb = cp[ncp - 1];
			if (pb - pa < 4 || n - pb < 2)
				break;
			struct mgc_trend t1, t2;
			double r1, r2;
			mgc_seg_trend(x, y, pa, pb, w, &t1, &r1);
			mgc_seg_trend(x, y, pb, n, w, &t2, &r2);
			double l1 = mgc_median_copy(y + pa, pb - pa, w->s1);
			double l2 = mgc_median_copy(y + pb, n - pb, w->s1);
			double d1 = fabs(t1.slope) * (x[pb - 1] - x[pa]);
			double d2 = fabs(t2.slope) * (x[n - 1] - x[pb]);
			if (d1 > 0.04 * range || d2 > 0.04 * range || fabs(l1 - l2) > 0.05 * range)
				break;
			ncp--;
		}
	}
	size_t c = ncp ? cp[ncp - 1] : 0;
	size_t m = n - c;
	out->change_at = ncp ? x[c] : NAN;

	struct mgc_trend tr;
	double rsig;
	mgc_seg_trend(x, y, c, n, w, &tr, &rsig);
	double sig_lvl = fmax(sigma, rsig);
	out->slope = tr.slope;
	out->slope_lo = tr.slope_lo;
	out->slope_hi = tr.slope_hi;
	out->level = tr.intercept + tr.slope * x[n - 1];
	double level = out->level;
	/* the smallest growth that matters: the caller's floor, or a fraction of the level per x */
	double delta = fmax(in->delta_abs, in->rel * fabs(level));
	if (!(delta > 0))
		delta = 1e-12;
	/* where the run started: the first segment's line at x[0] (a ramp starts at its foot) */
	double base = mgc_median_copy(y, n < 5 ? n : 5, w->s1);
	if (ncp) {
		struct mgc_trend t0;
		double r0;
		mgc_seg_trend(x, y, 0, cp[0], w, &t0, &r0);
		base = t0.intercept + t0.slope * x[0];
	}
	double rise = level - base;
	double meaningful = fmax(3 * sig_lvl, 8 * delta * dx);

	if (in->limit > 0 && out->slope > 0) {
		double head = in->limit - fmax(level, y[n - 1]);
		out->x_to_oom = head > 0 ? head / out->slope : 0;
	}

	/* too little data: growing if rising, else stable */
	if (n < 8) {
		double s = n >= 2 ? (y[n - 1] - y[0]) / (x[n - 1] - x[0]) : 0;
		if (n >= 3 && s > delta && y[n - 1] - y[0] > 3 * sigma && tr.slope_lo > 0) {
			out->verdict = MGC_VERDICT_GROWING;
			out->confidence = 0.5;
			out->decidable_at = x[0] + 8 * dx;
			mgc_why(out, "only %zu points, rising %s per x unit; too few to tell a warmup from a leak",
				n, mgc_bytes(tr.slope, b1, sizeof b1));
		} else {
			out->verdict = MGC_VERDICT_STABLE;
			out->confidence = 0.5;
			out->x_to_oom = INFINITY;
			mgc_why(out, "only %zu points and no clear rise", n);
		}
		return;
	}

	int rising = tr.slope_lo > delta;
	int flat = tr.slope_hi < delta; /* flat or falling */
	if (!rising && !flat) {
		/* straddling: constant versus line on the recent segment by BIC */
		double rss_c = 0, mean = 0;
		for (size_t i = c; i < n; i++)
			mean += y[i];
		mean /= (double)m;
		for (size_t i = c; i < n; i++)
			rss_c += (y[i] - mean) * (y[i] - mean);
		for (size_t i = c; i < n; i++)
			w->hx[i - c] = x[i];
		double a0, b0;
		double rss_l = mgc_fit2(w->hx, y + c, m, &a0, &b0);
		double fl = sig_lvl * sig_lvl * (double)m;
		double bic_c = (double)m * log(fmax(rss_c, fl) / m) + log((double)m);
		double bic_l = (double)m * log(fmax(rss_l, fl) / m) + 2 * log((double)m);
		if (bic_c <= bic_l || tr.slope < 0.5 * delta)
			flat = 1;
	}

	/* a late rise at the very end reopens a flat verdict */
	if (flat && m >= 2 * MGC_LMIN + 2) {
		size_t k = MGC_LMIN + 1;
		struct mgc_trend tt;
		double rs2;
		mgc_seg_trend(x, y, n - k, n, w, &tt, &rs2);
		double seg_med = mgc_median_copy(y + c, m - k, w->s1);
		if (tt.slope_lo > delta && y[n - 1] - seg_med > 4 * sig_lvl) {
			out->verdict = MGC_VERDICT_GROWING;
			out->confidence = 0.6;
			out->slope = tt.slope;
			out->slope_lo = tt.slope_lo;
			out->slope_hi = tt.slope_hi;
			out->change_at = x[n - k];
			if (in->limit > 0 && tt.slope > 0) {
				double head = in->limit - y[n - 1];
				out->x_to_oom = head > 0 ? head / tt.slope : 0;
			}
			out->decidable_at = x[n - 1] + MGC_LEAK_MIN * dx;
			mgc_why(out, "flat until x=%g, rising again since (%s per x unit over the last %zu points)",
				x[n - k], mgc_bytes(tt.slope, b1, sizeof b1), k);
			return;
		}
	}

	if (flat) {
		out->x_to_oom = INFINITY;
		if (c == 0 || rise < meaningful) {
			out->verdict = MGC_VERDICT_STABLE;
			out->confidence = tr.slope_hi < delta ? 0.95 : 0.8;
			mgc_why(out, "no meaningful growth: %s per x unit (interval %s .. %s) at %s",
				mgc_bytes(tr.slope, b1, sizeof b1), mgc_bytes(tr.slope_lo, b2, sizeof b2),
				mgc_bytes(tr.slope_hi, b1 + 16, 16), mgc_bytes(level, b2 + 16, 16));
			return;
		}
		/* grew, then flat: onset from a linear-then-flat fit over the segment before and this one */
		size_t a = ncp >= 2 ? cp[ncp - 2] : 0;
		size_t k = n - a;
		for (size_t i = 0; i < k; i++) {
			w->hx[i] = x[a + i] - x[a];
			w->hy[i] = (y[a + i] - med_level) / sig_lvl;
		}
		mgc_sums_fill(&w->sums, w->hx, w->hy, k);
		double hrss;
		size_t at = mgc_hinge(w->hx, w->hy, k, &w->sums, &hrss);
		double onset = x[a + at];
		if (onset > x[c])
			onset = x[c];
		/* a staircase: the flat stretch must outlast the longest flat gap before it */
		double longest = 0;
		size_t pa = 0;
		for (size_t s = 0; s < ncp; s++) {
			size_t pb = cp[s];
			if (pb - pa >= 2) {
				mgc_seg_trend(x, y, pa, pb, w, &tr, &rsig);
				if (tr.slope_hi < delta && x[pb - 1] - x[pa] > longest)
					longest = x[pb - 1] - x[pa];
			}
			pa = pb;
		}
		double flat_len = x[n - 1] - x[c];
		double plateau_level = mgc_median_copy(y + c, m, w->s1);
		/* ...and a few flat points after a long climb are not yet a plateau: a leak that paused
		 * (a prefetch queue draining, an epoch boundary) looks the same. The flat stretch must
		 * last a good part of the climb before it. */
		double climb_len = x[c] - x[a];
		if (m < MGC_MIN_PLATEAU || flat_len < 1.5 * longest || flat_len < 0.25 * climb_len) {
			out->verdict = MGC_VERDICT_GROWING;
			out->confidence = 0.5;
			out->projected_level = plateau_level;
			out->decidable_at = x[c] + fmax(fmax(MGC_MIN_PLATEAU * dx, 1.5 * longest), 0.25 * climb_len);
			mgc_why(out, "grew %s, flat since x=%g but not for long enough to call it a plateau",
				mgc_bytes(rise, b1, sizeof b1), x[c]);
			return;
		}
		out->verdict = MGC_VERDICT_PLATEAU;
		out->plateau_at = onset;
		out->plateau_level = plateau_level;
		out->confidence = m >= 2 * MGC_MIN_PLATEAU ? 0.95 : 0.8;
		mgc_why(out, "warmup: grew %s, levelled at x=%g and flat at %s since (%zu points)",
			mgc_bytes(rise, b1, sizeof b1), onset, mgc_bytes(plateau_level, b2, sizeof b2), m);
		return;
	}

	/* rising on the recent segment: leak only when the data rule out every plausible warmup */
	struct mgc_expfit e;
	double span = x[n - 1] - x[c];
	double s2 = sig_lvl * sig_lvl;
	mgc_exp_profile(x + c, y + c, m, fmax(s2, 0), w->hx, &e);
	double s2fit = e.rss_min / (double)(m > 3 ? m - 3 : 1);
	if (s2fit > s2) {
		mgc_exp_profile(x + c, y + c, m, s2fit, w->hx, &e);
		s2 = s2fit;
	}
	int long_enough = m >= MGC_LEAK_MIN && span >= in->horizon;
	int no_warmup = e.tau_lo >= MGC_LEAK_K * span;
	int beyond_limit = in->limit > 0 && e.tau_lo >= MGC_LEAK_K_LIMIT * span && e.level_lo > in->limit;
	if (long_enough && (no_warmup || beyond_limit)) {
		out->verdict = MGC_VERDICT_LEAK;
		out->confidence = tr.z > 3 && no_warmup ? 0.95 : 0.8;
		mgc_why(out, "leak: %s per x unit for %g x units (%zu points) without slowing; any warmup would "
			"need tau >= %.0f", mgc_bytes(tr.slope, b1, sizeof b1), span, m, e.tau_lo);
		return;
	}
	/* growing: when will we know? */
	out->verdict = MGC_VERDICT_GROWING;
	out->confidence = tr.z > 3 ? 0.9 : 0.7;
	if (e.identified && isfinite(e.level_hat) && e.level_hat > level)
		out->projected_level = e.level_hat;
	/* points needed for the data to exclude tau < K span on a straight line: (G/sigma) sqrt(m)
	 * >= 2 z K sqrt(180) with G = r m, r = slope dx / sigma */
	double r = tr.slope * dx / sqrt(s2);
	double need = r > 0 ? pow(2 * 2.576 * MGC_LEAK_K * sqrt(180.0) / r, 2.0 / 3.0) : INFINITY;
	if (need < MGC_LEAK_MIN)
		need = MGC_LEAK_MIN;
	double when = fmax(x[c] + need * dx, x[c] + in->horizon);
	if (when < x[n - 1] + dx)
		when = x[n - 1] + dx;
	out->decidable_at = when;
	if (isfinite(out->projected_level))
		mgc_why(out, "growing %s per x unit; a saturating fit levels near %s, not yet confirmed",
			mgc_bytes(tr.slope, b1, sizeof b1), mgc_bytes(out->projected_level, b2, sizeof b2));
	else if (isfinite(out->x_to_oom))
		mgc_why(out, "growing %s per x unit since x=%g; warmup or leak cannot be told yet; at this rate "
			"the limit is reached at x=%.0f", mgc_bytes(tr.slope, b1, sizeof b1), x[c],
			x[n - 1] + out->x_to_oom);
	else
		mgc_why(out, "growing %s per x unit since x=%g; warmup or leak cannot be told yet",
			mgc_bytes(tr.slope, b1, sizeof b1), x[c]);
}

/* ---------------------------------------------------------------- periodic spikes */

/* Period (in points) of recurring jumps, from the autocorrelation of the first differences, or 0. */
static size_t mgc_period(const double *y, size_t n, double sigma, double *d)
{
	if (n < 4 * MGC_MIN_PERIODS)
		return 0;
	size_t nd = n - 1;
	double mean = 0;
	for (size_t i = 0; i < nd; i++) {
		d[i] = y[i + 1] - y[i];
		mean += d[i];
	}
	mean /= (double)nd;
	double var = 0;
	size_t big = 0;
	for (size_t i = 0; i < nd; i++) {
		d[i] -= mean;
		var += d[i] * d[i];
		big += fabs(d[i]) > 6 * sigma;
	}
	if (var <= 0 || big < MGC_MIN_PERIODS)
		return 0;
	double acf[MGC_MAX_POINTS / MGC_MIN_PERIODS + 1];
	size_t pmax = nd / MGC_MIN_PERIODS;
	double best = 0;
	for (size_t p = 2; p <= pmax; p++) {
		double s = 0;
		for (size_t i = 0; i + p < nd; i++)
			s += d[i] * d[i + p];
		acf[p] = s / var;
		if (acf[p] > best)
			best = acf[p];
	}
	if (best < 0.3)
		return 0;
	for (size_t p = 3; p <= pmax; p++) { /* the fundamental, not a multiple */
		if (acf[p] < 0.8 * best)
			continue;
		/* the jumps must recur all along: most windows of p differences hold a big one
		 * (a ramp that stopped, or one burst, is not periodic) */
		size_t windows = nd / p, hit = 0;
		for (size_t w = 0; w < windows; w++) {
			int any = 0;
			for (size_t i = w * p; i < (w + 1) * p; i++)
				any |= fabs(d[i]) > 6 * sigma;
			hit += any;
		}
		return windows >= MGC_MIN_PERIODS && (double)hit >= 0.75 * (double)windows ? p : 0;
	}
	return 0;
}

/* ---------------------------------------------------------------- entry points */

const char *mgc_verdict_name(enum mgc_verdict v)
{
	switch (v) {
	case MGC_VERDICT_STABLE:
		return "stable";
	case MGC_VERDICT_PLATEAU:
		return "plateau";
	case MGC_VERDICT_LEAK:
		return "leak";
	case MGC_VERDICT_GROWING:
		return "growing";
	case MGC_VERDICT_RETENTION:
		return "retention";
	}
	return "unknown";
}

static int mgc_check(const double *x, const double *y, size_t n)
{
	if (!x || !y || n == 0)
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		if (!isfinite(x[i]) || !isfinite(y[i]))
			return -EINVAL;
		if (i && !(x[i] > x[i - 1]))
			return -EINVAL;
	}
	return 0;
}

static void mgc_fit_init(struct mgc_fit *f)
{
	memset(f, 0, sizeof(*f));
	f->verdict = MGC_VERDICT_STABLE;
	f->slope_lo = f->slope_hi = 0;
	f->plateau_at = f->plateau_level = NAN;
	f->change_at = NAN;
	f->x_to_oom = INFINITY;
	f->decidable_at = NAN;
	f->projected_level = NAN;
}

static double mgc_horizon(const struct mgc_classify_opts *opts)
{
	if (opts && opts->warmup_horizon > 0)
		return opts->warmup_horizon;
	return opts && !opts->x_is_steps ? 3600.0 : 200.0;
}

/* Classifies the (already checked) series; `delta_abs` is the absolute slope floor. */
static int mgc_classify_impl(const double *x0, const double *y0, size_t n0,
			     const struct mgc_classify_opts *opts, double delta_abs, struct mgc_fit *out)
{
	size_t n = n0 > MGC_MAX_POINTS ? MGC_BIN_POINTS : n0;
	size_t words = (size_t)MGC_TS_CAP * MGC_TS_CAP / 2 + 2 * MGC_TS_CAP + 16 * n0 + 64;
	double *mem = malloc(words * sizeof(double));
	if (!mem)
		return -ENOMEM;
	struct mgc_work w;
	double *p = mem;
	w.pairs = p, p += (size_t)MGC_TS_CAP * MGC_TS_CAP / 2;
	w.bx = p, p += MGC_TS_CAP;
	w.by = p, p += MGC_TS_CAP;
	w.s1 = p, p += 2 * n0 + 2;
	w.s2 = p, p += n0 + 1;
	w.t = p, p += n0 + 1;
	w.yn = p, p += n0 + 1;
	w.hx = p, p += n0 + 1;
	w.hy = p, p += n0 + 1;
	w.sums.t = p, p += n0 + 1;
	w.sums.tt = p, p += n0 + 1;
	w.sums.y = p, p += n0 + 1;
	w.sums.ty = p, p += n0 + 1;
	w.sums.yy = p, p += n0 + 1;
	double *x = p;
	p += n0 + 1;
	double *y = p;
	p += n0 + 1;

	/* bin long inputs to n medians, the last bin ending at the last point */
	if (n0 > MGC_MAX_POINTS) {
		size_t per = (n0 + n - 1) / n;
		size_t nb = 0;
		for (size_t end = n0; end > 0 && nb < n;) {
			size_t beg = end > per ? end - per : 0;
			double mx = 0;
			for (size_t i = beg; i < end; i++)
				mx += x0[i];
			x[n - 1 - nb] = mx / (double)(end - beg);
			y[n - 1 - nb] = mgc_median_copy(y0 + beg, end - beg, w.s2);
			nb++;
			end = beg;
		}
		memmove(x, x + (n - nb), nb * sizeof(double));
		memmove(y, y + (n - nb), nb * sizeof(double));
		n = nb;
	} else {
		memcpy(x, x0, n * sizeof(double));
		memcpy(y, y0, n * sizeof(double));
	}
	out->npoints = n;

	/* 1e-4 of the level per step; 1e-6 per second (8.6% a day) */
	struct mgc_core_in in = {x, y, n, delta_abs, opts && !opts->x_is_steps ? 1e-6 : 1e-4,
				 opts ? opts->limit : 0, mgc_horizon(opts)};
	double sigma = mgc_noise_scratch(y, n, w.s1);
	size_t per = mgc_period(y, n, fmax(sigma, 1.0), w.hx);
	if (per && n / per < 8) {
		/* Too few periods for a floor series to decide on: set the spikes aside instead (the
		 * points more than 6 sigma above the lowest point within half a period) and judge the
		 * rest, which keeps most of the points. */
		size_t half = per / 2, k = 0;
		double *mx = w.t, *my = w.yn, *ex = w.hx;
		for (size_t i = 0; i < n; i++) {
			size_t a = i > half ? i - half : 0, b = i + half + 1 < n ? i + half + 1 : n;
			double lo = y[a];
			for (size_t j = a; j < b; j++)
				lo = fmin(lo, y[j]);
			ex[i] = y[i] - lo;
		}
		/* a spike stands 6 sigma above the local floor; when sigma is degenerate (a series
		 * that holds still between jumps) and that leaves too little, a spike is what stands
		 * out of the usual height above the floor */
		double thr = 6 * fmax(sigma, 1.0);
		for (int pass = 0; pass < 2 && k < 8; pass++) {
			if (pass == 1) {
				double emed = mgc_median_copy(ex, n, w.s1);
				double emad = 1.4826 * mgc_mad_scratch(ex, n, w.s1);
				thr = fmax(emed + 6 * emad, thr);
			}
			k = 0;
			for (size_t i = 0; i < n; i++) {
				if (ex[i] <= thr) {
					mx[k] = x[i];
					my[k] = y[i];
					k++;
				}
			}
		}
		if (k >= 8) {
			double period_x = (double)per * mgc_dx_median(x, n, w.s1);
			decide_reduced(&in, &w, x, y, mx, my, k, period_x, out);
			size_t len = strlen(out->why);
			if (len + 48 < sizeof(out->why))
				snprintf(out->why + len, sizeof(out->why) - len,
					 " (spikes every %g x set aside)", period_x);
			free(mem);
			return 0;
		}
	}
	if (per) {
		/* per-period floor and peaks, windows ending at the last point */
		size_t np = n / per, first = n - np * per;
		double peak = -INFINITY;
		double *mx = w.t, *my = w.yn;
		for (size_t j = 0; j < np; j++) {
			size_t a = first + j * per, best = a;
			for (size_t i = a; i < a + per; i++) {
				if (y[i] < y[best])
					best = i;
				if (j + 2 >= np && y[i] > peak) /* the last two periods' peak */
					peak = y[i];
			}
			mx[j] = x[best];
			my[j] = y[best];
		}
		double period_x = (double)per * mgc_dx_median(x, n, w.s1);
		/* the floor is classified as a series of its own */
		decide_reduced(&in, &w, x, y, mx, my, np, period_x, out);
		if (opts && opts->limit > 0 && out->slope > 0 &&
		    (out->verdict == MGC_VERDICT_GROWING || out->verdict == MGC_VERDICT_LEAK)) {
			double head = opts->limit - peak;
			out->x_to_oom = head > 0 ? head / out->slope : 0;
		}
		size_t len = strlen(out->why);
		if (len + 40 < sizeof(out->why))
			snprintf(out->why + len, sizeof(out->why) - len, " (floor under spikes every %g x)",
				 period_x);
	} else {
		mgc_decide(&in, &w, out);
	}
	free(mem);
	return 0;
}

static double mgc_delta_abs(const struct mgc_classify_opts *opts, double fallback_steps,
			    double fallback_seconds)
{
	if (opts && opts->min_growth > 0)
		return opts->min_growth;
	return opts && !opts->x_is_steps ? fallback_seconds : fallback_steps;
}

int mgc_classify(const double *x, const double *y, size_t n, const struct mgc_classify_opts *opts,
		 struct mgc_fit *out)
{
	if (!out || mgc_check(x, y, n))
		return -EINVAL;
	struct mgc_fit f;
	mgc_fit_init(&f);
	/* defaults: 1 MiB per step, 16 KiB per second (about 1.3 GiB a day) */
	int rc = mgc_classify_impl(x, y, n, opts, mgc_delta_abs(opts, 1048576.0, 16384.0), &f);
	if (rc == 0)
		*out = f;
	return rc;
}

/* Cohort evidence of one site: the survival rate (bytes per step of birth still alive) of the
 * last complete birth buckets. Returns 1 = survivors from every recent bucket at an undiminished
 * rate (leak), -1 = recent buckets hold (almost) nothing (warmup or transient), 0 = no opinion. */
static int mgc_cohort_opinion(const struct mgc_site_evidence *ev, double *rate_recent)
{
	*rate_recent = 0;
	if (!ev->cohorts || ev->ncohorts == 0 || !(ev->last_step >= 8))
		return 0;
	unsigned kcur = mgc_cohort_bucket((uint64_t)ev->last_step);
	if (kcur >= ev->ncohorts)
		kcur = ev->ncohorts - 1;
	if (kcur < 4)
		return 0;
	/* buckets kcur-3 .. kcur-1 are complete: every allocation in them is at least one bucket old */
	double rate[3], total = 0, early = 0;
	for (unsigned k = 0; k < kcur; k++) {
		double v = (double)ev->cohorts[k];
		total += v;
		if (k + 3 < kcur)
			early += v;
	}
	total += (double)ev->cohorts[kcur];
	if (total <= 0)
		return 0;
	double rmax = 0;
	for (unsigned i = 0; i < 3; i++) {
		unsigned k = kcur - 3 + i;
		double width = (double)mgc_cohort_first_step(k); /* bucket k >= 1 spans 2^(k-1) steps */
		rate[i] = (double)ev->cohorts[k] / width;
		if (rate[i] > rmax)
			rmax = rate[i];
	}
	*rate_recent = rate[2];
	int every = rate[0] > 0 && rate[1] > 0 && rate[2] > 0;
	/* undiminished: the newest complete bucket keeps at least half the rate of the other two */
	if (every && rate[2] >= 0.5 * rmax && (double)ev->cohorts[kcur - 1] > 0.05 * total)
		return 1;
	if ((double)ev->cohorts[kcur - 1] + (double)ev->cohorts[kcur - 2] < 0.02 * total)
		return -1;
	return 0;
}

/* Sampled data (opts->sample_rate = R). A sampled estimate moves in jumps of about R, so (1) a flat
 * end shorter than MGC_SAMPLED_FLAT_RATES x R of the rise before it may be a gap between samples,
 * not a plateau: the rise is judged alone; (2) a leak must have grown past the noise,
 * MGC_SAMPLED_LEAK_RATES x R over the lowest point of the window, before it is called one. */
static void sampled_floor(const struct mgc_site_evidence *ev, const struct mgc_classify_opts *opts,
			  struct mgc_fit *f)
{
	if (!opts || opts->sample_rate <= 0)
		return;
	double r = opts->sample_rate;
	if (f->verdict == MGC_VERDICT_PLATEAU && f->plateau_at > ev->x[0]) {
		size_t m = 0;
		while (m < ev->n && ev->x[m] <= f->plateau_at)
			m++;
		double rate = (f->plateau_level - ev->live[0]) / (f->plateau_at - ev->x[0]);
		struct mgc_site_evidence rise = *ev;
		struct mgc_classify_opts o = *opts;
		struct mgc_fit g;
		rise.n = m;
		o.sample_rate = 0;
		if (m >= 8 && rate > 0 && rate * (ev->x[ev->n - 1] - f->plateau_at) < MGC_SAMPLED_FLAT_RATES * r &&
		    mgc_classify_site(&rise, &o, &g) == 0 &&
		    (g.verdict == MGC_VERDICT_LEAK || g.verdict == MGC_VERDICT_GROWING)) {
			*f = g;
			snprintf(f->why, sizeof(f->why), "%.100s; its flat end since x=%.0f is within the gaps "
				 "sampling leaves at this rate", g.why, ev->x[m - 1]);
		}
	}
	double lo = ev->live[0];
	for (size_t i = 1; i < ev->n; i++)
		if (ev->live[i] < lo)
			lo = ev->live[i];
	double grown = ev->live[ev->n - 1] - lo, floor = MGC_SAMPLED_LEAK_RATES * r;
	if (f->verdict != MGC_VERDICT_LEAK || grown >= floor)
		return;
	char b1[16], b2[16];
	f->verdict = MGC_VERDICT_GROWING;
	f->confidence = 0.6;
	snprintf(f->why, sizeof(f->why),
		 "growing: sampled estimates have grown %s, under the %s (%.0f x the sampling rate) a "
		 "leak must show above their noise", mgc_bytes(grown, b1, sizeof b1),
		 mgc_bytes(floor, b2, sizeof b2), MGC_SAMPLED_LEAK_RATES);
}

int mgc_classify_site(const struct mgc_site_evidence *ev, const struct mgc_classify_opts *opts,
		      struct mgc_fit *out)
{
	if (!ev || !out || mgc_check(ev->x, ev->live, ev->n))
		return -EINVAL;
	struct mgc_fit f;
	mgc_fit_init(&f);
	/* sites are small: the floor is 64 bytes per step / 1 byte per second unless given */
	int rc = mgc_classify_impl(ev->x, ev->live, ev->n, opts, mgc_delta_abs(opts, 64.0, 1.0), &f);
	if (rc)
		return rc;
	double rate;
	int op = mgc_cohort_opinion(ev, &rate);
	char b1[32];
	/* survivors at an undiminished rate over the last three complete birth buckets, which span 7/8
	 * of the run before the current bucket: exact (no noise), so half the horizon suffices */
	/* the recent segment may be a short pause (a drained prefetch queue): the second half of
	 * the window rising is enough when the cohorts already show survivors from every step */
	int rose = f.slope_lo > 0 || ev->live[ev->n - 1] > ev->live[ev->n / 2];
	if (op > 0 && ev->n >= 8 && ev->last_step >= 0.5 * mgc_horizon(opts) &&
	    (f.verdict == MGC_VERDICT_GROWING || f.verdict == MGC_VERDICT_LEAK) && rose) {
		if (!(f.slope_lo > 0)) {
			f.slope = rate;
			f.slope_lo = f.slope_hi = rate;
		}
		f.verdict = MGC_VERDICT_LEAK;
		f.confidence = 0.95;
		f.decidable_at = NAN;
		f.projected_level = NAN;
		snprintf(f.why, sizeof(f.why),
			 "leak: survivors from every recent step (%s per step born since step %.0f still live), "
			 "live grows %s per x unit",
			 mgc_bytes(rate, b1, sizeof b1),
			 (double)mgc_cohort_first_step(mgc_cohort_bucket((uint64_t)ev->last_step) - 3),
			 mgc_bytes(f.slope, b1 + 16, 16));
	} else if (op < 0 && f.verdict == MGC_VERDICT_LEAK) {
		f.verdict = MGC_VERDICT_GROWING;
		f.confidence = 0.6;
		snprintf(f.why, sizeof(f.why),
			 "growing, but the recent birth steps hold almost no live bytes: the growth is ending");
	}
	sampled_floor(ev, opts, &f);
	*out = f;
	return 0;
}

int mgc_classify_process(const double *x, const double *rss, const double *live,
			 const double *free_kept, size_t n, const struct mgc_classify_opts *opts,
			 struct mgc_fit *out)
{
	if (!out || mgc_check(x, rss, n) || mgc_check(x, live, n) ||
	    (free_kept && mgc_check(x, free_kept, n)))
		return -EINVAL;
	struct mgc_fit fr, fl;
	int rc = mgc_classify(x, rss, n, opts, &fr);
	if (rc == 0)
		rc = mgc_classify(x, live, n, opts, &fl);
	if (rc)
		return rc;
	int rss_grows = (fr.verdict == MGC_VERDICT_GROWING || fr.verdict == MGC_VERDICT_LEAK) &&
			fr.slope_lo > 0;
	double fr_scratch[5];
	/* live does not grow: flat verdict, or its growth explains under a quarter of RSS's */
	int live_flat = !(fl.verdict == MGC_VERDICT_GROWING || fl.verdict == MGC_VERDICT_LEAK) ||
			fl.slope < 0.25 * fr.slope;
	/* ...but live memory that climbs at half RSS's rate or more explains the growth, whatever
	 * its own verdict (a slope under the absolute floor is still the program's memory). */
	if (isfinite(fl.slope) && isfinite(fr.slope) && fl.slope >= 0.5 * fr.slope)
		live_flat = 0;
	/* RSS that rose and levelled after live memory had already levelled: the rise is the
	 * allocator keeping freed memory (a one-off retention), not a warmup of the program. */
	if (fr.verdict == MGC_VERDICT_PLATEAU && n >= 8 && live_flat && fl.level > 0) {
		/* from where live memory first reached 90% of its level: what did each gain since? */
		size_t i0 = 0;
		while (i0 + 1 < n && live[i0] < 0.9 * fl.level)
			i0++;
		size_t k = n - i0 < 5 ? n - i0 : 5;
		double rss0 = mgc_median_copy(rss + i0, k, fr_scratch);
		double live0 = mgc_median_copy(live + i0, k, fr_scratch);
		double rss_gain = fr.plateau_level - rss0;
		double live_gain = fl.level - live0;
		double kept = free_kept ? free_kept[n - 1] - free_kept[i0] : NAN;
		if (n - i0 >= 8 && rss_gain > 4 * fr.noise && rss_gain > 0.2 * fr.plateau_level &&
		    live_gain < 0.25 * rss_gain && !(kept < 0.25 * rss_gain)) {
			char b1[32], b2[32], b3[32];
			fr.verdict = MGC_VERDICT_RETENTION;
			snprintf(fr.why, sizeof(fr.why),
				 "retention: RSS rose %s after live allocations levelled at x=%g (they moved %s)%s%s%s",
				 mgc_bytes(rss_gain, b1, sizeof b1), x[i0], mgc_bytes(live_gain, b2, sizeof b2),
				 isfinite(kept) && kept > 0 ? "; the allocator keeps " : "",
				 isfinite(kept) && kept > 0 ? mgc_bytes(kept, b3, sizeof b3) : "",
				 isfinite(kept) && kept > 0 ? " more freed memory" : "");
			*out = fr;
			return 0;
		}
	}
	/* Retention is memory the allocator keeps: where its free bytes are known they must explain
	 * a good share of the growth. RSS that grows with neither live allocations nor kept free
	 * memory (copy-on-write pages of a forked worker, untracked memory) keeps its own verdict. */
	if (rss_grows && live_flat && n >= 8 && free_kept) {
		double kept_rise = free_kept[n - 1] - free_kept[0];
		double rss_rise = rss[n - 1] - rss[0];
		if (rss_rise > 0 && kept_rise < 0.25 * rss_rise) {
			char b1[32], b2[32];
			size_t len = strlen(fr.why);
			if (len + 120 < sizeof(fr.why))
				snprintf(fr.why + len, sizeof(fr.why) - len,
					 "; neither live allocations nor the allocator's free memory (%s of %s) explain it",
					 mgc_bytes(kept_rise, b1, sizeof b1), mgc_bytes(rss_rise, b2, sizeof b2));
			live_flat = 0;
		}
	}
	if (rss_grows && live_flat && n >= 8) {
		char b1[32], b2[32];
		double kept = free_kept ? free_kept[n - 1] - free_kept[0] : NAN;
		fr.verdict = MGC_VERDICT_RETENTION;
		if (isfinite(kept) && kept > 0)
			snprintf(fr.why, sizeof(fr.why),
				 "retention: RSS grows %s per x unit while live allocations do not; the allocator "
				 "keeps %s more freed memory",
				 mgc_bytes(fr.slope, b1, sizeof b1), mgc_bytes(kept, b2, sizeof b2));
		else
			snprintf(fr.why, sizeof(fr.why),
				 "retention: RSS grows %s per x unit while live allocations stay at %s",
				 mgc_bytes(fr.slope, b1, sizeof b1), mgc_bytes(fl.level, b2, sizeof b2));
	}
	*out = fr;
	return 0;
}

int mgc_process_with_sites(struct mgc_fit *proc, const double *x, const double *rss, size_t n,
			   double leak_slope, double leak_confidence, int x_is_steps, double limit)
{
	if (!proc || !x || !rss || n < 8 || !(leak_slope > 0))
		return 0;
	enum mgc_verdict v = proc->verdict;
	if (v != MGC_VERDICT_GROWING && v != MGC_VERDICT_STABLE && v != MGC_VERDICT_PLATEAU)
		return 0;
	double level = rss[n - 1];
	char b1[32], b2[32];
	if (v == MGC_VERDICT_GROWING) {
		/* RSS's growth rate: the recent slope, or over the window's second half when the
		 * recent segment is a pause */
		size_t h = n / 2;
		double rate = fmax(proc->slope, (rss[n - 1] - rss[h]) / (x[n - 1] - x[h]));
		if (!(rate > 0) || leak_slope < 0.5 * rate)
			return 0;
		snprintf(proc->why, sizeof proc->why,
			 "leaking sites whose survivors come from every recent step grow %s per x unit, "
			 "%.0f%% of RSS's growth", mgc_bytes(leak_slope, b1, sizeof b1), 100.0 * leak_slope / rate);
		proc->slope = rate;
	} else {
		/* the classifier's relative floor: the sites' own growth is exact, no noise margin */
		double floor = x_is_steps ? fmax(4096.0, 1e-4 * level) : fmax(64.0, 1e-6 * level);
		if (leak_slope < floor)
			return 0;
		snprintf(proc->why, sizeof proc->why,
			 "RSS looks %s (noise %s), but leaking sites whose survivors come from every recent "
			 "step grow %s per x unit", v == MGC_VERDICT_STABLE ? "stable" : "levelled",
			 mgc_bytes(proc->noise, b1, sizeof b1), mgc_bytes(leak_slope, b2, sizeof b2));
		proc->slope = leak_slope;
		proc->slope_lo = proc->slope_hi = leak_slope;
		proc->plateau_at = proc->plateau_level = NAN;
	}
	proc->verdict = MGC_VERDICT_LEAK;
	proc->confidence = leak_confidence;
	proc->decidable_at = NAN;
	if (limit > 0 && proc->slope > 0)
		proc->x_to_oom = fmax(0, limit - level) / proc->slope;
	return 1;
}
