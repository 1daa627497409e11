/* SPDX-License-Identifier: MIT */
/* mgm_text.c: `mgmon --once` frames: the same lines the curses screen shows, as plain text for
 * scripts, logs and tests, or as JSON. Never emits terminal control sequences: text from the
 * watched process is escaped and the JSON is valid UTF-8 (mgc_escape.h). */
#include "mgm_text.h"

#include "mgc_format.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mg_config.h"
#include "mgc_escape.h"
#include "mgc_json.h"
#include "mgm_format.h"

#define CHART_H 8

/* The RSS chart, CHART_H rows high. */
static void text_chart(FILE *out, const struct mgm_view *v, int width)
{
	if (!v->a.nseries)
		return;
	const struct mgc_series *s = &v->a.series[MGC_S_RSS];
	int cw = width - 12;
	char *cells = malloc((size_t)cw * CHART_H);
	struct mgm_chart lab;
	if (cells && mgm_chart_render(v, s->x, s->y, s->n, s->classified, &s->fit, cw, CHART_H, cells, &lab) == 0) {
		fprintf(out, "\nrss over %s  %s\n", v->a.x_is_steps ? "steps" : "seconds", lab.legend);
		for (int r = 0; r < CHART_H; r++)
			fprintf(out, "%10s |%.*s\n", r == 0 ? lab.ytop : r == CHART_H - 1 ? lab.ybot : "", cw,
				cells + (size_t)r * cw);
		fprintf(out, "%10s +%-*s%s\n", "", cw - (int)strlen(lab.xright), lab.xleft, lab.xright);
	}
	free(cells);
}

static void text_stack(FILE *out, const struct mgm_site *ms)
{
	char *fn = mgc_escape_dup(mgm_site_function(ms)), where[MGC_ESCAPED_MAX(1024)];
	fprintf(out, "\nstack of leaking site %u (%s):\n", ms->r->id, fn ? fn : "?");
	free(fn);
	for (size_t k = 0; k < ms->stack->st.n && k < 24; k++) {
		const struct mgc_frame *f = &ms->stack->st.frames[k];
		const char *mb = f->module ? strrchr(f->module, '/') : NULL;
		fn = mgc_escape_dup(f->function ? f->function : "??");
		if (f->file)
			fprintf(out, "  #%-2zu %s%s  %s:%d\n", k, fn ? fn : "?", f->inlined ? " (inlined)" : "",
				mgc_esc(where, sizeof where, f->file), f->line);
		else
			fprintf(out, "  #%-2zu %s  [%s]\n", k, fn ? fn : "?",
				mgc_esc(where, sizeof where, mb ? mb + 1 : f->module ? f->module : "??"));
		free(fn);
	}
}

/* The sites table (15 rows) and the stacks of the leaking ones. */
static void text_sites(FILE *out, const struct mgm_view *v, int width)
{
	char line[1024];
	fprintf(out, "\nsites by growth (%zu shown of %zu, %zu leaking):\n", v->nsites, v->sites_total,
		v->a.leaking_sites);
	mgm_fmt_site_header(v, width, line, sizeof line);
	fprintf(out, "%s\n", line);
	for (size_t i = 0; i < v->nsites && i < 15; i++) {
		mgm_fmt_site_row(v, &v->sites[i], width, line, sizeof line);
		fprintf(out, "%s\n", line);
	}
	for (size_t i = 0; i < v->nsites; i++) {
		const struct mgm_site *ms = &v->sites[i];
		if (ms->r->classified && ms->r->fit.verdict == MGC_VERDICT_LEAK && ms->stack)
			text_stack(out, ms);
	}
}

void mgm_text_frame(FILE *out, const struct mgm_view *v, int width)
{
	char line[1024];
	width = width < 60 ? 60 : width > 400 ? 400 : width;
	mgm_fmt_header(v, line, sizeof line);
	fprintf(out, "mgmon %s: %s\n", MG_VERSION, line);
	char shown[MGC_ESCAPED_MAX(sizeof v->cmdline)]; /* cmdline, note, notice: 256 bytes each */
	if (v->cmdline[0])
		fprintf(out, "  command: %s\n", mgc_esc(shown, sizeof shown, v->cmdline));
	if (!v->probe && !v->exited)
		fprintf(out, "  no probe: RSS only (run the program under `mgprobe run` for heap, sites and stacks)\n");
	if ((v->probe || v->exited) && v->note[0])
		fprintf(out, "  %s\n", mgc_esc(shown, sizeof shown, v->note));
	if (v->notice[0])
		fprintf(out, "  notice: %s\n", mgc_esc(shown, sizeof shown, v->notice));
	if (v->a.axis_note[0])
		fprintf(out, "  note: %s\n", v->a.axis_note);
	mgm_fmt_verdict(v, line, sizeof line);
	fprintf(out, "%s\n", line);
	if (v->a.have_verdict && v->a.verdict.why[0])
		fprintf(out, "  evidence: %s\n", v->a.verdict.why);
	mgm_fmt_breakdown(v, line, sizeof line);
	fprintf(out, "%s\n", line);
	text_chart(out, v, width);
	fprintf(out, "\n%-9s %9s  %-9s %4s  %-16s %s\n", "series", "now", "verdict", "conf", "growth", "");
	for (size_t k = 0; k < v->a.nseries; k++) {
		if (!v->a.series[k].present)
			continue;
		mgm_fmt_series(v, &v->a.series[k], line, sizeof line);
		fprintf(out, "%s\n", line);
	}
	if (v->probe)
		text_sites(out, v, width);
	if (v->nchildren) {
		fprintf(out, "\nchildren:");
		for (size_t i = 0; i < v->nchildren; i++)
			fprintf(out, " %d", v->children[i]);
		fprintf(out, "\n");
	}
}

/* ---- JSON ---- */

/* A verdict as mgreport writes one (mgc_json.h). */
static cJSON *fit_json(int ok, const struct mgc_fit *f, int x_is_steps)
{
	cJSON *o = cJSON_CreateObject();
	if (o)
		mgc_json_fit(o, f, ok, x_is_steps);
	return o;
}

static cJSON *stack_json(const struct mgm_stack *st)
{
	cJSON *arr = cJSON_CreateArray();
	for (size_t k = 0; arr && st && k < st->st.n; k++) {
		const struct mgc_frame *f = &st->st.frames[k];
		cJSON *fr = cJSON_CreateObject();
		if (!fr)
			continue;
		cJSON_AddStringToObject(fr, "function", f->function);
		if (f->file) {
			cJSON_AddStringToObject(fr, "file", f->file);
			cJSON_AddNumberToObject(fr, "line", f->line);
		}
		if (f->module)
			cJSON_AddStringToObject(fr, "module", f->module);
		if (f->inlined)
			cJSON_AddBoolToObject(fr, "inlined", 1);
		cJSON_AddItemToArray(arr, fr);
	}
	return arr;
}

static cJSON *site_json(const struct mgm_site *ms, const struct mgm_view *v)
{
	const struct mgc_site_result *r = ms->r;
	cJSON *e = fit_json(r->classified, &r->fit, v->a.x_is_steps);
	if (!e)
		return NULL;
	cJSON_AddNumberToObject(e, "site", r->id);
	cJSON_AddStringToObject(e, "kind", mgc_kind_name(r->kind));
	if (mgc_kind_device(r->kind) >= 0)
		cJSON_AddNumberToObject(e, "device", mgc_kind_device(r->kind));
	else if (mgc_kind_is_cuda(r->kind))
		cJSON_AddNullToObject(e, "device");
	mgc_json_counters(e, &r->counters);
	if (v->a.sample_rate) /* sampled: an estimate, +- this */
		cJSON_AddNumberToObject(e, "live_bytes_band", ms->band);
	cJSON_AddItemToObject(e, "live_bytes_last_x", mgc_json_number(r->live_end));
	cJSON_AddNumberToObject(e, "growth_bytes", r->growth);
	cJSON_AddStringToObject(e, "function", mgm_site_function(ms));
	if (mgm_site_pyarena(ms))
		cJSON_AddBoolToObject(e, "pymalloc_arena", 1);
	cJSON_AddItemToObject(e, "stack", stack_json(ms->stack));
	return e;
}

static void add_breakdown(cJSON *o, const struct mgm_view *v)
{
	cJSON *b = cJSON_AddObjectToObject(o, "breakdown");
	if (!b)
		return;
	cJSON_AddNumberToObject(b, "rss_anon", (double)v->rss_anon);
	cJSON_AddNumberToObject(b, "rss_file", (double)v->rss_file);
	cJSON_AddNumberToObject(b, "rss_shmem", (double)v->rss_shmem);
	if (v->probe) {
		cJSON_AddNumberToObject(b, "heap", (double)v->heap);
		cJSON_AddNumberToObject(b, "mmap", (double)v->mmap);
		cJSON_AddNumberToObject(b, "free_kept", (double)v->free_kept);
		cJSON_AddNumberToObject(b, "other", (double)v->other);
	} else {
		cJSON_AddNumberToObject(b, "swap", (double)v->swap);
	}
	if (v->have_device)
		cJSON_AddNumberToObject(b, "device", (double)v->device);
}

static void add_series(cJSON *o, const struct mgm_view *v)
{
	cJSON *ser = cJSON_AddArrayToObject(o, "series");
	for (size_t k = 0; ser && k < v->a.nseries; k++) {
		const struct mgc_series *s = &v->a.series[k];
		cJSON *e = s->present ? fit_json(s->classified, &s->fit, v->a.x_is_steps) : NULL;
		if (!e)
			continue;
		cJSON_AddStringToObject(e, "name", s->name);
		cJSON_AddNumberToObject(e, "points", (double)s->n);
		cJSON_AddItemToObject(e, "now", mgc_json_number(s->n ? s->y[s->n - 1] : NAN));
		cJSON_AddItemToArray(ser, e);
	}
}

int mgm_json_frame(FILE *out, const struct mgm_view *v)
{
	cJSON *o = cJSON_CreateObject();
	if (!o)
		return -ENOMEM;
	cJSON_AddNumberToObject(o, "pid", v->pid);
	cJSON_AddNumberToObject(o, "ppid", v->ppid);
	cJSON_AddStringToObject(o, "command", v->comm);
	cJSON_AddStringToObject(o, "cmdline", v->cmdline);
	cJSON_AddStringToObject(o, "source", v->probe ? "probe" : "proc");
	cJSON_AddBoolToObject(o, "probe", v->probe);
	cJSON_AddBoolToObject(o, "exited", v->exited);
	if (v->exit_known)
		cJSON_AddNumberToObject(o, "exit_status", v->exit_status);
	cJSON_AddStringToObject(o, "note", v->note);
	cJSON_AddStringToObject(o, "notice", v->notice);
	cJSON_AddNumberToObject(o, "uptime_s", v->uptime);
	cJSON_AddStringToObject(o, "x", v->a.x_is_steps ? "steps" : "seconds");
	cJSON_AddStringToObject(o, "x_axis_note", v->a.axis_note);
	cJSON_AddNumberToObject(o, "step", (double)v->step);
	cJSON_AddItemToObject(o, "steps_per_s", mgc_json_number(v->steps_per_s >= 0 ? v->steps_per_s : NAN));
	cJSON_AddNumberToObject(o, "rss", (double)v->rss);
	cJSON_AddItemToObject(o, "limit", mgc_json_number(v->a.limit > 0 ? v->a.limit : NAN));
	cJSON_AddStringToObject(o, "limit_source", v->a.limit_source ? v->a.limit_source : "");
	add_breakdown(o, v);
	cJSON_AddItemToObject(o, "process", fit_json(v->a.have_verdict, &v->a.verdict, v->a.x_is_steps));
	add_series(o, v);
	cJSON *sites = cJSON_AddArrayToObject(o, "sites");
	for (size_t i = 0; sites && i < v->nsites; i++)
		cJSON_AddItemToArray(sites, site_json(&v->sites[i], v));
	cJSON_AddNumberToObject(o, "sites_total", (double)v->sites_total);
	cJSON_AddNumberToObject(o, "leaking_sites", (double)v->a.leaking_sites);
	cJSON *ch = cJSON_AddArrayToObject(o, "children");
	for (size_t i = 0; ch && i < v->nchildren; i++)
		cJSON_AddItemToArray(ch, cJSON_CreateNumber(v->children[i]));
	char *raw = cJSON_Print(o);
	cJSON_Delete(o);
	char *txt = raw ? mgc_json_clean(raw) : NULL; /* valid UTF-8 whatever the process is called */
	free(raw);
	if (!txt)
		return -ENOMEM;
	fprintf(out, "%s\n", txt);
	free(txt);
	return 0;
}
