/* SPDX-License-Identifier: MIT */
/* mgr_json.c: the JSON printer (cJSON). Field names are a contract (docs/report-json.md): add
 * fields, never rename or remove them. Non-finite numbers are written as null. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include <cjson/cJSON.h>

#include "mgr_output.h"

static cJSON *num(double v)
{
	return isfinite(v) ? cJSON_CreateNumber(v) : cJSON_CreateNull();
}

static void add_fit(cJSON *o, const struct mgc_fit *f, int ok, int x_is_steps)
{
	cJSON_AddStringToObject(o, "verdict", ok ? mgc_verdict_name(f->verdict) : "stable");
	cJSON_AddItemToObject(o, "confidence", num(ok ? f->confidence : NAN));
	cJSON_AddItemToObject(o, "slope_per_x", num(ok ? f->slope : NAN));
	cJSON *ci = cJSON_AddArrayToObject(o, "slope_ci");
	cJSON_AddItemToArray(ci, num(ok ? f->slope_lo : NAN));
	cJSON_AddItemToArray(ci, num(ok ? f->slope_hi : NAN));
	cJSON_AddItemToObject(o, "plateau_at", num(ok ? f->plateau_at : NAN));
	cJSON_AddItemToObject(o, "plateau_level", num(ok ? f->plateau_level : NAN));
	cJSON_AddItemToObject(o, "level", num(ok ? f->level : NAN));
	cJSON_AddItemToObject(o, "noise", num(ok ? f->noise : NAN));
	cJSON_AddItemToObject(o, "change_at", num(ok ? f->change_at : NAN));
	cJSON_AddItemToObject(o, x_is_steps ? "steps_to_oom" : "seconds_to_oom",
			      num(ok ? f->x_to_oom : NAN));
	cJSON_AddItemToObject(o, "decidable_at", num(ok ? f->decidable_at : NAN));
	cJSON_AddStringToObject(o, "why", ok ? f->why : "");
}

/* "device": the CUDA device ordinal, null when not known (pinned host memory has none). */
static void add_device(cJSON *o, unsigned kind)
{
	int dev = mgc_kind_device(kind);
	if (dev >= 0)
		cJSON_AddNumberToObject(o, "device", dev);
	else
		cJSON_AddNullToObject(o, "device");
}

static cJSON *process_json(const struct mgr_process *p)
{
	cJSON *o = cJSON_CreateObject();
	const struct mgc_trace *t = p->t;
	cJSON_AddStringToObject(o, "file", p->origin ? p->origin : "");
	cJSON_AddStringToObject(o, "x_axis", p->x_is_steps ? "step" : "seconds");
	cJSON_AddItemToObject(o, "limit_bytes", num(p->limit > 0 ? p->limit : NAN));
	cJSON_AddStringToObject(o, "verdict",
				p->have_verdict ? mgc_verdict_name(p->verdict.verdict) : "stable");
	if (p->have_verdict) {
		cJSON *v = cJSON_AddObjectToObject(o, "process_verdict");
		add_fit(v, &p->verdict, 1, p->x_is_steps);
	}
	if (t) {
		cJSON *pr = cJSON_AddObjectToObject(o, "process");
		cJSON_AddNumberToObject(pr, "pid", t->proc.pid);
		cJSON_AddNumberToObject(pr, "ppid", t->proc.ppid);
		cJSON_AddStringToObject(pr, "command", t->cmdline ? t->cmdline : "");
		cJSON_AddStringToObject(pr, "exe", t->exe ? t->exe : "");
		cJSON_AddStringToObject(pr, "host", t->host ? t->host : "");
		cJSON_AddNumberToObject(pr, "start_time_ns", (double)t->proc.start_realtime_ns);
		cJSON_AddNumberToObject(pr, "mem_total", (double)t->proc.mem_total);
		cJSON_AddNumberToObject(pr, "mem_available", (double)t->proc.mem_available);
		cJSON_AddNumberToObject(pr, "cgroup_limit", (double)t->proc.cgroup_limit);
		cJSON_AddNumberToObject(pr, "rank", t->proc.rank);
		cJSON_AddNumberToObject(pr, "snapshots", (double)t->snapshots);
		cJSON_AddNumberToObject(pr, "steps", (double)t->steps);
		if (t->sample_rate) /* a sampled trace: values are estimates */
			cJSON_AddNumberToObject(pr, "sample_bytes", (double)t->sample_rate);
		cJSON_AddBoolToObject(pr, "ended", t->ended);
		cJSON_AddBoolToObject(pr, "truncated", t->truncated);
		cJSON *ch = cJSON_AddArrayToObject(pr, "children");
		for (size_t i = 0; i < t->nchildren; i++)
			cJSON_AddItemToArray(ch, cJSON_CreateNumber(t->children[i].pid));
		cJSON *nt = cJSON_AddArrayToObject(pr, "notices");
		for (size_t i = 0; i < t->nnotices; i++)
			cJSON_AddItemToArray(nt, cJSON_CreateString(t->notices[i]));
	}
	cJSON *series = cJSON_AddArrayToObject(o, "series");
	for (size_t i = 0; i < p->nseries; i++) {
		const struct mgr_series *s = &p->series[i];
		cJSON *so = cJSON_CreateObject();
		cJSON_AddStringToObject(so, "name", s->name);
		cJSON_AddNumberToObject(so, "points", (double)s->n);
		add_fit(so, &s->fit, s->ok, p->x_is_steps);
		cJSON_AddItemToArray(series, so);
	}
	if (t) {
		cJSON *pts = cJSON_AddArrayToObject(o, "points");
		for (size_t i = 0; i < t->npoints; i++) {
			const struct mgc_point *pt = &t->points[i];
			cJSON *po = cJSON_CreateObject();
			cJSON_AddNumberToObject(po, "time", pt->t);
			cJSON_AddNumberToObject(po, "step", (double)pt->step);
			cJSON_AddNumberToObject(po, "rss", (double)(pt->rss_anon + pt->rss_file + pt->rss_shmem));
			cJSON_AddNumberToObject(po, "rss_anon", (double)pt->rss_anon);
			cJSON_AddNumberToObject(po, "rss_file", (double)pt->rss_file);
			cJSON_AddNumberToObject(po, "rss_shmem", (double)pt->rss_shmem);
			cJSON_AddNumberToObject(po, "heap", (double)pt->heap);
			cJSON_AddNumberToObject(po, "heap_count", (double)pt->heap_count);
			cJSON_AddNumberToObject(po, "mmap", (double)pt->mmap);
			cJSON_AddNumberToObject(po, "free_kept", (double)pt->free_kept);
			if (p->device)
				cJSON_AddNumberToObject(po, "device", (double)pt->device);
			if (t->ndevcells) {
				cJSON *dc = cJSON_AddArrayToObject(po, "device_cells");
				for (size_t k = 0; k < t->ndevcells; k++)
					cJSON_AddItemToArray(dc, cJSON_CreateNumber((double)pt->dev[k]));
			}
			if (pt->label[0])
				cJSON_AddStringToObject(po, "label", pt->label);
			cJSON_AddItemToArray(pts, po);
		}
		cJSON_AddNumberToObject(o, "sites_total", (double)p->sites_total);
		if (t->ndevcells) {
			cJSON *cells = cJSON_AddArrayToObject(o, "device_cells");
			for (size_t k = 0; k < t->ndevcells; k++) {
				const struct mgc_devcell *d = &t->devcells[k];
				char name[32];
				cJSON *c = cJSON_CreateObject();
				cJSON_AddStringToObject(c, "name", mgr_devcell_name(d->kind, name, sizeof name));
				cJSON_AddStringToObject(c, "kind", mgc_kind_name(d->kind));
				add_device(c, d->kind);
				cJSON_AddNumberToObject(c, "bytes", (double)d->bytes);
				cJSON_AddNumberToObject(c, "count", (double)d->count);
				cJSON_AddNumberToObject(c, "peak", (double)d->peak);
				cJSON_AddItemToArray(cells, c);
			}
		}
	}
	cJSON *sites = cJSON_AddArrayToObject(o, "sites");
	for (size_t i = 0; t && i < p->nsites; i++) {
		const struct mgr_site *ms = &p->sites[i];
		const struct mgc_site *s = ms->s;
		cJSON *so = cJSON_CreateObject();
		cJSON_AddNumberToObject(so, "id", s->id);
		cJSON_AddStringToObject(so, "kind", mgc_kind_name(s->kind));
		if (ms->pyarena)
			cJSON_AddBoolToObject(so, "pymalloc_arena", 1);
		if (mgc_kind_is_cuda(s->kind)) {
			add_device(so, s->kind);
			if (s->cuda) {
				cJSON *cu = cJSON_AddObjectToObject(so, "cuda");
				char hex[32];
				cJSON_AddNumberToObject(cu, "device", s->cuda->device);
				cJSON_AddNumberToObject(cu, "stream", s->cuda->stream);
				cJSON_AddNumberToObject(cu, "memory_kind", s->cuda->mem_kind);
				cJSON_AddBoolToObject(cu, "async", (s->cuda->flags & MGC_DEVSITE_ASYNC) != 0);
				if (s->cuda->flags & MGC_DEVSITE_POOL) {
					snprintf(hex, sizeof hex, "0x%llx", (unsigned long long)s->cuda->pool_address);
					cJSON_AddStringToObject(cu, "pool", hex);
				} else {
					cJSON_AddNullToObject(cu, "pool");
				}
				cJSON_AddNumberToObject(cu, "records", (double)s->cuda->records);
				cJSON_AddBoolToObject(cu, "mismatch", (s->cuda->flags & MGC_DEVSITE_MISMATCH) != 0);
			}
		}
		cJSON_AddNumberToObject(so, "live_bytes", (double)s->live_bytes);
		if (t->sample_rate) /* sampled: estimates, +- this (two standard deviations) */
			cJSON_AddNumberToObject(so, "live_bytes_band", mgc_trace_band(t, s, (double)s->live_bytes));
		cJSON_AddNumberToObject(so, "live_count", (double)s->live_count);
		cJSON_AddNumberToObject(so, "allocs", (double)s->allocs);
		cJSON_AddNumberToObject(so, "alloc_bytes", (double)s->alloc_bytes);
		cJSON_AddNumberToObject(so, "frees", (double)s->frees);
		cJSON_AddNumberToObject(so, "peak_bytes", (double)s->peak_bytes);
		cJSON_AddItemToObject(so, "live_bytes_last_x", num(ms->live_end));
		if (t->sample_rate)
			cJSON_AddNumberToObject(so, "live_bytes_last_x_band", mgc_trace_band(t, s, ms->live_end));
		cJSON_AddItemToObject(so, "growth", num(ms->growth));
		cJSON_AddItemToObject(so, "growth_per_x", num(ms->classified ? ms->fit.slope : NAN));
		add_fit(so, &ms->fit, ms->classified, p->x_is_steps);
		cJSON *co = cJSON_AddArrayToObject(so, "cohorts");
		for (unsigned k = 0; k < MGC_COHORTS; k++) {
			if (!s->cohorts[k])
				continue;
			cJSON *c = cJSON_CreateObject();
			cJSON_AddNumberToObject(c, "first_step", (double)mgc_cohort_first_step(k));
			cJSON_AddNumberToObject(c, "live_bytes", (double)s->cohorts[k]);
			cJSON_AddItemToArray(co, c);
		}
		cJSON *fr = cJSON_AddArrayToObject(so, "frames");
		for (size_t j = 0; j < ms->nframes; j++) {
			const struct mgr_frame *f = &ms->frames[j];
			cJSON *fo = cJSON_CreateObject();
			if (f->python)
				cJSON_AddStringToObject(fo, "kind", "python");
			cJSON_AddStringToObject(fo, "function", f->function ? f->function : "??");
			if (f->file)
				cJSON_AddStringToObject(fo, "file", f->file);
			else
				cJSON_AddNullToObject(fo, "file");
			cJSON_AddNumberToObject(fo, "line", f->line);
			if (f->python)
				cJSON_AddNullToObject(fo, "module");
			else
				cJSON_AddStringToObject(fo, "module", f->module ? f->module : "??");
			if (f->inlined)
				cJSON_AddBoolToObject(fo, "inlined", 1);
			cJSON_AddItemToArray(fr, fo);
		}
		cJSON_AddItemToArray(sites, so);
	}
	return o;
}

int mgr_print_json(FILE *f, struct mgr_process *procs, size_t n)
{
	cJSON *root = cJSON_CreateObject();
	if (!root)
		return -ENOMEM;
	cJSON_AddNumberToObject(root, "mg_report_version", 1);
	cJSON *arr = cJSON_CreateArray();
	for (size_t i = 0; i < n; i++)
		cJSON_AddItemToArray(arr, process_json(&procs[i]));
	/* The first process's fields at top level: one-trace users read `verdict`, `series`, `sites`. */
	if (n > 0) {
		cJSON *first = cJSON_GetArrayItem(arr, 0);
		for (cJSON *it = first ? first->child : NULL; it; it = it->next)
			cJSON_AddItemToObject(root, it->string, cJSON_Duplicate(it, 1));
	}
	/* The run's verdict across processes: the worst one. */
	static const int rank[] = {[MGC_VERDICT_STABLE] = 0, [MGC_VERDICT_PLATEAU] = 1,
				   [MGC_VERDICT_RETENTION] = 2, [MGC_VERDICT_GROWING] = 3,
				   [MGC_VERDICT_LEAK] = 4};
	int worst = -1;
	for (size_t i = 0; i < n; i++)
		if (procs[i].have_verdict && (worst < 0 || rank[procs[i].verdict.verdict] > rank[worst]))
			worst = procs[i].verdict.verdict;
	cJSON_DeleteItemFromObject(root, "verdict");
	cJSON_AddStringToObject(root, "verdict", worst < 0 ? "stable" : mgc_verdict_name(worst));
	cJSON_AddItemToObject(root, "processes", arr);
	char *s = cJSON_Print(root);
	cJSON_Delete(root);
	if (!s)
		return -ENOMEM;
	fputs(s, f);
	fputc('\n', f);
	free(s);
	return 0;
}
