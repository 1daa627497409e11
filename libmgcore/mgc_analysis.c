/* SPDX-License-Identifier: MIT */
/* mgc_analysis.c: the rules of mgc_analysis.h, each in one function: axis_points (the axis),
 * choose_limit (the limit), analysis_opts (what the classifier is told), rank_sites and
 * judge_sites (the sites), weigh_sites (the process verdict from the sites). Only sites that will
 * be judged get a dense series and a verdict, so a report's cost beyond ranking is bounded by
 * what it shows. It must never read past a count its input gives, and never abort. */
#define _GNU_SOURCE
#include "mgc_analysis.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const series_names[MGC_S_N] = {"rss", "heap", "mmap", "free_kept", "device"};

/* ---- the axis ---- */

/* Indexes (into run->points) of the points on the x axis: the rule of mgc_analysis.h. */
static size_t axis_points(const struct mgc_run *run, size_t *idx)
{
	size_t n = 0;
	for (size_t i = 0; i < run->npoints; i++) {
		const struct mgc_point *pt = &run->points[i], *prev = n ? &run->points[idx[n - 1]] : NULL;
		if (run->x_is_steps) {
			if (pt->t < run->first_marker_t || (pt->flags & MGC_SNAP_FINAL))
				continue; /* start-up before the first marker, or the exit's teardown */
			if (prev && prev->step == pt->step) {
				if ((pt->flags & MGC_SNAP_STEP) && !(prev->flags & MGC_SNAP_STEP))
					idx[n - 1] = i; /* the marker's own snapshot */
				continue;
			}
		} else if (prev && !(pt->t > prev->t)) {
			continue;
		}
		idx[n++] = i;
	}
	return n;
}

#define EXACT_STEPS 0x1p53 /* past this a double no longer tells neighbouring steps apart */

/* The x of each axis point, and the note that says how steps were counted when they are not the
 * x themselves (the rule of mgc_analysis.h). */
static void axis_x(const struct mgc_run *run, const size_t *idx, size_t n, double *x,
		   struct mgc_analysis *a)
{
	uint64_t first = n ? run->points[idx[0]].step : 0;
	uint64_t seg = first >= (uint64_t)EXACT_STEPS ? first : 0; /* the step counted from */
	double base = 0;
	size_t breaks = 0;
	for (size_t i = 0; i < n; i++) {
		const struct mgc_point *pt = &run->points[idx[i]];
		if (!run->x_is_steps) {
			x[i] = pt->t;
			continue;
		}
		if (i && (pt->step < run->points[idx[i - 1]].step ||
			  (double)(pt->step - seg) >= EXACT_STEPS)) {
			base = x[i - 1] + 1; /* a reset, a wrap or a leap: a new segment, one step on */
			seg = pt->step;
			breaks++;
		}
		x[i] = base + (double)(pt->step - seg);
	}
	if (breaks)
		snprintf(a->axis_note, sizeof a->axis_note, "the step markers went backwards (or leapt "
			 "past 2^53) %zu time%s: the x axis counts steps on across each break, so its steps "
			 "are not the program's own after the first", breaks, breaks == 1 ? "" : "s");
	else if (seg)
		snprintf(a->axis_note, sizeof a->axis_note, "the step markers start at %llu, past 2^53: "
			 "the x axis counts steps from there (step 0 is the program's %llu)",
			 (unsigned long long)seg, (unsigned long long)seg);
}

/* ---- the limit ---- */

static void choose_limit(const struct mgc_run *run, double user, struct mgc_analysis *a)
{
	if (user > 0) {
		a->limit = user;
		a->limit_source = "--limit";
	} else if (run->cgroup_limit) {
		a->limit = (double)run->cgroup_limit;
		a->limit_source = "cgroup";
	} else if (run->mem_total) {
		a->limit = (double)run->mem_total;
		a->limit_source = "MemTotal";
	}
}

/* ---- what the classifier is told ---- */

enum judged {
	JUDGE_PROCESS, /* a process series: the process floor of growth that matters */
	JUDGE_DEVICE,  /* the device series: as a process series, without the host's limit */
	JUDGE_OWN,     /* a site, a table's column: the classifier's own floor (a few KiB per step
	                * of one site matter) */
};

static struct mgc_classify_opts analysis_opts(const struct mgc_analysis *a, enum judged what)
{
	struct mgc_classify_opts co = {.limit = a->limit, .x_is_steps = a->x_is_steps};
	if (what != JUDGE_OWN)
		co.min_growth = a->x_is_steps ? MGC_PROCESS_MIN_GROWTH_STEP : MGC_PROCESS_MIN_GROWTH_SEC;
	if (what == JUDGE_DEVICE)
		co.limit = 0; /* the host's limit says nothing about the GPU's memory */
	if (what == JUDGE_OWN)
		co.sample_rate = (double)a->sample_rate; /* a sampled run's sites move in jumps of ~R */
	if (a->has_epochs) { /* the boundaries after the first epoch's start (mgc_classify_opts) */
		size_t k = 0;
		while (k < a->nepochs && a->n && a->epochs[k] <= a->series[MGC_S_RSS].x[0])
			k++;
		co.epochs = a->epochs + k;
		co.nepochs = a->nepochs - k;
	}
	return co;
}

static void judge_series(const struct mgc_analysis *a, struct mgc_series *s, enum judged what)
{
	struct mgc_classify_opts co = analysis_opts(a, what);
	s->classified = s->present && s->n >= MGC_MIN_POINTS && mgc_classify(s->x, s->y, s->n, &co, &s->fit) == 0;
}

/* ---- series ---- */

static int alloc_series(struct mgc_analysis *a, size_t nseries, size_t n)
{
	a->series = calloc(nseries, sizeof *a->series);
	if (!a->series)
		return -ENOMEM;
	a->nseries = nseries;
	for (size_t k = 0; k < nseries; k++) {
		a->series[k].n = n;
		a->series[k].x = calloc(n ? n : 1, sizeof(double));
		a->series[k].y = calloc(n ? n : 1, sizeof(double));
		if (!a->series[k].x || !a->series[k].y)
			return -ENOMEM;
	}
	return 0;
}

static double point_value(const struct mgc_point *pt, enum mgc_series_id k)
{
	switch (k) {
	case MGC_S_RSS:
		return (double)(pt->rss_anon + pt->rss_file + pt->rss_shmem);
	case MGC_S_HEAP:
		return (double)pt->heap;
	case MGC_S_MMAP:
		return (double)pt->mmap;
	case MGC_S_FREE_KEPT:
		return (double)pt->free_kept;
	default:
		return (double)pt->device;
	}
}

static int build_series(const struct mgc_run *run, const size_t *idx, struct mgc_analysis *a)
{
	if (alloc_series(a, MGC_S_N, a->n) < 0)
		return -ENOMEM;
	int any_device = 0;
	for (int k = 0; k < MGC_S_N; k++) {
		struct mgc_series *s = &a->series[k];
		s->name = series_names[k];
		if (k == 0)
			axis_x(run, idx, a->n, s->x, a);
		else
			memcpy(s->x, a->series[0].x, a->n * sizeof *s->x);
		for (size_t i = 0; i < a->n; i++) {
			s->y[i] = point_value(&run->points[idx[i]], (enum mgc_series_id)k);
			any_device |= k == MGC_S_DEVICE && s->y[i] != 0;
		}
		s->present = k == MGC_S_RSS || (k == MGC_S_DEVICE ? any_device : run->tracked);
	}
	return 0;
}

/* The process verdict before the sites: RSS against the live allocations (heap + mmap + device,
 * as mgc_classify_process documents; pinned host memory is device-kind and in RSS). Without the
 * probe: RSS alone. */
static int judge_process(struct mgc_analysis *a)
{
	const struct mgc_series *s = a->series;
	if (!s[MGC_S_HEAP].present) {
		a->have_verdict = s[MGC_S_RSS].classified;
		a->verdict = s[MGC_S_RSS].fit;
		return 0;
	}
	if (a->n < MGC_MIN_POINTS)
		return 0;
	double *live = calloc(a->n, sizeof *live);
	if (!live)
		return -ENOMEM;
	for (size_t i = 0; i < a->n; i++)
		live[i] = s[MGC_S_HEAP].y[i] + s[MGC_S_MMAP].y[i] + s[MGC_S_DEVICE].y[i];
	struct mgc_classify_opts co = analysis_opts(a, JUDGE_PROCESS);
	co.sample_rate = (double)a->sample_rate; /* the live total is an estimate in a sampled run */
	a->have_verdict = mgc_classify_process(s[MGC_S_RSS].x, s[MGC_S_RSS].y, live, s[MGC_S_FREE_KEPT].y,
					       a->n, &co, &a->verdict) == 0;
	free(live);
	return 0;
}

/* ---- sites ---- */

static int cmp_rank(const void *pa, const void *pb)
{
	const struct mgc_site_rank *x = pa, *y = pb;
	if (x->growth != y->growth)
		return x->growth < y->growth ? 1 : -1;
	if (x->live_end != y->live_end)
		return x->live_end < y->live_end ? 1 : -1;
	return x->id < y->id ? -1 : x->id > y->id;
}

double mgc_analysis_site_at(const struct mgc_analysis *a, const struct mgc_site *s, size_t i)
{
	return mgc_site_live_at(s, a->axis[i]);
}

void mgc_analysis_site_series(const struct mgc_analysis *a, const struct mgc_site *s, double *y)
{
	size_t c = 0; /* the changes at or before the axis point */
	for (size_t i = 0; i < a->n; i++) {
		while (c < s->nseries && s->series[c].at <= a->axis[i])
			c++;
		y[i] = c ? (double)s->series[c - 1].value : 0;
	}
}

/* The first axis point from i on at or after grid point `at` (a->n when none). */
static size_t axis_from(const struct mgc_analysis *a, size_t i, uint32_t at)
{
	size_t lo = i, hi = a->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (a->axis[mid] < at)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

double mgc_analysis_site_peak(const struct mgc_analysis *a, const struct mgc_site *s)
{
	double peak = 0;
	size_t i = 0; /* the first axis point at or after the change */
	for (size_t c = 0; c < s->nseries && i < a->n; c++) {
		i = axis_from(a, i, s->series[c].at); /* holds there unless the next change comes first */
		if (i < a->n && (c + 1 == s->nseries || a->axis[i] < s->series[c + 1].at))
			peak = fmax(peak, (double)s->series[c].value);
	}
	return peak;
}

int mgc_analysis_site_flat(const struct mgc_analysis *a, const struct mgc_site *s)
{
	if (a->n < 2)
		return 1;
	double first = mgc_site_live_at(s, a->axis[0]);
	size_t i = 0; /* the first axis point at or after the change */
	for (size_t c = 0; c < s->nseries && i < a->n; c++) {
		i = axis_from(a, i, s->series[c].at); /* read there unless the next change comes first */
		if (i < a->n && (c + 1 == s->nseries || a->axis[i] < s->series[c + 1].at) &&
		    (double)s->series[c].value != first)
			return 0;
	}
	return 1;
}

/* Every site ranked by what two points of its series say: its growth and its end. */
static int rank_sites(const struct mgc_run *run, struct mgc_analysis *a)
{
	size_t n = a->n;
	a->ranked = calloc(run->nsites ? run->nsites : 1, sizeof *a->ranked);
	if (!a->ranked)
		return -ENOMEM;
	for (size_t i = 0; i < run->nsites; i++) {
		const struct mgc_site *s = run->sites[i];
		if (!s || !s->seen || (!s->counters.allocs && !s->counters.live_bytes && !s->counters.peak_bytes))
			continue; /* never allocated in this process (a forked child's emptied CUDA sites) */
		struct mgc_site_rank *r = &a->ranked[a->nsites++];
		*r = (struct mgc_site_rank){.site = s, .id = s->id, .input = (uint32_t)i};
		double first = n ? mgc_analysis_site_at(a, s, 0) : 0;
		double last = n ? mgc_analysis_site_at(a, s, n - 1) : 0;
		r->growth = last - first;
		r->live_end = n ? last : (double)s->counters.live_bytes;
	}
	qsort(a->ranked, a->nsites, sizeof *a->ranked, cmp_rank);
	return 0;
}

/* A series that never changed over the window (most of a big program's start-up sites): stable,
 * without running the classifier on a constant. */
static int unchanged(const double *y, size_t n)
{
	for (size_t k = 1; k < n; k++)
		if (y[k] != y[0])
			return 0;
	return 1;
}

/* Judges r from y, its live bytes at each axis point. */
static void judge_site(const struct mgc_analysis *a, struct mgc_site_result *r, const double *y)
{
	const struct mgc_series *rss = &a->series[MGC_S_RSS];
	if (a->n < MGC_MIN_POINTS)
		return;
	if (unchanged(y, a->n)) {
		memset(&r->fit, 0, sizeof r->fit);
		r->fit.verdict = MGC_VERDICT_STABLE;
		r->fit.confidence = 0.95;
		r->fit.level = y[0];
		r->fit.plateau_at = r->fit.plateau_level = r->fit.change_at = r->fit.decidable_at = NAN;
		r->fit.x_to_oom = INFINITY;
		snprintf(r->fit.why, sizeof r->fit.why, "unchanged over the run");
		r->classified = 1;
		return;
	}
	/* The step of the axis end, for the cohorts' age; a step past 2^63 (a bogus marker) counts as
	 * 2^63, which the classifier can still take back to an integer. */
	double last_step = fmin((double)a->end.step, 0x1p63);
	struct mgc_site_evidence ev = {
		.x = rss->x, .live = y, .n = a->n, .cohorts = r->cohorts, .ncohorts = r->cohorts ? MGC_COHORTS : 0,
		.last_step = last_step, .allocs = r->counters.allocs, .frees = r->counters.frees,
		.live_count = r->counters.live_count};
	struct mgc_classify_opts co = analysis_opts(a, JUDGE_OWN);
	r->classified = mgc_classify_site(&ev, &co, &r->fit) == 0;
}

/* The result of rank k, without a verdict yet. */
static void site_result(const struct mgc_analysis *a, size_t k, struct mgc_site_result *out)
{
	const struct mgc_site_rank *r = &a->ranked[k];
	const struct mgc_site *s = r->site;
	*out = (struct mgc_site_result){.id = r->id, .kind = s->kind, .counters = s->counters,
					.cohorts = a->x_is_steps ? s->cohorts_step : s->cohorts, .site = s,
					.input = r->input, .growth = r->growth, .live_end = r->live_end};
}

const struct mgc_site_result *mgc_analysis_site(const struct mgc_analysis *a, size_t k,
						struct mgc_site_result *tmp)
{
	if (k < a->nclassified)
		return &a->sites[k];
	site_result(a, k, tmp);
	return tmp;
}

/* The first sites of the ranking, each from a dense series made for it alone. */
static int judge_sites(struct mgc_analysis *a, size_t top)
{
	size_t judged = top && top < a->nsites ? top : a->nsites;
	if (judged < MGC_JUDGED_SITES)
		judged = a->nsites < MGC_JUDGED_SITES ? a->nsites : MGC_JUDGED_SITES;
	double *y = malloc((a->n ? a->n : 1) * sizeof *y);
	a->sites = calloc(judged ? judged : 1, sizeof *a->sites);
	if (!y || !a->sites) {
		free(y);
		return -ENOMEM;
	}
	for (size_t i = 0; i < judged; i++) {
		struct mgc_site_result *r = &a->sites[i];
		site_result(a, i, r);
		mgc_analysis_site_series(a, r->site, y);
		judge_site(a, r, y);
		if (r->classified && r->fit.verdict == MGC_VERDICT_LEAK) {
			a->leaking_sites++;
			a->leaking_device_sites += mgc_kind_is_cuda(r->kind) != 0;
		}
	}
	a->nclassified = judged;
	free(y);
	return 0;
}

/* Leaking host sites decide the process verdict where RSS cannot tell, or hides the leak
 * (mgc_process_with_sites): the first MGC_JUDGED_SITES of the ranking, whatever is shown. */
static void weigh_sites(struct mgc_analysis *a)
{
	const struct mgc_series *rss = &a->series[MGC_S_RSS];
	struct mgc_series *dev = &a->series[MGC_S_DEVICE];
	double slope[2] = {0, 0}, conf[2] = {0, 0}; /* host, device */
	if (!a->have_verdict || !a->series[MGC_S_HEAP].present)
		return;
	for (size_t i = 0; i < a->nclassified && i < MGC_JUDGED_SITES; i++) {
		const struct mgc_site_result *r = &a->sites[i];
		if (!r->classified || r->fit.verdict != MGC_VERDICT_LEAK || !(r->fit.slope > 0))
			continue;
		int d = mgc_kind_is_cuda(r->kind) != 0; /* GPU memory is not in RSS: it weighs the device series */
		slope[d] += r->fit.slope;
		conf[d] = fmax(conf[d], r->fit.confidence);
	}
	mgc_process_with_sites(&a->verdict, rss->x, rss->y, rss->n, slope[0], conf[0], a->x_is_steps, a->limit);
	if (dev->present && dev->classified) /* the host's limit says nothing about the GPU's */
		mgc_process_with_sites(&dev->fit, dev->x, dev->y, dev->n, slope[1], conf[1], a->x_is_steps, 0);
}

/* ---- epochs ---- */

/* The x of every label that starts an epoch ("epoch", "epoch 3", ...) within the axis. */
/* Where a label falls on the axis: its step, or its time; on an axis whose steps are counted
 * (axis_note), the x of the first point at or after its time. */
static double label_x(const struct mgc_run *run, const size_t *idx, const struct mgc_analysis *a,
		      const struct mgc_label *l)
{
	if (!run->x_is_steps)
		return l->t;
	if (!a->axis_note[0])
		return (double)l->step;
	for (size_t i = 0; i < a->n; i++)
		if (run->points[idx[i]].t >= l->t)
			return a->series[MGC_S_RSS].x[i];
	return INFINITY;
}

static int find_epochs(const struct mgc_run *run, const size_t *idx, struct mgc_analysis *a)
{
	const struct mgc_series *rss = &a->series[MGC_S_RSS];
	a->epochs = calloc(run->nlabels ? run->nlabels : 1, sizeof *a->epochs);
	if (!a->epochs)
		return -ENOMEM;
	for (size_t i = 0; i < run->nlabels && a->n; i++) {
		const struct mgc_label *l = &run->labels[i];
		double x = label_x(run, idx, a, l);
		if (strncmp(l->text, "epoch", 5) != 0)
			continue;
		a->has_epochs = 1; /* marked, even when every boundary lies outside the axis */
		if (x < rss->x[0] || x > rss->x[a->n - 1])
			continue;
		if (!a->nepochs || x > a->epochs[a->nepochs - 1])
			a->epochs[a->nepochs++] = x;
	}
	return 0;
}

/* ---- the analyses ---- */

int mgc_analyze_run(const struct mgc_run *run, const struct mgc_analysis_opts *o, struct mgc_analysis *a)
{
	memset(a, 0, sizeof *a);
	size_t *idx = calloc(run->npoints ? run->npoints : 1, sizeof *idx);
	if (!idx)
		return -ENOMEM;
	a->axis = idx;
	a->x_is_steps = run->x_is_steps;
	a->sample_rate = run->sample_rate;
	a->n = axis_points(run, idx);
	if (a->n) {
		a->end = run->points[idx[a->n - 1]];
		a->have_end = 1;
	}
	choose_limit(run, o->limit, a);
	int rc = build_series(run, idx, a);
	if (rc == 0 && (rc = find_epochs(run, idx, a)) == 0) { /* the epochs are the classifier's evidence */
		for (int k = 0; k < MGC_S_N; k++)
			judge_series(a, &a->series[k], k == MGC_S_DEVICE ? JUDGE_DEVICE : JUDGE_PROCESS);
		rc = judge_process(a);
	}
	if (rc == 0 && (rc = rank_sites(run, a)) == 0 && (rc = judge_sites(a, o->top)) == 0)
		weigh_sites(a);
	if (rc < 0)
		mgc_analysis_free(a);
	return rc;
}

int mgc_analyze_trace(const struct mgc_trace *t, const struct mgc_analysis_opts *o, struct mgc_analysis *out)
{
	struct mgc_run run = {
		.points = t->points, .npoints = t->npoints, .x_is_steps = mgc_trace_has_steps(t),
		.first_marker_t = t->first_marker_t, .tracked = 1,
		.sites = (const struct mgc_site *const *)t->sites, .nsites = t->nsites,
		.cgroup_limit = t->proc.cgroup_limit, .mem_total = t->proc.mem_total, .labels = t->labels,
		.nlabels = t->nlabels, .sample_rate = t->sample_rate};
	return mgc_analyze_run(&run, o, out);
}

/* The segment's sites as a trace's (their histories as changes on its grid), into sites[ns] and
 * changes[ns * np] (np changes at most per site), pointed at by ptrs[ns]. */
static void shm_sites(const struct mgc_shm *s, uint32_t ns, uint32_t np, struct mgc_site *sites,
		      struct mgc_grid_change *changes, const struct mgc_site **ptrs)
{
	for (uint32_t i = 0; i < ns; i++) {
		const struct mgc_shm_site *e = &s->sites[i];
		struct mgc_grid_change *c = changes + (size_t)i * np;
		size_t nc = 0;
		for (uint32_t k = 0; k < np; k++) /* one change per point at most: always room */
			mgc_grid_change_set(c, &nc, np, k, e->history[k]);
		sites[i] = (struct mgc_site){.id = e->site, .kind = e->kind, .seen = 1,
					     .counters = {e->live_bytes, e->live_count, e->allocs, e->alloc_bytes,
							  e->frees, e->peak_bytes},
					     .series = c, .nseries = (uint32_t)nc, .cohorts = e->cohorts,
					     .cohorts_step = e->cohorts, .live_var = s->sampling.live_var[i]};
		ptrs[i] = &sites[i];
	}
}

int mgc_analyze_shm(const struct mgc_shm *s, const struct mgc_analysis_opts *o, struct mgc_analysis *out)
{
	const struct mgc_shm_header *h = &s->h;
	uint32_t np = h->grid_n < MGC_SHM_GRID ? h->grid_n : MGC_SHM_GRID;
	uint32_t ns = h->nsites < MGC_SHM_SITES ? h->nsites : MGC_SHM_SITES;
	struct mgc_point *pts = calloc(np ? np : 1, sizeof *pts);
	struct mgc_site *sites = calloc(ns ? ns : 1, sizeof *sites);
	struct mgc_grid_change *changes = calloc((size_t)ns * np + 1, sizeof *changes);
	const struct mgc_site **ptrs = calloc(ns ? ns : 1, sizeof *ptrs);
	int rc = -ENOMEM;
	if (pts && sites && changes && ptrs) {
		for (uint32_t i = 0; i < np; i++)
			mgc_point_from_snapshot(&s->grid[i], &pts[i]);
		shm_sites(s, ns, np, sites, changes, ptrs);
		/* The segment's grid starts at the first marker: nothing before it to leave out. */
		struct mgc_run run = {.points = pts, .npoints = np, .x_is_steps = h->steps_seen > 0,
				      .first_marker_t = -1, .tracked = 1, .sites = ptrs, .nsites = ns,
				      .cgroup_limit = h->cgroup_limit, .mem_total = h->mem_total,
				      .sample_rate = s->sampling.rate};
		rc = mgc_analyze_run(&run, o, out);
	}
	if (rc == 0) { /* the results point at them */
		out->own_sites = sites;
		out->own_changes = changes;
	} else {
		free(sites);
		free(changes);
	}
	free(pts);
	free(ptrs);
	return rc;
}

int mgc_analyze_columns(const double *x, size_t n, int x_is_steps, const char *const *names,
			const double *const *ys, size_t ncols, const double *epochs, size_t nepochs,
			double limit, struct mgc_analysis *a)
{
	memset(a, 0, sizeof *a);
	a->table = 1;
	a->x_is_steps = x_is_steps;
	a->n = n;
	if (limit > 0) {
		a->limit = limit;
		a->limit_source = "--limit";
	}
	a->has_epochs = epochs != NULL;
	a->epochs = malloc((nepochs ? nepochs : 1) * sizeof *a->epochs);
	if (a->epochs && nepochs)
		memcpy(a->epochs, epochs, nepochs * sizeof *epochs);
	a->nepochs = nepochs;
	if (!a->epochs || alloc_series(a, ncols, n) < 0) {
		mgc_analysis_free(a);
		return -ENOMEM;
	}
	for (size_t c = 0; c < ncols; c++) {
		struct mgc_series *s = &a->series[c];
		s->name = names[c];
		s->present = 1;
		memcpy(s->x, x, n * sizeof *x);
		memcpy(s->y, ys[c], n * sizeof *x);
		judge_series(a, s, JUDGE_OWN);
	}
	if (ncols) {
		a->verdict = a->series[0].fit;
		a->have_verdict = a->series[0].classified;
	}
	return 0;
}

void mgc_analysis_free(struct mgc_analysis *a)
{
	for (size_t k = 0; a->series && k < a->nseries; k++) {
		free(a->series[k].x);
		free(a->series[k].y);
	}
	free(a->series);
	free(a->ranked);
	free(a->sites);
	free(a->axis);
	free(a->epochs);
	free(a->own_sites);
	free(a->own_changes);
	memset(a, 0, sizeof *a);
}

const struct mgc_series *mgc_analysis_main(const struct mgc_analysis *a)
{
	return a->nseries ? &a->series[0] : NULL;
}

const struct mgc_series *mgc_analysis_device(const struct mgc_analysis *a)
{
	return !a->table && a->nseries == MGC_S_N && a->series[MGC_S_DEVICE].present ? &a->series[MGC_S_DEVICE]
										       : NULL;
}
