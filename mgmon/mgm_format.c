/* SPDX-License-Identifier: MIT */
/* mgm_format.c: turns an mgm_view into the lines and the chart both frontends print. Pure
 * functions writing into caller buffers; they must never read past a view's counts, never print
 * a number the view does not hold (unknown is "?"/"-", not 0), and never pass on a control byte
 * from the watched process (its name, symbols and paths are escaped: mgc_escape.h). */
#include "mgm_format.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "mgc_escape.h"
#include "mgc_format.h"
#include "mgc_python.h"
#include "mgc_units.h"

const char *mgm_duration(double s, char *buf, size_t cap)
{
	if (!isfinite(s) || s < 0) {
		snprintf(buf, cap, "?");
		return buf;
	}
	unsigned long t = (unsigned long)(s + 0.5);
	if (t >= 86400 * 2)
		snprintf(buf, cap, "%lud%02luh", t / 86400, t % 86400 / 3600);
	else if (t >= 3600)
		snprintf(buf, cap, "%lu:%02lu:%02lu", t / 3600, t % 3600 / 60, t % 60);
	else if (t >= 60)
		snprintf(buf, cap, "%lum%02lus", t / 60, t % 60);
	else
		snprintf(buf, cap, "%lus", t);
	return buf;
}

const char *mgm_verdict_word(int ok, const struct mgc_fit *f)
{
	return ok ? mgc_verdict_name(f->verdict) : "-";
}

/* "/step" or "/s": the x unit after a rate. */
static const char *slash_x(const struct mgm_view *v)
{
	return v->a.x_is_steps ? "/step" : "/s";
}

void mgm_fmt_header(const struct mgm_view *v, char *buf, size_t cap)
{
	char up[32], rss[32], lim[32], rate[48] = "";
	if (v->a.x_is_steps) {
		if (v->steps_per_s >= 0)
			snprintf(rate, sizeof rate, "step %llu (%.3g/s)", (unsigned long long)v->step, v->steps_per_s);
		else
			snprintf(rate, sizeof rate, "step %llu", (unsigned long long)v->step);
	} else {
		snprintf(rate, sizeof rate, "no steps");
	}
	mgc_human_bytes((double)v->rss, rss, sizeof rss);
	if (v->a.limit > 0)
		mgc_human_bytes(v->a.limit, lim, sizeof lim);
	else
		snprintf(lim, sizeof lim, "?");
	char comm[MGC_ESCAPED_MAX(sizeof v->comm)];
	snprintf(buf, cap, "pid %d %s  up %s  %s  RSS %s / %s%s", v->pid,
		 v->comm[0] ? mgc_esc(comm, sizeof comm, v->comm) : "?",
		 mgm_duration(v->uptime, up, sizeof up), rate, rss, lim,
		 v->exited ? "  [exited]" : "");
}

void mgm_fmt_oom(const struct mgm_view *v, const struct mgc_fit *f, char *buf, size_t cap)
{
	char d[32];
	buf[0] = 0;
	if (!isfinite(f->x_to_oom) || f->x_to_oom <= 0)
		return;
	if (v->a.x_is_steps) {
		if (v->steps_per_s > 0)
			snprintf(buf, cap, "OOM %.0f steps ~%s", f->x_to_oom,
				 mgm_duration(f->x_to_oom / v->steps_per_s, d, sizeof d));
		else
			snprintf(buf, cap, "OOM %.0f steps", f->x_to_oom);
	} else {
		snprintf(buf, cap, "OOM ~%s", mgm_duration(f->x_to_oom, d, sizeof d));
	}
}

void mgm_fmt_verdict(const struct mgm_view *v, char *buf, size_t cap)
{
	char a[32], b[48], c[32], oom[64];
	const struct mgc_fit *f = &v->a.verdict;
	const char *what = v->probe ? "process" : "RSS";
	size_t n = v->a.nseries ? v->a.series[MGC_S_RSS].n : 0;
	if (!v->a.have_verdict) {
		snprintf(buf, cap, "%s: collecting (%zu point%s so far; a verdict needs %d)", what, n,
			 n == 1 ? "" : "s", MGC_MIN_POINTS);
		return;
	}
	mgm_fmt_oom(v, f, oom, sizeof oom);
	switch (f->verdict) {
	case MGC_VERDICT_PLATEAU:
		snprintf(buf, cap, "%s: PLATEAU at %s since %s (conf %.2f)", what,
			 mgc_human_bytes(f->plateau_level, a, sizeof a),
			 mgc_human_x(f->plateau_at, v->a.x_is_steps, b, sizeof b), f->confidence);
		break;
	case MGC_VERDICT_LEAK:
		snprintf(buf, cap, "%s: LEAK +%s%s (conf %.2f)%s%s", what, mgc_human_bytes(f->slope, a, sizeof a),
			 slash_x(v), f->confidence, oom[0] ? ", " : "", oom);
		break;
	case MGC_VERDICT_GROWING:
		if (isfinite(f->decidable_at))
			snprintf(b, sizeof b, ", known by %s", mgc_human_x(f->decidable_at, v->a.x_is_steps, c, sizeof c));
		else
			b[0] = 0;
		snprintf(buf, cap, "%s: GROWING +%s%s (conf %.2f)%s%s%s", what, mgc_human_bytes(f->slope, a, sizeof a),
			 slash_x(v), f->confidence, b, oom[0] ? ", " : "", oom);
		break;
	case MGC_VERDICT_RETENTION:
		snprintf(buf, cap, "%s: RETENTION: RSS grows +%s%s while live allocations do not (conf %.2f)",
			 what, mgc_human_bytes(f->slope, a, sizeof a), slash_x(v), f->confidence);
		break;
	default:
		snprintf(buf, cap, "%s: STABLE at %s (conf %.2f)", what, mgc_human_bytes(f->level, a, sizeof a),
			 f->confidence);
		break;
	}
}

void mgm_fmt_breakdown(const struct mgm_view *v, char *buf, size_t cap)
{
	char a[32], b[32], c[32], d[32], e[32], g[32] = "";
	size_t n;
	if (v->probe) {
		n = (size_t)snprintf(buf, cap, "heap %s  mmap %s  free-kept %s  other %s  file+shm %s",
				     mgc_human_bytes((double)v->heap, a, sizeof a), mgc_human_bytes((double)v->mmap, b, sizeof b),
				     mgc_human_bytes((double)v->free_kept, c, sizeof c), mgc_human_bytes((double)v->other, d, sizeof d),
				     mgc_human_bytes((double)(v->rss_file + v->rss_shmem), e, sizeof e));
	} else {
		n = (size_t)snprintf(buf, cap, "anon %s  file %s  shmem %s  swap %s",
				     mgc_human_bytes((double)v->rss_anon, a, sizeof a), mgc_human_bytes((double)v->rss_file, b, sizeof b),
				     mgc_human_bytes((double)v->rss_shmem, c, sizeof c), mgc_human_bytes((double)v->swap, d, sizeof d));
	}
	if (v->have_device && n < cap)
		snprintf(buf + n, cap - n, "  device %s (%s)", mgc_human_bytes((double)v->device, g, sizeof g),
			 v->device_source);
}

void mgm_fmt_series(const struct mgm_view *v, const struct mgc_series *s, char *buf, size_t cap)
{
	char a[32], b[32], oom[64] = "";
	double last = s->n ? s->y[s->n - 1] : NAN;
	if (!s->classified) {
		snprintf(buf, cap, "%-9s %9s  %-9s", s->name, mgc_human_bytes(last, a, sizeof a), "-");
		return;
	}
	mgm_fmt_oom(v, &s->fit, oom, sizeof oom);
	snprintf(b, sizeof b, "%s%s%s", s->fit.slope >= 0 ? "+" : "", mgc_human_bytes(s->fit.slope, a, sizeof a),
		 slash_x(v));
	snprintf(buf, cap, "%-9s %9s  %-9s %4.2f  %-16s %s", s->name, mgc_human_bytes(last, a, sizeof a),
		 mgc_verdict_name(s->fit.verdict), s->fit.confidence, b,
		 s->fit.verdict == MGC_VERDICT_LEAK || s->fit.verdict == MGC_VERDICT_GROWING ? oom : "");
}

const char *mgm_site_function(const struct mgm_site *s)
{
	if (!s->stack || s->stack->st.named >= s->stack->st.n)
		return "??";
	return s->stack->st.frames[s->stack->st.named].function;
}

int mgm_site_pyarena(const struct mgm_site *s)
{
	return s->stack && s->stack->st.n && !s->stack->st.frames[0].python &&
	       mgc_pyarena_is(s->r->kind, &s->r->counters, s->stack->st.frames[0].module);
}

void mgm_site_where(const struct mgm_site *s, char *buf, size_t cap)
{
	buf[0] = 0;
	if (!s->stack || s->stack->st.named >= s->stack->st.n)
		return;
	const struct mgc_frame *f = &s->stack->st.frames[s->stack->st.named];
	char name[MGC_ESCAPED_MAX(256)];
	if (f->file) {
		const char *b = strrchr(f->file, '/');
		snprintf(buf, cap, "%s:%d", mgc_esc(name, sizeof name, b ? b + 1 : f->file), f->line);
	} else if (f->module) {
		const char *b = strrchr(f->module, '/');
		snprintf(buf, cap, "[%s]", mgc_esc(name, sizeof name, b ? b + 1 : f->module));
	}
}

/* Columns: verdict 9, live 9, growth/x 11, allocs 8, then function and file:line share the rest. */
void mgm_fmt_site_header(const struct mgm_view *v, int width, char *buf, size_t cap)
{
	char g[16];
	snprintf(g, sizeof g, "growth%s", slash_x(v));
	snprintf(buf, cap, "%-9s %9s %11s %8s  %-*s", "verdict", "live", g, "allocs",
		 width > 42 ? width - 42 : 1, "function  file:line");
}

static void fmt_count(uint64_t n, char *buf, size_t cap)
{
	if (n < 100000)
		snprintf(buf, cap, "%llu", (unsigned long long)n);
	else if (n < 100000000)
		snprintf(buf, cap, "%.1fk", (double)n / 1e3);
	else
		snprintf(buf, cap, "%.1fM", (double)n / 1e6);
}

void mgm_fmt_site_row(const struct mgm_view *v, const struct mgm_site *s, int width, char *buf, size_t cap)
{
	char live[32], g[32], gs[32], al[16], where[128];
	const struct mgc_site_result *r = s->r;
	mgc_human_bytes((double)r->counters.live_bytes, live + 1, sizeof live - 1);
	live[0] = '~'; /* a sampled estimate (its band is in the site's view) */
	const char *lv = s->band > 0 ? live : live + 1;
	if (r->classified)
		snprintf(gs, sizeof gs, "%s%s", r->fit.slope >= 0 ? "+" : "", mgc_human_bytes(r->fit.slope, g, sizeof g));
	else
		snprintf(gs, sizeof gs, "-");
	fmt_count(r->counters.allocs, al, sizeof al);
	mgm_site_where(s, where, sizeof where);
	int rest = width - 42;
	if (rest < 8)
		rest = 8;
	char fnbuf[300], fnesc[MGC_ESCAPED_MAX(256)];
	const char *fn = mgc_esc(fnesc, sizeof fnesc, mgm_site_function(s));
	if (mgc_kind_is_cuda(r->kind)) { /* "[device:0] fn": GPU sites say so */
		int dev = mgc_kind_device(r->kind);
		char d[8] = "";
		if (dev >= 0)
			snprintf(d, sizeof d, ":%d", dev);
		snprintf(fnbuf, sizeof fnbuf, "[%s%s] %s", mgc_kind_name(r->kind), d, fn);
		fn = fnbuf;
	} else if (mgm_site_pyarena(s)) {
		snprintf(fnbuf, sizeof fnbuf, "[pymalloc arena] %s", fn); /* as the report marks it */
		fn = fnbuf;
	}
	int fl = (int)strlen(fn), wl = (int)strlen(where);
	char tail[512];
	if (fl + 2 + wl <= rest)
		snprintf(tail, sizeof tail, "%s  %s", fn, where);
	else if (fl + 1 <= rest)
		snprintf(tail, sizeof tail, "%.*s", rest, fn); /* the function matters more than the line */
	else
		snprintf(tail, sizeof tail, "%.*s~", rest - 1, fn);
	snprintf(buf, cap, "%-9s %9s %11s %8s  %s", mgm_verdict_word(r->classified, &r->fit), lv, gs, al, tail);
	(void)v;
}

/* ---- chart ---- */

static void put(char *cells, int w, int h, int c, int r, char ch, int over)
{
	if (c < 0 || c >= w || r < 0 || r >= h)
		return;
	if (over || cells[r * w + c] == ' ')
		cells[r * w + c] = ch;
}

/* The row (0 at the top) that value yv reaches on a chart of h rows scaled to [lo, hi], from -1
 * (above the chart, and NaN) to h + 1 (below it): a fit line far off the chart is no int overflow. */
static int chart_row(double yv, double lo, double hi, int h)
{
	double above = ceil((yv - lo) / (hi - lo) * h - 1e-9);
	return h - (int)fmax(-1.0, fmin(above, h + 1.0));
}

/* The series as columns of '#', each the last point at or before its x, scaled to [lo, hi]. */
static void chart_columns(const double *x, const double *y, size_t n, double span, double lo, double hi,
			  int w, int h, char *cells)
{
	double x0 = x[0];
	size_t i = 0;
	for (int c = 0; c < w; c++) {
		double xc = n == 1 ? x0 : x0 + span * c / (w - 1);
		while (i + 1 < n && x[i + 1] <= xc + 1e-9)
			i++;
		if (n > 1 && x[0] > xc)
			continue;
		int top = chart_row(y[i], lo, hi, h); /* every column shows at least its bottom row */
		if (top < 0)
			top = 0;
		if (top > h - 1)
			top = h - 1;
		for (int r = top; r < h; r++)
			put(cells, w, h, c, r, '#', 1);
	}
}

/* The fit over the columns: a plateau's level ('-') and warmup end ('|'), or a rising verdict's
 * line ('.') from its change point; and the legend that names it. */
static void chart_fit(const struct mgm_view *v, double x0, double x1, double span, double lo, double hi,
		      const struct mgc_fit *f, int w, int h, char *cells, struct mgm_chart *lab)
{
	char a[32], b[32];
	if (f->verdict == MGC_VERDICT_PLATEAU && isfinite(f->plateau_level)) {
		int r = chart_row(f->plateau_level, lo, hi, h);
		for (int c = 0; c < w; c++)
			put(cells, w, h, c, r < 0 ? 0 : r, '-', 0);
		if (isfinite(f->plateau_at) && f->plateau_at >= x0 && f->plateau_at <= x1) {
			int c = (int)lround((f->plateau_at - x0) / span * (w - 1));
			for (int r2 = 0; r2 < h; r2++)
				put(cells, w, h, c, r2, '|', 0);
		}
		snprintf(lab->legend, sizeof lab->legend, "- plateau %s  | warmup end %s",
			 mgc_human_bytes(f->plateau_level, a, sizeof a),
			 mgc_human_x(f->plateau_at, v->a.x_is_steps, b, sizeof b));
	} else if ((f->verdict == MGC_VERDICT_LEAK || f->verdict == MGC_VERDICT_GROWING) && isfinite(f->slope)) {
		double from = isfinite(f->change_at) && f->change_at > x0 ? f->change_at : x0;
		for (int c = 0; c < w; c++) {
			double xc = x0 + span * c / (w - 1);
			if (xc < from)
				continue;
			double yf = f->level + f->slope * (xc - x1);
			put(cells, w, h, c, chart_row(yf, lo, hi, h), '.', 0); /* off the chart: not drawn */
		}
		snprintf(lab->legend, sizeof lab->legend, ". %s slope +%s%s", mgc_verdict_name(f->verdict),
			 mgc_human_bytes(f->slope, a, sizeof a), slash_x(v));
	} else {
		snprintf(lab->legend, sizeof lab->legend, "%s", mgc_verdict_name(f->verdict));
	}
}

int mgm_chart_render(const struct mgm_view *v, const double *x, const double *y, size_t n, int ok,
		     const struct mgc_fit *f, int w, int h, char *cells, struct mgm_chart *lab)
{
	memset(cells, ' ', (size_t)w * (size_t)h);
	memset(lab, 0, sizeof *lab);
	if (n == 0 || w < 2 || h < 2)
		return -1;
	double x0 = x[0], x1 = x[n - 1], span = x1 > x0 ? x1 - x0 : 1;
	double lo = y[0], hi = y[0];
	for (size_t i = 0; i < n; i++) {
		if (y[i] < lo)
			lo = y[i];
		if (y[i] > hi)
			hi = y[i];
	}
	if (ok && f->verdict == MGC_VERDICT_PLATEAU && isfinite(f->plateau_level)) {
		if (f->plateau_level > hi)
			hi = f->plateau_level;
		if (f->plateau_level < lo)
			lo = f->plateau_level;
	}
	lo = lo > 0 ? lo * 0.9 : lo; /* the bottom row is never empty for a positive series */
	if (hi - lo < 1)
		hi = lo + 1;
	chart_columns(x, y, n, span, lo, hi, w, h, cells);
	if (ok)
		chart_fit(v, x0, x1, span, lo, hi, f, w, h, cells, lab);
	char a[32], b[32];
	mgc_human_bytes(hi, lab->ytop, sizeof lab->ytop);
	mgc_human_bytes(lo, lab->ybot, sizeof lab->ybot);
	if (v->a.x_is_steps) {
		snprintf(lab->xleft, sizeof lab->xleft, "step %.0f", x0);
		snprintf(lab->xright, sizeof lab->xright, "step %.0f", x1);
	} else {
		snprintf(lab->xleft, sizeof lab->xleft, "%s", mgm_duration(x0, a, sizeof a));
		snprintf(lab->xright, sizeof lab->xright, "%s", mgm_duration(x1, b, sizeof b));
	}
	return 0;
}
