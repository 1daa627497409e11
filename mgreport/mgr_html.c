/* SPDX-License-Identifier: MIT */
/* mgr_html.c: see mgr_html.h. The page's text parts are written here, escaped; its data goes into
 * a <script type="application/json"> block with every '<' written as \u003c, so no "</script>"
 * (or "<!--") inside a string can end the block early. */
#define _GNU_SOURCE
#include "mgr_html.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mg_config.h"
#include "mgc_escape.h"
#include "mgc_units.h"
#include "mgr_html_assets.h"
#include "mgr_html_data.h"
#include "mgr_output.h"
#include "mgr_view.h"

/* Text for the page: escaped as all text from a trace is (mgc_escape.h), then for HTML. */
static void esc(FILE *f, const char *text)
{
	char *dup = text ? mgc_escape_dup(text) : NULL;
	for (const char *s = dup; s && *s; s++) {
		switch (*s) {
		case '&':
			fputs("&amp;", f);
			break;
		case '<':
			fputs("&lt;", f);
			break;
		case '>':
			fputs("&gt;", f);
			break;
		case '"':
			fputs("&quot;", f);
			break;
		default:
			fputc(*s, f);
		}
	}
	free(dup);
}

static const char *per_x(const struct mgr_process *p)
{
	return p->a.x_is_steps ? "per step" : "per second";
}

static int grows(enum mgc_verdict v)
{
	return v == MGC_VERDICT_LEAK || v == MGC_VERDICT_GROWING || v == MGC_VERDICT_RETENTION;
}

/* "in 14628 steps" for a leak or a growing series with a limit; "" otherwise. */
static const char *oom_text(const struct mgr_process *p, const struct mgc_fit *fit, char *buf, size_t cap)
{
	buf[0] = 0;
	if ((fit->verdict == MGC_VERDICT_LEAK || fit->verdict == MGC_VERDICT_GROWING) && isfinite(fit->x_to_oom) &&
	    p->a.limit > 0)
		snprintf(buf, cap, "in %.0f %s", fit->x_to_oom, p->a.x_is_steps ? "steps" : "seconds");
	return buf;
}

static void series_row(FILE *f, const struct mgr_process *p, const struct mgc_series *s)
{
	char a[32], b[32], c[64];
	const char *v = s->classified ? mgc_verdict_name(s->fit.verdict) : "-";
	fprintf(f, "<tr class=\"series-row\" data-series=\"");
	esc(f, s->name);
	fprintf(f, "\"><td>");
	esc(f, mgr_series_title(s->name));
	fprintf(f, "</td><td class=\"num\">%s</td><td><span class=\"verdict v-%s\">%s</span></td>",
		mgc_human_bytes(s->n ? s->y[s->n - 1] : NAN, a, sizeof a), v, v);
	if (s->classified && (s->fit.verdict == MGC_VERDICT_LEAK || s->fit.verdict == MGC_VERDICT_GROWING))
		fprintf(f, "<td class=\"num\">%s %s</td>", mgc_human_bytes(s->fit.slope, b, sizeof b), per_x(p));
	else if (s->classified && s->fit.verdict == MGC_VERDICT_PLATEAU && isfinite(s->fit.plateau_at))
		fprintf(f, "<td class=\"num\">flat since %s</td>",
			mgc_human_x(s->fit.plateau_at, p->a.x_is_steps, b, sizeof b));
	else
		fprintf(f, "<td class=\"num\">-</td>");
	fprintf(f, "<td class=\"num\">%.2f</td><td>%s</td><td class=\"why\">", s->classified ? s->fit.confidence : 0,
		s->classified ? oom_text(p, &s->fit, c, sizeof c) : "");
	esc(f, s->classified ? s->fit.why : "");
	fprintf(f, "</td></tr>\n");
}

/* The answer and the verdict of every series: text, readable without the script. */
static void answer(FILE *f, const struct mgr_process *p)
{
	char buf[2048];
	const struct mgc_series *dev = mgc_analysis_device(&p->a);
	const char *v = p->a.have_verdict ? mgc_verdict_name(p->a.verdict.verdict) : "stable";
	mgr_answer(p, buf, sizeof buf);
	fprintf(f, "<div class=\"answer v-%s\"><p class=\"verdict-text\">", v);
	esc(f, buf);
	fprintf(f, "</p>\n");
	if (p->a.have_verdict && p->a.verdict.why[0]) {
		fprintf(f, "<p class=\"evidence\">evidence: ");
		esc(f, p->a.verdict.why);
		fprintf(f, "</p>\n");
	}
	mgr_device_answer(p, buf, sizeof buf);
	if (buf[0]) {
		fprintf(f, "<p class=\"verdict-text device v-%s\">", mgc_verdict_name(dev->fit.verdict));
		esc(f, buf);
		fprintf(f, "</p>\n");
	}
	fprintf(f, "</div>\n<table class=\"series-table\"><thead><tr><th>series</th><th>at the end</th>"
		   "<th>verdict</th><th>growth</th><th>confidence</th><th>limit reached</th><th>evidence</th>"
		   "</tr></thead><tbody>\n");
	for (size_t i = 0; i < p->a.nseries; i++)
		if (p->a.series[i].present)
			series_row(f, p, &p->a.series[i]);
	fprintf(f, "</tbody></table>\n");
}

static void process_section(FILE *f, const struct mgr_process *p, size_t k)
{
	char buf[2048];
	const struct mgc_trace *t = p->t;
	fprintf(f, "<section class=\"proc\" id=\"proc-%zu\" data-proc=\"%zu\">\n<h2>", k, k);
	esc(f, t ? mgr_process_label(p, buf, sizeof buf) : mgr_basename(p->origin));
	fprintf(f, "</h2>\n<p class=\"meta\">");
	if (t) {
		fprintf(f, "pid %d, parent %d, on ", t->proc.pid, t->proc.ppid);
		esc(f, t->host ? t->host : "?");
		fprintf(f, ": <code>");
		esc(f, t->cmdline ? t->cmdline : "?");
		fprintf(f, "</code><br>%llu snapshots, %llu step markers; trace ", (unsigned long long)t->snapshots,
			(unsigned long long)t->steps);
	} else {
		fprintf(f, "series from ");
	}
	fprintf(f, "<code>");
	esc(f, p->origin);
	fprintf(f, "</code>%s</p>\n", t && t->truncated ? " (cut short: read up to its last whole record)" : "");
	answer(f, p);
	fprintf(f, "<div class=\"chart\" data-part=\"chart\"></div>\n");
	if (t)
		fprintf(f, "<div class=\"sites\" data-part=\"sites\"></div>\n<div class=\"flame\" data-part=\"flame\"></div>\n");
	fprintf(f, "</section>\n");
}

/* One row of the process tree and, indented below, its children's. */
static void tree_rows(FILE *f, const struct mgr_process *procs, size_t n, size_t i, int depth)
{
	const struct mgr_process *p = &procs[i];
	char a[32], b[32], l[512];
	const struct mgc_series *m = mgc_analysis_main(&p->a);
	const char *v = p->a.have_verdict ? mgc_verdict_name(p->a.verdict.verdict) : "stable";
	int g = p->a.have_verdict && grows(p->a.verdict.verdict);
	fprintf(f, "<tr><td style=\"padding-left:%dem\"><a href=\"#proc-%zu\">", depth * 2, i);
	esc(f, mgr_process_label(p, l, sizeof l));
	fprintf(f, "</a></td><td><span class=\"verdict v-%s\">%s</span></td><td class=\"num\">%s</td><td>%s",
		v, v, mgc_human_bytes(m && m->n ? m->y[m->n - 1] : NAN, a, sizeof a),
		g ? "grows" : "does not grow");
	if (g)
		fprintf(f, ", %s %s", mgc_human_bytes(p->a.verdict.slope, b, sizeof b), per_x(p));
	fprintf(f, "</td><td><code>");
	esc(f, p->t->cmdline ? p->t->cmdline : "?");
	fprintf(f, "</code></td></tr>\n");
	for (size_t k = 0; k < n && depth < 16; k++)
		if (k != i && procs[k].t && procs[k].t->proc.ppid == p->t->proc.pid)
			tree_rows(f, procs, n, k, depth + 1);
}

/* Several traces: which processes grow, in one sentence, then the tree. */
static void process_tree(FILE *f, const struct mgr_process *procs, size_t n)
{
	size_t growing = 0;
	for (size_t i = 0; i < n; i++)
		growing += procs[i].a.have_verdict && grows(procs[i].a.verdict.verdict);
	fprintf(f, "<section id=\"processes\"><h2>Processes</h2>\n<p class=\"verdict-text\">%zu process%s traced; %s",
		n, n == 1 ? "" : "es", growing ? "" : "none grows.");
	for (size_t i = 0, k = 0; i < n; i++) {
		char l[512];
		if (!(procs[i].a.have_verdict && grows(procs[i].a.verdict.verdict)))
			continue;
		fprintf(f, "%s", k++ ? ", " : (growing == 1 ? "one grows: " : "these grow: "));
		esc(f, mgr_process_label(&procs[i], l, sizeof l));
		fprintf(f, " (%s)", mgc_verdict_name(procs[i].a.verdict.verdict));
	}
	fprintf(f, "%s</p>\n<table class=\"tree\"><thead><tr><th>process</th><th>verdict</th><th>RSS at the end</th>"
		   "<th>growth</th><th>command</th></tr></thead><tbody>\n", growing ? "." : "");
	for (size_t i = 0; i < n; i++) {
		int has_parent = 0;
		for (size_t k = 0; k < n; k++)
			has_parent |= k != i && procs[k].t->proc.pid == procs[i].t->proc.ppid;
		if (!has_parent)
			tree_rows(f, procs, n, i, 0);
	}
	fprintf(f, "</tbody></table></section>\n");
}

/* The data block (mgr_html_data_write). */
static int data_block(FILE *f, const struct mgr_process *procs, size_t n, struct mgc_symbolizer *sym)
{
	fputs("<script type=\"application/json\" id=\"mg-data\">", f);
	int rc = mgr_html_data_write(f, procs, n, sym);
	fputs("</script>\n", f);
	return rc;
}

static void head(FILE *f, const struct mgr_process *procs, size_t n)
{
	fprintf(f, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
		   "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
		   "<meta name=\"generator\" content=\"mgreport %s\">\n<title>mg report: ", MG_VERSION);
	esc(f, n ? mgr_basename(procs[0].origin) : "");
	if (n > 1)
		fprintf(f, " and %zu more", n - 1);
	fprintf(f, "</title>\n<style>\n%s</style>\n</head>\n<body>\n<header><h1>mg report</h1><p>", mgr_html_css);
	for (size_t i = 0; i < n; i++) {
		fprintf(f, "%s<code>", i ? " " : "");
		esc(f, procs[i].origin);
		fprintf(f, "</code>");
	}
	fprintf(f, "</p><noscript><p class=\"noscript\">The charts, the site table and the flame graph are "
		   "drawn by this page's script, which is off: the verdicts below are the whole answer, and "
		   "<code>mgreport FILE.mgt --json</code> gives every number.</p></noscript></header>\n<main>\n");
}

int mgr_html_write(FILE *f, const struct mgr_process *procs, size_t n, struct mgc_symbolizer *sym)
{
	size_t traces = 0;
	for (size_t i = 0; i < n; i++)
		traces += procs[i].t != NULL;
	head(f, procs, n);
	if (traces > 1 && traces == n)
		process_tree(f, procs, n);
	for (size_t i = 0; i < n; i++)
		process_section(f, &procs[i], i);
	fprintf(f, "</main>\n");
	if (data_block(f, procs, n, sym) < 0)
		return -ENOMEM;
	fprintf(f, "<script>\n%s</script>\n</body>\n</html>\n", mgr_html_js);
	return 0;
}
