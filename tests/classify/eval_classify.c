/* SPDX-License-Identifier: MIT */
/* eval_classify.c: the growth classifier's evaluation program. It scores every prefix of the
 * training-like set (eval_train.c) the way `mgreport --series FILE.csv --json --limit 80G` would
 * classify it, side by side with three simple baselines, then runs the classic set
 * (eval_classic.c), prints every figure and exits 1 when a target of issue 12 is missed. It reads
 * no file and no clock into its figures: two runs print the same numbers. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/times.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "eval_set.h"
#include "mgc_classify.h"

enum { M_MG, M_NAIVE, M_MK, M_UNFREED, NMETHODS };
static const char *const METHOD_NAMES[NMETHODS] = {"mg", "naive", "Mann-Kendall", "unfreed +20%"};

/* ---------------------------------------------------------------- the three baselines */

/* naive: the last 3 points rose, and the series is 10% above its first point */
static int base_naive(const double *y, size_t n)
{
	return n >= 4 && y[n - 1] > y[n - 2] && y[n - 2] > y[n - 3] && y[n - 3] > y[n - 4] &&
	       y[n - 1] >= 1.10 * y[0];
}

/* Mann-Kendall at alpha 0.01 (two-sided) over the last 50 points, and a Sen slope above 1 MiB/step */
static int base_mk(const double *x, const double *y, size_t n)
{
	size_t k = n < 50 ? n : 50;
	struct mgc_trend t;
	if (k < 10 || mgc_trend(x + n - k, y + n - k, k, 2.575829, &t) != 0)
		return 0;
	return t.z > 2.575829 && t.slope > 1 * MIB;
}

/* unfreed +20%: the memory not given back since the start grew by a fifth */
static int base_unfreed(const double *y, size_t n)
{
	return n >= 2 && y[n - 1] >= 1.20 * y[0];
}

/* ---------------------------------------------------------------- one series, every prefix */

/* What was said at one scored prefix. */
struct said {
	size_t len;
	double x;
	struct mgc_fit fit;
	int base[NMETHODS]; /* 1: that method says leak (base[M_MG] from the fit) */
};

/* The options mgreport --series passes (mgr_analyze_series): the limit, steps, the epochs. */
static int classify_like_mgreport(const struct tseries *s, size_t len, int with_epochs, struct mgc_fit *f)
{
	size_t ne = 0;
	while (with_epochs && ne < s->nepochs && s->epochs[ne] <= s->x[len - 1])
		ne++;
	struct mgc_classify_opts o = {.limit = s->limit, .x_is_steps = 1};
	o.epochs = with_epochs ? s->epochs : NULL; /* a run that marks epochs, in epoch ne + 1 */
	o.nepochs = ne;
	return mgc_classify(s->x, s->y, len, &o, f);
}

/* Scored prefix lengths: every stride-th from 8 points, and always the whole series. */
static size_t next_len(size_t len, size_t n, size_t stride)
{
	if (len == n)
		return n + 1;
	return len + stride < n ? len + stride : n;
}

static size_t g_jobs = 1; /* --jobs: processes that classify a series' prefixes side by side */

/* Classifies the prefixes out[j], out[j + step], ... (their len set). Returns 0 or -1. */
static int classify_some(const struct tseries *s, struct said *out, size_t k, size_t j, size_t step,
			 int with_epochs)
{
	for (size_t i = j; i < k; i += step) {
		struct said *d = &out[i];
		d->x = s->x[d->len - 1];
		int rc = classify_like_mgreport(s, d->len, with_epochs, &d->fit);
		if (rc) {
			fprintf(stderr, "%s: prefix %zu: mgc_classify returned %d\n", s->name, d->len, rc);
			return -1;
		}
		d->base[M_MG] = d->fit.verdict == MGC_VERDICT_LEAK;
		d->base[M_NAIVE] = base_naive(s->y, d->len);
		d->base[M_MK] = base_mk(s->x, s->y, d->len);
		d->base[M_UNFREED] = base_unfreed(s->y, d->len);
	}
	return 0;
}

/* The prefixes in g_jobs child processes writing into shared memory (the same numbers: each
 * classification is independent). Returns 0 or -1. */
static int classify_forked(const struct tseries *s, struct said *out, size_t k, int with_epochs)
{
	size_t bytes = k * sizeof(*out);
	struct said *sh = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED)
		return -1;
	memcpy(sh, out, bytes);
	int failed = 0;
	for (size_t j = 0; j < g_jobs; j++) {
		pid_t pid = fork();
		if (pid == 0)
			_exit(classify_some(s, sh, k, j, g_jobs, with_epochs) ? 1 : 0);
		failed |= pid < 0;
	}
	int st;
	while (wait(&st) > 0)
		failed |= !WIFEXITED(st) || WEXITSTATUS(st) != 0;
	memcpy(out, sh, bytes);
	munmap(sh, bytes);
	return failed ? -1 : 0;
}

/* Classifies every scored prefix of s; returns the number written into out (NULL on failure). */
static struct said *run_series(const struct tseries *s, size_t stride, int with_epochs, size_t *nout)
{
	struct said *out = calloc(s->n / stride + 2, sizeof(*out));
	size_t k = 0;
	if (!out)
		return NULL;
	double lo = -INFINITY, hi = INFINITY; /* EVAL_DEBUG_XRANGE=LO:HI: only those prefixes (debugging) */
	const char *range = getenv("EVAL_DEBUG_XRANGE");
	if (range)
		sscanf(range, "%lf:%lf", &lo, &hi);
	for (size_t len = 8; len <= s->n; len = next_len(len, s->n, stride))
		if (s->x[len - 1] >= lo && s->x[len - 1] <= hi)
			out[k++].len = len;
	if (g_jobs > 1 ? classify_forked(s, out, k, with_epochs) : classify_some(s, out, k, 0, 1, with_epochs)) {
		free(out);
		return NULL;
	}
	*nout = k;
	return out;
}

/* CPU seconds of this process and its reaped children (--jobs). */
static double cpu_seconds(void)
{
	struct tms t;
	times(&t);
	return (double)(t.tms_utime + t.tms_stime + t.tms_cutime + t.tms_cstime) / (double)sysconf(_SC_CLK_TCK);
}

/* ---------------------------------------------------------------- scoring */

struct score {
	size_t series, prefixes;
	size_t nl[NMETHODS], nl_leak[NMETHODS];       /* non-leak prefixes; said leak */
	size_t know[NMETHODS], know_leak[NMETHODS];   /* knowable leak prefixes; said leak */
	size_t leak_series, unsettled[NMETHODS];      /* leak series with a knowable part; never settled on leak */
	size_t pre[NMETHODS], pre_leak[NMETHODS];     /* leak series before their onset; said leak */
	size_t know_flat;                             /* knowable leak prefixes called plateau or stable */
	size_t rising, rising_flat;                   /* the floor visibly rises; plateau/stable at >= 0.9 */
	size_t dec, dec_ok, ldec, ldec_ok;            /* decidable_at passed: decided; on leaks: leak */
	size_t ltn, ltn_series;                       /* leak, then not leak while the growth goes on */
	size_t fixed, fixed_held;                     /* fixed leaks said leak; still leak at their end */
	double fixed_sum, fixed_max;                  /* steps from the stop until leak is never said again */
	size_t nl_know, nl_know_oom;                  /* knowable non-leak prefixes; with a finite OOM */
	size_t flips;
	double lat_sum;                               /* steps from onset to the leak that holds */
	size_t lat_n;
	double *oom_err;                              /* relative OOM errors on leak verdicts */
	size_t noom, oom_cap;
};

/* The floor is still rising: a leak since its onset (and visibly, by 5 sigma); a warmup by
 * 3 sigma over the last max(200 steps, 20 samples). */
static int floor_rising(const struct tseries *s, const struct said *d)
{
	size_t i = d->len - 1;
	if (s->leak)
		return d->x >= s->t_on && d->x < s->t_stop && s->floor[i] - s->floor_ref >= 5 * s->sigma;
	double w = fmax(200, 20 * (s->x[1] - s->x[0]));
	size_t j = i;
	while (j > 0 && s->x[j] > d->x - w)
		j--;
	return s->x[i] - s->x[j] >= w && s->floor[i] - s->floor[j] >= 3 * s->sigma;
}

static void add_oom_error(struct score *sc, double err)
{
	if (sc->noom == sc->oom_cap) {
		size_t nc = sc->oom_cap ? 2 * sc->oom_cap : 1024;
		double *nv = realloc(sc->oom_err, nc * sizeof(double));
		if (!nv)
			return;
		sc->oom_err = nv;
		sc->oom_cap = nc;
	}
	sc->oom_err[sc->noom++] = err;
}

static void score_prefix(const struct tseries *s, const struct said *d, struct score *sc)
{
	const struct mgc_fit *f = &d->fit;
	int flat = f->verdict == MGC_VERDICT_PLATEAU || f->verdict == MGC_VERDICT_STABLE;
	sc->prefixes++;
	for (int m = 0; m < NMETHODS; m++) {
		if (!s->leak) {
			sc->nl[m]++;
			sc->nl_leak[m] += d->base[m];
		} else if (d->x < s->t_on) {
			sc->pre[m]++;
			sc->pre_leak[m] += d->base[m];
		} else if (d->x >= s->t_know && d->x < s->t_stop) {
			sc->know[m]++;
			sc->know_leak[m] += d->base[m];
		}
	}
	if (s->leak && d->x >= s->t_know && d->x < s->t_stop)
		sc->know_flat += flat;
	if (floor_rising(s, d)) {
		sc->rising++;
		sc->rising_flat += flat && f->confidence >= 0.9;
		if (getenv("EVAL_DEBUG_RISING") && flat && f->confidence >= 0.9)
			printf("RISING-FLAT %s x %.0f %s %.2f %s\n", s->name, d->x, mgc_verdict_name(f->verdict),
			       f->confidence, f->why);
	}
	if (!s->leak && d->x >= s->t_settled) {
		sc->nl_know++;
		sc->nl_know_oom += isfinite(f->x_to_oom);
	}
	if (s->leak && f->verdict == MGC_VERDICT_LEAK && isfinite(f->x_to_oom) && isfinite(s->t_oom) &&
	    d->x < s->t_stop && s->t_oom > d->x)
		add_oom_error(sc, fabs(f->x_to_oom - (s->t_oom - d->x)) / (s->t_oom - d->x));
}

/* First scored prefix at or after x, or k. */
static size_t said_at(const struct said *d, size_t k, double x)
{
	size_t lo = 0, hi = k;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (d[mid].x < x)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* decidable_at: when it passes, is the verdict decided (and, on a leak, `leak`)? */
static void score_honesty(const struct tseries *s, const struct said *d, size_t k, struct score *sc)
{
	for (size_t i = 0; i < k; i++) {
		double D = d[i].fit.decidable_at;
		if (d[i].fit.verdict != MGC_VERDICT_GROWING || !isfinite(D) || D > d[k - 1].x)
			continue;
		size_t q = said_at(d, k, D);
		if (q == k)
			continue;
		sc->dec++;
		sc->dec_ok += d[q].fit.verdict != MGC_VERDICT_GROWING;
		if (getenv("EVAL_DEBUG_DEC") && d[q].fit.verdict == MGC_VERDICT_GROWING)
			printf("DEC %s x %.0f promised %.0f: at %.0f %s | %s\n", s->name, d[i].x, D, d[q].x,
			       d[i].fit.why, d[q].fit.why);
		if (s->leak && d[i].x >= s->t_on && D < s->t_stop) {
			sc->ldec++;
			sc->ldec_ok += d[q].fit.verdict == MGC_VERDICT_LEAK;
		}
	}
}

/* A fixed leak (its growth stops) that was said: how many steps after the stop `leak` is said for
 * the last time (0 when never after it). One that still says leak at its end is counted apart. */
static void score_fixed(const struct tseries *s, const struct said *d, size_t k, size_t first, struct score *sc)
{
	if (!isfinite(s->t_stop) || first == k || k == 0)
		return;
	size_t last = k;
	while (last > 0 && !d[last - 1].base[M_MG])
		last--;
	if (last == k) {
		sc->fixed_held++;
		return;
	}
	double after = last > 0 ? fmax(0, d[last].x - s->t_stop) : 0;
	sc->fixed++;
	sc->fixed_sum += after;
	sc->fixed_max = fmax(sc->fixed_max, after);
}

/* Events over the whole series: flips, never settled on leak, leak then not leak, latency. */
static void score_events(const struct tseries *s, const struct said *d, size_t k, struct score *sc)
{
	for (size_t i = 1; i < k; i++)
		sc->flips += d[i].fit.verdict != d[i - 1].fit.verdict;
	if (!s->leak)
		return;
	size_t first = k, last_know = k;
	for (size_t i = 0; i < k; i++) {
		if (first == k && d[i].x >= s->t_on && d[i].base[M_MG])
			first = i;
		if (d[i].x >= s->t_know && d[i].x < s->t_stop)
			last_know = i;
	}
	if (last_know < k) {
		sc->leak_series++;
		for (int m = 0; m < NMETHODS; m++)
			sc->unsettled[m] += !d[last_know].base[m];
		size_t hold = last_know;
		while (hold > 0 && d[hold - 1].base[M_MG] && d[hold - 1].x >= s->t_on)
			hold--;
		if (d[last_know].base[M_MG]) {
			sc->lat_sum += d[hold].x - s->t_on;
			sc->lat_n++;
		}
	}
	size_t bad = 0;
	for (size_t i = first; i < k && d[i].x < s->t_stop; i++) {
		bad += !d[i].base[M_MG];
		if (getenv("EVAL_DEBUG_LTN") && !d[i].base[M_MG])
			printf("LTN %s x %.0f %s %s\n", s->name, d[i].x, mgc_verdict_name(d[i].fit.verdict), d[i].fit.why);
	}
	sc->ltn += bad;
	sc->ltn_series += bad > 0;
	score_fixed(s, d, k, first, sc);
}

static void score_merge(struct score *t, const struct score *f)
{
	for (int m = 0; m < NMETHODS; m++) {
		t->nl[m] += f->nl[m];
		t->nl_leak[m] += f->nl_leak[m];
		t->know[m] += f->know[m];
		t->know_leak[m] += f->know_leak[m];
		t->unsettled[m] += f->unsettled[m];
		t->pre[m] += f->pre[m];
		t->pre_leak[m] += f->pre_leak[m];
	}
	t->series += f->series;
	t->prefixes += f->prefixes;
	t->leak_series += f->leak_series;
	t->know_flat += f->know_flat;
	t->rising += f->rising;
	t->rising_flat += f->rising_flat;
	t->dec += f->dec;
	t->dec_ok += f->dec_ok;
	t->ldec += f->ldec;
	t->ldec_ok += f->ldec_ok;
	t->ltn += f->ltn;
	t->ltn_series += f->ltn_series;
	t->fixed += f->fixed;
	t->fixed_held += f->fixed_held;
	t->fixed_sum += f->fixed_sum;
	t->fixed_max = fmax(t->fixed_max, f->fixed_max);
	t->nl_know += f->nl_know;
	t->nl_know_oom += f->nl_know_oom;
	t->flips += f->flips;
	t->lat_sum += f->lat_sum;
	t->lat_n += f->lat_n;
	for (size_t i = 0; i < f->noom; i++)
		add_oom_error(t, f->oom_err[i]);
}

/* ---------------------------------------------------------------- the run */

struct family {
	const char *name;
	struct score sc;
};

struct run {
	int verbose;
	size_t quick;     /* > 0: at most about this many prefixes per series */
	int with_epochs;  /* pass the runs' epoch boundaries (the CSV's `epoch` column) */
	struct family fam[32];
	size_t nfam;
	struct score total;
};

static double pct(size_t a, size_t b)
{
	return b ? 100.0 * (double)a / (double)b : 0.0;
}

static struct score *family_of(struct run *r, const char *name)
{
	for (size_t i = 0; i < r->nfam; i++)
		if (strcmp(r->fam[i].name, name) == 0)
			return &r->fam[i].sc;
	if (r->nfam == sizeof(r->fam) / sizeof(r->fam[0]))
		return NULL;
	r->fam[r->nfam].name = name;
	memset(&r->fam[r->nfam].sc, 0, sizeof(struct score));
	return &r->fam[r->nfam++].sc;
}

static void print_said(const struct tseries *s, const struct said *d, size_t k, int verbose)
{
	for (size_t i = 0; i < k; i++) {
		const struct mgc_fit *f = &d[i].fit;
		int wrong = s->leak ? d[i].x >= s->t_know && d[i].x < s->t_stop && !d[i].base[M_MG]
				    : d[i].base[M_MG];
		if (verbose < 2 && !wrong && i + 1 < k && i % 25)
			continue;
		printf("  %-24s x %6.0f %-8s %-9s %.2f oom %8.0f dec %8.0f %s%s\n", s->name, d[i].x,
		       s->leak ? (d[i].x < s->t_on ? "pre" : d[i].x < s->t_know ? "unknown" : "leak") : "nonleak",
		       mgc_verdict_name(f->verdict), f->confidence, f->x_to_oom, f->decidable_at,
		       wrong ? "WRONG " : "", f->why);
	}
}

/* Scores one series into its family and the total. Returns 0 or -1 (classifier error, no memory). */
static int eval_series(struct run *r, const struct tseries *s)
{
	size_t stride = r->quick && s->n > r->quick ? s->n / r->quick : 1, k = 0;
	struct said *d = run_series(s, stride, r->with_epochs, &k);
	struct score *fs = family_of(r, s->family);
	if (!d || !fs) {
		free(d);
		return -1;
	}
	struct score one;
	memset(&one, 0, sizeof one);
	one.series = 1;
	for (size_t i = 0; i < k; i++)
		score_prefix(s, &d[i], &one);
	score_honesty(s, d, k, &one);
	score_events(s, d, k, &one);
	if (r->verbose)
		print_said(s, d, k, r->verbose);
	score_merge(fs, &one);
	score_merge(&r->total, &one);
	free(one.oom_err);
	free(d);
	return 0;
}

static void print_families(const struct run *r)
{
	printf("per family            series prefixes  false leak  finite OOM | recall  plateau/stable"
	       "  never settled  leak, then not  onset->leak (steps)\n");
	for (size_t i = 0; i < r->nfam; i++) {
		const struct score *s = &r->fam[i].sc;
		printf("  %-21s %5zu %8zu", r->fam[i].name, s->series, s->prefixes);
		if (s->nl[M_MG])
			printf("   %7.2f%%    %6.2f%% |\n", pct(s->nl_leak[M_MG], s->nl[M_MG]),
			       pct(s->nl_know_oom, s->nl_know));
		else
			printf("                         | %6.1f%%  %8.1f%%  %9zu/%zu  %10zu/%zu  %10.0f\n",
			       pct(s->know_leak[M_MG], s->know[M_MG]), pct(s->know_flat, s->know[M_MG]),
			       s->unsettled[M_MG], s->leak_series, s->ltn_series, s->series,
			       s->lat_n ? s->lat_sum / (double)s->lat_n : NAN);
	}
}

static void print_side_by_side(const struct score *t)
{
	printf("\n%-48s", "");
	for (int m = 0; m < NMETHODS; m++)
		printf("%14s", METHOD_NAMES[m]);
	printf("\n%-48s", "false leak on non-leak prefixes");
	for (int m = 0; m < NMETHODS; m++)
		printf("%13.2f%%", pct(t->nl_leak[m], t->nl[m]));
	printf("\n%-48s", "leak recall once knowable");
	for (int m = 0; m < NMETHODS; m++)
		printf("%13.2f%%", pct(t->know_leak[m], t->know[m]));
	printf("\n%-48s", "leak series never settled on leak");
	for (int m = 0; m < NMETHODS; m++)
		printf("%11zu/%zu", t->unsettled[m], t->leak_series);
	printf("\n%-48s", "leak said before a leak's onset");
	for (int m = 0; m < NMETHODS; m++)
		printf("%13.2f%%", pct(t->pre_leak[m], t->pre[m]));
	printf("\n");
}

static double median_err(struct score *t)
{
	if (!t->noom)
		return NAN;
	for (size_t i = 1; i < t->noom; i++) /* insertion sort: a few thousand values */
		for (size_t j = i; j > 0 && t->oom_err[j - 1] > t->oom_err[j]; j--) {
			double v = t->oom_err[j];
			t->oom_err[j] = t->oom_err[j - 1];
			t->oom_err[j - 1] = v;
		}
	return t->oom_err[t->noom / 2];
}

/* The targets of issue 12; prints each and returns 1 when one is missed beyond its gate. One
 * target is not met yet (docs/CLASSIFIER.md, "Failures that remain"): its gate is the level each
 * run reached when that was written (the quick run, `--quick 150`, is what meson runs; the full
 * run scores every prefix), so a regression still fails. */
#define KNOWN_LTN_SERIES_QUICK 3 /* leak series with leak, then not leak while growing */
#define KNOWN_LTN_SERIES_FULL 8

static int print_targets(struct score *t, int quick)
{
	const double known_ltn = quick ? KNOWN_LTN_SERIES_QUICK : KNOWN_LTN_SERIES_FULL;
	struct {
		const char *what;
		double value, target;
		int at_most;
		double gate; /* at_most targets only: the test fails above this (the target unless known) */
	} tg[] = {
		{"false leak on non-leak prefixes (%)", pct(t->nl_leak[M_MG], t->nl[M_MG]), 1, 1, 0},
		{"leak recall once knowable (%)", pct(t->know_leak[M_MG], t->know[M_MG]), 90, 0, 0},
		{"knowable leaks called plateau or stable (%)", pct(t->know_flat, t->know[M_MG]), 2, 1, 0},
		{"plateau/stable at confidence >= 0.9 while the floor rises", (double)t->rising_flat, 0, 1, 0},
		{"decidable_at passed and the verdict decided (%)", pct(t->dec_ok, t->dec), 90, 0, 0},
		{"leak series with leak, then not leak while growing", (double)t->ltn_series, 0, 1, known_ltn},
		{"knowable non-leak prefixes with a finite steps_to_oom (%)", pct(t->nl_know_oom, t->nl_know), 1, 1, 0},
		{"OOM projection median error on leak verdicts (%)", 100 * median_err(t), 10, 1, 0},
	};
	int failed = 0;
	printf("\ntargets (issue 12)\n");
	for (size_t i = 0; i < sizeof(tg) / sizeof(tg[0]); i++) {
		int ok = tg[i].at_most ? tg[i].value <= tg[i].target : tg[i].value >= tg[i].target;
		double gate = tg[i].gate > tg[i].target ? tg[i].gate : tg[i].target;
		int known = !ok && tg[i].at_most && tg[i].value <= gate;
		printf("  %-60s %8.2f  (%s %g)  %s\n", tg[i].what, tg[i].value, tg[i].at_most ? "<=" : ">=",
		       tg[i].target, ok ? "ok" : known ? "MISSED (known, within its gate)" : "MISSED");
		failed |= !ok && !known;
	}
	return failed;
}

static void print_mg(struct score *t)
{
	printf("\nmg, further figures\n");
	printf("  knowable leak prefixes called plateau or stable: %.2f%% of %zu\n", pct(t->know_flat, t->know[M_MG]),
	       t->know[M_MG]);
	printf("  plateau/stable at confidence >= 0.9 while the floor visibly rises: %zu of %zu prefixes\n",
	       t->rising_flat, t->rising);
	printf("  decidable_at honest: decided when it passed %.1f%% of %zu; on leaks, leak by then %.1f%% of %zu\n",
	       pct(t->dec_ok, t->dec), t->dec, pct(t->ldec_ok, t->ldec), t->ldec);
	printf("  leak, then not leak while still growing: %zu prefixes in %zu series\n", t->ltn, t->ltn_series);
	printf("  fixed leaks: leak no longer said %.0f steps after the stop on average (at most %.0f) in %zu "
	       "series; %zu still leak at their end\n",
	       t->fixed ? t->fixed_sum / (double)t->fixed : NAN, t->fixed_max, t->fixed, t->fixed_held);
	printf("  finite steps_to_oom on knowable non-leak prefixes: %.2f%% of %zu\n",
	       pct(t->nl_know_oom, t->nl_know), t->nl_know);
	printf("  OOM projection on leak verdicts: median error %.1f%% over %zu prefixes\n", 100 * median_err(t),
	       t->noom);
	printf("  verdict flips: %zu over %zu series; mean steps from onset to the leak that holds: %.0f\n",
	       t->flips, t->series, t->lat_n ? t->lat_sum / (double)t->lat_n : NAN);
}

static void run_free(struct run *r)
{
	for (size_t i = 0; i < r->nfam; i++)
		free(r->fam[i].sc.oom_err);
	free(r->total.oom_err);
}

/* The series that mark epochs, scored with and without their epoch boundaries. */
static int eval_epochs(const struct tset *set, const struct run *like)
{
	struct run with = {.verbose = like->verbose, .quick = like->quick, .with_epochs = 1}, without = with;
	without.with_epochs = 0;
	without.verbose = 0;
	int rc = 0;
	for (size_t i = 0; i < set->n && rc == 0; i++)
		if (set->v[i].nepochs)
			rc = eval_series(&with, &set->v[i]) | eval_series(&without, &set->v[i]);
	printf("\nruns that mark epochs (%zu series): with the `epoch` column / without\n", with.total.series);
	for (size_t i = 0; i < with.nfam; i++) {
		const struct score *a = &with.fam[i].sc, *b = &without.fam[i].sc;
		if (a->nl[M_MG])
			printf("  %-21s false leak %6.2f%% / %6.2f%%\n", with.fam[i].name,
			       pct(a->nl_leak[M_MG], a->nl[M_MG]), pct(b->nl_leak[M_MG], b->nl[M_MG]));
		else
			printf("  %-21s recall     %6.2f%% / %6.2f%%\n", with.fam[i].name,
			       pct(a->know_leak[M_MG], a->know[M_MG]), pct(b->know_leak[M_MG], b->know[M_MG]));
	}
	run_free(&with);
	run_free(&without);
	return rc;
}

/* ---------------------------------------------------------------- the mgreport path */

/* Writes the first len points of s as the CSV a user would give `mgreport --series` (bytes, an
 * `epoch` column when with_epochs), and its in-process verdict as one line of expected.tsv. */
static int write_case(FILE *tsv, const char *dir, const struct tseries *s, size_t len, int with_epochs)
{
	char path[512];
	struct mgc_fit f;
	snprintf(path, sizeof path, "%s/%s-%zu%s.csv", dir, s->name, len, with_epochs ? "-epochs" : "");
	FILE *out = fopen(path, "w");
	if (!out || classify_like_mgreport(s, len, with_epochs, &f)) {
		if (out)
			fclose(out);
		return -1;
	}
	fprintf(out, with_epochs ? "step,epoch,rss\n" : "step,rss\n");
	for (size_t i = 0, e = 0; i < len; i++) {
		while (e < s->nepochs && s->epochs[e] <= s->x[i])
			e++;
		if (with_epochs)
			fprintf(out, "%.17g,%zu,%.17g\n", s->x[i], e + 1, s->y[i]);
		else
			fprintf(out, "%.17g,%.17g\n", s->x[i], s->y[i]);
	}
	fclose(out);
	fprintf(tsv, "%s\t%s\t%.17g\t%.17g\t%.17g\t%s\n", strrchr(path, '/') + 1, mgc_verdict_name(f.verdict),
		f.confidence, f.x_to_oom, f.decidable_at, f.why);
	return 0;
}

/* The series write_cases writes by default: a few of every kind (every step and every 10 steps,
 * spikes, epochs). */
static int listed(const char *name)
{
	static const char *const names[] = {"ramp80-seeds", "late2500-20M-dx10", "val800-6M-at1800",
					    "stair300M-g150", "cache-1000-8G", "slow0.1-20G", "ar0.95-b",
					    "fast150-at300", "val950-long-dx1", "from0-5M-epoch1000"};
	for (size_t k = 0; k < sizeof(names) / sizeof(names[0]); k++)
		if (!strcmp(name, names[k]))
			return 1;
	return 0;
}

/* Four prefixes of s (and its half with the epoch column when it marks epochs), or s whole. */
static int write_series(FILE *tsv, const char *dir, const struct tseries *s, int whole)
{
	int rc = 0;
	if (whole)
		return write_case(tsv, dir, s, s->n, 0);
	for (size_t q = 1; q <= 4 && rc == 0; q++)
		rc = write_case(tsv, dir, s, s->n * q / 4, 0);
	if (s->nepochs && rc == 0)
		rc = write_case(tsv, dir, s, s->n / 2, 1);
	return rc;
}

/* A few prefixes of the listed series into dir, for tests/classify/test_series_path.py to run
 * through the real mgreport; with `only`, the whole of each series whose name or family contains
 * it instead (to debug one). */
static int write_cases(const struct tset *set, const char *dir, const char *only)
{
	char path[512];
	snprintf(path, sizeof path, "%s/expected.tsv", dir);
	FILE *tsv = fopen(path, "w");
	int rc = tsv ? 0 : -1;
	for (size_t i = 0; i < set->n && rc == 0; i++) {
		const struct tseries *s = &set->v[i];
		if (only ? strstr(s->name, only) || strstr(s->family, only) : listed(s->name))
			rc = write_series(tsv, dir, s, only != NULL);
	}
	if (tsv)
		fclose(tsv);
	if (rc)
		fprintf(stderr, "eval_classify: cannot write the cases into %s\n", dir);
	return rc;
}

static void usage(void)
{
	fprintf(stderr, "usage: eval_classify [-v|-vv] [--quick N] [--only NAME] [--jobs N] [--no-classic] [--csv DIR]\n"
			"  --quick N    score about N prefixes per series (default: every prefix)\n"
			"  --only NAME  only the training-like series whose name or family contains NAME\n"
			"  --jobs N     classify each series' prefixes in N processes (the same figures)\n"
			"  --csv DIR    only write a few prefixes as CSV files and their verdicts (expected.tsv);\n"
			"               with --only, each matching series whole\n");
}

int main(int argc, char **argv)
{
	struct run r = {0};
	const char *only = NULL, *csv_dir = NULL;
	int classic = 1;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-v") || !strcmp(argv[i], "-vv"))
			r.verbose = argv[i][2] ? 2 : 1;
		else if (!strcmp(argv[i], "--quick") && i + 1 < argc)
			r.quick = strtoul(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--jobs") && i + 1 < argc && atoi(argv[i + 1]) > 0)
			g_jobs = (size_t)atoi(argv[++i]);
		else if (!strcmp(argv[i], "--only") && i + 1 < argc)
			only = argv[++i];
		else if (!strcmp(argv[i], "--no-classic"))
			classic = 0;
		else if (!strcmp(argv[i], "--csv") && i + 1 < argc)
			csv_dir = argv[++i];
		else {
			usage();
			return 2;
		}
	}
	struct tset set;
	if (tset_build(&set)) {
		fprintf(stderr, "eval_classify: out of memory\n");
		return 1;
	}
	if (csv_dir) {
		int rc = write_cases(&set, csv_dir, only);
		tset_free(&set);
		return rc ? 1 : 0;
	}
	double c0 = cpu_seconds();
	size_t nleak = 0;
	for (size_t i = 0; i < set.n; i++) {
		const struct tseries *s = &set.v[i];
		if (only && !strstr(s->name, only) && !strstr(s->family, only))
			continue;
		nleak += s->leak;
		if (eval_series(&r, s)) {
			tset_free(&set);
			return 1;
		}
	}
	printf("training-like set: %zu series (%zu non-leaks, %zu leaks), %zu prefixes scored%s, limit 80 GiB, "
	       "%.1f s CPU\n\n", r.total.series, r.total.series - nleak, nleak, r.total.prefixes,
	       r.quick ? " (a sample)" : " (every prefix)", cpu_seconds() - c0);
	print_families(&r);
	print_side_by_side(&r.total);
	print_mg(&r.total);
	int failed = eval_epochs(&set, &r) != 0;
	failed |= print_targets(&r.total, r.quick > 0);
	if (classic) {
		printf("\n");
		failed |= classic_run(r.verbose, r.quick ? 3 : 1, only);
	}
	run_free(&r);
	tset_free(&set);
	return failed ? 1 : 0;
}
