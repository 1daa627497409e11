/* SPDX-License-Identifier: MIT */
/* mgr_html_data.c: see mgr_html_data.h. Everything here is ordered by the analysis or by site id
 * and numbers are written by cJSON's fixed formats, so the same trace gives the same bytes. */
#define _GNU_SOURCE
#include "mgr_html_data.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mgc_escape.h"
#include "mgc_json.h"
#include "mgr_output.h"
#include "mgr_strtab.h"
#include "mgr_view.h"

/* What one process's data is built with. */
struct build {
	struct mgr_strtab strings; /* function names, files, modules */
	struct mgr_strtab frames;  /* "label,fn,file,line,module,flags" keys, in the order of `frame_rows` */
	cJSON *frame_rows;     /* [label, fn, file (-1: none), line, module, flags] per frame, strings
				* as indices; flags: 1 inlined, 2 Python */
	size_t *pos;           /* the slider's axis points */
	size_t npos;
};

/* ---- numbers ---- */


/* Bytes as whole numbers: the page shows KiB at best, and integers are short and exact. */
static cJSON *bytes(double v)
{
	return isfinite(v) ? cJSON_CreateNumber((double)llround(v)) : cJSON_CreateNull();
}

size_t mgr_downsample(const double *x, const double *y, size_t n, size_t max, double *ox, double *lo,
		      double *hi)
{
	if (n <= max) {
		for (size_t i = 0; i < n; i++) {
			ox[i] = x[i];
			lo[i] = hi[i] = y[i];
		}
		return n;
	}
	for (size_t b = 0; b < max; b++) {
		size_t i0 = b * n / max, i1 = (b + 1) * n / max;
		ox[b] = x[i0];
		lo[b] = hi[b] = y[i0];
		for (size_t i = i0 + 1; i < i1; i++) {
			lo[b] = fmin(lo[b], y[i]);
			hi[b] = fmax(hi[b], y[i]);
		}
	}
	return max;
}

const char *mgr_series_title(const char *name)
{
	static const char *const titles[][2] = {{"rss", "RSS"}, {"heap", "live heap"},
						{"mmap", "live anonymous mmap"},
						{"free_kept", "free, kept by malloc"},
						{"device", "GPU memory (CUDA)"}};
	for (size_t i = 0; i < sizeof titles / sizeof *titles; i++)
		if (strcmp(name, titles[i][0]) == 0)
			return titles[i][1];
	return name;
}

/* One chart series: its verdict and its points (y, or lo and hi once downsampled). */
static cJSON *series_json(const struct mgc_series *s, int x_is_steps, cJSON **xs)
{
	cJSON *o = cJSON_CreateObject();
	double *ox = calloc(s->n + 1, sizeof *ox), *lo = calloc(s->n + 1, sizeof *lo),
	       *hi = calloc(s->n + 1, sizeof *hi);
	if (!o || !ox || !lo || !hi)
		goto out;
	size_t m = mgr_downsample(s->x, s->y, s->n, MGR_HTML_POINTS, ox, lo, hi);
	cJSON_AddStringToObject(o, "name", s->name);
	cJSON_AddStringToObject(o, "title", mgr_series_title(s->name));
	if (s->classified)
		mgc_json_fit(o, &s->fit, 1, x_is_steps);
	if (!*xs) {
		*xs = cJSON_CreateArray();
		for (size_t i = 0; i < m; i++)
			cJSON_AddItemToArray(*xs, mgc_json_number(ox[i]));
	}
	cJSON *a = cJSON_AddArrayToObject(o, m < s->n ? "lo" : "y");
	for (size_t i = 0; i < m; i++)
		cJSON_AddItemToArray(a, bytes(lo[i]));
	if (m < s->n) {
		cJSON *b = cJSON_AddArrayToObject(o, "hi");
		for (size_t i = 0; i < m; i++)
			cJSON_AddItemToArray(b, bytes(hi[i]));
	}
out:
	free(ox);
	free(lo);
	free(hi);
	return o;
}

/* ---- frames and sites ---- */

static long frame_id(struct build *b, const struct mgc_frame *f)
{
	char label[1024];
	long lab = mgr_strtab_add(&b->strings, mgr_frame_label(f, label, sizeof label));
	long fn = mgr_strtab_add(&b->strings, f->function ? f->function : "??");
	long file = f->file ? mgr_strtab_add(&b->strings, f->file) : -1;
	long mod = mgr_strtab_add(&b->strings, f->module ? f->module : "??");
	int flags = (f->inlined ? 1 : 0) | (f->python ? 2 : 0);
	char key[128];
	if (lab < 0 || fn < 0 || mod < 0 || (f->file && file < 0))
		return -1;
	snprintf(key, sizeof key, "%ld,%ld,%ld,%d,%ld,%d", lab, fn, file, f->line, mod, flags);
	size_t before = b->frames.n;
	long id = mgr_strtab_add(&b->frames, key);
	if (id >= 0 && b->frames.n > before) {
		int row[6] = {(int)lab, (int)fn, (int)file, f->line, (int)mod, flags};
		cJSON_AddItemToArray(b->frame_rows, cJSON_CreateIntArray(row, 6));
	}
	return id;
}

/* A site's live bytes at the slider's points: one number when they are all equal. */
static cJSON *site_series(const struct mgr_view *v, const struct build *b, const struct mgc_site *s)
{
	double first = b->npos ? mgc_analysis_site_at(v->a, s, b->pos[0]) : 0;
	int same = 1;
	for (size_t k = 1; k < b->npos && same; k++)
		same = mgc_analysis_site_at(v->a, s, b->pos[k]) == first;
	if (same)
		return bytes(first);
	cJSON *a = cJSON_CreateArray();
	for (size_t k = 0; k < b->npos; k++)
		cJSON_AddItemToArray(a, bytes(mgc_analysis_site_at(v->a, s, b->pos[k])));
	return a;
}

/* One site: the table's columns, the verdict when judged, the exit counters, the stack (frame
 * ids, innermost first) and the live bytes at the slider's points. */
static cJSON *site_json(const struct mgr_view *v, struct build *b, const struct mgr_pick *pk)
{
	const struct mgc_site_result *r = pk->r;
	const struct mgc_stack *st = pk->stack;
	cJSON *o = cJSON_CreateObject();
	cJSON_AddNumberToObject(o, "id", r->id);
	cJSON_AddStringToObject(o, "kind", mgc_kind_name(r->kind));
	cJSON_AddBoolToObject(o, "table", pk->shown);
	if (pk->pyarena)
		cJSON_AddBoolToObject(o, "pymalloc_arena", 1);
	if (r->classified)
		mgc_json_fit(o, &r->fit, 1, v->a->x_is_steps);
	mgc_json_counters(o, &r->counters);
	cJSON_AddItemToObject(o, "live_bytes_last_x", bytes(r->live_end));
	cJSON_AddItemToObject(o, "growth", bytes(r->growth));
	cJSON_AddNumberToObject(o, "user", st->n ? (double)(mgr_named_frame(st) - st->frames) : -1);
	cJSON *sa = cJSON_AddArrayToObject(o, "stack");
	for (size_t j = 0; j < st->n; j++)
		cJSON_AddItemToArray(sa, cJSON_CreateNumber((double)frame_id(b, &st->frames[j])));
	cJSON_AddItemToObject(o, "s", site_series(v, b, pk->s));
	return o;
}

/* The slider's points: up to MGR_HTML_SLIDER of the axis, evenly spread, first and last included. */
static int slider_points(const struct mgr_view *v, struct build *b)
{
	b->npos = v->n < MGR_HTML_SLIDER ? v->n : MGR_HTML_SLIDER;
	b->pos = calloc(b->npos ? b->npos : 1, sizeof *b->pos);
	if (!b->pos)
		return -ENOMEM;
	for (size_t k = 0; k < b->npos; k++)
		b->pos[k] = b->npos == 1 ? 0 : (size_t)llround((double)k * (double)(v->n - 1) / (double)(b->npos - 1));
	return 0;
}

/* ---- writing ---- */

/* Writes cJSON's compact text of o (deleted here) into the data block, less `skip` bytes at its
 * start and `drop` at its end (a brace, where more members follow): valid UTF-8 whatever the
 * trace held, every '<' as \u003c. 0 or -ENOMEM. */
static int put(FILE *f, cJSON *o, size_t skip, size_t drop)
{
	char *raw = o ? cJSON_PrintUnformatted(o) : NULL;
	cJSON_Delete(o);
	char *s = raw ? mgc_json_clean(raw) : NULL;
	free(raw);
	if (!s)
		return -ENOMEM;
	size_t n = strlen(s);
	for (char *q = s + skip, *end = s + (n > skip + drop ? n - drop : skip), *lt; q < end; q = lt + 1) {
		lt = memchr(q, '<', (size_t)(end - q));
		if (!lt) {
			fwrite(q, 1, (size_t)(end - q), f);
			break;
		}
		fwrite(q, 1, (size_t)(lt - q), f);
		fputs("\\u003c", f);
	}
	free(s);
	return 0;
}

/* The sites of the page, one at a time: the shown ones (the table) and the heaviest at their
 * peak over the run (the flame graph). Adds to `sum` (per slider point) their live bytes. */
static int write_sites(FILE *f, const struct mgr_view *v, struct build *b, const struct mgr_picked *pk,
		       double *sum)
{
	int rc = 0;
	fputs(",\"sites\":[", f);
	for (size_t i = 0; i < pk->n && rc == 0; i++) {
		struct mgr_pick one;
		rc = mgr_pick_get(v, pk, i, &one);
		if (rc == 0 && i)
			fputc(',', f);
		if (rc == 0)
			rc = put(f, site_json(v, b, &one), 0, 0);
		for (size_t k = 0; rc == 0 && k < b->npos; k++)
			sum[k] += mgc_analysis_site_at(v->a, one.s, b->pos[k]);
		mgr_pick_put(&one);
	}
	fputc(']', f);
	return rc;
}

/* What follows the sites: "other" is the tracked memory they leave out, per slider point; then
 * the strings and frames their stacks named. */
static cJSON *after_sites(const struct mgr_view *v, struct build *b, const struct mgr_picked *pk,
			  const double *sum)
{
	cJSON *o = cJSON_CreateObject();
	cJSON *px = cJSON_AddArrayToObject(o, "slider_x");
	cJSON *other = cJSON_AddArrayToObject(o, "other");
	for (size_t k = 0; k < b->npos; k++) {
		cJSON_AddItemToArray(px, mgc_json_number(v->x[b->pos[k]]));
		cJSON_AddItemToArray(other, bytes(fmax(0, mgr_view_tracked(v, b->pos[k]) - sum[k])));
	}
	cJSON_AddNumberToObject(o, "other_sites", (double)(v->a->nsites > pk->n ? v->a->nsites - pk->n : 0));
	cJSON_AddNumberToObject(o, "sites_total", (double)v->a->nsites);
	cJSON *strings = cJSON_AddArrayToObject(o, "strings");
	for (size_t i = 0; i < b->strings.n; i++)
		cJSON_AddItemToArray(strings, cJSON_CreateString(b->strings.s[i]));
	cJSON_AddItemToObject(o, "frames", b->frame_rows);
	b->frame_rows = NULL;
	return o;
}

/* ---- the process ---- */

/* Phase changes on the axis ("validation" at step 50, "train" at 51), with the phase in effect at
 * the first point; repeated labels are dropped. */
static void add_phases(cJSON *o, const struct mgr_process *p)
{
	cJSON *a = cJSON_AddArrayToObject(o, "phases");
	const struct mgc_trace *t = p->t;
	const struct mgc_series *m = mgc_analysis_main(&p->a);
	if (!t || !m || !m->n)
		return;
	double x0 = m->x[0], x1 = m->x[m->n - 1];
	const char *prev = NULL;
	double prev_x = x0;
	for (size_t i = 0; i < t->nlabels; i++) {
		const struct mgc_label *l = &t->labels[i];
		double x = p->a.x_is_steps ? (double)l->step : l->t;
		if (x > x1)
			break;
		if (x <= x0) {
			prev = l->text;
			continue;
		}
		if (!prev || strcmp(prev, l->text) != 0) {
			if (prev) {
				cJSON *ph = cJSON_CreateObject();
				cJSON_AddNumberToObject(ph, "x", prev_x);
				cJSON_AddStringToObject(ph, "label", prev);
				cJSON_AddItemToArray(a, ph);
			}
			prev = l->text;
			prev_x = x;
		}
	}
	if (prev) {
		cJSON *ph = cJSON_CreateObject();
		cJSON_AddNumberToObject(ph, "x", prev_x);
		cJSON_AddStringToObject(ph, "label", prev);
		cJSON_AddItemToArray(a, ph);
	}
}

static void add_identity(cJSON *o, const struct mgr_process *p)
{
	const struct mgc_trace *t = p->t;
	char buf[2048];
	cJSON_AddStringToObject(o, "label", t ? mgr_process_label(p, buf, sizeof buf) : mgr_basename(p->origin));
	cJSON_AddStringToObject(o, "file", p->origin ? p->origin : "");
	cJSON_AddNumberToObject(o, "pid", t ? t->proc.pid : 0);
	cJSON_AddNumberToObject(o, "ppid", t ? t->proc.ppid : 0);
	cJSON_AddStringToObject(o, "command", t && t->cmdline ? t->cmdline : "");
	cJSON_AddStringToObject(o, "x_axis", p->a.x_is_steps ? "step" : "seconds");
	cJSON_AddItemToObject(o, "limit", bytes(p->a.limit > 0 ? p->a.limit : NAN));
	cJSON_AddStringToObject(o, "verdict", p->a.have_verdict ? mgc_verdict_name(p->a.verdict.verdict) : "stable");
	mgr_answer(p, buf, sizeof buf);
	cJSON_AddStringToObject(o, "answer", buf);
	mgr_device_answer(p, buf, sizeof buf);
	cJSON_AddStringToObject(o, "device_answer", buf);
	if (p->a.have_verdict)
		mgc_json_fit(cJSON_AddObjectToObject(o, "process_fit"), &p->a.verdict, 1, p->a.x_is_steps);
}

/* Everything before the sites: who, the series, the axis, the phases. */
static cJSON *process_head(const struct mgr_process *p)
{
	cJSON *o = cJSON_CreateObject();
	add_identity(o, p);
	cJSON *xs = NULL;
	cJSON *series = cJSON_AddArrayToObject(o, "series");
	for (size_t i = 0; i < p->a.nseries; i++)
		if (p->a.series[i].present)
			cJSON_AddItemToArray(series, series_json(&p->a.series[i], p->a.x_is_steps, &xs));
	cJSON_AddItemToObject(o, "x", xs ? xs : cJSON_CreateArray());
	add_phases(o, p);
	return o;
}

/* One process's object: its head without the closing brace, the sites as they are built, then
 * what follows them. */
static int write_process(FILE *f, const struct mgr_process *p, struct mgc_symbolizer *sym)
{
	struct build b;
	struct mgr_view v;
	struct mgr_picked pk;
	struct mgr_weight w = {.mode = MGR_WEIGHT_PEAK};
	double *sum = NULL;
	memset(&b, 0, sizeof b);
	memset(&pk, 0, sizeof pk);
	if (!p->t)
		return put(f, process_head(p), 0, 0);
	b.frame_rows = cJSON_CreateArray();
	int rc = b.frame_rows ? mgr_view_open(&v, p, sym) : -ENOMEM;
	if (rc == 0)
		rc = slider_points(&v, &b);
	if (rc == 0)
		rc = mgr_view_choose(&v, &w, MGR_HTML_FLAME_SITES, 1, &pk);
	if (rc == 0)
		rc = (sum = calloc(b.npos + 1, sizeof *sum)) ? 0 : -ENOMEM;
	if (rc == 0)
		rc = put(f, process_head(p), 0, 1);
	if (rc == 0)
		rc = write_sites(f, &v, &b, &pk, sum);
	if (rc == 0) {
		fputc(',', f);
		rc = put(f, after_sites(&v, &b, &pk, sum), 1, 0);
	}
	cJSON_Delete(b.frame_rows);
	mgr_strtab_free(&b.strings);
	mgr_strtab_free(&b.frames);
	mgr_picked_free(&pk);
	free(b.pos);
	free(sum);
	return rc;
}

int mgr_html_data_write(FILE *f, const struct mgr_process *procs, size_t n, struct mgc_symbolizer *sym)
{
	cJSON *root = cJSON_CreateObject();
	if (!root)
		return -ENOMEM;
	cJSON_AddNumberToObject(root, "mg_html_version", 1);
	cJSON_AddArrayToObject(root, "processes");
	int rc = put(f, root, 0, 2); /* open: less its "]}" */
	for (size_t i = 0; i < n && rc == 0; i++) {
		if (i)
			fputc(',', f);
		rc = write_process(f, &procs[i], sym);
	}
	fputs("]}", f);
	return rc;
}
