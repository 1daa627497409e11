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
#include "mgc_stats.h"

/* Sizes and thresholds. Each is explained in docs/CLASSIFIER.md. */
enum {
	MGC_MAX_POINTS = 1024, /* above this the input is binned (bins of a power of two) */
	MGC_TS_CAP = 128,      /* Theil-Sen runs on at most this many (binned) points */
	MGC_MAX_CP = 16,       /* change points kept */
	MGC_LMIN = 5,          /* shortest segment between change points, in points */
	MGC_MIN_PLATEAU = 5,   /* flat points after the change needed to call a plateau */
	MGC_MIN_SAMPLES = 20,  /* samples a leak has risen for, at least */
	MGC_MIN_EVENTS = 3,    /* separate rises a staircase leak needs */
	MGC_DIP_MIN = 64,      /* an excursion this long ending in a dip made up soon is no spike */
	MGC_STEP_WIDTH = 3,    /* a step inside a rising segment is over within this many points */
	MGC_HOLD_EVENTS = 4,   /* a steady staircase of this many steps is no plateau before its pause */
	MGC_MIN_BLOCKS = 8,    /* the floor under spikes keeps at least this many blocks */
	MGC_STALL_POINTS = 4,  /* the fewest floor points a leak's end may stand still over */
	MGC_FRESH_MAX = 3,     /* the newest points too few to tell a spike that opens from a step */
	MGC_RAW_CAP = 4096,    /* input differences the spike noise is measured on, and the longest spike */
	MGC_RAW_LAGS = 8,      /* ... at each lag up to this many points (a sawtooth cancels at its period) */
	MGC_EXP_CAP = 128,     /* a saturating exponential is fitted to at most this many (binned) points */
	MGC_LADDER_CUTS = 24,  /* prefixes looked at for a leak said earlier: 2 + a ladder of up to 20 */
	MGC_BETWEEN_CUTS = 4,  /* ... and, last, input points between the last segment's two cuts */
	MGC_STEP_SEGS = 3,     /* ... and, sorted in, points of the newest flat segments before the last */
	MGC_STEP_POINTS = 3,   /* ... this many each, from its second */
	MGC_POOL_STEPS = 4,    /* steps that double in a row: an allocator pool */
};
static const double MGC_Z95 = 1.959964;
static const double MGC_CP_PENALTY = 3.0;     /* change point penalty, times ln n */
static const double MGC_RUN_HORIZON = 1e6;    /* steps (or seconds) a run may last: the limit horizon */
static const double MGC_START_FACTOR = 5.0;   /* growth from the start: 5 warmup horizons (1000 steps) */
static const double MGC_RAMP_HORIZONS = 2.0;  /* no start-up ramp lasts longer (400 steps) */
static const double MGC_RISE_SIGMAS = 4.0;    /* a leak has risen this many level sigmas */
static const double MGC_LADDER_SIGMAS = 3.0;  /* ... and a leak said earlier stands while it rose this */
static const double MGC_EVENT_SHARE = 0.0625; /* an event is a sixteenth of its regime's largest */
static const double MGC_SPIKE_SIGMAS = 6.0;   /* a drop this many sigmas closes a spike */
static const double MGC_SPREAD_MIN = -1.0;    /* rungs that crowd early by this many sigmas thin out */
static const double MGC_STAIR_FLAT = 0.4;     /* a staircase is flat for this share of its climb */
static const double MGC_RUNG_GAPS = 1.5;      /* a leak pauses as long as its longest rung, and half again */
static const double MGC_SAME_SLOPE = 0.8;     /* rising pieces this close in slope are one line */
static const double MGC_STEP_SIGMAS = 3.0;    /* a step: a jump between segments or inside a rising one */
static const double MGC_STEP_SHARE = 0.7;     /* ... its steps carry this much of its rise */
static const double MGC_JUMP_SIGMAS = 5.0;    /* a step up between flat stretches: 5 level sigmas */
static const double MGC_HELD_SIGMAS = 2.0;    /* ... that a staircase counts, the level held either side */
static const double MGC_TAIL_FASTER = 2.0;    /* the input rising this much faster now moves the OOM */
static const double MGC_SURE_SIGMAS = 10.0;   /* a rise known to within this many level sigmas */
static const double MGC_RETRACT_ALPHA = 1e-3; /* a staircase that goes on pauses this long this rarely */
static const double MGC_HOLD_ALPHA = 0.05;    /* ... one of three steps holds a plateau until one this rare */
static const double MGC_PROMISE_REACH = 20.0; /* decidable_at reaches this many spans ahead */
static const double MGC_GROWING_REACH = 3.0;  /* ... and a `growing` rise's OOM this many */
static const double MGC_PROMISE_MARGIN = 1.2; /* decidable_at is this many times as far as the readings say */
static const double MGC_SETTLED_SHARE = 0.1; /* a creep this much slower than a rise after it was settled */
static const double MGC_CREPT_SHARE = 0.2;   /* ... and pieces whose line is, taken together */
static const double MGC_BREATH_SHARE = 0.5;  /* a short flat piece rising this share of its neighbours' is rise */
static const double MGC_COHORT_ALPHA = 1e-2;  /* a leak's sampled cohorts split this unevenly this rarely */
static const double MGC_POOL_RATIO = 1.25;    /* a pool's steps double to within this factor */
static const double MGC_POOL_SHARE = 0.03125; /* ... and are counted from this share of its rise */

/* ---------------------------------------------------------------- working memory */

struct mgc_work {
	double *pairs;            /* MGC_TS_CAP^2/2: Theil-Sen pairs */
	double *bx, *by;          /* MGC_TS_CAP each: a binned segment */
	double *s1, *s2;          /* scratch: 2m and m */
	double *t, *yn, *hx, *hy; /* m each */
	struct mgc_sums sums;     /* m + 1 each */
	double *px, *py, *pmax;   /* the prepared series: bin x, median, maximum, */
	double *pmin, *pminx;     /* minimum and the x where it is */
	double *clean;            /* the medians with spikes replaced (mgc_unspike) */
	size_t pn;
	double *raw;              /* MGC_RAW_CAP: differences of the input */
	double *fx, *fy;          /* the floor under spikes */
	size_t fn;
};

/* Carves the work arrays for series of up to m points (m >= the input's bins and its largest
 * bin) out of one allocation. Returns the allocation (free it) or NULL. */
static double *mgc_work_alloc(struct mgc_work *w, size_t m)
{
	size_t words = (size_t)MGC_TS_CAP * MGC_TS_CAP / 2 + 2 * MGC_TS_CAP + 2 * MGC_RAW_CAP + 21 * (m + 1);
	double *mem = malloc(words * sizeof(double)), *p = mem;
	if (!mem)
		return NULL;
	w->pairs = p, p += (size_t)MGC_TS_CAP * MGC_TS_CAP / 2;
	w->bx = p, p += MGC_TS_CAP;
	w->by = p, p += MGC_TS_CAP;
	w->s1 = p, p += 2 * (m + 1);
	w->raw = p, p += 2 * MGC_RAW_CAP;
	double **arrays[] = {&w->s2, &w->t, &w->yn, &w->hx, &w->hy, &w->sums.t, &w->sums.tt, &w->sums.y,
			     &w->sums.ty, &w->sums.yy, &w->px, &w->py, &w->pmax, &w->pmin, &w->pminx,
			     &w->clean, &w->fx, &w->fy};
	for (size_t i = 0; i < sizeof(arrays) / sizeof(arrays[0]); i++)
		*arrays[i] = p, p += m + 1;
	return mem;
}

/* ---------------------------------------------------------------- words */

static void mgc_why(struct mgc_fit *out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void mgc_why(struct mgc_fit *out, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(out->why, sizeof(out->why), fmt, ap);
	va_end(ap);
}

/* Appends to the why sentence when it fits. */
static void mgc_why_add(struct mgc_fit *out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void mgc_why_add(struct mgc_fit *out, const char *fmt, ...)
{
	size_t len = strlen(out->why);
	char buf[sizeof(out->why)];
	va_list ap;
	va_start(ap, fmt);
	int k = vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	if (k > 0 && len + (size_t)k < sizeof(out->why))
		memcpy(out->why + len, buf, (size_t)k + 1);
}

/* A size in IEC units ("3.0 MiB") into buf. */
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

/* "step" or "second": what users read after "per" */
static const char *mgc_unit(int x_is_steps)
{
	return x_is_steps ? "step" : "second";
}

/* ---------------------------------------------------------------- trend of a stretch */

/* Trend of points [a, b), binned to at most MGC_TS_CAP medians, its interval widened for
 * autocorrelated noise: the variance of S times (1 + rho)/(1 - rho), rho the larger of `phi` (the
 * noise's, from the differences) and the residuals' own significant lag-1 autocorrelation (a
 * Hamed-Rao correction for AR(1) noise). Also returns the robust residual scale around the line. */
static void mgc_seg_trend(const double *x, const double *y, size_t a, size_t b, double phi,
			  struct mgc_work *w, struct mgc_trend *tr, double *resid_sigma)
{
	size_t m = b - a, k = m;
	const double *sx = x + a, *sy = y + a;
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
	if (!(rho > 2.0 / sqrt((double)k)))
		rho = 0;
	rho = fmin(fmax(rho, phi), 0.9);
	if (rho > 0)
		mgc_trend_core(sx, sy, k, MGC_Z95, (1 + rho) / (1 - rho), w->pairs, w->s2, tr);
	*resid_sigma = 1.4826 * mgc_mad_scratch(w->s1, k, w->s2) * (k < m ? sqrt((double)(m / k)) : 1.0);
}

/* ---------------------------------------------------------------- step 1: the points */

/* Bins the input into at most MGC_MAX_POINTS bins of `per` points (a power of two, so the bins
 * of a growing prefix stay where they were): mean x, median, maximum and minimum y. Returns the
 * number of bins. */
static size_t mgc_prepare(const double *x0, const double *y0, size_t n0, size_t per, struct mgc_work *w)
{
	size_t n = 0;
	for (size_t a = 0; a < n0; a += per) {
		size_t b = a + per < n0 ? a + per : n0, lo = a;
		double sx = 0, mx = y0[a];
		for (size_t i = a; i < b; i++) {
			sx += x0[i];
			mx = fmax(mx, y0[i]);
			if (y0[i] < y0[lo])
				lo = i;
		}
		w->px[n] = sx / (double)(b - a);
		w->py[n] = per == 1 ? y0[a] : mgc_median_copy(y0 + a, b - a, w->s2);
		w->pmax[n] = mx;
		w->pmin[n] = y0[lo];
		w->pminx[n] = x0[lo];
		n++;
	}
	return n;
}

/* ---------------------------------------------------------------- step 2: the floor under spikes */

struct mgc_floor {
	size_t bins;    /* bins per floor block (1: no spikes looked through) */
	size_t nexc;    /* spikes (excursions) seen */
	double excess;  /* the highest point above the floor: spikes, for the OOM projection */
	double spike_x; /* the longest spike, in x units */
	size_t span;    /* input bins that outlast the longest spike */
	double tallest; /* the highest a closed spike stood above where it opened */
};

/* The input's step-to-step noise, on at most MGC_RAW_CAP of its differences at each lag of 1 to
 * MGC_RAW_LAGS points, the least: a sawtooth of period 2 to MGC_RAW_LAGS (gradient accumulation,
 * or one that logging every 10 steps aliases into a zigzag) cancels at its own lag, so its drops
 * still stand out as spikes (with lags to 4, a sawtooth of 6 points logged every 10 steps read as
 * noise of 19 MiB, its drops of 150-190 MiB barely spikes, and a 0.28 MiB per step leak under
 * it, the level's sigma 153 MiB, flipped between `leak` and `growing`: `test_slow_under_saw`).
 * When most differences are 0 (device memory in 2 or 20 MiB segments that the allocator holds
 * and releases now and then) their MAD is 0 and each release closed a "spike": the floor's
 * blocks grew to 200-700 steps, a 250-step ramp read as a rise from step 0, `leak` by the start
 * horizon (`test_segment_noise`). Then the 90th percentile of their sizes speaks, scaled as for
 * normal noise (1.645 sqrt 2 sigma); 0 still when 9 in 10 are 0. Only for a process's memory
 * (`process`): a sampled site's live bytes move by whole samples too, and read so its turnovers
 * of 8,000 records every 120 steps said `leak` 3 times in 400 (`test_site`), not 1. */
static double mgc_raw_noise(const double *y0, size_t n0, int process, double *scratch)
{
	size_t every = (n0 + MGC_RAW_CAP - 1) / MGC_RAW_CAP;
	double best = INFINITY;
	for (size_t lag = 1; lag <= MGC_RAW_LAGS; lag++) {
		size_t k = 0;
		for (size_t i = 0; i + lag < n0 && k < MGC_RAW_CAP; i += every)
			scratch[k++] = y0[i + lag] - y0[i];
		if (k < 2)
			continue;
		double sd = 1.4826 * mgc_mad_scratch(scratch, k, scratch + MGC_RAW_CAP) / sqrt(2.0);
		if (!(sd > 0) && process) { /* most differences are 0: memory in whole allocator segments */
			for (size_t i = 0; i < k; i++)
				scratch[i] = fabs(scratch[i]);
			sd = mgc_kth(scratch, k, (k - 1) * 9 / 10) / (1.6449 * sqrt(2.0));
		}
		best = fmin(best, sd);
	}
	return isfinite(best) ? best : 0;
}

/* The median of y[i-1], y[i], y[i+1] (the ends repeat): isolated outliers, up or down, vanish. */
static double mgc_med3(const double *y, size_t n, size_t i)
{
	double a = y[i ? i - 1 : 0], b = y[i], c = y[i + 1 < n ? i + 1 : i];
	return fmax(fmin(a, b), fmin(fmax(a, b), c));
}

/* Does the level after a drop at j from `top` climb back to `back` within the excursion's length
 * (i..j), from its lowest point since, by more than 4 jumps and at more than twice the
 * excursion's mean rate of rise? An epoch boundary's dip refills at its own pace, whatever the
 * excursion it closed: a cache that filled 2.2 MiB per step lost 2.2 GiB at its epoch's end and refilled over 200
 * steps, more than a quarter of the 453-step excursion its drop closed, at 5 times the fill's
 * rate. A spike on a leak lands, then rises at the leak's rate, under the excursion's own (its
 * spike's height is more than the leak's rise under it, or its landing kept more than it gave
 * back); a sawtooth climbs back at its teeth's rate; noise in 20 MiB segments comes back by a
 * segment or two, not 4 jumps. */
static int mgc_dip_refill(const double *y, size_t n, size_t i, size_t j, double top, double jump, double back)
{
	double rose = (top - mgc_med3(y, n, i)) / (double)(j - i), low = INFINITY, v;
	size_t at = j + 1;
	for (size_t t = j + 1; t + 1 < n && t <= j + 1 + (j - i); t++) {
		if ((v = mgc_med3(y, n, t)) < low)
			low = v, at = t;
		if (v > back)
			return t > at && back - low > 4 * jump && (back - low) / (double)(t - at) > 2 * rose;
	}
	return 0;
}

/* A drop at j that the level makes up soon is no spike's end: within a quarter of the excursion's
 * length it is back within half the drop (or half a jump, the more) of the top, or it refills fast
 * (mgc_dip_refill). Two low points in a rising level (heavy-tailed noise makes pairs of them) are
 * such a dip, and so is an epoch boundary's (DataLoader workers exit and respawn: 1.5 GiB gone for
 * 160 steps after a cache had filled for 4,000). A spike's landing holds (the floor it fell to is
 * the level), and a sawtooth climbs back over its whole period, as long as its excursion; so an
 * excursion that spanned a rise and ended in a dip does not set the floor's blocks as wide as the
 * rise. Only past `spike_max` points (mgc_spike_max): a shorter excursion is as long as a spike
 * may be, whatever ends it. */
static int mgc_dip(const double *y, size_t n, size_t i, size_t j, double jump, size_t spike_max)
{
	if (j - i <= spike_max)
		return 0;
	double top = mgc_med3(y, n, j), back = top - 0.5 * fmax(jump, top - mgc_med3(y, n, j + 1));
	for (size_t t = j + 3; t + 1 < n && t <= j + 1 + (j - i) / 4; t++)
		if (mgc_med3(y, n, t) > back)
			return 1;
	return mgc_dip_refill(y, n, i, j, top, jump, back);
}

/* A hole at i: mgc_med3 there stands more than `depth` under the level on both sides of it (the
 * median of three points two to four away), and the two sides stand within `depth` of each other.
 * Heavy-tailed noise makes pairs of low points, which mgc_med3 keeps; such a pair is no level the
 * series stood at, so no spike opens there (taken for the floor before a spike, a pair in a flat
 * stretch opened an "excursion" of 776 steps that a later drop closed, and the floor's blocks as
 * wide hid a 23 MiB-per-step leak that followed until it had passed the limit). A sawtooth's
 * trough is no hole: its two sides differ by most of a tooth. */
static int mgc_hole(const double *y, size_t n, size_t i, double depth)
{
	if (i < 4 || i + 5 > n)
		return 0;
	double t[3], at = mgc_med3(y, n, i);
	double left = mgc_median_copy(y + i - 4, 3, t), right = mgc_median_copy(y + i + 2, 3, t);
	return left - at > depth && right - at > depth && fabs(left - right) <= depth;
}

/* Spikes are excursions above the floor: on the series without its isolated outliers (mgc_med3),
 * each big drop (a difference below -jump) closes one, which opened after the last earlier point
 * no higher than the level it drops to (plus jump/2). A ramp-and-drop sawtooth is one excursion
 * per period. A spike gives back more than it kept: a drop that lands further above the opening
 * than it fell is a dip in a raised level (a level shift with a cycle on top), not the end of a
 * spike, and an excursion that spanned the shift would hide it in the floor. Returns the longest,
 * in points, with their count in *count and the highest any stood above its opening in *tallest.
 * An excursion longer than `spike_max` points may end in a dip (mgc_dip). */
static size_t mgc_excursions(const double *y, size_t n, double jump, size_t spike_max, size_t *count,
			     double *tallest)
{
	size_t longest = 0, k = 0, back = n / 4 + 2 < MGC_RAW_CAP ? n / 4 + 2 : MGC_RAW_CAP;
	*tallest = 0;
	for (size_t j = 0; j + 2 < n; j++) { /* the landing needs a point after it */
		double land = mgc_med3(y, n, j + 1);
		if (!(land - mgc_med3(y, n, j) < -jump))
			continue;
		double lvl = land + 0.5 * jump;
		size_t i = j;
		while (i > 0 && mgc_med3(y, n, i) > lvl && j - i < back)
			i--;
		double opened = mgc_med3(y, n, i);
		if (opened > lvl) /* a drop below all that came before: memory given back */
			continue;
		if (mgc_hole(y, n, i, 0.5 * jump) || mgc_hole(y, n, j + 1, 0.5 * jump))
			continue; /* it opened, or landed, at no level the series stood at */
		if (land - opened >= mgc_med3(y, n, j) - land) /* kept more than it gave back */
			continue;
		if (mgc_dip(y, n, i, j, jump, spike_max))
			continue;
		if (j - i > longest)
			longest = j - i;
		for (size_t q = i; q <= j; q++)
			*tallest = fmax(*tallest, y[q] - opened);
		k++;
	}
	*count = k;
	return longest;
}

/* The bins of one floor block [a, b) without their spikes (into w->clean): a bin above `top` is
 * replaced by the median of those below it, so the noise of the level can be measured there. */
static void mgc_unspike(struct mgc_work *w, size_t a, size_t b, double top)
{
	size_t k = 0;
	for (size_t i = a; i < b; i++)
		if (w->py[i] <= top)
			w->s2[k++] = w->py[i];
	double med = k ? mgc_median_inplace(w->s2, k) : top;
	for (size_t i = a; i < b; i++)
		w->clean[i] = w->py[i] <= top ? w->py[i] : med;
}

/* The floor's line at x: between its points; before the first, the first; after the last, on
 * the line through the last two when it rises (a leak's floor goes on rising past its last block
 * minimum), else the last (a release at the end does not go on falling). */
static double mgc_floor_at(const struct mgc_work *w, size_t *k, double x)
{
	size_t n = w->fn;
	while (*k + 1 < n && w->fx[*k + 1] <= x)
		++*k;
	if (n < 2 || x <= w->fx[0])
		return w->fy[0];
	size_t i = *k + 1 < n ? *k : n - 2;
	double run = w->fx[i + 1] - w->fx[i];
	double at = run > 0 ? w->fy[i] + (w->fy[i + 1] - w->fy[i]) * (x - w->fx[i]) / run : w->fy[i + 1];
	return x > w->fx[n - 1] ? fmax(at, w->fy[n - 1]) : at;
}

/* The highest the input stood above the floor's line from x `from` on: the spikes, for the OOM
 * projection. Measured from the line, not each block's minimum (a 100 MiB per step leak rises
 * 6 GiB inside a 60-step block, and the peaks were projected 6 GiB too high); a transient that
 * ended before `from` (cudnn autotuning, compile workers, a loading peak) does not come back. */
static double mgc_spike_excess(const struct mgc_work *w, double from)
{
	double excess = 0;
	size_t k = 0;
	for (size_t i = 0; i < w->pn; i++)
		if (w->px[i] >= from)
			excess = fmax(excess, w->pmax[i] - mgc_floor_at(w, &k, w->px[i]));
	return excess;
}

/* The longest a spike lasts, in input points `dx` apart: MGC_DIP_MIN, and no longer than the
 * warmup horizon (x) when the series is logged more coarsely than that allows (but
 * MGC_MIN_SAMPLES points: fewer say little of how soon the level came back). An epoch's dip,
 * logged every 10 steps, closed an excursion of 44 points (440 steps) since the last dip's
 * refill; read as a spike, the floor was the dips' bottoms, one point an epoch, and a 1 MiB per
 * step leak under them read `stable` for hundreds of steps after it had read `leak`
 * (`test_dip_coarse_log`). */
static size_t mgc_spike_max(double dx, double horizon)
{
	double pts = fmax(horizon / dx, MGC_MIN_SAMPLES);
	return pts < MGC_DIP_MIN ? (size_t)pts : MGC_DIP_MIN;
}

/* The floor: with spikes, the minima of blocks of input points wider than the longest spike
 * (whole bins, aligned at the first point so a growing prefix keeps its blocks, a short last
 * block merged into the one before); without, the bins' medians. A rising floor is a rising
 * series: no point is dropped for its height. And the highest the input stood above it from x
 * spikes_from on (mgc_spike_excess). */
static void mgc_floor(struct mgc_work *w, const double *x0, const double *y0, size_t n0, size_t per,
		      double spikes_from, size_t spike_max, int process, struct mgc_floor *fl)
{
	size_t n = w->pn;
	double sigma = fmax(mgc_raw_noise(y0, n0, process, w->raw), 1.0);
	size_t longest = mgc_excursions(y0, n0, MGC_SPIKE_SIGMAS * sigma, spike_max, &fl->nexc, &fl->tallest);
	size_t B = longest ? (longest + per) / per : 1, cap = n / MGC_MIN_BLOCKS; /* in bins */
	if (B > cap)
		B = cap > 1 ? cap : 1;
	fl->bins = B;
	/* the excursions are read on the 3-point median, which cuts up to a point off each end: a
	 * window of the last `span` bins holds a whole period of a sawtooth only with those two back
	 * (a 13-step gradient-accumulation sawtooth read as 11-step spikes left every fourth tooth's
	 * foot out of the last 12 points, each a step of 400 MiB "too recent to tell", `growing` at
	 * 161 of 1,302 prefixes, each promise broken by the next: `test_sawtooth_whole_tooth`) */
	fl->span = longest ? (longest + 2 + per) / per : 0;
	fl->spike_x = longest && n0 > 1 ? (double)longest * (x0[n0 - 1] - x0[0]) / (double)(n0 - 1) : 0;
	size_t k = 0;
	for (size_t a = 0; a < n;) {
		size_t b = a + B <= n ? a + B : n, lo = a;
		if (n - b < (B + 1) / 2) /* a short last block joins this one */
			b = n;
		for (size_t i = a; i < b; i++)
			if (w->pmin[i] < w->pmin[lo])
				lo = i;
		w->fx[k] = B > 1 ? w->pminx[lo] : w->px[a];
		w->fy[k] = B > 1 ? w->pmin[lo] : w->py[a];
		mgc_unspike(w, a, b, w->fy[k] + 0.5 * MGC_SPIKE_SIGMAS * sigma);
		k++;
		a = b;
	}
	w->fn = k;
	fl->excess = mgc_spike_excess(w, spikes_from);
}

/* ---------------------------------------------------------------- the decision's context */

struct mgc_core_in {
	double limit;         /* bytes; 0 = unknown */
	double delta_abs;     /* the caller's smallest meaningful growth per x */
	int headroom;         /* 1: the series is a process's memory: the limit's headroom counts */
	double horizon;       /* a rise after the run settled must last this long to be a leak */
	double start_horizon; /* ... and a rise from the start of the run this long */
	double dx;            /* x between two original samples (mean) */
	double x_first;       /* the run's first x */
	double x_last;        /* ... and its last (the floor's last point may lie before it) */
	size_t n0;            /* the input's points */
	const double *epochs; /* epoch boundaries (x), increasing; NULL: the run marks no epochs */
	size_t nepochs;       /* boundaries crossed so far (0: still in the first epoch) */
	int x_is_steps;
	const double *x0, *y0; /* the input (n0 points): its earlier prefixes are read from it */
};

struct mgc_seg {
	size_t a, b;                  /* floor points [a, b) */
	double slope, lo, hi, icpt;   /* Theil-Sen line and its interval */
	int flat;                     /* no meaningful rise */
};

struct mgc_ctx {
	const struct mgc_core_in *in;
	struct mgc_work *w;
	const double *x, *y; /* the floor */
	size_t n;
	struct mgc_floor fl;
	double sigma;        /* step-to-step noise */
	double phi;          /* the noise's lag-1 autocorrelation (AR(1) coefficient) */
	double sig_lvl;      /* the noise's marginal sigma: how far the level wanders */
	double level;        /* the floor's level at the last point */
	double peak;         /* the level plus the highest spike */
	double delta;        /* the smallest growth per x that matters */
	struct mgc_seg seg[MGC_MAX_CP + 1];
	size_t nseg;
	double stair_on[2];  /* mgc_find_leak: the earliest onset of a reading that is a steady
			      * staircase of MGC_MIN_EVENTS - i steps (mgc_three_steps_hold); INFINITY */
	int pool;            /* ... and whether a reading's steps double (mgc_pool_doubles) */
};

/* The input points in a bin: the least power of two that leaves at most MGC_MAX_POINTS bins. */
static size_t mgc_bin_size(size_t n0)
{
	size_t per = 1;
	while ((n0 + per - 1) / per > MGC_MAX_POINTS)
		per *= 2;
	return per;
}

/* The first n0 points of the input, read as a series of their own: binned, and the floor under
 * their spikes in c (mgc_noise and mgc_segments read on). c points into the struct: never copied. */
struct mgc_prefix {
	struct mgc_core_in in;
	struct mgc_work w;
	double *mem; /* the work arrays' allocation (free it) */
	struct mgc_ctx c;
};

/* Opens the prefix of `base`'s input of n0 (>= 1) points in *p: 0, or -ENOMEM with nothing to free. */
static int mgc_prefix_open(const struct mgc_core_in *base, size_t n0, struct mgc_prefix *p)
{
	size_t per = mgc_bin_size(n0), m = (n0 + per - 1) / per;
	p->mem = mgc_work_alloc(&p->w, m > per ? m : per);
	if (!p->mem)
		return -ENOMEM;
	p->w.pn = mgc_prepare(base->x0, base->y0, n0, per, &p->w);
	p->in = *base;
	p->in.n0 = n0;
	p->in.x_last = base->x0[n0 - 1];
	p->in.dx = n0 > 1 ? (p->in.x_last - base->x0[0]) / (double)(n0 - 1) : 1;
	p->c = (struct mgc_ctx){.in = &p->in, .w = &p->w};
	/* the start-up's transients are left out of the spikes once the run is twice the warmup
	 * horizon long */
	double first = base->x0[0], from = p->in.x_last - first >= 2 * base->horizon ? first + base->horizon : first;
	mgc_floor(&p->w, base->x0, base->y0, n0, per, from, mgc_spike_max(p->in.dx, base->horizon), base->headroom,
		  &p->c.fl);
	p->c.x = p->w.fx;
	p->c.y = p->w.fy;
	p->c.n = p->w.fn;
	return 0;
}

/* ---------------------------------------------------------------- step 3: noise */

/* The lag-1 autocorrelation r of the differences in 6 or more windows of W = 8..32 points (each
 * about its own mean, clipped at `clip` from its median so jumps do not count): -(1 - phi)/2 for AR(1)
 * noise, -1/2 for white noise, whatever the trend. The median over the windows gives phi. */
static double mgc_ar_phi(const double *y, size_t n, double clip, double *scratch)
{
	size_t W = n / 6 > 32 ? 32 : n / 6, k = 0;
	if (W < 8) /* fewer than 6 windows: a kink or two in the trend would decide the median */
		return 0;
	double *r = scratch, d[32], tmp[32];
	for (size_t s = 0; s + W < n; s += W) {
		double mean = 0, num = 0, den = 0;
		for (size_t i = 0; i < W; i++)
			d[i] = y[s + i + 1] - y[s + i];
		double med = mgc_median_copy(d, W, tmp);
		for (size_t i = 0; i < W; i++) {
			d[i] = fmin(fmax(d[i] - med, -clip), clip);
			mean += d[i];
		}
		mean /= (double)W;
		for (size_t i = 0; i < W; i++) {
			den += (d[i] - mean) * (d[i] - mean);
			if (i)
				num += (d[i] - mean) * (d[i - 1] - mean);
		}
		r[k++] = den > 0 ? num / den : -0.5;
	}
	double phi = 1 + 2 * mgc_median_inplace(r, k);
	phi -= 1.5 / (double)W * (1 - phi); /* small-window bias */
	return fmin(fmax(phi, 0), 0.97);
}

/* Noise of y[0..n) from its second differences (a trend, even a curving one, cancels in them):
 * sd(D2) = sigma_m sqrt(2 (1 - phi)(3 - phi)) for AR(1) noise of marginal sigma_m. Writes phi and
 * returns sigma_m; *step gets the step-to-step noise sigma_m sqrt(1 - phi). */
static double mgc_noise_of(const double *y, size_t n, double *scratch, double *phi, double *step)
{
	double *d = scratch + n + 1, sd2 = 0;
	if (n >= 4) {
		for (size_t i = 0; i + 2 < n; i++)
			d[i] = y[i + 2] - 2 * y[i + 1] + y[i];
		sd2 = 1.4826 * mgc_mad_scratch(d, n - 2, scratch);
	}
	*phi = mgc_ar_phi(y, n, 5 * sd2, scratch);
	*step = sd2 / sqrt(2 * (3 - *phi));
	return *step / sqrt(1 - *phi);
}

/* sigma (step to step), phi and sig_lvl (how far the level wanders) of the floor. A floor of
 * block minima has few points and hides the noise's memory: the input's bins without their
 * spikes then say how far AR(1) noise wanders (sig_lvl) and its phi at the blocks' spacing. */
static void mgc_noise(struct mgc_ctx *c)
{
	double med = mgc_median_copy(c->y, c->n, c->w->s1), fl = fmax(1.0, 1e-9 * fabs(med));
	double step, phi, lvl = mgc_noise_of(c->y, c->n, c->w->s1, &c->phi, &step);
	c->sigma = fmax(step, fl);
	c->sig_lvl = fmax(lvl, c->sigma);
	size_t bins = c->fl.bins;
	if (bins > 1) {
		double raw = mgc_noise_of(c->w->clean, c->w->pn, c->w->s1, &phi, &step);
		c->sig_lvl = fmax(c->sig_lvl, raw);
		c->phi = fmax(c->phi, pow(phi, (double)bins));
	}
}

/* ---------------------------------------------------------------- step 4: segments */

/* Change points by binary segmentation at the level's noise scale; a second pass at the residual
 * scale when the series wanders more than that (noise the AR estimate missed). */
static size_t mgc_change_points(struct mgc_ctx *c, size_t *cp)
{
	const double *x = c->x, *y = c->y;
	size_t n = c->n, ncp = 0;
	if (n < 2 * MGC_LMIN)
		return 0;
	struct mgc_work *w = c->w;
	double span = x[n - 1] - x[0], med = mgc_median_copy(y, n, w->s1), scale = c->sig_lvl;
	for (int pass = 0; pass < 2; pass++) {
		for (size_t i = 0; i < n; i++) {
			w->t[i] = (x[i] - x[0]) / span;
			w->yn[i] = (y[i] - med) / scale;
		}
		mgc_sums_fill(&w->sums, w->t, w->yn, n);
		ncp = mgc_binseg(&w->sums, n, MGC_CP_PENALTY * log((double)n), MGC_LMIN, MGC_MAX_CP, cp);
		if (pass == 1)
			break;
		size_t a = 0;
		for (size_t s = 0; s <= ncp; s++) {
			size_t b = s < ncp ? cp[s] : n;
			struct mgc_trend tr;
			double rs;
			mgc_seg_trend(x, y, a, b, c->phi, w, &tr, &rs);
			for (size_t i = a; i < b; i++)
				w->hy[i] = y[i] - tr.intercept - tr.slope * x[i];
			a = b;
		}
		double rsig = 1.4826 * mgc_mad_scratch(w->hy, n, w->s1);
		if (!(rsig > 1.5 * scale))
			break;
		scale = rsig;
	}
	return ncp;
}

/* A rise under this is the level's noise: 2 level sigmas. */
static double mgc_noise_rise(const struct mgc_ctx *c)
{
	return 2 * c->sig_lvl;
}

/* Trailing change points between two flat stretches at nearly the same level (a prefetch queue
 * draining at the end of a run, a cache trimmed once) do not start a new regime: merged, so a
 * long plateau is not judged on its last few points. "Nearly" is next to the series' range, and
 * a warmup's rise makes that wide: a later step up of MGC_JUMP_SIGMAS is kept (two steps of
 * 130 MiB in a pinned pool near 68 GiB, merged into one stretch rising 40 KiB per step, read
 * `growing` for 3,000 steps with a promise of the next sample, `test_pool_steps_kept`); so is one
 * of 2 level sigmas between two stretches that each rose less: merged, the step is a line rising
 * for their whole length (a validation pass that left 140 MiB behind at 57 GiB after a 1 GiB
 * warmup, under heavy-tailed noise of 46 MiB, read `growing` since the warmup for 1,500 steps; a
 * pinned pool's blocks read as a slow late leak, `test_step_between_flats_kept`). */
static size_t mgc_merge_trailing(struct mgc_ctx *c, size_t *cp, size_t ncp)
{
	const double *x = c->x, *y = c->y;
	size_t n = c->n;
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
		mgc_seg_trend(x, y, pa, pb, c->phi, c->w, &t1, &r1);
		mgc_seg_trend(x, y, pb, n, c->phi, c->w, &t2, &r2);
		double l1 = mgc_median_copy(y + pa, pb - pa, c->w->s1);
		double l2 = mgc_median_copy(y + pb, n - pb, c->w->s1);
		double d1 = fabs(t1.slope) * (x[pb - 1] - x[pa]);
		double d2 = fabs(t2.slope) * (x[n - 1] - x[pb]);
		if (d1 > 0.04 * range || d2 > 0.04 * range || fabs(l1 - l2) > 0.05 * range)
			break;
		double up = l2 - l1;
		double noise = mgc_noise_rise(c);
		if (up > MGC_JUMP_SIGMAS * c->sig_lvl || (up > noise && fmax(d1, d2) < noise))
			break; /* a step up drains no queue: a pool that grew, a staircase's step */
		ncp--;
	}
	return ncp;
}

static double mgc_seg_len(const struct mgc_ctx *c, const struct mgc_seg *s)
{
	return c->x[s->b - 1] - c->x[s->a];
}

/* No meaningful rise: it rose less than 2 level sigmas over its length, or its interval lies
 * below delta, or it straddles delta and either the slope is under delta/2 or a constant beats a
 * line by BIC (RSS floored at m sigma^2). */
static int mgc_seg_is_flat(const struct mgc_ctx *c, const struct mgc_seg *s)
{
	if (s->slope * mgc_seg_len(c, s) < mgc_noise_rise(c)) /* no growth yet */
		return 1;
	if (s->lo > c->delta)
		return 0;
	if (s->hi < c->delta || s->slope < 0.5 * c->delta)
		return 1;
	size_t m = s->b - s->a;
	double mean = 0, rss_c = 0, rss_l = 0;
	for (size_t i = s->a; i < s->b; i++)
		mean += c->y[i];
	mean /= (double)m;
	for (size_t i = s->a; i < s->b; i++) {
		double r = c->y[i] - s->icpt - s->slope * c->x[i];
		rss_c += (c->y[i] - mean) * (c->y[i] - mean);
		rss_l += r * r;
	}
	double fl = c->sig_lvl * c->sig_lvl * (double)m;
	double bic_c = (double)m * log(fmax(rss_c, fl) / (double)m) + log((double)m);
	double bic_l = (double)m * log(fmax(rss_l, fl) / (double)m) + 2 * log((double)m);
	return bic_c <= bic_l;
}

/* The meaningful growth: what reaches the limit within the run horizon (1e6 steps or seconds),
 * from the headroom left above the peaks; with no limit known, what doubles the memory within
 * it. Never below the caller's floor. */
static double mgc_delta(const struct mgc_ctx *c)
{
	double head = 0;
	if (c->in->headroom)
		head = c->in->limit > 0 ? c->in->limit - c->peak : c->level;
	return fmax(c->in->delta_abs, head > 0 ? head / MGC_RUN_HORIZON : 0);
}

/* Segments with their lines; the level, peak and meaningful growth; which segments are flat. */
static void mgc_segments(struct mgc_ctx *c)
{
	size_t cp[MGC_MAX_CP];
	size_t ncp = mgc_change_points(c, cp);
	if (ncp)
		ncp = mgc_merge_trailing(c, cp, ncp);
	c->nseg = ncp + 1;
	for (size_t s = 0; s <= ncp; s++) {
		struct mgc_seg *g = &c->seg[s];
		struct mgc_trend tr;
		double rs;
		g->a = s ? cp[s - 1] : 0;
		g->b = s < ncp ? cp[s] : c->n;
		mgc_seg_trend(c->x, c->y, g->a, g->b, c->phi, c->w, &tr, &rs);
		g->slope = tr.slope;
		g->lo = tr.slope_lo;
		g->hi = tr.slope_hi;
		g->icpt = tr.intercept;
	}
	const struct mgc_seg *last = &c->seg[ncp];
	c->level = last->icpt + last->slope * c->in->x_last;
	c->peak = fmax(c->level, c->y[c->n - 1]) + c->fl.excess;
	c->delta = mgc_delta(c);
	for (size_t s = 0; s <= ncp; s++)
		c->seg[s].flat = mgc_seg_is_flat(c, &c->seg[s]);
}

/* The floor's level at x: the line of the segment holding x. */
static double mgc_level_at(const struct mgc_ctx *c, double x)
{
	size_t s = 0;
	while (s + 1 < c->nseg && x >= c->x[c->seg[s + 1].a])
		s++;
	return c->seg[s].icpt + c->seg[s].slope * x;
}

/* The level now, robustly: the median of the last few floor points. */
static double mgc_level_now(const struct mgc_ctx *c)
{
	size_t k = c->n < 5 ? c->n : 5;
	return mgc_median_copy(c->y + c->n - k, k, c->w->s1);
}


/* ---------------------------------------------------------------- step 5: the growth regimes */

/* One reading of the current growth: a regime that began with segment s. */
struct mgc_cand {
	size_t s;            /* first segment */
	int late;            /* it began after a flat stretch long enough to say the run had settled */
	int joined;          /* ... read with flat segments joined into one stretch (mgc_flat_from) */
	int creep;           /* ... late by the creep before it (mgc_creep_from) */
	double x_on;         /* onset */
	double lvl_on;       /* the floor's level just before */
	double dur;          /* x from the onset to the last point */
	double rise;         /* the floor's rise since the onset */
	double h1, h2;       /* ... over the first and the second half of that time */
	double rate, lo, hi; /* Theil-Sen over the regime: its average rate, pauses included */
	double z;            /* Mann-Kendall Z of the regime */
	double wander;       /* how far the settled stretch before it wandered over as long (late only) */
	double gap;          /* the longest flat stretch inside */
	double flat;         /* the flat stretches inside, in all */
	double pause;        /* the flat stretch at the end */
	double climb;        /* x from the onset to the pause */
	double rung_gap;     /* the longest its level took to climb another MGC_STEP_SIGMAS level sigmas */
	int rungs;           /* ... and how many times it did (rungs crossed at once count once) */
	double spread;       /* the Laplace trend statistic of those times (negative: they crowd early) */
	int events;          /* separate rises: jumps and rising segments, or its rungs if more */
	int continuous;      /* one rising segment covers half the time */
	int decel;           /* a saturating exponential fits the growth clearly better than a line;
			      * -1: not yet tested (mgc_cand_decel) */
	int pool;            /* its steps double, no closer together; -1: not yet read (mgc_cand_pool) */
	size_t a0, end;      /* the floor points of the growth: from the last point before it to the pause */
};

/* How long a flat stretch must be to say the run had settled (and a rise after it is late). */
static double mgc_settle(const struct mgc_ctx *c)
{
	return fmax(0.5 * c->in->horizon, MGC_MIN_SAMPLES * c->in->dx);
}

/* How long any leak has risen, at least: the warmup horizon and MGC_MIN_SAMPLES samples. */
static double mgc_min_rise(const struct mgc_ctx *c)
{
	return fmax(c->in->horizon, MGC_MIN_SAMPLES * c->in->dx);
}

static double mgc_seg_at(const struct mgc_ctx *c, size_t s, double x)
{
	return c->seg[s].icpt + c->seg[s].slope * x;
}

/* The middle of three points of y from i on (fewer at the end of [i, b)). */
static double mgc_mid3(const double *y, size_t i, size_t b)
{
	double t[3];
	size_t m = b - i < 3 ? b - i : 3;
	return mgc_median_copy(y + i, m, t);
}

/* The next step in points y[i, b) (i >= 3; the floor's or the input bins' minima): the first point
 * from i on where the three points after stand `jump` above the three before, its end in *e (it
 * goes on while the points after still stand a jump above) and its height in *up (to the newest
 * point when it is not seen to end: a step inside a bin leaves a point between). Returns b when
 * there is none. */
static size_t mgc_next_step(const double *y, size_t i, size_t b, double jump, size_t *e, double *up)
{
	for (; i + 3 <= b; i++) {
		if (!(mgc_mid3(y, i, b) - mgc_mid3(y, i - 3, i) > jump))
			continue;
		for (*e = i; *e + 3 <= b && mgc_mid3(y, *e + 1, b) - mgc_mid3(y, *e - 2, *e + 1) > jump;)
			++*e;
		*up = (*e + 3 <= b ? mgc_mid3(y, *e, b) : y[b - 1]) - mgc_mid3(y, i - 3, i);
		return i;
	}
	return b;
}

/* Did the step mgc_next_step found at [i, e] keep its level: the three points after those after
 * its end still stand `jump` above the three before it (a spike the floor kept for a point or
 * two goes up and back)? Its height becomes what it kept. A step not yet seen that far is kept. */
static int mgc_step_kept(const struct mgc_ctx *c, size_t i, size_t e, size_t b, double jump, double *up)
{
	if (e + 6 > b)
		return 1;
	double kept = mgc_mid3(c->y, e + 3, b) - mgc_mid3(c->y, i - 3, i);
	*up = fmin(*up, kept);
	return kept > jump;
}

/* The least input bin in [a, b): its index (a when the range is empty). */
static size_t mgc_least_bin(const struct mgc_work *w, size_t a, size_t b)
{
	size_t least = a;
	for (size_t i = a; i < b; i++)
		least = w->pmin[i] < w->pmin[least] ? i : least;
	return least;
}

/* The first input bin at x or after it (the bins' count when none is). */
static size_t mgc_bin_from(const struct mgc_work *w, double x)
{
	size_t i = 0;
	while (i < w->pn && w->px[i] < x)
		i++;
	return i;
}

/* What a step the input bins' minima made at bins [i, e] kept: the least bin after it up to b
 * over the three bins before it (a spike goes back down, a step only adds). */
static double mgc_bin_kept(const struct mgc_work *w, size_t i, size_t e, size_t b)
{
	return w->pmin[mgc_least_bin(w, e + 1, b)] - mgc_mid3(w->pmin, i - 3, i);
}

/* Did the step mgc_next_step found at [i, e] in points [.., b) keep its level: on the floor's
 * points as mgc_step_kept says, on the input bins' minima (bins) by the least bin after it
 * (mgc_bin_kept; a step at the last bin is not yet seen to end: kept)? Its height becomes what
 * it kept. */
static int mgc_step_held(const struct mgc_ctx *c, int bins, size_t i, size_t e, size_t b, double jump,
			 double *up)
{
	if (!bins)
		return mgc_step_kept(c, i, e, b, jump, up);
	if (e + 1 >= b)
		return 1;
	double kept = mgc_bin_kept(c->w, i, e, b);
	*up = fmin(*up, kept);
	return kept > jump;
}

/* The steps of MGC_STEP_SIGMAS in points [i, b) (from i >= 3), on the floor's points or (bins) on
 * the input bins' minima, each over within MGC_STEP_WIDTH points and kept (mgc_step_held): how
 * many (0 at a steep stretch, a slope, or one not seen to end), what they carried in *carried, the
 * longest stretch between them from x0 to x1 (the ends included) in *gap and the x of the last
 * one's end in *last. */
static int mgc_steps_in(const struct mgc_ctx *c, int bins, size_t i, size_t b, double x0, double x1,
			double *carried, double *gap, double *last)
{
	const double *y = bins ? c->w->pmin : c->y, *x = bins ? c->w->px : c->x;
	double jump = MGC_STEP_SIGMAS * c->sig_lvl, up = 0;
	size_t e = 0;
	int steps = 0;
	*carried = 0, *gap = 0, *last = x0;
	for (; (i = mgc_next_step(y, i, b, jump, &e, &up)) < b; i = e + 3) {
		if (e - i >= MGC_STEP_WIDTH || e + 3 > b) {
			steps = 0; /* a steep stretch (a slope, not a step), or one not seen to end */
			break;
		}
		if (!mgc_step_held(c, bins, i, e, b, jump, &up))
			continue;
		*carried += up;
		*gap = fmax(*gap, x[i - 1] - *last);
		*last = x[e];
		steps++;
	}
	*gap = fmax(*gap, x1 - *last);
	return steps;
}

/* Under spikes, the steps of rising floor segment g read on the input bins' minima (a floor point
 * stands for a block as wide as the longest spike: two steps of 370 and 360 MiB 52 steps apart
 * under 31-step checkpoint spikes made three floor points of slope, read as a late leak of 3.9 MiB
 * per step that the pause after took back): from the segment's first point on (the three bins
 * before it the level a step there rose from) to its end, together carrying MGC_STEP_SHARE of the
 * bins' own rise. Returns and says as mgc_seg_steps does. */
static int mgc_bin_steps(const struct mgc_ctx *c, const struct mgc_seg *g, double *gap, double *end)
{
	const struct mgc_work *w = c->w;
	size_t a = mgc_bin_from(w, c->x[g->a]), b = a;
	while (b < w->pn && w->px[b] <= c->x[g->b - 1])
		b++;
	size_t from = a >= 3 ? a : 3;
	double carried, last;
	int steps = mgc_steps_in(c, 1, from, b, c->x[g->a], c->x[g->b - 1], &carried, gap, &last);
	if (steps < 2)
		return 0;
	double rise = mgc_mid3(w->pmin, b - 3, b) - mgc_mid3(w->pmin, from - 3, b); /* the bins' own */
	if (carried < MGC_STEP_SHARE * rise)
		return 0;
	if (end)
		*end = last;
	return steps;
}

/* A rising segment that is a few steps rather than a slope (steps of a few hundred MiB under
 * noise of as many merge into one rising segment): jumps where the three points after stand
 * MGC_STEP_SIGMAS above the three before, each over within MGC_STEP_WIDTH points and kept
 * (mgc_step_kept: three spikes the floor kept under irregular spikes made a 160 KiB per step
 * leak's 1,800 steps of slope "a few steps", a staircase with no flat before it, `growing` at
 * most prefixes from step 1400 to 2700: `test_spike_no_step`), carrying MGC_STEP_SHARE of its
 * rise (what they kept); under spikes, read on the input's bins when the floor shows none
 * (mgc_bin_steps). Returns how many (0: a slope, or fewer than 2 jumps) and in *gap the longest
 * stretch between them (the segment's ends included). */
static int mgc_seg_steps(const struct mgc_ctx *c, const struct mgc_seg *g, double *gap, double *end)
{
	double carried, last;
	int steps = mgc_steps_in(c, 0, g->a + 3, g->b, c->x[g->a], c->x[g->b - 1], &carried, gap, &last);
	if (steps >= 2 && carried >= MGC_STEP_SHARE * g->slope * mgc_seg_len(c, g)) {
		if (end)
			*end = last;
		return steps;
	}
	return c->fl.bins > 1 ? mgc_bin_steps(c, g, gap, end) : 0;
}

/* Segment s's line at its first and at its last point. */
static double mgc_seg_start(const struct mgc_ctx *c, size_t s)
{
	return mgc_seg_at(c, s, c->x[c->seg[s].a]);
}

static double mgc_seg_end(const struct mgc_ctx *c, size_t s)
{
	return mgc_seg_at(c, s, c->x[c->seg[s].b - 1]);
}

/* The higher end of segment s's line: a jump onto the next is measured from it, so a short
 * segment through a dip of AR noise (its line falling steeply) makes no jump of the wander back. */
static double mgc_seg_top(const struct mgc_ctx *c, size_t s)
{
	return fmax(mgc_seg_start(c, s), mgc_seg_end(c, s));
}

/* The lower of segment s's ends. */
static double mgc_seg_low(const struct mgc_ctx *c, size_t s)
{
	return fmin(mgc_seg_start(c, s), mgc_seg_end(c, s));
}

/* What rising segment s added and kept: from the higher of its start and the top of the segment
 * before to the lower of its end and the start of the next. */
static double mgc_seg_gain(const struct mgc_ctx *c, size_t s)
{
	double from = s > 0 ? fmax(mgc_seg_start(c, s), mgc_seg_top(c, s - 1)) : mgc_seg_start(c, s);
	double to = s + 1 < c->nseg ? fmin(mgc_seg_end(c, s), mgc_seg_start(c, s + 1)) : mgc_seg_end(c, s);
	return to - from;
}

/* How far segment s stands wholly above the top of the one before. */
static double mgc_seg_jump(const struct mgc_ctx *c, size_t s)
{
	return s > 0 ? mgc_seg_low(c, s) - mgc_seg_top(c, s - 1) : 0;
}

/* The least rise that is an event of the regime from segment s: MGC_EVENT_SHARE of its largest
 * jump or rising segment's gain (steps of one staircase are alike; a wiggle of 2 level sigmas
 * beside a level shift of 250 is no step of it). */
static double mgc_event_floor(const struct mgc_ctx *c, size_t s)
{
	double most = 0;
	for (size_t i = s; i < c->nseg; i++)
		most = fmax(most, fmax(mgc_seg_jump(c, i), c->seg[i].flat ? 0 : mgc_seg_gain(c, i)));
	return MGC_EVENT_SHARE * most;
}

/* The events of a run of rising segments from x `from` to `to`, `n` counted in its pieces: one
 * when it is over within the warmup horizon (a level shift allocated over 28 steps, segmented in
 * two pieces, counted a jump and a gain for each: a staircase of four steps). */
static int mgc_run_events(const struct mgc_ctx *c, int n, double from, double to)
{
	return n > 1 && to - from < mgc_min_rise(c) ? 1 : n;
}

/* The first of the flat segments just before segment s that hold one level, no step between
 * them (s when the one before is no flat): noise can split a flat stretch at a change point, and
 * two halves of 65 steps are one stretch of 130, as long as the run must stay flat to have settled
 * (a leak after it read `late` at one prefix and `growing` from the start at the next,
 * `test_split_flat_still_late`). */
static size_t mgc_flat_from(const struct mgc_ctx *c, size_t s)
{
	size_t f = s;
	while (f > 0 && c->seg[f - 1].flat &&
	       (f == s || fabs(mgc_seg_start(c, f) - mgc_seg_end(c, f - 1)) < MGC_STEP_SIGMAS * c->sig_lvl))
		f--;
	return f;
}

/* The lines through the two halves of floor points [a, b) into *t1 and *t2. */
static void mgc_halves(const struct mgc_ctx *c, size_t a, size_t b, struct mgc_trend *t1, struct mgc_trend *t2)
{
	size_t h = a + (b - a) / 2;
	double rs;
	mgc_seg_trend(c->x, c->y, a, h, c->phi, c->w, t1, &rs);
	mgc_seg_trend(c->x, c->y, h, b, c->phi, c->w, t2, &rs);
}

/* The rising pieces regime k begins with, segments k->s to end (one after another, no flat
 * between, no steps inside; mgc_cand_shape finds where they end), are one sustained rise when
 * they cover half its time and do not slow down: at about one slope (heavy-tailed noise splits a
 * steady leak's line at a change point or two: a 182 KiB per step leak in pieces of 177-199 KiB per
 * step, none half its time, read `growing` at one prefix), or, when a slow wander makes their
 * slopes differ more (a 0.46 MiB per step leak under AR noise in six pieces of 0.20-0.61 MiB per
 * step read `growing` for 3,000 steps, `test_leak_pieces_wander`), the line through their second
 * half rising at least MGC_SAME_SLOPE of the line through their first, its interval reaching up to
 * the first's. A warmup that slows down is pieces each slower than the one before (three such are
 * no line, however close), or halves of which the second is surely slower (a cache's 1 - e^-t/tau
 * fill, halves of 4.2 and 3.4 MiB per step at step 2095: `test_cache_pieces_no_leak`). */
static int mgc_first_run_steady(const struct mgc_ctx *c, const struct mgc_cand *k, size_t end)
{
	double slow = INFINITY, fast = 0, prev = INFINITY;
	int falls = 1;
	if (end < k->s + 2)
		return 0; /* none, or one piece: continuous by its own length or not at all */
	for (size_t i = k->s; i < end; i++) {
		double m = c->seg[i].slope;
		falls &= m < prev;
		prev = m, slow = fmin(slow, m), fast = fmax(fast, m);
	}
	size_t a = c->seg[k->s].a, b = c->seg[end - 1].b;
	if (!(c->x[b - 1] - c->x[a] >= 0.5 * k->dur) || (end - k->s >= 3 && falls) || !(slow > 0))
		return 0;
	if (slow >= MGC_SAME_SLOPE * fast)
		return 1;
	if (b - a < 8)
		return 0;
	struct mgc_trend t1, t2;
	mgc_halves(c, a, b, &t1, &t2);
	return t2.slope >= MGC_SAME_SLOPE * t1.slope && t2.slope_hi >= t1.slope_lo;
}

/* Flat segment i of the regime from segment s is a breath inside its rise, no pause: neither the
 * regime's first nor the last, shorter than the settle length, between two rising pieces (no
 * steps inside either), its line rising at least MGC_BREATH_SHARE of the slower of theirs. A
 * piece of a few floor points is flat when its interval is wide, however it slopes: a 5-point
 * piece rising 3.3 MiB per step inside a leak's rise of about 3 MiB per step under AR(0.92) noise
 * cut it in two, neither continuous, and the leak read `growing` ("warmup or leak cannot be told
 * yet") at 17 of 55 prefixes between `leak`s (`test_breath_in_rise`). */
static int mgc_breath(const struct mgc_ctx *c, size_t s, size_t i)
{
	const struct mgc_seg *g = c->seg;
	double gap;
	if (!g[i].flat || i <= s || i + 1 >= c->nseg || !(mgc_seg_len(c, &g[i]) < mgc_settle(c)))
		return 0;
	if (g[i - 1].flat || g[i + 1].flat || mgc_seg_steps(c, &g[i - 1], &gap, NULL) ||
	    mgc_seg_steps(c, &g[i + 1], &gap, NULL))
		return 0;
	double slower = fmin(g[i - 1].slope, g[i + 1].slope);
	return slower > 0 && g[i].slope >= MGC_BREATH_SHARE * slower;
}

/* Events, gaps and the pause of the regime from segment k->s. An event is a rise the level kept:
 * a segment wholly MGC_STEP_SIGMAS above the top of the one before (MGC_HELD_SIGMAS when both are
 * flat: the change points split the level there, and each side is a line through many points),
 * or a rising segment that added 2 and kept them (a blip of heavy-tailed noise the floor kept, up
 * and back within a segment or two, is none: two level shifts and such blips read as a staircase
 * of four steps), and either at least mgc_event_floor. Rising segments one after another are one
 * rise: all its events count only when it lasted the warmup horizon (mgc_run_events). A staircase
 * of four steps of about 150, 420, 730 and 280 MiB, 710 steps apart, under AR noise (a level
 * sigma 79 MiB) counted two and read `plateau` 0.8 after its fourth (`test_held_steps_count`). */
static void mgc_cand_shape(const struct mgc_ctx *c, struct mgc_cand *k)
{
	size_t last = c->nseg - 1, pause_seg = c->seg[last].flat && last > k->s ? last : last + 1;
	double least = mgc_event_floor(c, k->s);
	k->pause = pause_seg <= last ? c->in->x_last - c->x[c->seg[last].a] : 0;
	k->climb = (pause_seg <= last ? c->x[c->seg[last].a] : c->in->x_last) - k->x_on;
	k->gap = 0;
	k->flat = 0;
	k->events = 0;
	k->continuous = 0;
	double run_from = NAN; /* where the rising segments since the last flat or step began */
	int run = 0;           /* ... and their events */
	size_t first_end = c->nseg; /* where the rising segments k begins with end */
	for (size_t i = k->s; i <= last; i++) {
		const struct mgc_seg *g = &c->seg[i];
		double len = mgc_seg_len(c, g), gap;
		double held = g->flat && i > 0 && c->seg[i - 1].flat ? MGC_HELD_SIGMAS : MGC_STEP_SIGMAS;
		int ev = mgc_seg_jump(c, i) > fmax(least, held * c->sig_lvl);
		int steps = g->flat ? 0 : mgc_seg_steps(c, g, &gap, NULL);
		if ((!g->flat && !steps) || mgc_breath(c, k->s, i)) {
			if (isnan(run_from))
				run_from = c->x[g->a];
			run += ev + (mgc_seg_gain(c, i) > fmax(least, 2 * c->sig_lvl));
			k->continuous |= len >= 0.5 * k->dur;
			continue;
		}
		k->events += mgc_run_events(c, run, run_from, c->x[g->a]) + ev;
		run = 0, run_from = NAN;
		first_end = first_end < c->nseg ? first_end : i;
		if (steps) { /* a few steps: flat between them */
			k->events += steps;
			k->gap = fmax(k->gap, gap);
			k->flat += len;
		} else if (i < pause_seg) {
			k->gap = fmax(k->gap, len);
			k->flat += len;
		}
	}
	k->events += mgc_run_events(c, run, run_from, c->in->x_last);
	k->continuous |= mgc_first_run_steady(c, k, first_end);
}

/* The saturating exponential profiled over floor points [a, b) (at least 8), binned to at most
 * MGC_EXP_CAP medians, the likelihood's noise the larger of the level's and the fit's own
 * residuals (so the steps of a staircase do not count as curvature). */
static void mgc_exp_fit(const struct mgc_ctx *c, size_t a, size_t b, struct mgc_expfit *e)
{
	struct mgc_work *w = c->w;
	size_t m = b - a, per = (m + MGC_EXP_CAP - 1) / MGC_EXP_CAP, k = 0;
	for (size_t i = a; i < b; i += per) {
		size_t j = i + per < b ? i + per : b;
		double sx = 0;
		for (size_t q = i; q < j; q++)
			sx += c->x[q];
		w->bx[k] = sx / (double)(j - i);
		w->by[k] = per > 1 ? mgc_median_copy(c->y + i, j - i, w->s2) : c->y[i];
		k++;
	}
	double s2 = c->sig_lvl * c->sig_lvl / (double)per;
	mgc_exp_profile(w->bx, w->by, k, s2, w->hx, e);
	double s2fit = e->rss_min / (double)(k > 3 ? k - 3 : 1);
	if (s2fit > s2)
		mgc_exp_profile(w->bx, w->by, k, s2fit, w->hx, e);
}

/* Where the regime that ends in the last segment began: after the last flat stretch that is long
 * enough to have settled and longer than twice any flat stretch after it. */
static size_t mgc_regime_start(const struct mgc_ctx *c, double *gap)
{
	size_t last = c->nseg - 1, s = last;
	*gap = 0;
	while (s > 0) {
		double len = mgc_seg_len(c, &c->seg[s - 1]);
		if (c->seg[s - 1].flat && len >= mgc_min_rise(c) && len >= 2 * *gap)
			break;
		if (c->seg[s - 1].flat)
			*gap = fmax(*gap, len);
		s--;
	}
	return s;
}

/* Does a saturating exponential describe points [a, b) clearly better than a line, with a time
 * constant within twice their span? That time constant in *tau (unless NULL). */
static int mgc_decelerates(const struct mgc_ctx *c, size_t a, size_t b, double *tau)
{
	if (b - a < 8)
		return 0;
	struct mgc_expfit e;
	mgc_exp_fit(c, a, b, &e);
	if (tau)
		*tau = e.tau_hat;
	return e.identified && e.tau_hat < 2 * (c->x[b - 1] - c->x[a]);
}

/* Is continuous regime k, a later piece of a rise from the start (no flat between), the tail of
 * that rise slowing down? The whole rise since its regime began slows down (mgc_decelerates) and
 * k's own points do not reject its time constant (their profile keeps it, their best fit bent
 * too): an lru_cache filling 1 - exp(-t/tau) read `leak` "from the start" from its newest
 * straight-looking piece, which alone could not show the bend (`test_cache_tail_slows`). A leak's
 * straight tail after a faster warmup rejects that bend once it has lasted; till then it waits.
 * (Keeping up to twice the whole's time constant took a leak on an arena creep under AR noise for
 * such a tail, `growing` between `leak`s: docs/CLASSIFIER.md, session 47.) */
static int mgc_tail_slows(const struct mgc_ctx *c, const struct mgc_cand *k)
{
	double gap, tau;
	size_t from = c->seg[mgc_regime_start(c, &gap)].a;
	if (from >= k->a0 || k->end - k->a0 < 8 || !mgc_decelerates(c, from, k->end, &tau))
		return 0;
	struct mgc_expfit t;
	mgc_exp_fit(c, k->a0, k->end, &t);
	return isfinite(t.tau_hat) && t.tau_lo <= tau;
}

/* A rise after the run settled is no warmup; one from the start must not be slowing down, nor be
 * the tail of one that does (mgc_tail_slows; a staircase's irregular steps can look like it, so
 * late rises skip this test). Tested once, when a rule needs it. */
static int mgc_cand_decel(const struct mgc_ctx *c, struct mgc_cand *k)
{
	if (k->decel < 0)
		k->decel = !k->late &&
			   (mgc_decelerates(c, k->a0, k->end, NULL) || (k->continuous && mgc_tail_slows(c, k)));
	return k->decel;
}

/* The differences of points [a, b) `span` x apart (at most half their length) into d from k on;
 * returns the new count. */
static size_t mgc_lag_diffs(const struct mgc_ctx *c, size_t a, size_t b, double span, double *d, size_t k)
{
	double len = b > a ? c->x[b - 1] - c->x[a] : 0;
	if (b - a < 8 || !(len > 0))
		return k;
	size_t lag = (size_t)((double)(b - a - 1) * fmin(span, 0.5 * len) / len);
	if (lag < 1)
		lag = 1;
	for (size_t i = a; i + lag < b; i++)
		d[k++] = c->y[i + lag] - c->y[i];
	return k;
}

/* How far points [a, b) wandered between points `span` x apart: the robust spread of those
 * differences about their median. White noise gives sigma sqrt 2 at any span; AR(1) noise wanders
 * further the longer the span, as a rise would have to beat. 0 for fewer than 8 points. */
static double mgc_wander(const struct mgc_ctx *c, size_t a, size_t b, double span)
{
	double *d = c->w->s1 + c->n + 1;
	size_t k = mgc_lag_diffs(c, a, b, span, d, 0);
	return k ? 1.4826 * mgc_mad_scratch(d, k, c->w->s1) : 0;
}

/* Whether regime k reads as a staircase: separate rises, flat for MGC_STAIR_FLAT of its climb
 * or more. Not half: under noise and spikes the floor's segments slope about each step (a block
 * that holds a step rises with it), so a staircase's flat stretches read shorter than its pauses
 * were: at half, a staircase under a sawtooth whose readings were flat for 40-43% of their climb
 * said `plateau` in its pauses (`test_stair_flat_share`). */
static int mgc_is_stair(const struct mgc_cand *k)
{
	return k->events > 0 && k->flat >= MGC_STAIR_FLAT * k->climb;
}

/* A line through regime k rises at least half as fast as it did: its steps are spread over its
 * time, not one or two jumps that carry it (two level shifts after a warmup are three steps). */
static int mgc_steady_steps(const struct mgc_cand *k)
{
	return k->rate >= 0.5 * k->rise / k->dur;
}

/* The least rate a staircase's steps allow: its rate is known from how many steps it made, not
 * from a line through them (the residuals about a line are steps, strongly autocorrelated, and
 * widen its interval several times over). N separate rises read as a Poisson count over the
 * regime's time give at least rise/dur x L(N)/N, L the count's lower 97.5% bound (Wilson-Hilferty:
 * 1.1 for 4 steps, 5.5 for 10). -INFINITY unless it is a staircase (MGC_MIN_EVENTS steps,
 * mgc_is_stair). */
static double mgc_stair_lo(const struct mgc_cand *k)
{
	double n = k->events;
	if (k->events < MGC_MIN_EVENTS || !mgc_is_stair(k))
		return -INFINITY;
	double q = 1 - 1 / (9 * n) - MGC_Z95 / (3 * sqrt(n));
	return k->rise / k->dur * q * q * q;
}

/* The longest time floor points [a, b) took to climb another MGC_STEP_SIGMAS level sigmas from
 * lvl_on (their level, the middle of three points, crossing rungs that far apart): the pauses a
 * rise made inside itself, whether its segments show them or not (the steps of a staircase under
 * noise merge into one rising segment). A rung the level then falls a rung under was a blip, no
 * step (heavy-tailed noise the floor kept): it is taken back, and the next counted from where the
 * level fell to. */
static double mgc_rung_gap(const struct mgc_ctx *c, size_t a, size_t b, double lvl_on, struct mgc_cand *k)
{
	double h = MGC_STEP_SIGMAS * c->sig_lvl, next = lvl_on + h, last = c->x[a], gap = 0, sum = 0;
	double held = -INFINITY, x_rung = 0, last0 = 0, gap0 = 0; /* the newest rung, to take back */
	size_t at = a;
	k->rungs = 0;
	k->spread = 0;
	if (!(h > 0))
		return 0;
	for (size_t i = a + 1; i + 1 < b; i++) {
		double v = mgc_mid3(c->y, i - 1, b);
		if (v < held - h) { /* it fell back under the newest rung */
			k->rungs--;
			sum -= x_rung;
			last = last0;
			gap = gap0;
			next = v + h;
			held = -INFINITY;
			continue;
		}
		if (!(v >= next))
			continue;
		if (k->rungs == 0 || i - at > MGC_STEP_WIDTH) { /* a ramp's rungs in a row are one rise */
			sum += x_rung = c->x[i];
			k->rungs++;
			last0 = last;
			gap0 = gap;
			held = v;
		} else if (held > -INFINITY) {
			held = v;
		}
		gap = fmax(gap, c->x[i] - last);
		next = v + h; /* a rung above where it stands, not above a grid the noise may graze */
		last = c->x[i];
		at = i;
	}
	/* the rungs before the last, given the last, are uniform over [onset, last] for steps at a
	 * steady rate (the Laplace test for a failure-truncated Poisson process) */
	if (k->rungs >= 2 && last > c->x[a]) {
		double m = k->rungs - 1, mean = (sum - last) / m;
		k->spread = (mean - 0.5 * (c->x[a] + last)) / ((last - c->x[a]) / sqrt(12 * m));
	}
	return gap;
}

/* The limit from `level` at `slope`; INFINITY when no limit is known or it does not rise. */
static double mgc_level_oom(double limit, double level, double slope)
{
	return limit > 0 && slope > 0 ? fmax(0, limit - level) / slope : INFINITY;
}

/* Steps until the limit at `rate` from the peaks; INFINITY without a limit or a rise. */
static double mgc_to_oom(const struct mgc_ctx *c, double rate)
{
	return mgc_level_oom(c->in->limit, c->peak, rate);
}

/* The limit at the rate of a `growing` rise, when it comes within MGC_GROWING_REACH times the time
 * seen; else INFINITY: further ahead, the rate of a rise not yet told from a warmup is a guess (a
 * pinned pool's rare blocks, `growing` 66 KiB per step at step 2500 and 44 GiB, projected the limit
 * at step 539,348; a device's reserved memory, flat for 4,300 steps after a ramp and read `growing`
 * on its floor, projected it 15,000-27,000 steps ahead, about 4 times the time seen, at 18
 * prefixes). */
static double mgc_growing_oom(const struct mgc_ctx *c, double rate)
{
	double t = mgc_to_oom(c, rate);
	return t > MGC_GROWING_REACH * (c->in->x_last - c->in->x_first) ? INFINITY : t;
}

/* The level's noise at the scale of a stretch that wandered `wander` (mgc_wander): its sigma, or
 * the wander's, whichever is larger. */
static double mgc_wander_noise(const struct mgc_ctx *c, double wander)
{
	return fmax(c->sig_lvl, wander / sqrt(2.0));
}

/* The rise regime k must make to be a leak: MGC_RISE_SIGMAS level sigmas, or of the wander of the
 * flat stretch before a late one. */
static double mgc_rise_needed(const struct mgc_ctx *c, const struct mgc_cand *k)
{
	return MGC_RISE_SIGMAS * mgc_wander_noise(c, k->wander);
}

/* How fast regime k rose at least, read at the input's bin resolution: the bins' lower envelope
 * (the least minimum of a bin and of those after it: a spike only adds) at the quarters of its
 * time, which must rise as much as a leak needs (mgc_rise_needed) in each of the last three (the
 * first may still hold the flat before an onset the floor's coarse blocks place early); the least
 * of their rates, or 0. Under 90-step spikes the floor's blocks are 90 steps wide and lag the
 * input: a fast leak shows two floor points of its rise and a line through its reading any slope,
 * while its bins rise steadily; a level shift raises one quarter, not three (2 level sigmas a
 * quarter let AR noise wanders through: `--quick 150` false leak 0.93 -> 1.08%). */
static double mgc_bins_rate_lo(const struct mgc_ctx *c, const struct mgc_cand *k)
{
	const struct mgc_work *w = c->w;
	size_t pn = w->pn;
	if (pn < 8)
		return 0;
	double env[5], least = w->pmin[pn - 1], q = 0.25 * k->dur, lo = INFINITY;
	int j = 3;
	env[4] = least;
	for (size_t i = pn; i-- > 0 && j >= 0;) {
		while (j >= 0 && w->px[i] < k->x_on + j * q)
			env[j--] = least;
		least = fmin(least, w->pmin[i]);
	}
	while (j >= 0)
		env[j--] = least;
	for (j = 1; j < 4; j++) {
		if (!(env[j + 1] - env[j] >= mgc_rise_needed(c, k)))
			return 0;
		lo = fmin(lo, (env[j + 1] - env[j]) / q);
	}
	return lo;
}

/* Where the flat stretch that begins with segment f began: a segment through a steep rise and the
 * first points of the flat top after it (a pinned pool of 12 GiB filled by step 42, flat from
 * step 60, its segment's last point at step 88) hides those points from the stretch. They belong
 * to it while they stand within 2 level sigmas of its start, and the stretch began halfway between
 * the first of them and the point before (a floor point stands for a block of steps). */
static double mgc_flat_start(const struct mgc_ctx *c, size_t f)
{
	size_t i = c->seg[f].a;
	if (f == 0)
		return c->x[i];
	double lvl = mgc_seg_start(c, f);
	while (i > c->seg[f - 1].a + 1 && fabs(c->y[i - 1] - lvl) <= 2 * c->sig_lvl)
		i--;
	return 0.5 * (c->x[i - 1] + c->x[i]);
}

/* Did segments [f, s) (mgc_flat_start: with the flat points at the end of the segment before)
 * last long enough to say the run had settled before segment s: the settle length and the
 * regime's longest gap? A leak of 0.95 MiB per step from step 160 after that pool read `growing`
 * ("warmup or leak cannot be told yet") at 39 of 64 prefixes from step 364 to 994, its flat
 * stretch 68 steps long by the segments (`test_flat_top_in_warmup_segment`). */
static int mgc_settled_since(const struct mgc_ctx *c, size_t f, size_t s, double gap)
{
	double len = f < s ? c->x[c->seg[s - 1].b - 1] - mgc_flat_start(c, f) : 0;
	return len >= mgc_settle(c) && len >= gap;
}

/* The first of the segments before segment s that are flat or rise at under MGC_SETTLED_SHARE of
 * `rate` (their interval's top): the run had settled at the scale of a continuous rise at that
 * rate when they last long enough (mgc_settled_since). A 70 MiB per step leak after 4,000 steps
 * of a 0.5 MiB per step creep was no late onset by the flats alone and no rise from the start
 * either, and read `growing` for 400 steps to 20 GiB under the limit (`test_fast_after_creep`).
 * The rate is the slower of the rise's and its first segment's: a reading from the creep's last
 * segment on averages the two (6.3 MiB per step). A piece faster than that still belongs to the
 * creep when the line through it and the segments after it, up to s, rises at under
 * MGC_CREPT_SHARE of `rate` (not the first segment: the warmup's): a wander of AR noise lifts one
 * piece for a while (a 3.3 MiB per step leak after 300 steps within 180 MiB read as settled at one
 * prefix, then as a rise from the start, `growing`, while a 67-step piece of that stretch rose
 * 0.58 MiB per step, `test_wander_before_onset`). */
static size_t mgc_creep_from(const struct mgc_ctx *c, size_t s, double rate)
{
	size_t end = s;
	struct mgc_trend tr;
	double rs;
	for (;; s--) {
		while (s > 0 && (c->seg[s - 1].flat || c->seg[s - 1].hi < MGC_SETTLED_SHARE * rate))
			s--;
		if (s < 2)
			return s;
		mgc_seg_trend(c->x, c->y, c->seg[s - 1].a, c->seg[end - 1].b, c->phi, c->w, &tr, &rs);
		if (!(tr.slope_hi < MGC_CREPT_SHARE * rate))
			return s;
	}
}

/* Reads the regime that began with segment s, the flat segments before it that hold one level
 * joined into one stretch when `join` (mgc_flat_from). Returns 0 when it did not rise at all. */
static int mgc_candidate(const struct mgc_ctx *c, size_t s, struct mgc_cand *k, int join)
{
	const struct mgc_seg *g = c->seg;
	size_t n = c->n, a0 = s ? g[s].a - 1 : 0;
	memset(k, 0, sizeof(*k));
	k->s = s;
	k->x_on = c->x[a0]; /* the last point before the rise: the earliest onset the data allow */
	k->lvl_on = s ? mgc_seg_end(c, s - 1) : mgc_seg_start(c, 0);
	/* after a rise, no higher than this segment's line begins: a line through a steep warmup of a
	 * few floor points can end far above it (a 1.8 GiB warmup of 5 points ended 600 MiB above
	 * the slow leak that followed, whose rise then read 215 MiB of 830: `growing` for 3,000 steps,
	 * `test_onset_after_steep_warmup`) */
	if (s && !g[s - 1].flat)
		k->lvl_on = fmin(k->lvl_on, mgc_seg_start(c, s));
	k->dur = c->in->x_last - k->x_on;
	k->rise = c->level - k->lvl_on;
	if (!(k->rise > 0) || !(k->dur > 0) || n - a0 < 4)
		return 0;
	double mid = mgc_level_at(c, k->x_on + 0.5 * k->dur);
	k->h1 = mid - k->lvl_on;
	k->h2 = c->level - mid;
	mgc_cand_shape(c, k);
	k->a0 = a0;
	k->end = k->pause > 0 ? g[c->nseg - 1].a : n;
	k->rung_gap = mgc_rung_gap(c, a0, k->end, k->lvl_on, k);
	k->events = k->events > k->rungs ? k->events : k->rungs;
	size_t f = join ? mgc_flat_from(c, s) : s - (s > 0 && g[s - 1].flat);
	k->late = mgc_settled_since(c, f, s, k->gap);
	k->joined = k->late && f + 1 < s;
	struct mgc_trend tr;
	double rs;
	mgc_seg_trend(c->x, c->y, a0, n, c->phi, c->w, &tr, &rs);
	if (!k->late && join && k->continuous && s > 0) { /* no late onset so: read again as it was */
		f = mgc_creep_from(c, s, fmin(tr.slope, g[s].slope));
		k->late = k->creep = mgc_settled_since(c, f, s, k->gap);
	}
	k->wander = k->late ? mgc_wander(c, g[f].a, g[s - 1].b, k->dur) : 0;
	k->rate = tr.slope;
	k->lo = fmax(tr.slope_lo, mgc_stair_lo(k));
	/* a continuous rise rose at least MGC_SURE_SIGMAS less than it did in its time; at that rate,
	 * when the limit comes sooner than the rise has lasted, that is its rate's lower bound (a
	 * line's interval widened for the noise's memory can span every slope of a short steep
	 * stretch whose residuals are its bend at the onset: a 110 MiB per step leak read `growing`
	 * to 77 GiB of 80, `test_fast_late_leak`; without the limit, a step on a floor of few coarse
	 * blocks reads as such a rise) */
	double least = (k->rise - MGC_SURE_SIGMAS * c->sig_lvl) / k->dur;
	if (k->continuous && least > 0 && c->in->headroom && mgc_to_oom(c, least) < k->dur)
		k->lo = fmax(k->lo, least);
	if (k->continuous && k->late) /* after the run had settled: no ramp of a warmup */
		k->lo = fmax(k->lo, fmin(k->rate, mgc_bins_rate_lo(c, k)));
	k->hi = tr.slope_hi;
	k->z = tr.z;
	k->decel = -1;
	k->pool = -1;
	return 1;
}

/* The first epoch boundary after x, or INFINITY. */
static double mgc_epoch_after(const struct mgc_core_in *in, double x)
{
	for (size_t i = 0; in->epochs && i < in->nepochs; i++)
		if (in->epochs[i] > x)
			return in->epochs[i];
	return INFINITY;
}

/* The first floor point from point i on whose x is at least x (c->n if none). */
static size_t mgc_point_from(const struct mgc_ctx *c, size_t i, double x)
{
	while (i < c->n && c->x[i] < x)
		i++;
	return i;
}

/* Epochs: growth from the start of the run (or of a phase) that goes on past the next epoch
 * boundary at half its rate or more, for long enough to measure, is no cache filling epoch 1. */
static int mgc_epoch_rule(const struct mgc_ctx *c, const struct mgc_cand *k)
{
	double b = mgc_epoch_after(c->in, k->x_on);
	double need = fmax(0.5 * c->in->horizon, MGC_MIN_SAMPLES * c->in->dx);
	if (!(k->x_on + k->climb >= b + need))
		return 0;
	size_t i = mgc_point_from(c, 0, b);
	if (c->n - i < 4 || i < 2)
		return 0;
	struct mgc_trend after;
	double rs;
	mgc_seg_trend(c->x, c->y, i, c->n, c->phi, c->w, &after, &rs);
	double before = (mgc_level_at(c, b) - k->lvl_on) / (b - k->x_on);
	return after.slope_lo > c->delta && after.slope >= 0.5 * before;
}

/* The pause that `events` steps seen in `climb`, read as a Poisson process of unknown rate, make
 * next with chance `alpha` under the rate's posterior: climb ((1/alpha)^(1/events) - 1). */
static double mgc_pause_with_chance(double climb, double events, double alpha)
{
	return events > 0 ? climb * expm1(-log(alpha) / events) : 0;
}

/* ... with chance MGC_RETRACT_ALPHA: the pause that ends a staircase. */
static double mgc_poisson_pause(double climb, double events)
{
	return mgc_pause_with_chance(climb, events, MGC_RETRACT_ALPHA);
}

/* The pause a staircase (mgc_is_stair) would make with chance MGC_RETRACT_ALPHA had it
 * gone on (mgc_retract); 0 for a rise that is no staircase. */
static double mgc_stair_again(const struct mgc_cand *k)
{
	return mgc_is_stair(k) ? mgc_poisson_pause(k->climb, k->events) : 0;
}

/* How long a pause ends a leak: a sustained rise that stops has stopped (MGC_MIN_SAMPLES samples
 * or a quarter of the warmup horizon); a staircase pauses between its steps, so it must stay flat
 * for three of its longest gaps, the warmup horizon and a quarter of its climb, and for longer
 * than the staircase would plausibly pause again had it gone on: its steps (k->events in k->climb)
 * read as a Poisson process of unknown rate, the pause that has chance MGC_RETRACT_ALPHA under
 * the rate's posterior, climb ((1/alpha)^(1/events) - 1): about 7 mean gaps after 50 steps, 10
 * after 10, 27 after 3 (few steps say little about how long the next gap can be). Either way the
 * pause lasts as long as the leak takes to rise 3 level sigmas (AR noise wanders flat a while).
 * Only a staircase (mgc_is_stair) is read so, and only it waits a quarter of its
 * climb: a rise in sloped stretches that stops shows it in its slope, and a rise with flat
 * stretches inside (the noise's wander, gc cycles cutting a fill into steps) stays flat for three
 * of them: its pauses are the noise's (a cache filled over 3,600 steps read `leak` 900 steps
 * into its flat top; one filled in gc-cut steps over 2,100 steps, 410 steps into it). */
static double mgc_retract(const struct mgc_ctx *c, const struct mgc_cand *k)
{
	double noise = k->rate > 0 ? 3 * c->sig_lvl / k->rate : 0;
	if (k->continuous && k->gap == 0)
		return fmax(fmax(MGC_MIN_SAMPLES * c->in->dx, 0.25 * c->in->horizon), noise);
	noise = fmax(noise, MGC_RUNG_GAPS * k->rung_gap); /* its steps paused that long inside it */
	double quarter = mgc_is_stair(k) ? 0.25 * k->climb : 0;
	return fmax(fmax(mgc_min_rise(c), noise), fmax(fmax(3 * k->gap, quarter), mgc_stair_again(k)));
}

static int mgc_cand_pool(const struct mgc_ctx *c, struct mgc_cand *k);

/* The longest pause any staircase reading of the growth (`events` steps or more, a rise of
 * MGC_RISE_SIGMAS level sigmas; with `steady`, not slowing down (mgc_cand_decel) and no pool
 * doubling (mgc_cand_pool: a warmup however long it lasts, whose gaps grow, no Poisson process:
 * a pool that doubled at steps 198-1729 read `growing`, "its steps would plausibly pause this
 * long", 1,600 steps into its flat, `test_pool_flat_plateau`) would plausibly make had it gone on
 * (mgc_stair_again): no plateau is confident before it (MGC_MIN_EVENTS), and none is said before
 * the pause of a steady one of MGC_HOLD_EVENTS steps. 0 when no reading is. */
static double mgc_stair_pause(const struct mgc_ctx *c, int events, int steady)
{
	struct mgc_cand k;
	double longest = 0, again;
	for (size_t s = 0; s + 1 < c->nseg; s++)
		if (mgc_candidate(c, s, &k, 1) && k.events >= events && k.rise >= MGC_RISE_SIGMAS * c->sig_lvl &&
		    (again = mgc_stair_again(&k)) > longest &&
		    !(steady && (mgc_cand_decel(c, &k) || mgc_cand_pool(c, &k))))
			longest = again;
	return longest;
}

/* Regime k, of segment s, could be a staircase of a few steps that holds a plateau after it: not
 * the last segment, a staircase (mgc_is_stair), risen MGC_RISE_SIGMAS level sigmas, its steps
 * spread over its time and not slowing down. Records its onset in c->stair_on by its steps. */
static void mgc_note_stair(struct mgc_ctx *c, size_t s, struct mgc_cand *k)
{
	int i = MGC_MIN_EVENTS - k->events;
	if ((i == 0 || i == 1) && s + 1 < c->nseg && mgc_is_stair(k) && k->rise >= MGC_RISE_SIGMAS * c->sig_lvl &&
	    mgc_steady_steps(k) && !mgc_cand_decel(c, k))
		c->stair_on[i] = fmin(c->stair_on[i], k->x_on);
}

/* A staircase of just MGC_MIN_EVENTS steps (`extra` of them not yet in its reading: a step too
 * recent to be a segment; mgc_note_stair) that paused at x_end: no plateau is said before x_end
 * plus the pause it would make with chance MGC_HOLD_ALPHA had it gone on (1.7 times its time;
 * MGC_HOLD_EVENTS steps and more hold for mgc_stair_pause's far longer pause). Three steps of a
 * few hundred MiB at irregular times read `plateau` at each pause once the third was 500 steps
 * old. The earliest such reading holds longest. -INFINITY when no reading is such a staircase. */
static double mgc_three_steps_hold(const struct mgc_ctx *c, double x_end, int extra)
{
	double on = c->stair_on[extra];
	return isfinite(on) ? x_end + mgc_pause_with_chance(x_end - on, MGC_MIN_EVENTS, MGC_HOLD_ALPHA) : -INFINITY;
}

/* How long the last segment, flat, must last before a plateau is said: the pause a steady
 * staircase of MGC_HOLD_EVENTS steps (mgc_stair_pause) or one of just MGC_MIN_EVENTS
 * (mgc_three_steps_hold) would plausibly make had it gone on. */
static double mgc_flat_hold(const struct mgc_ctx *c)
{
	double at = c->x[c->seg[c->nseg - 1].a];
	return fmax(mgc_stair_pause(c, MGC_HOLD_EVENTS, 1), mgc_three_steps_hold(c, at, 0) - at);
}

/* How long regime k has grown: its climb, but for a staircase whose newest segment is a step of
 * fewer than MGC_MIN_SAMPLES points, only up to that step (the time after a step is no climb until
 * the next one; counted, a step just after the horizon reads as a leak for a prefix or two and
 * the pause that follows takes it back), or, when that segment is steps (mgc_seg_steps), up to
 * the last of them. A rise in sloped pieces is no staircase: a 60 MiB per step leak under noise
 * segments into many, and its newest piece is climb like the others. */
static double mgc_grown(const struct mgc_ctx *c, const struct mgc_cand *k)
{
	const struct mgc_seg *L = &c->seg[c->nseg - 1];
	double gap, end;
	if (k->continuous || !mgc_is_stair(k) || L->flat || L->a <= k->a0 || L->b - L->a >= MGC_MIN_SAMPLES)
		return k->climb;
	if (mgc_seg_steps(c, L, &gap, &end))
		return end - k->x_on;
	return c->x[L->a] - k->x_on;
}

/* The rate the limit horizon projects regime k at: a continuous rise's own; for a rise read in
 * steps or pieces (a steep line under noise segments into many), the least rate its interval and
 * its step count allow, so pieces are never projected faster than they climb. */
static double mgc_limit_rate(const struct mgc_cand *k)
{
	return k->continuous ? k->rate : k->lo;
}

/* Reads regime k's rungs and their spread again with the step into its pause, once two points
 * stand on it (the middle of three): mgc_rung_gap reads them up to the pause's first point, so the
 * step that ended the flat stretch a staircase must span was none of them (mgc_stair_spans). */
static void mgc_rungs_to_pause(const struct mgc_ctx *c, struct mgc_cand *k)
{
	if (k->end + 2 <= c->n)
		mgc_rung_gap(c, k->a0, k->end + 2, k->lvl_on, k);
}

static int mgc_pool_doubles(const struct mgc_ctx *c, const struct mgc_cand *k, size_t from, int want);

/* Staircase k (mgc_is_stair, MGC_HOLD_EVENTS rungs or more, the step into its pause counted:
 * mgc_rungs_to_pause) spans the flat stretch before segment s0 as one of its pauses: not longer
 * than its other steps would plausibly pause (mgc_poisson_pause of the rest of its climb), so the
 * regime need not start after it (steps of 80-800 MiB apart by pauses of 300-500 steps each looked
 * like a run that had settled, and the staircase read `plateau` between its steps; steps at
 * log-normal pauses, 190 steps after the one that ended an 850-step pause, read `growing`: three
 * rungs before it, `test_stair_rungs_decide`). Nor does a pool whose newest three steps double
 * (mgc_pool_doubles, which asks four of a reading: a pool under gc noise of 100 MiB, doubling at
 * steps 210-1820, read `leak` from the start once the rung into its pause counted,
 * `test_pool_three_doublings`). */
static int mgc_stair_spans(const struct mgc_ctx *c, const struct mgc_cand *k, size_t s0)
{
	/* steps spread over its time at a steady rate: not one or two jumps (a line through them
	 * rises far less than they did), nor steps that thin out (pool doublings, running maxima) */
	if (s0 == 0 || !c->seg[s0 - 1].flat || !mgc_is_stair(k) || !mgc_steady_steps(k))
		return 0;
	struct mgc_cand t = *k;
	mgc_rungs_to_pause(c, &t);
	if (t.rungs < MGC_HOLD_EVENTS || t.spread < MGC_SPREAD_MIN)
		return 0;
	/* nor its newest three steps, the one it begins with too, a pool's doublings */
	_Static_assert(MGC_MIN_EVENTS >= 2 && MGC_MIN_EVENTS <= MGC_POOL_STEPS, "mgc_pool_doubles keeps MGC_POOL_STEPS");
	if (mgc_pool_doubles(c, k, k->a0 > 2 ? k->a0 + 1 : 3, MGC_MIN_EVENTS))
		return 0;
	double len = mgc_seg_len(c, &c->seg[s0 - 1]);
	return len <= mgc_poisson_pause(k->climb - len, k->events - 1);
}

/* At that rate regime k reaches the limit sooner than it has grown: within half its climb, or,
 * once it has outlasted any start-up ramp (MGC_RAMP_HORIZONS warmup horizons), within all of it (a
 * ramp steep enough to near the limit is over by then; a fast leak goes on). */
static int mgc_limit_soon(const struct mgc_ctx *c, const struct mgc_cand *k)
{
	if (!(mgc_limit_rate(k) > 0))
		return 0;
	double left = (c->in->limit - c->peak) / mgc_limit_rate(k);
	return left <= 0.5 * k->climb || (k->climb >= MGC_RAMP_HORIZONS * c->in->horizon && left <= k->climb);
}

/* The most the floor stepped up between points [a, b): how far the median of W floor points (W
 * at most 2 * MGC_MIN_PLATEAU) stands above the median of the W before (a spike shorter than half
 * of them, or a pair of heavy-tailed points, moves neither median). */
static double mgc_largest_step(const struct mgc_ctx *c, size_t a, size_t b, size_t W)
{
	double t[2 * MGC_MIN_PLATEAU], most = 0;
	W = W < 2 * MGC_MIN_PLATEAU ? W : 2 * MGC_MIN_PLATEAU; /* t holds a window */
	for (size_t i = a + W; i + W <= b; i++)
		most = fmax(most, mgc_median_copy(c->y + i, W, t) - mgc_median_copy(c->y + i - W, W, t));
	return most;
}

/* A step held in the floor from point a on: MGC_STEP_SIGMAS level sigmas over 2 * MGC_MIN_PLATEAU
 * points either side. */
static int mgc_held_step(const struct mgc_ctx *c, size_t a)
{
	return mgc_largest_step(c, a, c->n, 2 * MGC_MIN_PLATEAU) > MGC_STEP_SIGMAS * c->sig_lvl;
}

/* The widest gap between floor points [lo, hi): how far all the points from some i on stand above
 * all those before it (at that i, in *at). */
static double mgc_gap_in(const struct mgc_ctx *c, size_t lo, size_t hi, size_t *at)
{
	double *after = c->w->s1, before = -INFINITY, gap = 0;
	*at = lo;
	if (hi < lo + 2)
		return 0;
	after[hi - 1] = c->y[hi - 1]; /* the least of the points from i on */
	for (size_t i = hi - 1; i-- > lo + 1;)
		after[i] = fmin(after[i + 1], c->y[i]);
	for (size_t i = lo + 1; i < hi; i++) {
		before = fmax(before, c->y[i - 1]);
		if (after[i] - before > gap)
			gap = after[i] - before, *at = i;
	}
	return gap;
}

/* Do jumps, fewer than a staircase leak needs (MGC_MIN_EVENTS: one or two), carry a continuous
 * regime's rise (0 for a regime that is no continuous rise: its steps are counted as events):
 * the floor's points after each stand above all those before, and without those gaps the floor
 * did not rise by `need`? Such a rise is a leak only after a next step, whenever that comes: no
 * leak rule passes it and it promises no decidable_at (mgc_leak_rule, mgc_leak_eta). Under spikes
 * the floor's blocks are wide, and a level shift with two blocks after it makes a last segment of
 * five points, a line rising since blocks before the jump (mgc_seg_steps finds a step inside a
 * segment only with three points either side); two steps of
 * 134 and 267 MiB 500 steps apart made a line of 269 KiB per step, a `leak` after the second that
 * the pause before the third took back. Two jumps are steps when the level between them held for
 * two floor points or more (a fast leak under spikes rises a gap from each wide block to the
 * next). A heavy-tailed point makes no such gap: the points after it fall back. */
static int mgc_few_jumps(const struct mgc_ctx *c, const struct mgc_cand *k, double need)
{
	_Static_assert(MGC_MIN_EVENTS == 3, "mgc_few_jumps looks for up to two jumps");
	if (!k->continuous)
		return 0;
	size_t at;
	double big = MGC_JUMP_SIGMAS * c->sig_lvl, rise = c->y[k->end - 1] - c->y[k->a0];
	double gap = mgc_gap_in(c, k->a0, k->end, &at);
	if (!(gap > big))
		return 0;
	if (rise - gap < need)
		return 1;
	size_t l, r;
	double left = mgc_gap_in(c, k->a0, at, &l), right = mgc_gap_in(c, at, k->end, &r);
	size_t held = left > right ? at - l : r - at; /* the points of the level between the two */
	return fmax(left, right) > big && rise - gap - fmax(left, right) < need && held >= 2;
}

/* Regime k, not late, read from the last segment, whose halves say it slows down (the second rose
 * under half the first) only because its onset's level lies under that segment's line: a warmup
 * that ended in the line's first points (a pool's last growth under the leak, a ramp) put its
 * rise in the first half. The line itself is steady when it rises meaningfully (its interval) by
 * as much as a leak must and does not slow down: a 301 KiB per step leak from step 24 on such a
 * warmup read `growing` from step 1596 to 2865, until the leak had risen twice the warmup. */
static int mgc_line_steady(const struct mgc_ctx *c, const struct mgc_cand *k)
{
	const struct mgc_seg *g = &c->seg[c->nseg - 1];
	if (k->late || !k->continuous || k->s + 1 != c->nseg || k->s == 0)
		return 0;
	if (!(g->lo > c->delta) || g->slope * mgc_seg_len(c, g) < mgc_rise_needed(c, k))
		return 0;
	return !mgc_decelerates(c, g->a, c->n, NULL);
}

/* The newest `want` steps of `jump` from floor point `from` on (at most MGC_POOL_STEPS): their
 * sizes and times into size[] and at[], what all of them carried into *carried. Read on the
 * floor's points or (bins) on the input bins' minima from the same x (under spikes the floor's
 * blocks merge doublings a block or two apart), each kept as mgc_step_held says (a spike between
 * two doublings is none). Returns how many; -1 at a slope (a step inside a bin reads a point or
 * two wider). */
static int mgc_pool_steps(const struct mgc_ctx *c, int bins, size_t from, double jump, int want, double *size,
			  double *at, double *carried)
{
	const struct mgc_work *w = c->w;
	const double *y = bins ? w->pmin : c->y, *x = bins ? w->px : c->x;
	size_t n = bins ? w->pn : c->n, e = 0, i = from;
	if (bins)
		i = mgc_bin_from(w, c->x[from - 3]) + 3;
	double up = 0;
	int m = 0;
	*carried = 0;
	for (; (i = mgc_next_step(y, i, n, jump, &e, &up)) < n; i = e + 3) {
		if (e - i >= 2 * MGC_STEP_WIDTH)
			return -1;
		if (!mgc_step_held(c, bins, i, e, n, jump, &up))
			continue;
		*carried += up; /* a step not yet over: to the newest point */
		if (m == want) { /* keep the newest */
			memmove(size, size + 1, (m - 1) * sizeof *size);
			memmove(at, at + 1, (m - 1) * sizeof *at);
			m--;
		}
		size[m] = up;
		at[m++] = x[i];
	}
	return m;
}

/* Each of the `want` steps (sizes and times) doubled the one before (within MGC_POOL_RATIO of
 * twice) and came no closer (each gap at least the last over MGC_POOL_RATIO). */
static int mgc_doubled(const double *size, const double *at, int want)
{
	for (int j = 1; j < want; j++) {
		double r = size[j] / size[j - 1];
		if (r < 2 / MGC_POOL_RATIO || r > 2 * MGC_POOL_RATIO)
			return 0;
		if (j >= 2 && MGC_POOL_RATIO * (at[j] - at[j - 1]) < at[j - 1] - at[j - 2])
			return 0;
	}
	return 1;
}

/* Regime k's newest `want` steps from floor point `from` on (at most MGC_POOL_STEPS) each doubled
 * the one before (within MGC_POOL_RATIO of twice) and came no closer together (each gap at least
 * the last over MGC_POOL_RATIO), and its steps carried it (MGC_STEP_SHARE of its rise, no slope
 * between): an allocator pool that doubles its newest region whenever demand outgrows it (JAX's
 * BFC allocator with allow_growth, arenas), demand rising ever more slowly. A warmup however long
 * it lasts: a pool that doubled six times over 3,300 steps read `leak` by the start horizon and
 * held it 4,100 steps into its flat top. Its times grow about geometrically, so its gaps mostly
 * grow, but not each time: gaps of 720, 720 and 1,920 steps were no pool while each had to be
 * 1.25 times the last, and a pool that doubled at steps 360-4080 read `leak` 4,000 steps into its
 * flat top (`test_pool_even_gaps`). A leak's steps keep their sizes. Steps are counted from
 * MGC_POOL_SHARE of its rise (the fourth newest of a pool's is a fifteenth of the four) and
 * MGC_STEP_SIGMAS level sigmas, and only those the level kept (mgc_pool_steps: on the floor's
 * points, or under spikes on the input's bins). */
static int mgc_pool_doubles(const struct mgc_ctx *c, const struct mgc_cand *k, size_t from, int want)
{
	double size[MGC_POOL_STEPS], at[MGC_POOL_STEPS], carried;
	double jump = fmax(MGC_STEP_SIGMAS * c->sig_lvl, MGC_POOL_SHARE * k->rise);
	for (int bins = 0; bins <= (c->fl.bins > 1); bins++) {
		int n = mgc_pool_steps(c, bins, from, jump, want, size, at, &carried);
		if (n >= want && carried >= MGC_STEP_SHARE * k->rise && mgc_doubled(size, at, want))
			return 1;
	}
	return 0;
}

/* mgc_pool_doubles, read once per reading. */
static int mgc_cand_pool(const struct mgc_ctx *c, struct mgc_cand *k)
{
	if (k->pool < 0)
		k->pool = mgc_pool_doubles(c, k, k->a0 + 3, MGC_POOL_STEPS);
	return k->pool;
}

/* The rule that makes regime k a leak, or NULL. Every leak has risen by MGC_RISE_SIGMAS level
 * sigmas with a rate and a rate interval above the meaningful growth (a staircase's step count
 * bounds its rate from below, and a reading whose own rate fell must not pass on that bound alone),
 * in one sustained rise or MGC_MIN_EVENTS steps, not slowing down, and is not paused for long;
 * before it paused it had
 * risen for the warmup horizon (and MGC_MIN_SAMPLES samples) and then one of: it began after the
 * run had settled; from the start (or after a faster warmup it outlasted) it went on for the
 * start horizon (no epochs marked) or past an epoch boundary; at its rate the limit comes in
 * less than half the time it has been growing (no epochs marked: with them, the boundary
 * decides). The time rules look at the rise up to the pause: a pause that begins before a rule
 * is met is no leak yet. A reading whose steps double (mgc_pool_doubles) is a leak only by the
 * limit horizon. */
static const char *mgc_leak_rule(const struct mgc_ctx *c, struct mgc_cand *k, size_t s0)
{
	double x_end = k->x_on + k->climb;
	const char *rule = NULL;
	double need = mgc_rise_needed(c, k);
	if (!(k->lo > c->delta) || !(k->rate > c->delta) || !(k->rise >= need) || mgc_grown(c, k) < mgc_min_rise(c))
		return NULL;
	if (!(k->h1 > 0) || (!(k->h2 >= (k->late ? 0.25 : 0.5) * k->h1) && !mgc_line_steady(c, k)))
		return NULL;
	if (!k->continuous && k->rise - mgc_largest_step(c, k->a0, c->n, MGC_MIN_PLATEAU) < need)
		return NULL; /* without its largest step it did not rise: a level shift, no staircase */
	if (mgc_few_jumps(c, k, need))
		return NULL; /* gaps between floor points carry it: level shifts, no slope */
	if ((k->events < MGC_MIN_EVENTS && !k->continuous) || k->pause >= mgc_retract(c, k))
		return NULL;
	int pool = mgc_cand_pool(c, k); /* a warmup unless the limit comes soon */
	if (k->late && !pool)
		return "late onset";
	/* a steady rise that outlasted a faster warmup before it (no flat between), or a staircase
	 * for which the flat stretch the regime starts after is one of its plausible pauses */
	if (k->s != s0 && (!k->continuous || k->climb < k->x_on - c->in->x_first) && !mgc_stair_spans(c, k, s0))
		return NULL;
	if (!pool && (c->in->epochs ? mgc_epoch_rule(c, k) : x_end - c->in->x_first >= c->in->start_horizon))
		rule = c->in->epochs ? "epoch" : "start horizon";
	else if (!c->in->epochs && c->in->limit > 0 && c->in->headroom && mgc_limit_soon(c, k))
		rule = "limit horizon";
	return rule && !mgc_cand_decel(c, k) ? rule : NULL;
}

/* When would regime k be called a leak, should it go on as it does? INFINITY if never. */
static double mgc_leak_eta(const struct mgc_ctx *c, struct mgc_cand *k, size_t s0)
{
	if (!(k->rate > 0))
		return INFINITY;
	double xl = c->in->x_last;
	double need = mgc_rise_needed(c, k);
	double t = fmax(k->x_on + mgc_min_rise(c), xl + (need - k->rise) / k->rate);
	if (!(k->rate > c->delta) || mgc_few_jumps(c, k, need))
		return INFINITY;
	/* the rate's interval clears the meaningful growth: its half-width shrinks as time^-1.5 */
	if (!(k->lo > c->delta))
		t = fmax(t, k->x_on + k->dur * pow((k->rate - k->lo) / (k->rate - c->delta), 2.0 / 3.0));
	int pool = mgc_cand_pool(c, k);
	if (k->late && !pool)
		return t;
	if (k->s != s0)
		t = fmax(t, 2 * k->x_on - c->in->x_first);
	double t_start = pool ? INFINITY : c->in->x_first + c->in->start_horizon;
	if (c->in->epochs)
		t_start = mgc_epoch_after(c->in, k->x_on) + fmax(0.5 * c->in->horizon, MGC_MIN_SAMPLES * c->in->dx);
	double t_lim = INFINITY; /* mgc_limit_soon: left - t <= (t - x_on) / 2, or <= t - x_on past the ramps */
	if (!c->in->epochs && mgc_limit_rate(k) > 0 && c->in->limit > 0 && c->in->headroom) {
		double left = (c->in->limit - c->peak) / mgc_limit_rate(k) + xl; /* when the limit comes */
		double ramps = k->x_on + MGC_RAMP_HORIZONS * c->in->horizon;
		t_lim = fmin((left + 0.5 * k->x_on) / 1.5, fmax(0.5 * (left + k->x_on), ramps));
	}
	t = fmax(t, fmin(t_start, t_lim));
	return isfinite(t) && mgc_cand_decel(c, k) ? INFINITY : t;
}

/* ---------------------------------------------------------------- step 6: the verdict */

/* How fast the input's floor rises now, under spikes (0 without them, or with too few bins): the
 * least input bin in the last block as wide as the longest spike against the least in the block
 * before, over the x between them. The floor's own points are the minima of such blocks, and at
 * the end a line through few of them lags the input. */
static double mgc_tail_rate(const struct mgc_ctx *c, double *up)
{
	const struct mgc_work *w = c->w;
	size_t W = c->fl.span, pn = w->pn;
	*up = 0;
	if (W == 0 || 2 * W > pn)
		return 0;
	size_t now = mgc_least_bin(w, pn - W, pn), before = mgc_least_bin(w, pn - 2 * W, pn - W);
	double dx = w->pminx[now] - w->pminx[before];
	*up = w->pmin[now] - w->pmin[before];
	return dx > 0 ? *up / dx : 0;
}

/* The rate the limit is projected at: the leak's average since its onset, or, when the floor
 * rises faster now (its last segment rises over MGC_LMIN points or more, the low end of its
 * interval above that average), that low end: a leak read from step 0 at 500 KiB per step, held
 * while a 60 MiB per step one began, projected the limit at step 100,000 with 700 steps left.
 * Under spikes a continuous leak is projected at the input's rate now (mgc_tail_rate) when that is
 * MGC_TAIL_FASTER times as fast and risen MGC_JUMP_SIGMAS level sigmas, as a step up must: a 90
 * MiB per step leak under a gc sawtooth, its floor 9 blocks of 160 steps, read 2.6 MiB per step
 * (a line through them all) and projected its limit 19,600 steps away with 447 left. */
static double mgc_oom_rate(const struct mgc_ctx *c, const struct mgc_cand *k)
{
	const struct mgc_seg *L = &c->seg[c->nseg - 1];
	double rate = !L->flat && L->b - L->a >= MGC_LMIN && L->lo > k->rate ? L->lo : k->rate, up = 0;
	double tail = k->continuous ? mgc_tail_rate(c, &up) : 0;
	return tail > MGC_TAIL_FASTER * rate && up >= MGC_JUMP_SIGMAS * c->sig_lvl ? tail : rate;
}

static void mgc_say_leak(const struct mgc_ctx *c, const struct mgc_cand *k, const char *rule,
			 struct mgc_fit *out)
{
	char b1[32], b2[32];
	const char *u = mgc_unit(c->in->x_is_steps);
	out->verdict = MGC_VERDICT_LEAK;
	out->confidence = k->z > 3 && k->rise >= 2 * MGC_RISE_SIGMAS * c->sig_lvl ? 0.95 : 0.8;
	out->slope = k->rate;
	out->slope_lo = k->lo;
	out->slope_hi = k->hi;
	out->change_at = k->x_on;
	double now = mgc_oom_rate(c, k);
	out->x_to_oom = mgc_to_oom(c, now);
	mgc_why(out, "leak: %s per %s since %s %g (%s in all%s)", mgc_bytes(k->rate, b1, sizeof b1), u, u,
		k->x_on, mgc_bytes(k->rise, b2, sizeof b2), k->continuous ? "" : ", in steps");
	if (!strcmp(rule, "late onset"))
		mgc_why_add(out, ", after the run had settled%s: a late onset, no warmup",
			    k->creep ? " (it crept at under a fifth of this rate before)" : "");
	else if (!strcmp(rule, "epoch"))
		mgc_why_add(out, ", on into the next epoch at the same rate: epoch, no cache filling");
	else if (!strcmp(rule, "start horizon"))
		mgc_why_add(out, " from the start, longer than any warmup: start horizon %g (a cache filling a long "
			    "first epoch looks alike: mark epochs)", c->in->start_horizon);
	else
		mgc_why_add(out, "; at this rate the limit comes in %.0f %ss, sooner than it has grown: limit horizon",
			    out->x_to_oom, u);
	if (k->pause > 0)
		mgc_why_add(out, "; paused for %g", k->pause);
	if (now > k->rate)
		mgc_why_add(out, "; rising at least %s per %s now, the limit projected at that",
			    mgc_bytes(now, b1, sizeof b1), u);
}

/* A later regime that began after the run had settled and is a leak by itself: its onset and rate
 * describe the leak better than an earlier reading that spans the flat stretch before it. */
static void mgc_prefer_late(const struct mgc_ctx *c, size_t from, size_t s0, struct mgc_cand *k,
			    const char **rule)
{
	struct mgc_cand late;
	for (size_t s = from; s < c->nseg; s++) {
		if (!c->seg[s - 1].flat || !mgc_candidate(c, s, &late, 1) || !late.late)
			continue;
		const char *r = mgc_leak_rule(c, &late, s0);
		if (r) {
			*k = late;
			*rule = r;
			return;
		}
	}
}

/* A leak by any reading of the growth, the earliest onset first (a late onset preferred): returns
 * 1 with the regime in *k and its rule, else 0 with the soonest x by which one reading will be
 * decided in *eta (and the staircases that hold a plateau in c->stair_on). */
static int mgc_find_leak(struct mgc_ctx *c, struct mgc_cand *k, const char **rule, double *eta)
{
	double gap;
	size_t s0 = mgc_regime_start(c, &gap);
	int slowing = 0, tested = 0; /* the whole regime decelerates: no promise from a part of it */
	*eta = INFINITY;
	c->stair_on[0] = c->stair_on[1] = INFINITY;
	c->pool = 0;
	for (size_t s = 0; s < c->nseg; s++) {
		if (!mgc_candidate(c, s, k, 1))
			continue;
		mgc_note_stair(c, s, k);
		*rule = mgc_leak_rule(c, k, s0);
		/* no late onset: read as it was before the join or the creep (a late rise must clear its
		 * settled stretch's wander, one from the start the start horizon:
		 * `test_joined_flats_both_ways`) */
		if (!*rule && (k->joined || k->creep)) {
			mgc_candidate(c, s, k, 0);
			*rule = mgc_leak_rule(c, k, s0);
		}
		if (*rule) {
			if (!k->late)
				mgc_prefer_late(c, s + 1, s0, k, rule);
			return 1;
		}
		c->pool |= mgc_cand_pool(c, k);
		if (s >= s0 && !tested++) /* its first reading (s0 is none when the regime starts the run) */
			slowing = mgc_cand_decel(c, k);
		if (slowing && !k->late)
			continue;
		/* by then it is a leak if it goes on, or, should it stop just before, a plateau once
		 * it has stayed flat as long as mgc_judge_flat asks: known either way */
		double t = mgc_leak_eta(c, k, s0);
		t += fmax(fmax(0.25 * (t - c->x[c->seg[s0].a]), 1.5 * k->gap), MGC_MIN_PLATEAU * c->in->dx) +
		     c->in->dx;
		*eta = fmin(*eta, t);
	}
	return 0;
}

/* Was the input's first n0 points, read on their own, a leak? Reads them into *p (mgc_prefix_open)
 * and its reading into *k: 1 (free p->mem after), or 0 with nothing to free. */
static int mgc_leak_at_cut(const struct mgc_core_in *in, size_t n0, struct mgc_prefix *p, struct mgc_cand *k,
			   const char **rule)
{
	double eta;
	if (n0 < 2 * MGC_LMIN || mgc_prefix_open(in, n0, p))
		return 0;
	if (p->c.n >= 8) {
		mgc_noise(&p->c);
		mgc_segments(&p->c);
		if (mgc_find_leak(&p->c, k, rule, &eta))
			return 1;
	}
	free(p->mem);
	return 0;
}

/* The input points that the floor points before point m (0 < m < n) stand for: those up to
 * halfway to point m. */
static size_t mgc_input_count(const struct mgc_ctx *c, size_t m)
{
	double x = 0.5 * (c->x[m - 1] + c->x[m]);
	size_t lo = 0, hi = c->in->n0;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (c->in->x0[mid] <= x)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static double mgc_creep(const struct mgc_ctx *c, double *since);

/* Is `cut` among the first n of cuts? */
static int mgc_has_cut(const size_t *cuts, size_t n, size_t cut)
{
	for (size_t i = 0; i < n; i++)
		if (cuts[i] == cut)
			return 1;
	return 0;
}

/* Cuts (input point counts) a + 1 .. b - 1, up to MGC_BETWEEN_CUTS of them spread evenly, after
 * the nc in cuts (none twice): the new count. */
static size_t mgc_cuts_between(size_t a, size_t b, size_t *cuts, size_t nc)
{
	size_t d = b > a ? (b - a + MGC_BETWEEN_CUTS) / (MGC_BETWEEN_CUTS + 1) : 0, had = nc;
	for (size_t m = a + 1, k = 0; d && m < b && k < MGC_BETWEEN_CUTS; m += d, k++)
		if (!mgc_has_cut(cuts, had, m))
			cuts[nc++] = m;
	return nc;
}

/* MGC_STEP_POINTS floor points from the second of each of the MGC_STEP_SEGS newest flat segments
 * before the last (not the first segment), as cuts after the nc in cuts (none twice): where a
 * staircase's reading of the step into that segment is complete (its first point, the step's top,
 * is still too recent). The new count. */
static size_t mgc_step_cuts(const struct mgc_ctx *c, size_t *cuts, size_t nc)
{
	for (size_t j = c->nseg - 1, segs = 0; j-- > 1 && segs < MGC_STEP_SEGS;) {
		if (!c->seg[j].flat)
			continue;
		segs++;
		for (size_t m = 2; m < 2 + MGC_STEP_POINTS && c->seg[j].a + m < c->seg[j].b; m++) {
			size_t cut = mgc_input_count(c, c->seg[j].a + m);
			if (cut >= 2 * MGC_LMIN && !mgc_has_cut(cuts, nc, cut))
				cuts[nc++] = cut;
		}
	}
	return nc;
}

/* qsort's order for cuts: the later (more input points) first. */
static int mgc_cmp_later(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;
	return (x < y) - (x > y);
}

/* Where a leak said earlier is looked for, as prefixes of the input (each read as it was read
 * then: its own bins, floor under spikes and noise; read from the floor under the spikes seen
 * since, a reading that said `leak` was lost when a longer spike widened the floor's blocks): up
 * to the start of the last segment (however few of this floor's blocks lie before it: a 90-step
 * spike makes blocks of 90 steps), and its first point (the top of the last step, where a
 * staircase's reading is complete however long it has paused since or however the pause and a new
 * step are segmented), then bins back at distances growing by sqrt 2 (1, 2, 3, 4, 6, 8, 11, ...)
 * as far as the series goes, and just after the newest earlier steps (mgc_step_cuts), all these
 * the nearest first: a reading that held for a while is found however far back it lies (a
 * doubling ladder skips stretches of a quarter of its reach; a short one loses a leak read before
 * a long pause), and one read after a step the ladder passes by (a staircase at log-normal gaps
 * read `leak` by itself at steps 2230-2240 and 2260-2460, after a step at 2220, and `plateau` at
 * 3110-3160, 160-210 steps after its next step: the ladder's cuts fell at 2200 and 2470, and at
 * 3160 its cut at 1350, a reading of the first steps whose pause had ended, ended them all;
 * `stairlogn-400M-g250-dx10` in `eval_classify`). The ladder costs up to 20 classifications, the
 * steps' up to 9, tried only when no reading of the data is a leak by itself: only for a process's
 * memory (sites have their cohorts, and mgmon classifies many of them each frame), and not after a
 * pause of a quarter of the run (the last segment's first point still speaks) unless a staircase
 * would plausibly pause longer (mgc_flat_hold, as mgc_judge_flat holds it: four steps then flat for
 * the rest of the run read `leak`, then `growing` once the pause passed a quarter of the run, and
 * so did three, steady and not slowing down, `test_three_steps_stand`; a pool that doubled thrice
 * reads as such three and is held `leak` while their hold lasts, where their Poisson pause held it
 * through 4,600 steps of flat), or its flat pieces still creep up together (mgc_creep: no pause, as
 * mgc_leak_stands reads them; a slow leak under noise read `growing` between `leak`s once its last
 * piece was a quarter of the run long). Only when the floor rose MGC_LADDER_SIGMAS level sigmas
 * above its lowest within the warmup horizon (a wander back under that ends any leak; not above its
 * first segment alone: a run that starts high, its loading peak freed, would never look back; not
 * above a later dip: AR noise wanders). Last, read only when no cut before decided, the input
 * points between the last segment's start and its first point (mgc_cuts_between): under spikes a
 * floor point stands for tens of input points, and the readings just after a step can lie between
 * (a staircase at validations, its fourth step at step 2940 under a spike, read `leak` at steps
 * 2950 and 2960 by itself, at 2970 not, and `plateau` from 3080: `test_stair_cut_between`). Cuts
 * are input point counts. */
static size_t mgc_leak_cuts(const struct mgc_ctx *c, size_t *cuts)
{
	const struct mgc_seg *L = &c->seg[c->nseg - 1];
	size_t nc = 0, last = 0, n0 = c->in->n0, per = mgc_bin_size(n0), a = 0, b = 0;
	double low = INFINITY; /* the floor's lowest in the warmup horizon: not a start-up peak */
	for (size_t s = 0; s < c->nseg && (s == 0 || c->x[c->seg[s].a] <= c->in->x_first + c->in->horizon); s++)
		low = fmin(low, fmin(mgc_seg_start(c, s), mgc_seg_end(c, s)));
	if (!(c->level - low >= MGC_LADDER_SIGMAS * c->sig_lvl))
		return 0;
	if (c->nseg >= 2 && mgc_input_count(c, L->a) >= 2 * MGC_LMIN) {
		a = cuts[nc++] = mgc_input_count(c, L->a);
		if (L->a + 1 < c->n)
			b = cuts[nc++] = mgc_input_count(c, L->a + 1);
	}
	double since;
	if (!c->in->headroom || (L->flat && mgc_seg_len(c, L) >= 0.25 * (c->in->x_last - c->in->x_first) &&
				 !(mgc_flat_hold(c) > mgc_seg_len(c, L)) && !(mgc_creep(c, &since) > 0)))
		return mgc_cuts_between(a, b, cuts, nc);
	size_t head = nc;
	for (double d = 1; nc < MGC_LADDER_CUTS && n0 >= (2 * MGC_LMIN + (size_t)lround(d)) * per; d *= M_SQRT2) {
		size_t j = (size_t)lround(d), cut = n0 - j * per;
		if (j != last && !mgc_has_cut(cuts, head, cut))
			cuts[nc++] = cut;
		last = j;
	}
	nc = mgc_step_cuts(c, cuts, nc);
	qsort(cuts + head, nc - head, sizeof(*cuts), mgc_cmp_later); /* the nearest first */
	return mgc_cuts_between(a, b, cuts, nc);
}

/* Does the line through floor points [a, b) rise meaningfully (its interval above the meaningful
 * growth) and by `sigmas` level sigmas from point a to x `to`? Its trend in *tr. */
static int mgc_line_rises(const struct mgc_ctx *c, size_t a, size_t b, double to, double sigmas,
			  struct mgc_trend *tr)
{
	double rs;
	mgc_seg_trend(c->x, c->y, a, b, c->phi, c->w, tr, &rs);
	return tr->slope_lo > c->delta && tr->slope * (to - c->x[a]) >= sigmas * c->sig_lvl;
}

/* Does the level still creep up over the flat segments at the end, taken together? A slow leak
 * under noise segments into flat pieces, each a little higher than the one before, and its last
 * piece looked like a plateau. It creeps when the line over them rose MGC_STEP_SIGMAS level sigmas
 * with an interval above the meaningful growth, and so did the lines over each half, without a
 * step of MGC_STEP_SIGMAS anywhere (pieces apart by steps are a staircase or a shift, judged as
 * such). Returns the rate (0: it does not), with the x it creeps since in *since. */
static double mgc_creep(const struct mgc_ctx *c, double *since)
{
	size_t f = c->nseg - 1;
	while (f > 0 && c->seg[f - 1].flat)
		f--;
	size_t a = c->seg[f].a;
	struct mgc_trend tr, t1, t2;
	if (c->n - a < 4 * MGC_MIN_PLATEAU || mgc_held_step(c, a))
		return 0;
	if (!mgc_line_rises(c, a, c->n, c->in->x_last, MGC_STEP_SIGMAS, &tr))
		return 0;
	mgc_halves(c, a, c->n, &t1, &t2);
	*since = c->x[a];
	return t1.slope_lo > c->delta && t2.slope_lo > c->delta ? tr.slope : 0;
}

/* Was a flat segment before the last flat for `retract` after x `since`? Such a pause ended the
 * leak read before it: a rise after it (a new step, a spike not yet closed) is judged by itself,
 * not the old reading brought back. */
static int mgc_ended_since(const struct mgc_ctx *c, double since, double retract)
{
	for (size_t j = 0; j + 1 < c->nseg; j++)
		if (c->seg[j].flat && c->x[c->seg[j + 1].a] - fmax(c->x[c->seg[j].a], since) >= retract)
			return 1;
	return 0;
}

/* How long the floor has stood still at the end, however it is segmented (the end of a cache's
 * fill and its flat top can make one sloped segment): the longest stretch of floor points up to
 * now whose line rises under half the rate of the leak read before (its interval's top) and not
 * meaningfully (its interval reaching down to the meaningful growth), by under 2 level sigmas in
 * all, with the level now within 2 level sigmas of its end (a flat stretch and a steep rise after
 * it have a line of about the flat's slope). Stretches grow by a quarter from MGC_STALL_POINTS
 * (under spikes a block is 60 steps and more, and 700 steps flat are 11 points; under a gc
 * sawtooth of 500-step teeth the floor is 8 blocks, too few to split into segments, and a cache
 * held the `leak` said of its fill 2,100 steps into its flat top). A short stretch
 * stands still only if it spans the pause that ends the leak (the caller's retract), and 4
 * points' interval is their slopes' whole range. */
static double mgc_stalled(const struct mgc_ctx *c, double rate)
{
	struct mgc_trend tr;
	double rs, still = 0, two = 2 * c->sig_lvl;
	for (size_t m = MGC_STALL_POINTS; m <= c->n; m += m / 4) {
		double x0 = c->x[c->n - m];
		mgc_seg_trend(c->x, c->y, c->n - m, c->n, c->phi, c->w, &tr, &rs);
		if (tr.slope_hi < 0.5 * rate && !(tr.slope_lo > c->delta) && tr.slope * (c->in->x_last - x0) < two &&
		    mgc_level_now(c) - (tr.intercept + tr.slope * c->x[c->n - 1]) < two)
			still = c->in->x_last - x0;
	}
	return still;
}

/* A step up that is new growth: MGC_JUMP_SIGMAS level sigmas, and as much as the meaningful
 * growth adds in the time any leak must rise (mgc_min_rise; more than a meaningful rise): a step
 * smaller is no growth that matters, however clear of the noise (a gc sawtooth's 4 MiB climbs at
 * 4.9 GiB, noise 0.5 MiB, read "a step of 3.9 MiB: a new rise or a level shift, too recent to
 * tell", `growing`, at 17 of 45 prefixes, each promising a verdict it then broke, as did a
 * device's single 2 MiB segments; `test_small_step_no_jump`). */
static double mgc_step_up(const struct mgc_ctx *c)
{
	return fmax(MGC_JUMP_SIGMAS * c->sig_lvl, c->delta * mgc_min_rise(c));
}

/* A leak said on an earlier prefix (its context e, its reading k) stands while nothing since has
 * ended it: the growth has not paused for as long as ends that leak (mgc_retract), at the end (a
 * flat last segment, or the floor standing still in a sloped one: mgc_stalled) or before a new
 * rise (mgc_ended_since), nor fallen back (under that prefix's level, or, when this
 * floor has seen more spikes, under the lower of it and this floor's level there: a prefix that
 * ended on a rising spike took the spike for its level). A flat last segment that stands, at the
 * pause's middle, within 2 level sigmas of where the leak's rate would have taken it is no pause (a
 * spike under 6 sigmas at its start tilts its line down; a wander that lifted its start above the
 * leak's line leaves its end under it). Says it in *out: 1; -1 when a pause ended it, 0 when it
 * fell back. */
static int mgc_leak_stands(const struct mgc_ctx *c, const struct mgc_ctx *e, struct mgc_cand *k,
			   const char *rule, struct mgc_fit *out)
{
	const struct mgc_seg *L = &c->seg[c->nseg - 1];
	/* flat since: the pause goes back to where that leak had paused, or the last segment began;
	 * the last segment's, when it begins a step up (mgc_step_up) above where that leak paused (a
	 * new step ends a pause: a staircase that paused 1,600 steps, then stepped twice, read
	 * `plateau` 1,000 steps later, its pause counted from the old one, `test_new_step_ends_pause`) */
	double paused_at = k->pause > 0 ? k->x_on + k->climb : c->x[L->a], from = fmin(paused_at, c->x[L->a]);
	double stepped = mgc_seg_start(c, c->nseg - 1) - mgc_level_at(c, paused_at);
	if (c->x[L->a] > paused_at && stepped >= mgc_step_up(c))
		from = c->x[L->a];
	double pause = L->flat ? c->in->x_last - from : 0, retract = mgc_retract(e, k), since;
	double still = pause < retract ? mgc_stalled(c, k->rate) : 0;
	if (still >= retract) /* stood still at the end within a sloped segment */
		pause = still, from = c->in->x_last - still;
	if (pause >= retract && mgc_creep(c, &since) > 0 && since <= paused_at)
		pause = 0; /* flat pieces that still creep up are no pause */
	double mid = 0.5 * (from + c->in->x_last); /* a tilted line is least wrong at its middle */
	if (pause >= retract && mgc_level_at(c, mid) >= mgc_level_at(e, from) + k->rate * (mid - from) - 2 * c->sig_lvl)
		pause = 0; /* it rose as the leak rises: no pause */
	double said = e->in->x_last, then = e->level;
	if (c->fl.nexc > e->fl.nexc) /* a spike seen since: that prefix's level may have stood on it */
		then = fmin(then, mgc_level_at(c, said));
	if (pause >= retract || mgc_ended_since(c, fmin(paused_at, said), retract))
		return -1;
	if (c->level < then - 2 * c->sig_lvl)
		return 0;
	k->pause = pause;
	k->dur = c->in->x_last - k->x_on;
	k->rise = c->level - k->lvl_on;
	mgc_say_leak(c, k, rule, out);
	mgc_why_add(out, "; said since %s %g, nothing has ended it", mgc_unit(c->in->x_is_steps), said);
	return 1;
}

/* Was an earlier prefix (mgc_leak_cuts) a leak that still stands? The nearest one that was decides,
 * unless the level fell back under its own: then the next one further back (a prefix's level can
 * be a wander or a sloped line's end above its data: a slow leak under AR noise and spikes read
 * `leak` at steps 3930-3960 at levels 320-360 MiB above the level at 3980, and `growing` there
 * and to 4190 between `leak`s, while its reading at 2170 still stood, `test_leak_fell_back_further`).
 * A pause that ended the nearest ends them all. (A new change point near the end must not undo the
 * evidence that had accumulated.) */
static int mgc_leak_before(const struct mgc_ctx *c, struct mgc_fit *out)
{
	size_t cuts[MGC_LADDER_CUTS + MGC_STEP_SEGS * MGC_STEP_POINTS + MGC_BETWEEN_CUTS];
	size_t nc = mgc_leak_cuts(c, cuts);
	struct mgc_prefix p;
	struct mgc_cand k;
	const char *rule;
	for (size_t i = 0; i < nc; i++) {
		if (!mgc_leak_at_cut(c->in, cuts[i], &p, &k, &rule))
			continue;
		int said = mgc_leak_stands(c, &p.c, &k, rule, out);
		free(p.mem);
		if (said != 0)
			return said > 0;
	}
	return 0;
}

/* The smallest rise that means growth: 8 x's worth of meaningful growth (a step of 60 KiB in a
 * 400 MiB process is exact in the floor, many sigmas, and still nothing). */
static double mgc_meaningful_rise(const struct mgc_ctx *c)
{
	return 8 * c->delta * c->in->dx;
}

/* The last j points of flat segment L all stand a step up (mgc_step_up) above the rest of it:
 * a new step. */
static int mgc_jumped(const struct mgc_ctx *c, const struct mgc_seg *L, size_t j)
{
	double med = mgc_median_copy(c->y + L->a, L->b - L->a - j, c->w->s1);
	double step = mgc_step_up(c);
	for (size_t i = c->n - j; i < c->n; i++)
		if (!(c->y[i] - med > step))
			return 0;
	return 1;
}

/* A step up from `med` at x `at` (flat until `before`), of `step` bytes: `growing`, too recent to
 * tell a new rise from a level shift. */
static int mgc_say_jump(const struct mgc_ctx *c, double before, double at, double step, struct mgc_fit *out)
{
	char b1[32];
	out->verdict = MGC_VERDICT_GROWING;
	out->confidence = 0.5;
	out->change_at = at;
	out->x_to_oom = INFINITY;
	/* told once the floor shows the step as a segment of its own, MGC_LMIN + 1 of its blocks after
	 * it (under spikes a block outlasts the longest, and the floor lags the input by one), and a
	 * reading of it has risen for the warmup horizon */
	double block = (double)c->fl.bins * (c->in->x_last - c->in->x_first) / (double)c->w->pn;
	out->decidable_at = fmax(at + fmax(mgc_min_rise(c), (MGC_LMIN + 1) * block),
				 mgc_three_steps_hold(c, at, 1)); /* a third step holds a plateau after it */
	mgc_why(out, "flat until %s %g, then a step of %s: a new rise or a level shift, too recent to tell",
		mgc_unit(c->in->x_is_steps), before, mgc_bytes(step, b1, sizeof b1));
	return 1;
}

/* Under spikes the floor lags by a block: a step up held for longer than any spike seen so far
 * shows first in the input. The least of the input bins that outlast the longest spike stands a
 * step up (mgc_step_up) above the floor points of flat segment L before them: the floor has
 * risen. So does a rise held MGC_FRESH_MAX bins that stands twice as high as any spike
 * seen (a spike is known by its height as well as its length: a device's reserved memory that
 * wandered a few 2 MiB segments for 530 steps at a time made blocks that wide, and a leak of
 * 650 MiB in 190 steps read `stable`). Returns the step (0: none) and in *from the bin where it
 * began. */
static double mgc_tail_step(const struct mgc_ctx *c, const struct mgc_seg *L, size_t *from)
{
	const struct mgc_work *w = c->w;
	size_t W = c->fl.span, pn = w->pn, k = 0;
	if (W == 0 || 2 * W >= pn)
		return 0;
	double tail = w->pmin[mgc_least_bin(w, pn - W, pn)];
	for (size_t i = L->a; i < L->b && c->x[i] < w->px[pn - W]; i++)
		w->s1[k++] = c->y[i];
	if (k < 4)
		return 0;
	double med = mgc_median_inplace(w->s1, k), step = tail - med;
	double recent = w->pmin[mgc_least_bin(w, pn - MGC_FRESH_MAX, pn)] - med;
	*from = pn - W;
	if (!(step > mgc_step_up(c)) && recent > 2 * c->fl.tallest)
		step = recent, *from = pn - MGC_FRESH_MAX;
	if (!(step > mgc_step_up(c)))
		return 0;
	/* where the step began: the bins before that stand above it by half */
	while (*from > 1 && w->pmin[*from - 1] - med > 0.5 * step)
		(*from)--;
	return step;
}

/* The last points rise again after a flat stretch (a step, or a steady rise): `growing`, the late
 * rise reopens the verdict. */
static int mgc_late_rise(const struct mgc_ctx *c, struct mgc_fit *out)
{
	const struct mgc_seg *L = &c->seg[c->nseg - 1];
	size_t n = c->n, m = L->b - L->a, k = MGC_LMIN + 1;
	char b1[32];
	size_t from;
	double step = mgc_tail_step(c, L, &from);
	if (step > 0)
		return mgc_say_jump(c, c->w->px[from - 1], c->w->px[from], step, out);
	size_t f = MGC_FRESH_MAX;
	if (m >= 2 * f && mgc_jumped(c, L, f))
		return mgc_say_jump(c, c->x[n - f - 1], c->x[n - f],
				    mgc_level_now(c) - mgc_median_copy(c->y + L->a, m - f, c->w->s1), out);
	if (m < 2 * MGC_LMIN + 2)
		return 0;
	struct mgc_trend tt;
	double rs;
	mgc_seg_trend(c->x, c->y, n - k, n, c->phi, c->w, &tt, &rs);
	double seg_med = mgc_median_copy(c->y + L->a, m - k, c->w->s1);
	if (!(tt.slope_lo > c->delta) || !(c->y[n - 1] - seg_med > 4 * c->sig_lvl))
		return 0;
	out->verdict = MGC_VERDICT_GROWING;
	out->confidence = 0.6;
	out->slope = tt.slope;
	out->slope_lo = tt.slope_lo;
	out->slope_hi = tt.slope_hi;
	out->change_at = c->x[n - k];
	out->x_to_oom = mgc_growing_oom(c, tt.slope);
	out->decidable_at = c->x[n - k] + mgc_min_rise(c);
	mgc_why(out, "flat until %s %g, rising again since (%s per %s over the last %zu points)",
		mgc_unit(c->in->x_is_steps), c->x[n - k], mgc_bytes(tt.slope, b1, sizeof b1),
		mgc_unit(c->in->x_is_steps), k);
	return 1;
}

/* One of the last 3 points of flat segment L, or all of the last 3 input bins (the floor lags
 * by a block), stand a step (MGC_STEP_SIGMAS) above the rest of it, or the last input bin alone
 * stands a step up (mgc_step_up) above it (a jump on the newest point): no confident
 * flat verdict while something may be starting (a spike in progress also counts: it only costs
 * confidence). */
static int mgc_rising_end(const struct mgc_ctx *c, const struct mgc_seg *L)
{
	size_t m = L->b - L->a, j = MGC_FRESH_MAX, pn = c->w->pn;
	if (m <= 2 * j || pn < j)
		return 0;
	double med = mgc_median_copy(c->y + L->a, m - j, c->w->s1), bins = INFINITY;
	for (size_t i = c->n - j; i < c->n; i++)
		if (c->y[i] - med > MGC_STEP_SIGMAS * c->sig_lvl)
			return 1;
	for (size_t i = pn - j; i < pn; i++)
		bins = fmin(bins, c->w->py[i]);
	return bins - med > MGC_STEP_SIGMAS * c->sig_lvl ||
	       c->w->py[pn - 1] - med > mgc_step_up(c);
}

/* Flat segment L is surely flat: its line's interval lies under the meaningful growth and nothing
 * rises at its end (mgc_rising_end). What a confident `stable` or `plateau` asks of it. */
static int mgc_surely_flat(const struct mgc_ctx *c, const struct mgc_seg *L)
{
	return L->hi < c->delta && !mgc_rising_end(c, L);
}

/* The x where the growth levelled: a linear-then-flat fit over the segment before and the last. */
static double mgc_levelled_at(const struct mgc_ctx *c)
{
	struct mgc_work *w = c->w;
	size_t a = c->nseg >= 2 ? c->seg[c->nseg - 2].a : 0, k = c->n - a;
	double med = mgc_median_copy(c->y, c->n, w->s1);
	for (size_t i = 0; i < k; i++) {
		w->hx[i] = c->x[a + i] - c->x[a];
		w->hy[i] = (c->y[a + i] - med) / c->sig_lvl;
	}
	mgc_sums_fill(&w->sums, w->hx, w->hy, k);
	double rss;
	size_t at = mgc_hinge(w->hx, k, &w->sums, &rss);
	return fmin(c->x[a + at], c->x[c->seg[c->nseg - 1].a]);
}

/* The last segment is flat: stable, a plateau, or a pause that is not yet a plateau (known by the
 * time it would be a plateau, or, should the growth resume, by `eta`, when it would be a leak). */
static void mgc_judge_flat(const struct mgc_ctx *c, double eta, struct mgc_fit *out)
{
	const struct mgc_seg *L = &c->seg[c->nseg - 1];
	char b1[32], b2[32], b3[32];
	const char *u = mgc_unit(c->in->x_is_steps);
	double rise = c->level - mgc_seg_low(c, 0); /* not from a start-up peak that fell back */
	out->x_to_oom = INFINITY;
	if (c->nseg == 1 || rise < fmax(3 * c->sig_lvl, mgc_meaningful_rise(c))) {
		out->verdict = MGC_VERDICT_STABLE;
		out->confidence = mgc_surely_flat(c, L) ? 0.95 : 0.8;
		mgc_why(out, "no meaningful growth: %s per %s (interval %s .. %s) at %s", mgc_bytes(L->slope, b1, 16),
			u, mgc_bytes(L->lo, b1 + 16, 16), mgc_bytes(L->hi, b2, 16), mgc_bytes(c->level, b2 + 16, 16));
		return;
	}
	double gap, flat_len = c->in->x_last - c->x[L->a];
	size_t s0 = mgc_regime_start(c, &gap), m = L->b - L->a;
	double climb = c->x[L->a] - c->x[c->seg[s0].a];
	double level = mgc_median_copy(c->y + L->a, m, c->w->s1);
	double hold = mgc_flat_hold(c);
	if (m < MGC_MIN_PLATEAU || flat_len < 1.5 * gap || flat_len < 0.25 * climb || flat_len < hold) {
		out->verdict = MGC_VERDICT_GROWING;
		out->confidence = 0.5;
		out->projected_level = level;
		/* the readings, and so the hold, change as the pause goes on: promise the end of the
		 * longest hold any of them can ask, MGC_HOLD_EVENTS steps in all the growth before it */
		if (flat_len < hold)
			hold = mgc_poisson_pause(c->x[L->a] - c->in->x_first, MGC_HOLD_EVENTS);
		out->decidable_at = c->x[L->a] + fmax(fmax(MGC_MIN_PLATEAU * c->in->dx, 1.5 * gap), fmax(0.25 * climb, hold));
		if (isfinite(eta))
			out->decidable_at = fmax(out->decidable_at, eta);
		else if (gap > 0) /* it paused and grew again before, and would never be a leak: no promise */
			out->decidable_at = NAN;
		mgc_why(out, "grew %s, flat since %s %g but not for long enough to call it a plateau%s",
			mgc_bytes(rise, b1, sizeof b1), u, c->x[L->a],
			flat_len < hold ? " (its steps would plausibly pause this long: staircase)" : "");
		return;
	}
	double since, creep = mgc_creep(c, &since);
	if (creep > 0) {
		out->verdict = MGC_VERDICT_GROWING;
		out->confidence = 0.7;
		out->slope = creep;
		out->decidable_at = NAN; /* a creep may last as long as it likes: no promise */
		mgc_why(out, "grew %s, flat pieces since %s %g that still creep up %s per %s: no plateau yet",
			mgc_bytes(rise, b1, sizeof b1), u, since, mgc_bytes(creep, b2, sizeof b2), u);
		return;
	}
	out->verdict = MGC_VERDICT_PLATEAU;
	out->plateau_at = mgc_levelled_at(c);
	out->plateau_level = level;
	/* confident once flat for twice the climb and the warmup horizon, and three of its gaps (a
	 * staircase pauses; a slow one may not be over), and surely flat, as `stable` asks: its own
	 * line's interval under the meaningful growth (a 0.2 MiB per step leak under 100 MiB of noise
	 * is flat within its interval for 1,000 steps, its line rising 160 KiB per step; a device's
	 * leak in 2 MiB segments, 250 steps old, lifted the level sigma over the rise it ends with) */
	double sure = fmax(3 * gap, 2 * fmax(climb, mgc_min_rise(c)));
	if (s0 > 0 && c->seg[s0 - 1].flat) /* the rise came after the run had settled: a leak's sign */
		sure = fmax(sure, mgc_seg_len(c, &c->seg[s0 - 1]));
	/* ... and so did all of it, from the run's start settled as mgc_regime_start asks (a flat
	 * stretch of mgc_min_rise), in pieces the regime did not join (a staircase's three steps
	 * under checkpoint spikes, the floor merging two, read `plateau` 0.95 545 steps into a pause
	 * after steps 420-878: its regime began at the last; `test_no_confident_rising_flat`,
	 * `test_sure_after_all_growth`) */
	if (c->nseg > 2 && c->seg[0].flat && mgc_seg_len(c, &c->seg[0]) >= mgc_min_rise(c))
		sure = fmax(sure, 2 * (c->x[L->a] - c->x[c->seg[1].a]));
	out->confidence = m >= 2 * MGC_MIN_PLATEAU && flat_len >= sure && mgc_surely_flat(c, L) &&
			  flat_len >= mgc_stair_pause(c, MGC_MIN_EVENTS, 0) ? 0.95 : 0.8;
	mgc_why(out, "warmup: grew %s, levelled at %s %g and flat at %s since (%s per %s)",
		mgc_bytes(rise, b1, sizeof b1), u, out->plateau_at, mgc_bytes(level, b2, sizeof b2),
		mgc_bytes(L->slope, b3, sizeof b3), u);
}

/* A saturating exponential over the last segment, when it is identified. */
static int mgc_saturates(const struct mgc_ctx *c, const struct mgc_seg *L, struct mgc_expfit *e)
{
	if (L->b - L->a < 8)
		return 0;
	mgc_exp_fit(c, L->a, L->b, e);
	return e->identified && isfinite(e->level_hat);
}

/* Do the last segment's points from three of the fit's time constants on (as many as a plateau
 * needs, MGC_MIN_PLATEAU, at least) still rise, meaningfully (their line's interval) and by 2
 * level sigmas? Then the fit levelled a warmup at the segment's start and left the line after it
 * to the noise: a slow leak (152 KiB per step from step 326, under heavy-tailed noise) read
 * `plateau` 0.8 "levelling off" with a time constant of 44 steps, 560 steps into it. Not 20
 * points: under validation spikes a floor point stands for a block of 30-90 steps, and a leak of
 * 674 KiB per step whose fit's tail rose with its interval above 700 KiB per step over 12 points
 * read `plateau` at 12 prefixes from step 300 to 590 (`test_fit_tail_few_points`). */
static int mgc_rises_after_fit(const struct mgc_ctx *c, const struct mgc_seg *L, const struct mgc_expfit *e)
{
	size_t a = mgc_point_from(c, L->a, c->x[L->a] + 3 * e->tau_hat);
	struct mgc_trend tr;
	return L->b - a >= MGC_MIN_PLATEAU && mgc_line_rises(c, a, L->b, c->x[L->b - 1], 2, &tr);
}

/* The growth levels off: the saturating fit of the last segment leaves less than 2 level sigmas to
 * come. A `plateau` (of medium confidence: the tail may still creep). */
static void mgc_say_levelling(const struct mgc_ctx *c, const struct mgc_seg *L, const struct mgc_expfit *e,
			      struct mgc_fit *out)
{
	char b1[32], b2[32];
	double left = mgc_seg_start(c, c->nseg - 1);
	out->verdict = MGC_VERDICT_PLATEAU;
	out->confidence = 0.8;
	out->x_to_oom = INFINITY;
	out->decidable_at = NAN;
	out->plateau_level = e->level_hat;
	out->plateau_at = fmin(c->in->x_last,
			       c->x[L->a] + e->tau_hat * log(fmax(1.0, (e->level_hat - left) / c->sig_lvl)));
	mgc_why(out, "warmup levelling off: a saturating fit (time constant %.0f %ss) levels at %s, %s above now",
		e->tau_hat, mgc_unit(c->in->x_is_steps), mgc_bytes(e->level_hat, b1, sizeof b1),
		mgc_bytes(fmax(0, e->level_hat - mgc_level_now(c)), b2, sizeof b2));
}

/* The last segment rises and no reading makes it a leak yet: `growing`, when we will know, and the
 * OOM at this rate once the rise is clear (3 level sigmas, or the wander of all that came before
 * it, over MGC_MIN_SAMPLES points, or 10) and no saturating fit levels below the limit. A time
 * already past is not moved to the next sample: such a reading has no time to promise (it once
 * promised the next sample, prefix after prefix, past mgc_decide's guard). */
static void mgc_judge_rising(const struct mgc_ctx *c, double eta, struct mgc_fit *out)
{
	const struct mgc_seg *L = &c->seg[c->nseg - 1];
	char b1[32], b2[32];
	const char *u = mgc_unit(c->in->x_is_steps);
	double xl = c->in->x_last;
	struct mgc_expfit e;
	int sat = mgc_saturates(c, L, &e) && !mgc_rises_after_fit(c, L, &e);
	if (sat && e.level_hat - mgc_level_now(c) < 2 * c->sig_lvl) {
		mgc_say_levelling(c, L, &e, out);
		return;
	}
	out->verdict = MGC_VERDICT_GROWING;
	out->confidence = L->lo > 0 ? 0.9 : 0.7;
	/* it slows down: known when the fit has less than a level sigma left to rise, should the fit
	 * hold, and by the leak rules' time should it not (none, no promise: a leak under checkpoint
	 * spikes whose floor bent promised steps 580-902 and still rose then, `test_promise_kept`) */
	if (sat) {
		double fit = c->x[L->a] + e.tau_hat * log(fmax(1.0, (e.level_hat - mgc_seg_start(c, c->nseg - 1)) /
								   c->sig_lvl));
		if (fit > xl) /* else that time has passed and it still rises: the fit says nothing */
			eta = fmax(eta, fit);
	}
	double seg_rise = L->slope * (xl - c->x[L->a]);
	double noise = mgc_wander_noise(c, mgc_wander(c, 0, L->a, xl - c->x[L->a]));
	int above = seg_rise >= 3 * noise; /* risen clear of the level's noise and its wander so far */
	int clear = above && (L->b - L->a >= MGC_MIN_SAMPLES || seg_rise >= 10 * noise);
	/* one already past is dropped in mgc_decide; a third step, rising now, holds a plateau after
	 * it. A rise not yet clear of how far the level has wandered may be the wander: it promises
	 * no time (a flat run under a gc sawtooth of up to 270 MiB read each ramp as a rise and
	 * promised a time by which the next ramp still rose: 8 promises, none kept) */
	out->decidable_at = isfinite(eta) && above ? fmax(eta, mgc_three_steps_hold(c, xl, 0)) : NAN;
	out->projected_level = sat ? e.level_hat : NAN;
	if (clear && (!sat || e.level_hat + c->fl.excess >= c->in->limit))
		out->x_to_oom = mgc_growing_oom(c, L->slope);
	if (sat)
		mgc_why(out, "growing %s per %s; a saturating fit levels near %s, not yet confirmed",
			mgc_bytes(L->slope, b1, sizeof b1), u, mgc_bytes(e.level_hat, b2, sizeof b2));
	else
		mgc_why(out, "growing %s per %s since %s %g; warmup or leak cannot be told yet",
			mgc_bytes(L->slope, b1, sizeof b1), u, u, c->x[L->a]);
	if (isfinite(out->x_to_oom))
		mgc_why_add(out, "; at this rate the limit is reached at %s %.0f", u, xl + out->x_to_oom);
}

/* Fewer than 8 points: `growing` if it clearly rose, else `stable`. */
static void mgc_judge_few(const struct mgc_ctx *c, struct mgc_fit *out)
{
	const double *x = c->x, *y = c->y;
	size_t n = c->n;
	char b1[32];
	double s = n >= 2 ? (y[n - 1] - y[0]) / (x[n - 1] - x[0]) : 0;
	const struct mgc_seg *L = &c->seg[0];
	if (n >= 3 && s > c->delta && y[n - 1] - y[0] > 3 * c->sigma && L->lo > 0) {
		out->verdict = MGC_VERDICT_GROWING;
		out->confidence = 0.5;
		out->x_to_oom = mgc_growing_oom(c, L->slope);
		out->decidable_at = x[0] + 8 * c->in->dx;
		mgc_why(out, "only %zu points, rising %s per %s; too few to tell a warmup from a leak", n,
			mgc_bytes(L->slope, b1, sizeof b1), mgc_unit(c->in->x_is_steps));
	} else {
		out->verdict = MGC_VERDICT_STABLE;
		out->confidence = 0.5;
		out->x_to_oom = INFINITY;
		mgc_why(out, "only %zu points and no clear rise", n);
	}
}

/* The decision on the floor (docs/CLASSIFIER.md, "Method"). */
static void mgc_decide(struct mgc_ctx *c, struct mgc_fit *out)
{
	mgc_noise(c);
	mgc_segments(c);
	const struct mgc_seg *L = &c->seg[c->nseg - 1];
	out->noise = c->sigma;
	out->level = c->level;
	out->slope = L->slope;
	out->slope_lo = L->lo;
	out->slope_hi = L->hi;
	out->change_at = c->nseg > 1 ? c->x[L->a] : NAN;
	out->period = c->fl.bins > 1 ? c->fl.spike_x : 0;
	if (c->n < 8) {
		mgc_judge_few(c, out);
		return;
	}
	struct mgc_cand k;
	const char *rule;
	double eta;
	if (mgc_find_leak(c, &k, &rule, &eta))
		mgc_say_leak(c, &k, rule, out);
	else if (mgc_leak_before(c, out))
		;
	else if (L->flat && !mgc_late_rise(c, out))
		mgc_judge_flat(c, eta, out);
	else if (!L->flat)
		mgc_judge_rising(c, eta, out);
	/* the readings' earliest time assumes their rate and segments hold; a wander that slows the
	 * rate, a change point that moves the onset, push it out: promise a margin beyond it */
	if (out->verdict == MGC_VERDICT_GROWING)
		out->decidable_at = c->in->x_last + MGC_PROMISE_MARGIN * (out->decidable_at - c->in->x_last);
	/* a promise further ahead than MGC_PROMISE_REACH times the time seen is a guess (12 points of
	 * a ramp promising step 500: half of those broke on layered warmups), none is made */
	if (out->decidable_at - c->in->x_last > MGC_PROMISE_REACH * (c->in->x_last - c->in->x_first))
		out->decidable_at = NAN;
	/* nor one already past (a step under spikes waits for the floor's blocks, not for its time) */
	if (!(out->decidable_at > c->in->x_last))
		out->decidable_at = NAN;
	if (c->pool && out->verdict != MGC_VERDICT_LEAK)
		mgc_why_add(out, "; its steps double, no closer together: an allocator pool, a leak only if the limit comes soon");
	if (c->fl.bins > 1)
		mgc_why_add(out, "; judged on the floor under %zu spikes up to %.0f %ss long", c->fl.nexc,
			    c->fl.spike_x, mgc_unit(c->in->x_is_steps));
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

/* Epoch boundaries, when given, are finite and increasing. */
static int mgc_check_opts(const struct mgc_classify_opts *opts)
{
	if (!opts || !opts->nepochs)
		return 0;
	if (!opts->epochs) /* boundaries without their x */
		return -EINVAL;
	for (size_t i = 0; i < opts->nepochs; i++)
		if (!isfinite(opts->epochs[i]) || (i && !(opts->epochs[i] > opts->epochs[i - 1])))
			return -EINVAL;
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

static int mgc_x_is_steps(const struct mgc_classify_opts *opts)
{
	return !opts || opts->x_is_steps;
}

static double mgc_horizon(const struct mgc_classify_opts *opts)
{
	if (opts && opts->warmup_horizon > 0)
		return opts->warmup_horizon;
	return mgc_x_is_steps(opts) ? 200.0 : 3600.0;
}

/* Classifies the (already checked) series; `delta_abs` is the smallest growth per x that matters
 * to the caller, `headroom` says whether the limit's headroom applies (a process's memory, not a
 * site's). */
static int mgc_classify_core(const double *x0, const double *y0, size_t n0,
			     const struct mgc_classify_opts *opts, double delta_abs, int headroom,
			     struct mgc_fit *out)
{
	struct mgc_core_in in = {
		.limit = opts ? opts->limit : 0,
		.delta_abs = delta_abs,
		.headroom = headroom,
		.horizon = mgc_horizon(opts),
		.start_horizon = MGC_START_FACTOR * mgc_horizon(opts),
		.x_first = x0[0],
		.epochs = opts ? opts->epochs : NULL,
		.nepochs = opts && opts->epochs ? opts->nepochs : 0,
		.x_is_steps = mgc_x_is_steps(opts),
		.x0 = x0,
		.y0 = y0,
	};
	struct mgc_prefix p;
	if (mgc_prefix_open(&in, n0, &p))
		return -ENOMEM;
	out->npoints = p.w.pn;
	mgc_decide(&p.c, out);
	free(p.mem);
	return 0;
}

/* How many of the newest points (1 to MGC_FRESH_MAX) jumped MGC_SPIKE_SIGMAS sigmas above the
 * median of the 8 before them, the one before them not (sigma the step-to-step noise of the 32
 * points before the newest few), with the least of their jumps in *jump: a jump this recent
 * cannot be told from a spike that opens (spikes are known by the drop that closes them). 0 when
 * none did. */
static size_t mgc_fresh_jump(const double *y, size_t n, double *jump)
{
	enum { REF = 8, NOISE = 32 };
	double t[2 * NOISE];
	if (n < NOISE + MGC_FRESH_MAX + 1)
		return 0;
	double thr = MGC_SPIKE_SIGMAS * mgc_noise_scratch(y + n - NOISE - MGC_FRESH_MAX - 1, NOISE, t);
	for (size_t j = 1; j <= MGC_FRESH_MAX; j++) {
		double ref = mgc_median_copy(y + n - j - REF, REF, t), least = INFINITY;
		for (size_t i = n - j; i < n; i++)
			least = fmin(least, y[i] - ref);
		if (least > thr && !(y[n - j - 1] - ref > thr)) {
			*jump = least;
			return j;
		}
	}
	return 0;
}

/* mgc_classify_core, but a `growing` that only a jump on the newest points made is the verdict of
 * the points before it, at confidence 0.5 at most: the first validation or checkpoint spike, or a
 * pair of heavy-tailed outliers, no longer flips a plateau to `growing` and back. A jump that
 * holds is judged as whatever it then is, MGC_FRESH_MAX points later. */
static int mgc_classify_impl(const double *x0, const double *y0, size_t n0,
			     const struct mgc_classify_opts *opts, double delta_abs, int headroom,
			     struct mgc_fit *out)
{
	char b1[32];
	double jump;
	int rc = mgc_classify_core(x0, y0, n0, opts, delta_abs, headroom, out);
	size_t j = rc == 0 && out->verdict == MGC_VERDICT_GROWING ? mgc_fresh_jump(y0, n0, &jump) : 0;
	if (j == 0)
		return rc;
	struct mgc_fit before;
	mgc_fit_init(&before);
	if (mgc_classify_core(x0, y0, n0 - j, opts, delta_abs, headroom, &before) ||
	    before.verdict == MGC_VERDICT_GROWING)
		return 0;
	*out = before;
	out->confidence = fmin(out->confidence, 0.5);
	if (j == 1)
		mgc_why_add(out, "; the last point jumped %s", mgc_bytes(jump, b1, sizeof b1));
	else
		mgc_why_add(out, "; the last %zu points jumped %s", j, mgc_bytes(jump, b1, sizeof b1));
	mgc_why_add(out, ": a spike or a new step, too recent to tell");
	return 0;
}

static double mgc_delta_abs(const struct mgc_classify_opts *opts, double fallback_steps,
			    double fallback_seconds)
{
	if (opts && opts->min_growth > 0)
		return opts->min_growth;
	return mgc_x_is_steps(opts) ? fallback_steps : fallback_seconds;
}

int mgc_classify(const double *x, const double *y, size_t n, const struct mgc_classify_opts *opts,
		 struct mgc_fit *out)
{
	if (!out || mgc_check(x, y, n) || mgc_check_opts(opts))
		return -EINVAL;
	struct mgc_fit f;
	mgc_fit_init(&f);
	/* defaults: 16 KiB per step, 1 KiB per second (above them, the limit's headroom decides) */
	int rc = mgc_classify_impl(x, y, n, opts, mgc_delta_abs(opts, 16384.0, 1024.0), 1, &f);
	if (rc == 0)
		*out = f;
	return rc;
}

/* The bucket of the current step, within the site's cohorts (ncohorts > 0). A step is a double:
 * beyond 2^62 it is clamped before the conversion (out of range is undefined behaviour), and every
 * step from 2^30 falls in the last bucket anyway. */
static unsigned mgc_cohort_now(const struct mgc_site_evidence *ev)
{
	double step = ev->last_step > 0 ? fmin(ev->last_step, 0x1p62) : 0;
	unsigned k = mgc_cohort_bucket((uint64_t)step);
	return k < ev->ncohorts ? k : ev->ncohorts - 1;
}

/* A sampled site's estimate is a Poisson staircase: it jumps by about R with each sample. Its
 * samples: the rises of R/2 or more (round(rise / R) samples each), their count, the sum of their
 * x, the point before the first and the last. */
struct sampled_jumps {
	double count, xsum, first, last;
};

static void sampled_jumps(const struct mgc_site_evidence *ev, double r, struct sampled_jumps *j)
{
	*j = (struct sampled_jumps){.first = ev->x[0], .last = ev->x[0]};
	for (size_t i = 1; i < ev->n; i++) {
		double rise = ev->live[i] - ev->live[i - 1], k = round(rise / r);
		if (!(rise >= 0.5 * r))
			continue;
		j->first = j->count > 0 ? j->first : ev->x[i - 1];
		j->last = ev->x[i];
		j->count += fmax(k, 1);
		j->xsum += fmax(k, 1) * ev->x[i];
	}
}

/* Has a sampled site's growth slowed down over the series? The Laplace test of a Poisson
 * process's trend on its samples' x: their mean x against the window's middle, in units of
 * span / sqrt(12 N), below the MGC_RETRACT_ALPHA quantile (-3.09). A warmup's samples crowd
 * early (a cache filling with time constant a third of the run: -4 with 30 samples). */
static int sampled_slowing(const struct mgc_site_evidence *ev, double r)
{
	struct sampled_jumps j;
	sampled_jumps(ev, r, &j);
	double x0 = ev->x[0], span = ev->x[ev->n - 1] - x0;
	if (!(j.count >= MGC_MIN_EVENTS) || !(span > 0))
		return 0;
	return (j.xsum / j.count - x0 - 0.5 * span) / (span / sqrt(12 * j.count)) < -3.090232;
}

/* P(X <= k) for X binomial(n, p), 0 < p < 1 (k, n whole, 0 <= k <= n); from 1000 trials the
 * normal approximation (with continuity correction), so a site of millions of samples stays cheap. */
static double binomial_cdf(double k, double n, double p)
{
	double sum = 0, lp = log(p), lq = log1p(-p);
	if (n > 1000)
		return 0.5 * erfc(-(k + 0.5 - n * p) / sqrt(2 * n * p * (1 - p)));
	for (double i = 0; i <= k; i++)
		sum += exp(lgamma(n + 1) - lgamma(i + 1) - lgamma(n - i + 1) + i * lp + (n - i) * lq);
	return fmin(sum, 1);
}

/* Do a sampled site's last three complete birth buckets keep survivors at one rate per step of
 * birth, as a leak's do? Counted in samples (bytes / R), the two older buckets' survivors and the
 * newest's split their sum as a binomial with the older buckets' share of the steps (3/7: the
 * buckets span 1, 2 and 4 parts). A site that turns its blocks over (a record per sample, each
 * replaced when its sample comes round again next epoch) has let the older ones go: survivors
 * only in the newest bucket, or a split the binomial rejects either way at MGC_COHORT_ALPHA, is
 * no leak's. One sample in a bucket says little: both parts need one, and the rest is the test. */
static int sampled_cohorts_kept(const struct mgc_site_evidence *ev, unsigned kcur, double r)
{
	double old = round(((double)ev->cohorts[kcur - 3] + (double)ev->cohorts[kcur - 2]) / r);
	double recent = round((double)ev->cohorts[kcur - 1] / r), n = old + recent, p = 3.0 / 7.0;
	if (!(old >= 1) || !(recent >= 1))
		return 0;
	return binomial_cdf(old, n, p) >= MGC_COHORT_ALPHA && binomial_cdf(recent, n, 1 - p) >= MGC_COHORT_ALPHA;
}

/* Cohort evidence of one site: the survival rate (bytes per step of birth still alive) of the
 * last complete birth buckets. Returns 1 = survivors from every recent bucket at an undiminished
 * rate (leak), -1 = recent buckets hold (almost) nothing (warmup or transient), 0 = no opinion. */
static int mgc_cohort_opinion(const struct mgc_site_evidence *ev, double sample_rate, double *rate_recent)
{
	*rate_recent = 0;
	if (!ev->cohorts || ev->ncohorts == 0 || !(ev->last_step >= 8))
		return 0;
	unsigned kcur = mgc_cohort_now(ev);
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
	/* undiminished: the newest complete bucket keeps at least half the rate of the other two; a
	 * sampled site's buckets hold a handful of samples each (a bucket of 32 steps at one sample per
	 * 8 steps is empty one time in 50, and one of three at half the others' rate far more often),
	 * so there the buckets' split passes a binomial test and the series' samples do not slow down */
	int kept = sample_rate > 0
			   ? sampled_cohorts_kept(ev, kcur, sample_rate) && !sampled_slowing(ev, sample_rate)
			   : every && rate[2] >= 0.5 * rmax;
	if (kept && (double)ev->cohorts[kcur - 1] > 0.05 * total)
		return 1;
	if ((double)ev->cohorts[kcur - 1] + (double)ev->cohorts[kcur - 2] < 0.02 * total)
		return -1;
	return 0;
}

/* Where a sampled series' end went flat and at what level: a plateau's start, or, for a verdict
 * of growing, where its last run of equal estimates (no sample since) begins. 0 when neither. */
static int sampled_flat_end(const struct mgc_site_evidence *ev, const struct mgc_fit *f, double *at,
			    double *level)
{
	if (f->verdict == MGC_VERDICT_PLATEAU) {
		*at = f->plateau_at;
		*level = f->plateau_level;
	} else if (f->verdict == MGC_VERDICT_GROWING) {
		size_t k = ev->n - 1;
		while (k > 0 && ev->live[k - 1] == ev->live[ev->n - 1])
			k--;
		*at = ev->x[k];
		*level = ev->live[k];
	} else {
		return 0;
	}
	return *at > ev->x[0] && *at < ev->x[ev->n - 1];
}

/* Sampled data (opts->sample_rate = R). A sampled estimate moves in jumps of about R, so (1) a flat
 * end shorter than MGC_SAMPLED_FLAT_RATES x R of the rise before it may be a gap between samples,
 * not a plateau nor a pause: the rise is judged alone; (2) a leak must have grown past the noise,
 * MGC_SAMPLED_LEAK_RATES x R over the lowest point of the window, before it is called one. */
static void sampled_floor(const struct mgc_site_evidence *ev, const struct mgc_classify_opts *opts,
			  struct mgc_fit *f)
{
	if (!opts || opts->sample_rate <= 0)
		return;
	double r = opts->sample_rate, flat_at, level;
	if (sampled_flat_end(ev, f, &flat_at, &level)) {
		size_t m = 0;
		while (m < ev->n && ev->x[m] <= flat_at)
			m++;
		double rate = (level - ev->live[0]) / (flat_at - ev->x[0]);
		struct mgc_site_evidence rise = *ev;
		struct mgc_classify_opts o = *opts;
		struct mgc_fit g;
		rise.n = m;
		o.sample_rate = 0;
		if (m >= 8 && rate > 0 && rate * (ev->x[ev->n - 1] - flat_at) < MGC_SAMPLED_FLAT_RATES * r &&
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

/* A sampled site's flat end is no plateau while it is shorter than the pause its samples would
 * make with chance MGC_RETRACT_ALPHA had it gone on (mgc_poisson_pause from the point before the
 * first to the last). Returns that pause (0 without a sample), the flat end in *flat: the x since
 * the estimate last rose half a sample above every earlier point (a site that frees as it
 * allocates keeps rising and falling about its level; only new highs are growth going on). */
static double sampled_pause(const struct mgc_site_evidence *ev, double r, double *flat)
{
	struct sampled_jumps j;
	sampled_jumps(ev, r, &j);
	size_t top = 0;
	for (size_t i = 1; i < ev->n; i++)
		if (ev->live[i] > ev->live[top] + 0.5 * r)
			top = i;
	*flat = ev->x[ev->n - 1] - ev->x[top];
	return mgc_poisson_pause(j.last - j.first, j.count);
}

/* A sampled leak site's growth per step: its survivors per step over the two newest complete birth
 * buckets (3/4 of the run), with two standard deviations of a sampled sum of b bytes, sqrt(R b),
 * per step in *sd. The slope of its live estimate's last segment moves in whole samples: on a
 * 1 MiB per step leak sampled at 512 KiB it read 0.67-1.16x over 16 seeds, these 0.96-1.05x. */
static double sampled_cohort_rate(const struct mgc_site_evidence *ev, double r, double *sd)
{
	unsigned k = mgc_cohort_now(ev);
	double b = (double)ev->cohorts[k - 1] + (double)ev->cohorts[k - 2];
	double w = (double)mgc_cohort_first_step(k - 1) + (double)mgc_cohort_first_step(k - 2);
	*sd = sqrt(r * b) / w;
	return b / w;
}

/* The cohorts speak: survivors at an undiminished rate over the last three complete birth
 * buckets, which span 7/8 of the run before the current bucket, in a series that rose and has
 * not stopped (growing; or, sampled, flat for no longer than its samples plausibly pause), make a
 * leak (exact: no noise, so half the horizon suffices; the recent segment may be a short pause,
 * a drained prefetch queue: the second half of the window rising is enough); recent buckets that
 * hold almost nothing make a leak `growing`. A sampled leak grows as its survivors do
 * (sampled_cohort_rate). */
static void site_cohorts(const struct mgc_site_evidence *ev, const struct mgc_classify_opts *opts,
			 struct mgc_fit *f)
{
	double rate, r = opts ? opts->sample_rate : 0, flat = 0, pause = r > 0 ? sampled_pause(ev, r, &flat) : 0, sd;
	int op = mgc_cohort_opinion(ev, r, &rate);
	int flat_end = f->verdict == MGC_VERDICT_PLATEAU || f->verdict == MGC_VERDICT_STABLE;
	int going = f->verdict == MGC_VERDICT_GROWING || f->verdict == MGC_VERDICT_LEAK || (flat_end && flat < pause);
	int rose = f->slope_lo > 0 || ev->live[ev->n - 1] > ev->live[ev->n / 2];
	char b1[32], b2[32];
	if (op > 0 && ev->n >= 8 && ev->last_step >= 0.5 * mgc_horizon(opts) && going && rose) {
		int sampled = r > 0 && mgc_x_is_steps(opts);
		unsigned since = mgc_cohort_now(ev) - (sampled ? 2 : 3); /* the buckets the rate is read on */
		if (sampled) {
			rate = f->slope = sampled_cohort_rate(ev, r, &sd);
			f->slope_lo = fmax(0, rate - 2 * sd);
			f->slope_hi = rate + 2 * sd;
		} else if (!(f->slope_lo > 0)) {
			f->slope = rate;
			f->slope_lo = f->slope_hi = rate;
		}
		f->verdict = MGC_VERDICT_LEAK;
		f->confidence = 0.95;
		/* a `growing` one beyond reach was dropped, a leak's is not; a sampled one is at its new rate */
		if (sampled || !isfinite(f->x_to_oom))
			f->x_to_oom = mgc_level_oom(opts ? opts->limit : 0, f->level, f->slope);
		f->decidable_at = NAN;
		f->projected_level = NAN;
		mgc_why(f, "leak: survivors from every recent step (%s per step born since step %.0f still live)",
			mgc_bytes(rate, b1, sizeof b1), (double)mgc_cohort_first_step(since));
		if (f->slope != rate)
			mgc_why_add(f, ", live grows %s per %s", mgc_bytes(f->slope, b2, sizeof b2),
				    mgc_unit(mgc_x_is_steps(opts)));
		if (flat_end) {
			f->plateau_at = f->plateau_level = NAN;
			mgc_why_add(f, "; flat for %g %ss, within the pauses its samples make (sampled)", flat,
				    mgc_unit(mgc_x_is_steps(opts)));
		}
	} else if (op < 0 && f->verdict == MGC_VERDICT_LEAK) {
		f->verdict = MGC_VERDICT_GROWING;
		f->confidence = 0.6;
		mgc_why(f, "growing, but the recent birth steps hold almost no live bytes: the growth is ending");
	}
}

int mgc_classify_site(const struct mgc_site_evidence *ev, const struct mgc_classify_opts *opts,
		      struct mgc_fit *out)
{
	if (!ev || !out || mgc_check(ev->x, ev->live, ev->n) || mgc_check_opts(opts))
		return -EINVAL;
	struct mgc_fit f;
	mgc_fit_init(&f);
	/* sites are small: the floor is 64 bytes per step / 1 byte per second unless given */
	int rc = mgc_classify_impl(ev->x, ev->live, ev->n, opts, mgc_delta_abs(opts, 64.0, 1.0), 0, &f);
	if (rc)
		return rc;
	site_cohorts(ev, opts, &f);
	sampled_floor(ev, opts, &f);
	*out = f;
	return 0;
}

/* y's first and last values: the medians of MGC_ENDS points at each end (fewer in a short
 * series), so one snapshot taken in the middle of a burst does not stand for either end. */
#define MGC_ENDS 5
static void series_ends(const double *y, size_t n, double *head, double *tail)
{
	double scratch[MGC_ENDS];
	size_t k = n / 4 < MGC_ENDS ? (n / 4 ? n / 4 : 1) : MGC_ENDS;
	*head = mgc_median_copy(y, k, scratch);
	*tail = mgc_median_copy(y + n - k, k, scratch);
}

static double ends_rise(const double *y, size_t n)
{
	double head, tail;
	series_ends(y, n, &head, &tail);
	return tail - head;
}

/* A sampled run's live total whose rise is within its sampling band (mgc_classify_process). An
 * estimate of B bytes of blocks much smaller than R has variance ~R*B; blocks kept from one end to
 * the other are the same draws, so the rise's variance is at most R * (head + tail). */
static int sampled_live_flat(const double *live, size_t n, const struct mgc_classify_opts *opts)
{
	double head, tail;
	if (!opts || !(opts->sample_rate > 0) || n < 8)
		return 0;
	series_ends(live, n, &head, &tail);
	return fabs(tail - head) < 3 * sqrt(opts->sample_rate * (fabs(head) + fabs(tail)));
}

/* RSS's reading climbs now: `growing` or `leak` with a recent slope whose interval is above 0. */
static int mgc_rss_climbs(const struct mgc_fit *fr)
{
	return (fr->verdict == MGC_VERDICT_GROWING || fr->verdict == MGC_VERDICT_LEAK) && fr->slope_lo > 0;
}

/* The level RSS rose to, for a reading that is not growing now: a plateau's level, or the median
 * of the newest points where RSS paused (`growing` with a recent slope whose interval holds 0) or
 * reads `stable`; NAN for a reading still climbing. */
static double mgc_rss_reached(const double *rss, size_t n, const struct mgc_fit *fr)
{
	double head, tail;
	if (fr->verdict == MGC_VERDICT_PLATEAU)
		return fr->plateau_level;
	if (fr->verdict == MGC_VERDICT_STABLE || (fr->verdict == MGC_VERDICT_GROWING && !mgc_rss_climbs(fr))) {
		series_ends(rss, n, &head, &tail);
		return tail;
	}
	return NAN;
}

/* RSS that rose and stopped after live memory had already levelled: the rise is the allocator
 * keeping freed memory (a one-off retention), not a warmup of the program, whether RSS has been
 * flat long enough to read `plateau` or not (mgtrain's retention scenario steps up once, 60 MiB,
 * and may be read `growing, flat since ...` for 130 steps after; test_process.c). Turns *fr into
 * `retention` and returns 1 when so. */
static int mgc_retained_rise(const double *x, const double *rss, const double *live, const double *free_kept,
			     size_t n, int x_is_steps, const struct mgc_fit *fl, struct mgc_fit *fr)
{
	double scratch[5], reached = mgc_rss_reached(rss, n, fr);
	if (!isfinite(reached) || n < 8 || !(fl->level > 0))
		return 0;
	/* from where live memory first reached 90% of its level: what did each gain since? */
	size_t i0 = 0;
	while (i0 + 1 < n && live[i0] < 0.9 * fl->level)
		i0++;
	size_t k = n - i0 < 5 ? n - i0 : 5;
	double rss_gain = reached - mgc_median_copy(rss + i0, k, scratch);
	double live_gain = fl->level - mgc_median_copy(live + i0, k, scratch);
	double kept = free_kept ? ends_rise(free_kept + i0, n - i0) : NAN;
	/* the rise against point-to-point noise too: a reading's own noise holds the rise when RSS
	 * stepped up and dipped back (the retention scenario's 60 MiB step read ~20 MiB of noise) */
	double noise = fmin(fr->noise, mgc_noise_sigma(rss + i0, n - i0));
	if (n - i0 < 8 || !(rss_gain > 4 * noise) || !(rss_gain > 0.2 * reached) ||
	    !(live_gain < 0.25 * rss_gain) || kept < 0.25 * rss_gain)
		return 0;
	char b1[32], b2[32], b3[32];
	fr->verdict = MGC_VERDICT_RETENTION;
	mgc_why(fr, "retention: RSS rose %s after live allocations levelled at %s %g (they moved %s)",
		mgc_bytes(rss_gain, b1, sizeof b1), mgc_unit(x_is_steps), x[i0], mgc_bytes(live_gain, b2, sizeof b2));
	if (isfinite(kept) && kept > 0)
		mgc_why_add(fr, "; the allocator keeps %s more freed memory", mgc_bytes(kept, b3, sizeof b3));
	return 1;
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
	char b1[32], b2[32];
	const char *u = mgc_unit(mgc_x_is_steps(opts));
	int rss_grows = mgc_rss_climbs(&fr);
	/* live does not grow: flat verdict, or its growth explains under a quarter of RSS's */
	int live_flat = !(fl.verdict == MGC_VERDICT_GROWING || fl.verdict == MGC_VERDICT_LEAK) ||
			fl.slope < 0.25 * fr.slope;
	/* ...but live memory that climbs at half RSS's rate or more explains the growth, whatever
	 * its own verdict (a slope under the absolute floor is still the program's memory). */
	if (isfinite(fl.slope) && isfinite(fr.slope) && fl.slope >= 0.5 * fr.slope)
		live_flat = 0;
	if (!live_flat && sampled_live_flat(live, n, opts))
		live_flat = 1;
	if (live_flat && mgc_retained_rise(x, rss, live, free_kept, n, mgc_x_is_steps(opts), &fl, &fr)) {
		*out = fr;
		return 0;
	}
	/* Retention is memory the allocator keeps: where its free bytes are known they must explain
	 * a good share of the growth. RSS that grows with neither live allocations nor kept free
	 * memory (copy-on-write pages of a forked worker, untracked memory) keeps its own verdict. */
	double kept = free_kept ? ends_rise(free_kept, n) : NAN, rss_rise = ends_rise(rss, n);
	if (rss_grows && live_flat && n >= 8 && free_kept && rss_rise > 0 && kept < 0.25 * rss_rise) {
		mgc_why_add(&fr, "; neither live allocations nor the allocator's free memory (%s of %s) explain it",
			    mgc_bytes(kept, b1, sizeof b1), mgc_bytes(rss_rise, b2, sizeof b2));
		live_flat = 0;
	}
	if (rss_grows && live_flat && n >= 8) {
		fr.verdict = MGC_VERDICT_RETENTION;
		mgc_why(&fr, "retention: RSS grows %s per %s while live allocations ", mgc_bytes(fr.slope, b1, sizeof b1), u);
		if (isfinite(kept) && kept > 0)
			mgc_why_add(&fr, "do not; the allocator keeps %s more freed memory", mgc_bytes(kept, b2, sizeof b2));
		else
			mgc_why_add(&fr, "stay at %s", mgc_bytes(fl.level, b2, sizeof b2));
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
		/* RSS's growth rate: over the window's second half (the recent segment may be a
		 * pause), or the recent slope where its interval excludes 0 and it spans a quarter of
		 * the window (a few points of a staircase climbing as malloc takes fresh memory, or of
		 * freed memory malloc keeps, are no rate to explain: torch-leak under load read RSS
		 * `growing 3.6 MiB per step since step 114` of 120, `test_sites_explain_late_climb`) */
		size_t h = n / 2;
		double rate = (rss[n - 1] - rss[h]) / (x[n - 1] - x[h]);
		if (proc->slope_lo > 0 && !(x[n - 1] - proc->change_at < 0.25 * (x[n - 1] - x[0])))
			rate = fmax(rate, proc->slope);
		if (!(rate > 0) || leak_slope < 0.5 * rate)
			return 0;
		snprintf(proc->why, sizeof proc->why,
			 "leaking sites whose survivors come from every recent step grow %s per %s, "
			 "%.0f%% of RSS's growth", mgc_bytes(leak_slope, b1, sizeof b1), mgc_unit(x_is_steps),
			 100.0 * leak_slope / rate);
		proc->slope = rate;
	} else {
		/* the classifier's meaningful growth (what reaches the limit within the run horizon, or
		 * doubles the memory without one); the sites' own growth is exact, no noise margin */
		double head = limit > 0 ? limit - level : level;
		double floor = fmax(x_is_steps ? 4096.0 : 64.0, head > 0 ? head / MGC_RUN_HORIZON : 0);
		if (leak_slope < floor)
			return 0;
		snprintf(proc->why, sizeof proc->why,
			 "RSS looks %s (noise %s), but leaking sites whose survivors come from every recent "
			 "step grow %s per %s", v == MGC_VERDICT_STABLE ? "stable" : "levelled",
			 mgc_bytes(proc->noise, b1, sizeof b1), mgc_bytes(leak_slope, b2, sizeof b2),
			 mgc_unit(x_is_steps));
		proc->slope = leak_slope;
		proc->slope_lo = proc->slope_hi = leak_slope;
		proc->plateau_at = proc->plateau_level = NAN;
	}
	proc->verdict = MGC_VERDICT_LEAK;
	proc->confidence = leak_confidence;
	proc->decidable_at = NAN;
	if (limit > 0 && proc->slope > 0)
		proc->x_to_oom = mgc_level_oom(limit, level, proc->slope);
	return 1;
}
