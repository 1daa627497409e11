/* SPDX-License-Identifier: MIT */
/* mgr_view.c: see mgr_view.h. Reads the analysis and the trace it came from; never changes
 * either, and never judges: a site the analysis did not judge has no verdict here. */
#define _GNU_SOURCE
#include "mgr_view.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mgc_escape.h"
#include "mgc_python.h"
#include "mgc_units.h"

int mgr_view_open(struct mgr_view *v, const struct mgr_process *p, struct mgc_symbolizer *sym)
{
	memset(v, 0, sizeof *v);
	const struct mgc_series *m = mgc_analysis_main(&p->a);
	if (!p->t || !m)
		return -EINVAL;
	*v = (struct mgr_view){p, p->t, &p->a, sym, p->a.n, m->x};
	return 0;
}

double mgr_view_tracked(const struct mgr_view *v, size_t i)
{
	static const enum mgc_series_id parts[] = {MGC_S_HEAP, MGC_S_MMAP, MGC_S_DEVICE};
	double sum = 0;
	for (size_t k = 0; k < sizeof parts / sizeof *parts; k++) {
		const struct mgc_series *s = &v->a->series[parts[k]];
		if (parts[k] < v->a->nseries && s->present && i < s->n)
			sum += s->y[i];
	}
	return sum;
}

int mgr_view_point_at(const struct mgr_view *v, double x, size_t *i)
{
	if (v->n == 0 || x < v->x[0])
		return -ERANGE;
	size_t lo = 0, hi = v->n; /* the answer is in [lo, hi) */
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;
		if (v->x[mid] <= x)
			lo = mid;
		else
			hi = mid;
	}
	*i = lo;
	return 0;
}

double mgr_weight_of(const struct mgr_view *v, const struct mgr_weight *w, const struct mgc_site *s)
{
	if (v->n == 0)
		return 0;
	switch (w->mode) {
	case MGR_WEIGHT_GROWTH:
		return mgc_analysis_site_at(v->a, s, w->to) - mgc_analysis_site_at(v->a, s, w->from);
	case MGR_WEIGHT_PEAK:
		return mgc_analysis_site_peak(v->a, s);
	default:
		return mgc_analysis_site_at(v->a, s, w->at);
	}
}

struct cand {
	size_t rank; /* index in the analysis's sites */
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
	return x->rank < y->rank ? -1 : x->rank > y->rank;
}

static int cmp_weight(const void *a, const void *b)
{
	const struct cand *x = a, *y = b;
	if (x->w != y->w)
		return x->w < y->w ? 1 : -1;
	return x->rank < y->rank ? -1 : x->rank > y->rank;
}

int mgr_pick_get(const struct mgr_view *v, const struct mgr_picked *pk, size_t i, struct mgr_pick *out)
{
	const struct mgr_choice *c = &pk->chosen[i];
	memset(out, 0, sizeof *out);
	out->r = mgc_analysis_site(v->a, c->rank, &out->result);
	out->s = out->r->site;
	out->weight = c->w;
	out->shown = c->rank < v->p->nshown;
	if (c->rank < v->p->nkept) { /* the shown site's kept stack, borrowed from the process */
		out->stack = &v->p->shown[c->rank].stack;
		out->pyarena = v->p->shown[c->rank].pyarena;
		return 0;
	}
	out->pyarena = mgc_pyarena_site(v->t, out->s);
	out->stack = &out->own;
	return mgr_symbolize(v->t, out->s, v->sym, &out->own) < 0 ? -ENOMEM : 0;
}

void mgr_pick_put(struct mgr_pick *pk)
{
	mgc_stack_free(&pk->own);
	pk->stack = NULL;
}

int mgr_view_choose(const struct mgr_view *v, const struct mgr_weight *w, size_t max, int with_shown,
		    struct mgr_picked *out)
{
	memset(out, 0, sizeof *out);
	const struct mgc_analysis *a = v->a;
	struct cand *c = calloc(a->nsites ? a->nsites : 1, sizeof *c);
	size_t nc = 0, nkeep = 0;
	if (!c)
		return -ENOMEM;
	for (size_t k = 0; k < a->nsites; k++) {
		double wt = mgr_weight_of(v, w, a->ranked[k].site);
		int keep = with_shown && k < v->p->nshown;
		if (wt < 0)
			out->negative += wt;
		if (!(wt > 0) && !keep)
			continue;
		c[nc++] = (struct cand){k, wt, keep};
		nkeep += keep;
	}
	qsort(c, nc, sizeof *c, cmp_cand);
	size_t take = max && max < nc - nkeep ? nkeep + max : nc;
	for (size_t i = take; i < nc; i++) {
		out->rest_sites++;
		out->rest += c[i].w;
	}
	qsort(c, take, sizeof *c, cmp_weight);
	out->chosen = malloc((take ? take : 1) * sizeof *out->chosen);
	for (size_t i = 0; out->chosen && i < take; i++)
		out->chosen[i] = (struct mgr_choice){c[i].rank, c[i].w};
	out->n = out->chosen ? take : 0;
	free(c);
	return out->chosen ? 0 : -ENOMEM;
}

int mgr_view_pick(const struct mgr_view *v, const struct mgr_weight *w, size_t max, int with_shown,
		  struct mgr_picked *out)
{
	int rc = mgr_view_choose(v, w, max, with_shown, out);
	if (rc == 0) {
		out->sites = calloc(out->n ? out->n : 1, sizeof *out->sites);
		rc = out->sites ? 0 : -ENOMEM;
	}
	for (size_t i = 0; rc == 0 && i < out->n; i++)
		rc = mgr_pick_get(v, out, i, &out->sites[i]);
	if (rc < 0)
		mgr_picked_free(out);
	return rc;
}

void mgr_picked_free(struct mgr_picked *pk)
{
	for (size_t i = 0; pk->sites && i < pk->n; i++)
		mgc_stack_free(&pk->sites[i].own);
	free(pk->sites);
	free(pk->chosen);
	memset(pk, 0, sizeof *pk);
}

const struct mgc_frame *mgr_named_frame(const struct mgc_stack *st)
{
	return st && st->n ? &st->frames[st->named < st->n ? st->named : 0] : NULL;
}

const char *mgr_basename(const char *path)
{
	if (!path)
		return "";
	const char *s = strrchr(path, '/');
	return s ? s + 1 : path;
}

const char *mgr_pyfile_name(const char *file)
{
	if (!file)
		return "??";
	return mgc_pyfile_is_library(file) ? mgc_pyfile_short(file) : mgr_basename(file);
}

static int named(const struct mgc_frame *f)
{
	return f->function && f->function[0] && strcmp(f->function, "??") != 0;
}

const char *mgr_frame_label(const struct mgc_frame *f, char *buf, size_t cap)
{
	char raw[1024];
	if (f->python)
		snprintf(raw, sizeof raw, "%s %s:%d", named(f) ? f->function : "??", mgr_pyfile_name(f->file), f->line);
	else if (named(f))
		snprintf(raw, sizeof raw, "%s", f->function);
	else
		snprintf(raw, sizeof raw, "?? [%s]", f->module ? mgr_basename(f->module) : "??");
	mgc_escape(buf, cap, raw, strlen(raw)); /* symbols come from the traced program's files */
	for (char *q = buf; *q; q++)
		if (*q == ';')
			*q = ',';
	return buf;
}

const char *mgr_process_label(const struct mgr_process *p, char *buf, size_t cap)
{
	const struct mgc_trace *t = p->t;
	const char *exe = t && t->exe && t->exe[0] ? mgr_basename(t->exe) : "process";
	char esc[256];
	snprintf(buf, cap, "%s [pid %d]", mgc_esc(esc, sizeof esc, exe), t ? t->proc.pid : 0);
	for (char *q = buf; *q; q++)
		if (*q == ';')
			*q = ',';
	return buf;
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
		snprintf(err, errlen, "%s %g: the run of pid %d starts at %s", what, x, v->t->proc.pid,
			 v->n ? mgc_human_x(v->x[0], v->a->x_is_steps, b, sizeof b) : "no point at all");
		return -ERANGE;
	}
	if (v->x[*i] != x && note[0] == 0)
		snprintf(note, notelen, "%s %g: pid %d has no snapshot at %s; using %s, the last one before it",
			 what, x, v->t->proc.pid, mgc_human_x(x, v->a->x_is_steps, a, sizeof a),
			 mgc_human_x(v->x[*i], v->a->x_is_steps, b, sizeof b));
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
	int steps = v->a->x_is_steps;
	if (!v->n)
		snprintf(buf, cap, "%s (no points)", w->mode == MGR_WEIGHT_GROWTH ? "growth" : "live bytes");
	else if (w->mode == MGR_WEIGHT_PEAK)
		snprintf(buf, cap, "peak live bytes");
	else if (w->mode == MGR_WEIGHT_GROWTH)
		snprintf(buf, cap, "growth from %s to %s", mgc_human_x(v->x[w->from], steps, a, sizeof a),
			 mgc_human_x(v->x[w->to], steps, b, sizeof b));
	else
		snprintf(buf, cap, "live bytes at %s", mgc_human_x(v->x[w->at], steps, a, sizeof a));
	return buf;
}
