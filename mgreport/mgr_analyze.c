/* SPDX-License-Identifier: MIT */
/* mgr_analyze.c: from a trace's grid of points to classified series and ranked, symbolized
 * sites. The x axis is the step when the run has step markers (one point per step), seconds
 * otherwise. Only the sites that will be shown are classified and symbolized, so the cost is
 * bounded by --top, not by the number of sites. */
#define _GNU_SOURCE
#include "mgr_analyze.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *mgr_devcell_name(unsigned kind, char *buf, size_t cap)
{
	int dev = mgc_kind_device(kind);
	if (dev >= 0)
		snprintf(buf, cap, "%s:%d", mgc_kind_name(kind), dev);
	else
		snprintf(buf, cap, "%s", mgc_kind_name(kind));
	return buf;
}

/* Indexes of the grid points that make the x axis. With step markers: one point per step, the
 * snapshot taken at the step's marker (the state as the step begins), else the step's first
 * snapshot; snapshots inside a step and the exit snapshot (taken after the program's teardown)
 * are not on the axis. Without markers: every snapshot, in time. */
static size_t axis_points(const struct mgc_trace *t, int steps, size_t *idx)
{
	size_t n = 0;
	for (size_t i = 0; i < t->npoints; i++) {
		const struct mgc_point *pt = &t->points[i];
		if (steps) {
			if (n && t->points[idx[n - 1]].step == pt->step) {
				if ((pt->flags & MGC_SNAP_STEP) && !(t->points[idx[n - 1]].flags & MGC_SNAP_STEP))
					idx[n - 1] = i;
				continue;
			}
			if (n && pt->step < t->points[idx[n - 1]].step)
				continue; /* steps must increase */
		} else if (n && !(pt->t > t->points[idx[n - 1]].t)) {
			continue;
		}
		idx[n++] = i;
	}
	return n;
}

static int add_series(struct mgr_process *p, const char *name, size_t n)
{
	struct mgr_series *ns = realloc(p->series, (p->nseries + 1) * sizeof *ns);
	if (!ns)
		return -ENOMEM;
	p->series = ns;
	struct mgr_series *s = &ns[p->nseries];
	memset(s, 0, sizeof *s);
	s->name = name;
	s->n = n;
	s->x = calloc(n ? n : 1, sizeof(double));
	s->y = calloc(n ? n : 1, sizeof(double));
	if (!s->x || !s->y)
		return -ENOMEM;
	p->nseries++;
	return 0;
}

static void classify_series(struct mgr_series *s, const struct mgc_classify_opts *co)
{
	s->ok = s->n > 0 && mgc_classify(s->x, s->y, s->n, co, &s->fit) == 0;
}

static int cmp_sites(const void *a, const void *b)
{
	const struct mgr_site *x = a, *y = b;
	if (x->growth != y->growth)
		return x->growth < y->growth ? 1 : -1;
	if (x->s->live_bytes != y->s->live_bytes)
		return x->s->live_bytes < y->s->live_bytes ? 1 : -1;
	return x->s->id < y->s->id ? -1 : 1;
}

static int symbolize_site(const struct mgc_trace *t, struct mgc_symbolizer *sym, struct mgr_site *ms)
{
	const struct mgc_site *s = ms->s;
	size_t cap = (size_t)s->nframes * 2 + 1, n = 0;
	ms->frames = calloc(cap, sizeof *ms->frames);
	if (!ms->frames)
		return -ENOMEM;
	for (unsigned i = 0; i < s->nframes && s->ips; i++) {
		uint64_t ip = s->ips[i];
		if (mgc_pyframe_is(ip)) {
			struct mgc_pyframe py;
			mgc_pycodes_frame(t->pycodes, ip, &py);
			if (n + 1 > cap)
				break;
			ms->frames[n++] = (struct mgr_frame){py.function, py.file, NULL, py.line, 0, 1};
			continue;
		}
		const struct mgc_module *m = mgc_trace_module_for(t, ip - 1, s->gen);
		struct mgc_frame fr[8];
		int k = 0;
		if (m && sym)
			k = mgc_symbolize(sym, m->path, m->build_id, m->build_id_len, m->bias, ip, fr, 8);
		if (k <= 0) {
			if (n + 1 > cap)
				break;
			/* Generated code (a Python 3.12+ perf trampoline, a JIT) lies outside every
			 * module: the process's perf map names it. */
			const char *jit = m ? NULL : mgc_trace_perfmap_name(t, ip - 1);
			ms->frames[n++] = (struct mgr_frame){jit ? jit : "??", NULL,
							     m ? m->path : jit ? "[perf-map]" : "??", 0, 0, 0};
			continue;
		}
		for (int j = 0; j < k; j++) {
			if (n + 1 > cap) {
				struct mgr_frame *nf = realloc(ms->frames, cap * 2 * sizeof *nf);
				if (!nf)
					return -ENOMEM;
				ms->frames = nf;
				cap *= 2;
			}
			ms->frames[n++] = (struct mgr_frame){fr[j].function, fr[j].file, fr[j].module,
							     fr[j].line, fr[j].inlined, 0};
		}
	}
	ms->nframes = n;
	return 0;
}

/* Leaking sites decide the process verdict where RSS cannot tell or hides the leak (see
 * mgc_process_with_sites; mgmon applies the same rule live). */
static void upgrade_with_sites(struct mgr_process *p)
{
	if (!p->have_verdict || !p->main)
		return;
	double leak_slope = 0, conf = 0;
	for (size_t i = 0; i < p->nsites; i++) {
		const struct mgr_site *ms = &p->sites[i];
		if (!ms->classified || ms->fit.verdict != MGC_VERDICT_LEAK || !(ms->fit.slope > 0))
			continue;
		if (mgc_kind_is_cuda(ms->s->kind))
			continue; /* GPU memory is not in RSS: the device series has its own verdict */
		leak_slope += ms->fit.slope;
		conf = fmax(conf, ms->fit.confidence);
	}
	mgc_process_with_sites(&p->verdict, p->main->x, p->main->y, p->main->n, leak_slope, conf,
			       p->x_is_steps, p->limit);
}

int mgr_analyze_trace(const struct mgc_trace *t, const struct mgr_options *o,
		      struct mgc_symbolizer *sym, struct mgr_process *p)
{
	memset(p, 0, sizeof *p);
	p->t = t;
	p->origin = t->path;
	p->x_is_steps = mgc_trace_has_steps(t);
	size_t *idx = calloc(t->npoints ? t->npoints : 1, sizeof *idx);
	if (!idx)
		return -ENOMEM;
	size_t n = axis_points(t, p->x_is_steps, idx);
	p->end = n ? &t->points[idx[n - 1]] : NULL;

	double rss0 = n ? (double)(t->points[idx[0]].rss_anon + t->points[idx[0]].rss_file +
				   t->points[idx[0]].rss_shmem)
			: 0;
	if (o->limit > 0)
		p->limit = o->limit;
	else if (t->proc.cgroup_limit)
		p->limit = (double)t->proc.cgroup_limit;
	else if (t->proc.mem_available)
		p->limit = (double)t->proc.mem_available + rss0;

	static const char *names[] = {"rss", "heap", "mmap", "free_kept"};
	for (int k = 0; k < 4; k++) {
		if (add_series(p, names[k], n) < 0)
			goto nomem;
		struct mgr_series *s = &p->series[p->nseries - 1];
		for (size_t i = 0; i < n; i++) {
			const struct mgc_point *pt = &t->points[idx[i]];
			s->x[i] = p->x_is_steps ? (double)pt->step : pt->t;
			s->y[i] = k == 0   ? (double)(pt->rss_anon + pt->rss_file + pt->rss_shmem)
				  : k == 1 ? (double)pt->heap
				  : k == 2 ? (double)pt->mmap
					   : (double)pt->free_kept;
		}
	}
	/* GPU memory (CUDA allocations seen by the probe) is its own series, present only when the
	 * trace holds device bytes, so host-only reports are unchanged. */
	int any_device = 0;
	for (size_t i = 0; i < t->npoints && !any_device; i++)
		any_device = t->points[i].device != 0;
	if (any_device) {
		if (add_series(p, "device", n) < 0)
			goto nomem;
		struct mgr_series *s = &p->series[p->nseries - 1];
		for (size_t i = 0; i < n; i++) {
			const struct mgc_point *pt = &t->points[idx[i]];
			s->x[i] = p->x_is_steps ? (double)pt->step : pt->t;
			s->y[i] = (double)pt->device;
		}
	}
	struct mgc_classify_opts co = {.limit = p->limit, .x_is_steps = p->x_is_steps,
				       .min_growth = p->x_is_steps ? MGC_PROCESS_MIN_GROWTH_STEP : MGC_PROCESS_MIN_GROWTH_SEC};
	for (size_t k = 0; k < 4; k++)
		classify_series(&p->series[k], &co);
	if (any_device) {
		/* The host's limit says nothing about the GPU's memory: no time to OOM for it. */
		struct mgc_classify_opts dco = co;
		dco.limit = 0;
		p->device = &p->series[4];
		classify_series(p->device, &dco);
	}
	p->main = &p->series[0];
	if (n > 0) {
		double *live = calloc(n, sizeof *live);
		if (!live)
			goto nomem;
		/* live = heap + mmap + device tracked bytes, as mgc_classify_process documents and
		 * mgmon passes it (pinned host memory is device-kind and in RSS) */
		for (size_t i = 0; i < n; i++)
			live[i] = p->series[1].y[i] + p->series[2].y[i] + (p->device ? p->device->y[i] : 0);
		p->have_verdict = mgc_classify_process(p->main->x, p->main->y, live, p->series[3].y, n, &co,
						       &p->verdict) == 0;
		free(live);
	}

	/* Sites: rank all by growth over the window, then classify and symbolize the shown ones. */
	size_t ns = 0;
	for (size_t i = 0; i < t->nsites; i++)
		if (t->sites[i] && t->sites[i]->seen)
			ns++;
	p->sites_total = ns;
	p->sites = calloc(ns ? ns : 1, sizeof *p->sites);
	if (!p->sites)
		goto nomem;
	for (size_t i = 0; i < t->nsites; i++) {
		const struct mgc_site *s = t->sites[i];
		if (!s || !s->seen)
			continue;
		struct mgr_site *ms = &p->sites[p->nsites++];
		ms->s = s;
		ms->growth = n ? (double)s->series[idx[n - 1]] - (double)s->series[idx[0]] : 0;
		ms->live_end = n ? (double)s->series[idx[n - 1]] : (double)s->live_bytes;
	}
	qsort(p->sites, p->nsites, sizeof *p->sites, cmp_sites);
	size_t shown = o->top && o->top < p->nsites ? o->top : p->nsites;
	double *y = calloc(n ? n : 1, sizeof *y);
	if (!y)
		goto nomem;
	/* Sites keep the classifier's own floor for sites: a site of a few KB per step matters. */
	struct mgc_classify_opts site_co = {.limit = p->limit, .x_is_steps = p->x_is_steps,
					    .sample_rate = (double)t->sample_rate};
	for (size_t i = 0; i < shown; i++) {
		struct mgr_site *ms = &p->sites[i];
		const struct mgc_site *s = ms->s;
		for (size_t k = 0; k < n; k++)
			y[k] = s->series[idx[k]];
		/* With a step axis the run ends at its last step: judge the cohorts as they were then. */
		struct mgc_site_evidence ev = {
			.x = p->main->x, .live = y, .n = n,
			.cohorts = p->x_is_steps ? s->cohorts_step : s->cohorts, .ncohorts = MGC_COHORTS,
			.last_step = (double)t->max_step, .allocs = s->allocs, .frees = s->frees,
			.live_count = s->live_count};
		size_t k = 1;
		while (k < n && y[k] == y[0])
			k++;
		if (n > 0 && k == n) {
			/* Unchanged over the whole window (most of a big program's start-up sites): no
			 * need to run the classifier on a constant. */
			memset(&ms->fit, 0, sizeof ms->fit);
			ms->fit.verdict = MGC_VERDICT_STABLE;
			ms->fit.confidence = 0.95;
			ms->fit.level = y[0];
			ms->fit.plateau_at = ms->fit.plateau_level = ms->fit.change_at = NAN;
			ms->fit.decidable_at = NAN;
			ms->fit.x_to_oom = INFINITY;
			snprintf(ms->fit.why, sizeof ms->fit.why, "unchanged over the run");
			ms->classified = 1;
		} else {
			ms->classified = n > 0 && mgc_classify_site(&ev, &site_co, &ms->fit) == 0;
		}
		if (ms->classified && ms->fit.verdict == MGC_VERDICT_LEAK)
			p->leaking_sites++;
		if (ms->classified && ms->fit.verdict == MGC_VERDICT_LEAK && mgc_kind_is_cuda(s->kind))
			p->leaking_device_sites++;
		ms->pyarena = mgc_pyarena_site(t, s);
		if (o->symbolize && symbolize_site(t, sym, ms) < 0) {
			free(y);
			goto nomem;
		}
	}
	free(y);
	p->nsites = shown;
	upgrade_with_sites(p);
	free(idx);
	return 0;
nomem:
	free(idx);
	return -ENOMEM;
}

int mgr_analyze_series(const char *origin, const double *x, size_t n, int x_is_steps,
		       const char *const *names, const double *const *ys, size_t ncols,
		       const struct mgr_options *o, struct mgr_process *p)
{
	memset(p, 0, sizeof *p);
	p->origin = origin;
	p->x_is_steps = x_is_steps;
	p->limit = o->limit;
	struct mgc_classify_opts co = {.limit = p->limit, .x_is_steps = x_is_steps};
	for (size_t c = 0; c < ncols; c++) {
		if (add_series(p, names[c], n) < 0)
			return -ENOMEM;
		struct mgr_series *s = &p->series[p->nseries - 1];
		memcpy(s->x, x, n * sizeof *x);
		memcpy(s->y, ys[c], n * sizeof *x);
		classify_series(s, &co);
	}
	if (p->nseries) {
		p->main = &p->series[0];
		p->verdict = p->main->fit;
		p->have_verdict = p->main->ok;
	}
	return 0;
}

const char *mgr_site_name(const struct mgr_site *ms, char *buf, size_t cap)
{
	const struct mgr_frame *py = NULL;
	for (size_t j = 0; j < ms->nframes; j++) {
		const struct mgr_frame *f = &ms->frames[j];
		if (f->python && (!py || (mgc_pyfile_is_library(py->file) && !mgc_pyfile_is_library(f->file))))
			py = f;
	}
	if (py) {
		snprintf(buf, cap, "%s (%s:%d)", py->function, mgc_pyfile_short(py->file), py->line);
		return buf;
	}
	for (size_t j = 0; j < ms->nframes; j++)
		if (ms->frames[j].function && strcmp(ms->frames[j].function, "??"))
			return ms->frames[j].function;
	return "??";
}

void mgr_process_free(struct mgr_process *p)
{
	for (size_t i = 0; i < p->nseries; i++) {
		free(p->series[i].x);
		free(p->series[i].y);
	}
	free(p->series);
	if (p->sites)
		for (size_t i = 0; i < p->nsites; i++)
			free(p->sites[i].frames);
	free(p->sites);
	memset(p, 0, sizeof *p);
}
