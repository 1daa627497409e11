/* SPDX-License-Identifier: MIT */
/* mgr_view.c: see mgr_view.h. Reads the analysis and the trace it came from; never changes
 * either, and never classifies: a site the analysis did not rank has no verdict here. */
#define _GNU_SOURCE
#include "mgr_view.h"

#include "mgc_python.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int mgr_view_open(struct mgr_view *v, const struct mgr_process *p, struct mgc_symbolizer *sym)
{
	memset(v, 0, sizeof *v);
	if (!p->t)
		return -EINVAL;
	v->p = p;
	v->t = p->t;
	v->sym = sym;
	v->idx = calloc(v->t->npoints ? v->t->npoints : 1, sizeof *v->idx);
	v->analyzed = calloc(v->t->nsites ? v->t->nsites : 1, sizeof *v->analyzed);
	if (!v->idx || !v->analyzed) {
		mgr_view_close(v);
		return -ENOMEM;
	}
	v->n = mgr_axis_points(v->t, p->x_is_steps, v->idx);
	for (size_t i = 0; i < p->nsites; i++)
		if (p->sites[i].s->id < v->t->nsites)
			v->analyzed[p->sites[i].s->id] = i + 1;
	return 0;
}

void mgr_view_close(struct mgr_view *v)
{
	free(v->idx);
	free(v->analyzed);
	memset(v, 0, sizeof *v);
}

double mgr_view_x(const struct mgr_view *v, size_t i)
{
	const struct mgc_point *pt = &v->t->points[v->idx[i]];
	return v->p->x_is_steps ? (double)pt->step : pt->t;
}

double mgr_view_live(const struct mgr_view *v, const struct mgc_site *s, size_t i)
{
	return s->series ? (double)s->series[v->idx[i]] : 0.0;
}

double mgr_view_tracked(const struct mgr_view *v, size_t i)
{
	const struct mgc_point *pt = &v->t->points[v->idx[i]];
	return (double)pt->heap + (double)pt->mmap + (double)pt->device;
}

int mgr_view_point_at(const struct mgr_view *v, double x, size_t *i)
{
	if (v->n == 0 || x < mgr_view_x(v, 0))
		return -ERANGE;
	size_t lo = 0, hi = v->n; /* the answer is in [lo, hi) */
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;
		if (mgr_view_x(v, mid) <= x)
			lo = mid;
		else
			hi = mid;
	}
	*i = lo;
	return 0;
}

const struct mgr_site *mgr_view_analyzed(const struct mgr_view *v, const struct mgc_site *s)
{
	size_t k = s->id < v->t->nsites ? v->analyzed[s->id] : 0;
	return k ? &v->p->sites[k - 1] : NULL;
}

double mgr_weight_of(const struct mgr_view *v, const struct mgr_weight *w, const struct mgc_site *s)
{
	if (v->n == 0)
		return 0;
	switch (w->mode) {
	case MGR_WEIGHT_GROWTH:
		return mgr_view_live(v, s, w->to) - mgr_view_live(v, s, w->from);
	case MGR_WEIGHT_PEAK: {
		float peak = 0; /* every site of a big program is read here: keep it a plain loop */
		for (size_t i = 0; s->series && i < v->n; i++)
			peak = s->series[v->idx[i]] > peak ? s->series[v->idx[i]] : peak;
		return peak;
	}
	default:
		return mgr_view_live(v, s, w->at);
	}
}

struct cand {
	const struct mgc_site *s;
	double w;
	int keep;
};

static int cmp_cand(const void *a, const void *b)
{
	const struct cand *x = a, *y = b;
	if (x->keep != y->keep)
		return x->keep ? -1 : 1;
	if (x->w != y->w)
		return x->w < y->w ? 1 : -1;
	return x->s->id < y->s->id ? -1 : x->s->id > y->s->id;
}

static int cmp_weight(const void *a, const void *b)
{
	const struct cand *x = a, *y = b;
	if (x->w != y->w)
		return x->w < y->w ? 1 : -1;
	return x->s->id < y->s->id ? -1 : x->s->id > y->s->id;
}

/* Fills out->sites from the chosen candidates: the analysis's numbers where it ranked the site,
 * frames symbolized here. */
static int fill_picked(const struct mgr_view *v, const struct cand *c, size_t n, struct mgr_picked *out)
{
	out->sites = calloc(n ? n : 1, sizeof *out->sites);
	out->weight = calloc(n ? n : 1, sizeof *out->weight);
	if (!out->sites || !out->weight)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		struct mgr_site *ms = &out->sites[i];
		const struct mgr_site *a = mgr_view_analyzed(v, c[i].s);
		if (a) {
			*ms = *a;
		} else {
			ms->s = c[i].s;
			ms->growth = v->n ? mgr_view_live(v, c[i].s, v->n - 1) - mgr_view_live(v, c[i].s, 0) : 0;
			ms->live_end = v->n ? mgr_view_live(v, c[i].s, v->n - 1) : (double)c[i].s->live_bytes;
			ms->pyarena = mgc_pyarena_site(v->t, c[i].s);
		}
		ms->frames = NULL;
		ms->nframes = 0;
		out->weight[i] = c[i].w;
		out->n = i + 1;
		if (mgr_symbolize_site(v->t, v->sym, ms) < 0)
			return -ENOMEM;
	}
	return 0;
}

int mgr_view_pick(const struct mgr_view *v, const struct mgr_weight *w, size_t max,
		  const struct mgc_site *const *extra, size_t n_extra, struct mgr_picked *out)
{
	memset(out, 0, sizeof *out);
	const struct mgc_trace *t = v->t;
	unsigned char *want = calloc(t->nsites ? t->nsites : 1, 1);
	struct cand *c = calloc(t->nsites ? t->nsites : 1, sizeof *c);
	size_t nc = 0, nkeep = 0;
	int rc = -ENOMEM;
	if (!want || !c)
		goto out;
	for (size_t i = 0; i < n_extra; i++)
		if (extra[i]->id < t->nsites)
			want[extra[i]->id] = 1;
	for (size_t i = 0; i < t->nsites; i++) {
		const struct mgc_site *s = t->sites[i];
		if (!s || !s->seen)
			continue;
		double wt = mgr_weight_of(v, w, s);
		if (wt < 0)
			out->negative += wt;
		if (!(wt > 0) && !want[i])
			continue;
		c[nc++] = (struct cand){s, wt, want[i]};
		nkeep += want[i];
	}
	qsort(c, nc, sizeof *c, cmp_cand);
	size_t take = max && max < nc - nkeep ? nkeep + max : nc;
	for (size_t i = take; i < nc; i++) {
		out->rest_sites++;
		out->rest += c[i].w;
	}
	qsort(c, take, sizeof *c, cmp_weight);
	rc = fill_picked(v, c, take, out);
	if (rc < 0)
		mgr_picked_free(out);
out:
	free(want);
	free(c);
	return rc;
}

void mgr_picked_free(struct mgr_picked *pk)
{
	for (size_t i = 0; pk->sites && i < pk->n; i++)
		free(pk->sites[i].frames);
	free(pk->sites);
	free(pk->weight);
	memset(pk, 0, sizeof *pk);
}

int mgr_frame_is_python(const struct mgr_frame *f)
{
	return f->python;
}

const char *mgr_basename(const char *path)
{
	if (!path)
		return "";
	const char *s = strrchr(path, '/');
	return s ? s + 1 : path;
}

static int named(const struct mgr_frame *f)
{
	return f->function && f->function[0] && strcmp(f->function, "??") != 0;
}

const char *mgr_frame_label(const struct mgr_frame *f, char *buf, size_t cap)
{
	if (mgr_frame_is_python(f))
		snprintf(buf, cap, "%s %s:%d", named(f) ? f->function : "??", mgr_pyfile_name(f->file), f->line);
	else if (named(f))
		snprintf(buf, cap, "%s", f->function);
	else
		snprintf(buf, cap, "?? [%s]", f->module ? mgr_basename(f->module) : "??");
	for (char *q = buf; *q; q++)
		if (*q == ';')
			*q = ',';
		else if ((unsigned char)*q < 0x20)
			*q = ' ';
	return buf;
}

static int system_module(const char *m)
{
	static const char *const dirs[] = {"/usr/lib/", "/lib/", "/usr/lib64/", "/lib64/",
					   "/usr/local/lib/", "/usr/bin/", "/bin/"};
	if (!m)
		return 1;
	for (size_t i = 0; i < sizeof dirs / sizeof *dirs; i++)
		if (strncmp(m, dirs[i], strlen(dirs[i])) == 0)
			return 1;
	return 0;
}

const char *mgr_pyfile_name(const char *file)
{
	if (!file)
		return "??";
	return mgc_pyfile_is_library(file) ? mgc_pyfile_short(file) : mgr_basename(file);
}

const struct mgr_frame *mgr_user_frame(const struct mgr_site *ms)
{
	const struct mgr_frame *py = NULL;
	if (!ms->nframes)
		return NULL;
	for (size_t i = 0; i < ms->nframes; i++) {
		const struct mgr_frame *f = &ms->frames[i];
		if (mgr_frame_is_python(f) && !mgc_pyfile_is_library(f->file))
			return f;
		if (mgr_frame_is_python(f) && !py)
			py = f;
	}
	if (py)
		return py;
	for (size_t i = 0; i < ms->nframes; i++)
		if (named(&ms->frames[i]) && !system_module(ms->frames[i].module))
			return &ms->frames[i];
	for (size_t i = 0; i < ms->nframes; i++)
		if (named(&ms->frames[i]))
			return &ms->frames[i];
	return &ms->frames[0];
}

static void fmt_x(const struct mgr_view *v, double x, char *buf, size_t cap)
{
	if (v->p->x_is_steps)
		snprintf(buf, cap, "step %.0f", x);
	else
		snprintf(buf, cap, "%.3g s", x);
}

/* One x of the spec to an axis point; NAN is `dflt`. */
static int resolve_x(const struct mgr_view *v, const char *what, double x, size_t dflt, size_t *i,
		     char *err, size_t errlen, char *note, size_t notelen)
{
	char a[48], b[48];
	if (isnan(x)) {
		*i = dflt;
		return 0;
	}
	if (mgr_view_point_at(v, x, i) < 0) {
		fmt_x(v, v->n ? mgr_view_x(v, 0) : 0, b, sizeof b);
		snprintf(err, errlen, "%s %g: the run of pid %d starts at %s", what, x, v->t->proc.pid,
			 v->n ? b : "no point at all");
		return -ERANGE;
	}
	if (mgr_view_x(v, *i) != x && note[0] == 0) {
		fmt_x(v, x, a, sizeof a);
		fmt_x(v, mgr_view_x(v, *i), b, sizeof b);
		snprintf(note, notelen, "%s %g: pid %d has no snapshot at %s; using %s, the last one before it",
			 what, x, v->t->proc.pid, a, b);
	}
	return 0;
}

int mgr_weight_resolve(const struct mgr_view *v, const struct mgr_weight_spec *spec, struct mgr_weight *w,
		       char *err, size_t errlen, char *note, size_t notelen)
{
	size_t last = v->n ? v->n - 1 : 0;
	memset(w, 0, sizeof *w);
	note[0] = 0;
	w->mode = spec->growth ? MGR_WEIGHT_GROWTH : MGR_WEIGHT_LIVE;
	if (!spec->growth)
		return resolve_x(v, "--at", spec->at, last, &w->at, err, errlen, note, notelen);
	if (resolve_x(v, "--growth", spec->from, 0, &w->from, err, errlen, note, notelen) < 0 ||
	    resolve_x(v, "--growth", spec->to, last, &w->to, err, errlen, note, notelen) < 0)
		return -ERANGE;
	if (w->from >= w->to) {
		snprintf(err, errlen, "--growth: pid %d's run has no snapshot between the two points given",
			 v->t->proc.pid);
		return -ERANGE;
	}
	return 0;
}

const char *mgr_weight_describe(const struct mgr_view *v, const struct mgr_weight *w, char *buf, size_t cap)
{
	char a[48], b[48];
	if (!v->n) {
		snprintf(buf, cap, "%s (no points)", w->mode == MGR_WEIGHT_GROWTH ? "growth" : "live bytes");
	} else if (w->mode == MGR_WEIGHT_PEAK) {
		snprintf(buf, cap, "peak live bytes");
	} else if (w->mode == MGR_WEIGHT_GROWTH) {
		fmt_x(v, mgr_view_x(v, w->from), a, sizeof a);
		fmt_x(v, mgr_view_x(v, w->to), b, sizeof b);
		snprintf(buf, cap, "growth from %s to %s", a, b);
	} else {
		fmt_x(v, mgr_view_x(v, w->at), a, sizeof a);
		snprintf(buf, cap, "live bytes at %s", a);
	}
	return buf;
}

const char *mgr_process_label(const struct mgr_process *p, char *buf, size_t cap)
{
	const struct mgc_trace *t = p->t;
	const char *exe = t && t->exe && t->exe[0] ? mgr_basename(t->exe) : "process";
	snprintf(buf, cap, "%s [pid %d]", exe, t ? t->proc.pid : 0);
	return buf;
}
