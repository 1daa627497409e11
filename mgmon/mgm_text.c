/* SPDX-License-Identifier: MIT */
/* mgm_text.c: `mgmon --once` frames: the same lines the curses screen shows, as plain text for
 * scripts, logs and tests, or as JSON. Never emits terminal control sequences. */
#include "mgm_text.h"

#include "mgc_format.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mg_config.h"
#include "mgm_format.h"

#define CHART_H 8

void mgm_text_frame(FILE *out, const struct mgm_view *v, int width)
{
	char line[1024];
	if (width < 60)
		width = 60;
	if (width > 400)
		width = 400;
	mgm_fmt_header(v, line, sizeof line);
	fprintf(out, "mgmon %s: %s\n", MG_VERSION, line);
	if (v->cmdline[0])
		fprintf(out, "  command: %s\n", v->cmdline);
	if (!v->probe && !v->exited)
		fprintf(out, "  no probe: RSS only (run the program under `mgprobe run` for heap, sites and stacks)\n");
	else if (v->note[0])
		fprintf(out, "  %s\n", v->note);
	mgm_fmt_verdict(v, line, sizeof line);
	fprintf(out, "%s\n", line);
	if (v->have_verdict && v->verdict.why[0])
		fprintf(out, "  evidence: %s\n", v->verdict.why);
	mgm_fmt_breakdown(v, line, sizeof line);
	fprintf(out, "%s\n", line);

	const struct mgm_series *s = &v->series[MGM_S_RSS];
	int cw = width - 12;
	char *cells = malloc((size_t)cw * CHART_H);
	struct mgm_chart lab;
	if (cells && mgm_chart_render(v, s->x, s->y, s->n, s->ok, &s->fit, cw, CHART_H, cells, &lab) == 0) {
		fprintf(out, "\nrss over %s  %s\n", v->x_is_steps ? "steps" : "seconds", lab.legend);
		for (int r = 0; r < CHART_H; r++)
			fprintf(out, "%10s |%.*s\n", r == 0 ? lab.ytop : r == CHART_H - 1 ? lab.ybot : "", cw,
				cells + (size_t)r * cw);
		fprintf(out, "%10s +%-*s%s\n", "", cw - (int)strlen(lab.xright), lab.xleft, lab.xright);
	}
	free(cells);

	fprintf(out, "\n%-9s %9s  %-9s %4s  %-14s %s\n", "series", "now", "verdict", "conf", "growth", "");
	for (int k = 0; k < MGM_S_N; k++) {
		if (!v->series[k].valid)
			continue;
		mgm_fmt_series(v, &v->series[k], line, sizeof line);
		fprintf(out, "%s\n", line);
	}

	if (v->probe) {
		fprintf(out, "\nsites by growth (%zu shown of %zu, %zu leaking):\n", v->nsites, v->sites_total, v->leaking);
		mgm_fmt_site_header(v, width, line, sizeof line);
		fprintf(out, "%s\n", line);
		size_t shown = v->nsites < 15 ? v->nsites : 15;
		for (size_t i = 0; i < shown; i++) {
			mgm_fmt_site_row(v, &v->sites[i], width, line, sizeof line);
			fprintf(out, "%s\n", line);
		}
		for (size_t i = 0; i < v->nsites; i++) {
			const struct mgm_site *ms = &v->sites[i];
			if (!ms->ok || ms->fit.verdict != MGC_VERDICT_LEAK || !ms->stack)
				continue;
			fprintf(out, "\nstack of leaking site %u (%s):\n", ms->id, mgm_site_function(ms));
			for (size_t k = 0; k < ms->stack->n && k < 24; k++) {
				const struct mgm_frame *f = &ms->stack->frames[k];
				const char *mb = f->module ? strrchr(f->module, '/') : NULL;
				if (f->file)
					fprintf(out, "  #%-2zu %s%s  %s:%d\n", k, f->function, f->inlined ? " (inlined)" : "",
						f->file, f->line);
				else
					fprintf(out, "  #%-2zu %s  [%s]\n", k, f->function, mb ? mb + 1 : f->module ? f->module : "??");
			}
		}
	}
	if (v->nchildren) {
		fprintf(out, "\nchildren:");
		for (size_t i = 0; i < v->nchildren; i++)
			fprintf(out, " %d", v->children[i]);
		fprintf(out, "\n");
	}
}

/* ---- JSON ---- */

static cJSON *num(double d)
{
	return isfinite(d) ? cJSON_CreateNumber(d) : cJSON_CreateNull();
}

static cJSON *fit_json(int ok, const struct mgc_fit *f)
{
	cJSON *o = cJSON_CreateObject();
	if (!o)
		return NULL;
	if (!ok) {
		cJSON_AddStringToObject(o, "verdict", "unknown");
		return o;
	}
	cJSON_AddStringToObject(o, "verdict", mgc_verdict_name(f->verdict));
	cJSON_AddItemToObject(o, "confidence", num(f->confidence));
	cJSON_AddItemToObject(o, "slope", num(f->slope));
	cJSON_AddItemToObject(o, "level", num(f->level));
	cJSON_AddItemToObject(o, "plateau_at", num(f->plateau_at));
	cJSON_AddItemToObject(o, "plateau_level", num(f->plateau_level));
	cJSON_AddItemToObject(o, "x_to_oom", num(f->x_to_oom));
	cJSON_AddItemToObject(o, "decidable_at", num(f->decidable_at));
	cJSON_AddStringToObject(o, "why", f->why);
	return o;
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
	cJSON_AddNumberToObject(o, "uptime_s", v->uptime);
	cJSON_AddStringToObject(o, "x", v->x_is_steps ? "steps" : "seconds");
	cJSON_AddNumberToObject(o, "step", (double)v->step);
	cJSON_AddItemToObject(o, "steps_per_s", v->steps_per_s >= 0 ? num(v->steps_per_s) : cJSON_CreateNull());
	cJSON_AddNumberToObject(o, "rss", (double)v->rss);
	cJSON_AddItemToObject(o, "limit", v->limit > 0 ? num(v->limit) : cJSON_CreateNull());
	cJSON *b = cJSON_AddObjectToObject(o, "breakdown");
	if (b) {
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
		if (v->have_gpu)
			cJSON_AddNumberToObject(b, "gpu", (double)v->gpu);
	}
	cJSON_AddItemToObject(o, "process", fit_json(v->have_verdict, &v->verdict));
	cJSON *ser = cJSON_AddArrayToObject(o, "series");
	for (int k = 0; ser && k < MGM_S_N; k++) {
		const struct mgm_series *s = &v->series[k];
		if (!s->valid)
			continue;
		cJSON *e = fit_json(s->ok, &s->fit);
		if (!e)
			continue;
		cJSON_AddStringToObject(e, "name", s->name);
		cJSON_AddNumberToObject(e, "points", (double)s->n);
		cJSON_AddItemToObject(e, "now", s->n ? num(s->y[s->n - 1]) : cJSON_CreateNull());
		cJSON_AddItemToArray(ser, e);
	}
	cJSON *sites = cJSON_AddArrayToObject(o, "sites");
	for (size_t i = 0; sites && i < v->nsites; i++) {
		const struct mgm_site *ms = &v->sites[i];
		cJSON *e = fit_json(ms->ok, &ms->fit);
		if (!e)
			continue;
		cJSON_AddNumberToObject(e, "site", ms->id);
		cJSON_AddStringToObject(e, "kind", mgc_kind_name(ms->kind));
		if (mgc_kind_device(ms->kind) >= 0)
			cJSON_AddNumberToObject(e, "device", mgc_kind_device(ms->kind));
		else if (mgc_kind_is_cuda(ms->kind))
			cJSON_AddNullToObject(e, "device");
		cJSON_AddNumberToObject(e, "live_bytes", (double)ms->live_bytes);
		if (ms->band > 0) /* sampled: an estimate, +- this */
			cJSON_AddNumberToObject(e, "live_bytes_band", ms->band);
		cJSON_AddNumberToObject(e, "live_count", (double)ms->live_count);
		cJSON_AddNumberToObject(e, "allocs", (double)ms->allocs);
		cJSON_AddNumberToObject(e, "frees", (double)ms->frees);
		cJSON_AddNumberToObject(e, "peak_bytes", (double)ms->peak_bytes);
		cJSON_AddNumberToObject(e, "growth_bytes", ms->growth);
		cJSON_AddStringToObject(e, "function", mgm_site_function(ms));
		cJSON *st = cJSON_AddArrayToObject(e, "stack");
		for (size_t k = 0; st && ms->stack && k < ms->stack->n; k++) {
			const struct mgm_frame *f = &ms->stack->frames[k];
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
			cJSON_AddItemToArray(st, fr);
		}
		cJSON_AddItemToArray(sites, e);
	}
	cJSON_AddNumberToObject(o, "sites_total", (double)v->sites_total);
	cJSON_AddNumberToObject(o, "leaking_sites", (double)v->leaking);
	cJSON *ch = cJSON_AddArrayToObject(o, "children");
	for (size_t i = 0; ch && i < v->nchildren; i++)
		cJSON_AddItemToArray(ch, cJSON_CreateNumber(v->children[i]));
	char *txt = cJSON_Print(o);
	cJSON_Delete(o);
	if (!txt)
		return -ENOMEM;
	fprintf(out, "%s\n", txt);
	free(txt);
	return 0;
}
