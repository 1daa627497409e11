/* SPDX-License-Identifier: MIT */
/* mgr_analyze.c: mgreport's side of the analysis: libmgcore's analysis of the trace, then the
 * stacks of the sites that will be shown, symbolized against the trace's module map (its perf map
 * for generated code, its code objects for Python frames). Only shown sites are symbolized, so the
 * cost is bounded by --top. */
#define _GNU_SOURCE
#include "mgr_analyze.h"

#include <errno.h>
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

/* The trace's module map at one site's module generation. */
struct trace_modules {
	const struct mgc_trace *t;
	uint32_t gen;
};

static void find_module(void *ctx, uint64_t addr, struct mgc_module_ref *out)
{
	const struct trace_modules *tm = ctx;
	const struct mgc_module *m = mgc_trace_module_for(tm->t, addr, tm->gen);
	if (m)
		*out = (struct mgc_module_ref){m->path, m->build_id, m->build_id_len, m->bias, NULL};
	else
		out->generated = mgc_trace_perfmap_name(tm->t, addr);
}

const struct mgc_site *mgr_site(const struct mgr_process *p, size_t i)
{
	return p->t->sites[p->a.sites[i].id];
}

/* The stack of the last shown site symbolized past the kept ones. */
struct mgr_scratch {
	size_t site; /* its index among the shown sites; SIZE_MAX: none yet */
	struct mgc_stack stack;
};

const struct mgc_stack *mgr_shown_stack(const struct mgr_process *p, size_t i)
{
	if (i < p->nkept)
		return &p->shown[i].stack;
	struct mgr_scratch *sc = p->scratch;
	if (i >= p->nshown || !sc)
		return NULL;
	if (sc->site != i) {
		mgc_stack_free(&sc->stack);
		sc->site = SIZE_MAX;
		if (mgr_symbolize(p->t, mgr_site(p, i), p->sym, &sc->stack) < 0)
			return NULL;
		sc->site = i;
	}
	return &sc->stack;
}

const char *mgr_site_name(const struct mgr_process *p, size_t i, char *buf, size_t cap)
{
	const struct mgc_stack *st = i < p->nshown && p->shown ? mgr_shown_stack(p, i) : NULL;
	if (!st || !st->n)
		return "??";
	const struct mgc_frame *f = &st->frames[st->named];
	if (!f->python)
		return f->function;
	snprintf(buf, cap, "%s (%s:%d)", f->function, mgc_pyfile_short(f->file), f->line);
	return buf;
}

int mgr_analyze_trace(const struct mgc_trace *t, const struct mgr_options *o,
		      struct mgc_symbolizer *sym, struct mgr_process *p)
{
	memset(p, 0, sizeof *p);
	p->t = t;
	p->origin = t->path;
	struct mgc_analysis_opts ao = {.limit = o->limit, .top = o->top};
	if (mgc_analyze_trace(t, &ao, &p->a) < 0)
		return -ENOMEM;
	p->nshown = o->top && o->top < p->a.nsites ? o->top : p->a.nsites;
	p->nkept = p->nshown < MGR_KEPT_STACKS ? p->nshown : MGR_KEPT_STACKS;
	p->sym = sym;
	p->shown = calloc(p->nshown ? p->nshown : 1, sizeof *p->shown);
	p->scratch = calloc(1, sizeof *p->scratch);
	if (!p->shown || !p->scratch)
		return -ENOMEM;
	p->scratch->site = SIZE_MAX;
	for (size_t i = 0; i < p->nshown; i++) {
		p->shown[i].pyarena = mgc_pyarena_site(t, mgr_site(p, i));
		if (i < p->nkept && mgr_symbolize(t, mgr_site(p, i), sym, &p->shown[i].stack) < 0)
			return -ENOMEM;
	}
	return 0;
}

int mgr_symbolize(const struct mgc_trace *t, const struct mgc_site *s, struct mgc_symbolizer *sym,
		  struct mgc_stack *out)
{
	struct trace_modules tm = {t, s->gen};
	memset(out, 0, sizeof *out);
	if (!s->ips)
		return 0;
	return mgc_symbolize_stack(sym, s->ips, s->nframes, find_module, &tm, t->pycodes, out) < 0 ? -ENOMEM : 0;
}

int mgr_analyze_series(const char *origin, const double *x, size_t n, int x_is_steps,
		       const char *const *names, const double *const *ys, size_t ncols,
		       const struct mgr_options *o, struct mgr_process *p)
{
	memset(p, 0, sizeof *p);
	p->origin = origin;
	return mgc_analyze_columns(x, n, x_is_steps, names, ys, ncols, o->epochs, o->nepochs, o->limit, &p->a);
}

void mgr_process_free(struct mgr_process *p)
{
	for (size_t i = 0; p->shown && i < p->nshown; i++)
		mgc_stack_free(&p->shown[i].stack);
	free(p->shown);
	if (p->scratch)
		mgc_stack_free(&p->scratch->stack);
	free(p->scratch);
	mgc_analysis_free(&p->a);
	memset(p, 0, sizeof *p);
}
