/* SPDX-License-Identifier: MIT */
/* mgr_json.c: the JSON printer (cJSON). Field names are a contract (docs/report-json.md): add
 * fields, never rename or remove them (the one documented exception: a flat site past the first
 * MGR_JSON_FULL_SITES names its stack in a table instead of "frames"). Non-finite numbers are
 * written as null; the document is valid UTF-8 (mgc_json_clean: bytes that are not UTF-8 become
 * U+FFFD). The sites are written one at a time, never held as one tree (`--top 0` on a program
 * with 720k sites is gigabytes of JSON), with the bytes cJSON_Print would give for the whole
 * document. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mgc_escape.h"
#include "mgc_json.h"
#include "mgr_output.h"
#include "mgr_stacktree.h"
#include "mgr_strtab.h"

/* "device": the CUDA device ordinal, null when not known (pinned host memory has none). */
static void add_device(cJSON *o, unsigned kind)
{
	int dev = mgc_kind_device(kind);
	if (dev >= 0)
		cJSON_AddNumberToObject(o, "device", dev);
	else
		cJSON_AddNullToObject(o, "device");
}

/* "process": who ran, where, and what the trace holds. */
static void add_process(cJSON *o, const struct mgc_trace *t)
{
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
	cJSON_AddNumberToObject(pr, "format_version", t->version);
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

static void add_series(cJSON *o, const struct mgc_analysis *a)
{
	cJSON *series = cJSON_AddArrayToObject(o, "series");
	for (size_t i = 0; i < a->nseries; i++) {
		const struct mgc_series *s = &a->series[i];
		if (!s->present)
			continue;
		cJSON *so = cJSON_CreateObject();
		cJSON_AddStringToObject(so, "name", s->name);
		cJSON_AddNumberToObject(so, "points", (double)s->n);
		mgc_json_fit(so, &s->fit, s->classified, a->x_is_steps);
		cJSON_AddItemToArray(series, so);
	}
}

/* "points": every grid point of the trace (not only the axis). */
static void add_points(cJSON *o, const struct mgc_trace *t, int device)
{
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
		if (device)
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
}

static void add_devcells(cJSON *o, const struct mgc_trace *t)
{
	if (!t->ndevcells)
		return;
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

/* A CUDA site's "device" and what activity records said of it ("cuda"). */
static void add_cuda(cJSON *so, const struct mgc_site *s)
{
	add_device(so, s->kind);
	/* the stack made a CUDA allocation: under a caching allocator (PyTorch's, mgtrain's) it is the
	 * request that grew the cache, not what holds the memory */
	cJSON_AddStringToObject(so, "stack_role", "grew the cache");
	if (!s->cuda)
		return;
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

/* One frame as report-json.md gives it. */
static cJSON *frame_json(const struct mgc_frame *f)
{
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
	return fo;
}

void mgr_json_frames(cJSON *so, const struct mgc_stack *st)
{
	cJSON *fr = cJSON_AddArrayToObject(so, "frames");
	for (size_t j = 0; st && j < st->n; j++)
		cJSON_AddItemToArray(fr, frame_json(&st->frames[j]));
}

/* The sites listed first are written in full whatever they did: the head of the ranking, where
 * readers look and where a small report lies whole; past it, a site flat on the axis (the start-up
 * allocations that stayed, most of a big program's sites) has its stack in the process's table. */
#define MGR_JSON_FULL_SITES 1000

/* The stacks of a process's flat sites (report-json.md: "stack_frames", "stack_nodes"): each
 * distinct frame once, as a key that spells what frame_json writes, and a prefix tree of them,
 * outermost frame at the root; node k of the tree is "stack_nodes" entry k - 1. Built as the sites
 * are written. */
struct stack_tab {
	struct mgr_strtab frames;
	struct mgr_stacktree tree;
	char *key; /* frame_key's buffer */
	size_t keycap;
};

/* The key of frame f: "PYTHON INLINED LINE LEN LEN LEN|" and then the function, file and module as
 * frame_json writes them (a length of -1: null), so two frames have one key exactly when they
 * print alike. Cheaper than printing the frame (--top 0 keys millions). NULL without memory. */
static const char *frame_key(struct stack_tab *tab, const struct mgc_frame *f)
{
	const char *fn = f->function ? f->function : "??";
	const char *mod = f->python ? NULL : f->module ? f->module : "??";
	size_t lfn = strlen(fn), lf = f->file ? strlen(f->file) : 0, lm = mod ? strlen(mod) : 0;
	size_t need = 96 + lfn + lf + lm;
	if (need > tab->keycap) {
		char *k = realloc(tab->key, need);
		if (!k)
			return NULL;
		tab->key = k;
		tab->keycap = need;
	}
	int head = snprintf(tab->key, need, "%d %d %d %zu %ld %ld|", f->python != 0, f->inlined != 0,
			    f->line, lfn, f->file ? (long)lf : -1L, mod ? (long)lm : -1L);
	char *k = tab->key + head;
	memcpy(k, fn, lfn); /* the strings copied, not printed: most of the key's cost */
	memcpy(k + lfn, f->file ? f->file : "", lf);
	memcpy(k + lfn + lf, mod ? mod : "", lm);
	k[lfn + lf + lm] = '\0';
	return tab->key;
}

/* The frame a key spells, as frame_json writes it; NULL without memory. */
static cJSON *key_frame_json(const char *key)
{
	int py, inl, line, at = 0;
	size_t lfn;
	long lf, lm;
	if (sscanf(key, "%d %d %d %zu %ld %ld|%n", &py, &inl, &line, &lfn, &lf, &lm, &at) != 6 || !at)
		return NULL;
	const char *s = key + at;
	char *fn = strndup(s, lfn);
	char *file = lf >= 0 ? strndup(s + lfn, (size_t)lf) : NULL;
	char *mod = lm >= 0 ? strndup(s + lfn + (lf > 0 ? (size_t)lf : 0), (size_t)lm) : NULL;
	struct mgc_frame f = {.function = fn, .file = file, .line = line, .module = mod,
			      .inlined = inl, .python = py};
	cJSON *fo = fn && (lf < 0 || file) && (lm < 0 || mod) ? frame_json(&f) : NULL;
	free(fn);
	free(file);
	free(mod);
	return fo;
}

/* Node of stack st in the table (its innermost frame), 0 for an empty stack; -1 without memory. */
static long stack_node(struct stack_tab *tab, const struct mgc_stack *st)
{
	uint32_t node = 0;
	for (size_t j = st->n; j-- > 0;) {
		const char *k = frame_key(tab, &st->frames[j]);
		long key = k ? mgr_strtab_add(&tab->frames, k) : -1;
		if (key < 0 || (node = mgr_stacktree_child(&tab->tree, node, (uint32_t)key)) == 0)
			return -1;
	}
	return node;
}

/* A site flat on the axis: "constant_on_x" and "stack" (its node's index in "stack_nodes") in
 * place of "frames". 0 or -1 without memory. */
static int add_stack(cJSON *so, struct stack_tab *tab, const struct mgc_stack *st)
{
	long node = stack_node(tab, st);
	if (node < 0)
		return -1;
	cJSON_AddBoolToObject(so, "constant_on_x", 1);
	if (node)
		cJSON_AddNumberToObject(so, "stack", (double)(node - 1));
	else
		cJSON_AddNullToObject(so, "stack");
	return 0;
}

static cJSON *site_json(const struct mgr_process *p, size_t i, struct stack_tab *tab)
{
	const struct mgc_site_result *r = &p->a.sites[i];
	const struct mgc_site *s = mgr_site(p, i);
	const struct mgc_stack *st = mgr_shown_stack(p, i);
	if (!st)
		return NULL;
	cJSON *so = cJSON_CreateObject();
	cJSON_AddNumberToObject(so, "id", r->id);
	cJSON_AddStringToObject(so, "kind", mgc_kind_name(r->kind));
	if (p->shown[i].pyarena)
		cJSON_AddBoolToObject(so, "pymalloc_arena", 1);
	if (mgc_kind_is_cuda(r->kind))
		add_cuda(so, s);
	mgc_json_counters(so, &r->counters);
	cJSON_AddItemToObject(so, "live_bytes_last_x", mgc_json_number(r->live_end));
	if (p->t->sample_rate) { /* sampled: estimates, +- this (two standard deviations) */
		cJSON_AddNumberToObject(so, "live_bytes_band",
					mgc_site_band(p->t->sample_rate, s, (double)r->counters.live_bytes));
		cJSON_AddNumberToObject(so, "live_bytes_last_x_band", mgc_site_band(p->t->sample_rate, s, r->live_end));
	}
	cJSON_AddItemToObject(so, "growth", mgc_json_number(r->growth));
	cJSON_AddItemToObject(so, "growth_per_x", mgc_json_number(r->classified ? r->fit.slope : NAN));
	mgc_json_fit(so, &r->fit, r->classified, p->a.x_is_steps);
	cJSON *co = cJSON_AddArrayToObject(so, "cohorts");
	for (unsigned k = 0; k < MGC_COHORTS; k++) {
		if (!s->cohorts[k])
			continue;
		cJSON *c = cJSON_CreateObject();
		cJSON_AddNumberToObject(c, "first_step", (double)mgc_cohort_first_step(k));
		cJSON_AddNumberToObject(c, "live_bytes", (double)s->cohorts[k]);
		cJSON_AddItemToArray(co, c);
	}
	if (i < MGR_JSON_FULL_SITES || !mgc_analysis_site_flat(&p->a, s)) {
		mgr_json_frames(so, st);
	} else if (add_stack(so, tab, st) < 0) {
		cJSON_Delete(so);
		return NULL;
	}
	return so;
}

/* What stands for a part of process i written apart (its "sites", and its "stack_frames" and
 * "stack_nodes" that the sites fill) in the printed document until it is written: the key, then a
 * string naming i. No trace's text can forge it: inside a printed string a tab is "\t". */
enum { PART_SITES, PART_FRAMES, PART_NODES, PARTS };
static const char *const part_key[PARTS] = {"sites", "stack_frames", "stack_nodes"};
#define PART_MARK "\"@mg-part@"

static void add_mark(cJSON *o, int part, size_t index)
{
	char mark[sizeof PART_MARK + 24];
	snprintf(mark, sizeof mark, PART_MARK "%zu\"", index);
	cJSON_AddRawToObject(o, part_key[part], mark); /* written in its place: write_marked */
}

static cJSON *process_json(const struct mgr_process *p, size_t index)
{
	const struct mgc_analysis *a = &p->a;
	const struct mgc_trace *t = p->t;
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "file", p->origin ? p->origin : "");
	cJSON_AddStringToObject(o, "x_axis", a->x_is_steps ? "step" : "seconds");
	cJSON_AddStringToObject(o, "x_axis_note", a->axis_note);
	cJSON_AddItemToObject(o, "limit_bytes", mgc_json_number(a->limit > 0 ? a->limit : NAN));
	cJSON_AddStringToObject(o, "limit_source", a->limit_source ? a->limit_source : "");
	cJSON_AddStringToObject(o, "verdict", a->have_verdict ? mgc_verdict_name(a->verdict.verdict) : "stable");
	if (a->have_verdict)
		mgc_json_fit(cJSON_AddObjectToObject(o, "process_verdict"), &a->verdict, 1, a->x_is_steps);
	if (t)
		add_process(o, t);
	add_series(o, a);
	if (t) {
		add_points(o, t, mgc_analysis_device(a) != NULL);
		cJSON_AddNumberToObject(o, "sites_total", (double)a->nsites);
		const struct mgc_site *u = mgc_trace_unattributed(t);
		if (u)
			mgc_json_counters(cJSON_AddObjectToObject(o, "unattributed"), &u->counters);
		else
			cJSON_AddNullToObject(o, "unattributed");
		add_devcells(o, t);
	}
	add_mark(o, PART_SITES, index);
	if (t) {
		add_mark(o, PART_FRAMES, index);
		add_mark(o, PART_NODES, index);
	}
	return o;
}

/* Writes text (a cJSON_Print of a value) made valid UTF-8, `depth` tabs after each of its newlines:
 * the value as it would be printed that deep. */
static int write_indented(FILE *f, const char *text, int depth)
{
	char *s = mgc_json_clean(text);
	if (!s)
		return -ENOMEM;
	static const char tabs[] = "\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t";
	for (const char *c = s, *nl; *c; c = nl + 1) { /* a line at a time (putting bytes one by one
							 * was most of `--top 0`'s time) */
		nl = strchr(c, '\n');
		if (!nl) {
			fputs(c, f);
			break;
		}
		fwrite(c, 1, (size_t)(nl - c) + 1, f);
		for (int d = depth; d > 0; d -= (int)sizeof tabs - 1)
			fwrite(tabs, 1, d < (int)sizeof tabs - 1 ? (size_t)d : sizeof tabs - 1, f);
	}
	free(s);
	return 0;
}

/* The "sites" array of process p whose key is `depth` tabs deep, one site at a time. */
static int write_sites(FILE *f, const struct mgr_process *p, int depth, struct stack_tab *tab)
{
	fputc('[', f);
	for (size_t i = 0; p->t && i < p->nshown; i++) {
		cJSON *so = site_json(p, i, tab);
		char *raw = so ? cJSON_Print(so) : NULL;
		cJSON_Delete(so);
		int rc = raw ? write_indented(f, raw, depth + 1) : -ENOMEM;
		free(raw);
		if (rc < 0)
			return rc;
		if (i + 1 < p->nshown)
			fputs(", ", f);
	}
	fputc(']', f);
	return 0;
}

/* "stack_frames": each distinct frame of the table once, in its order. */
static int write_frames(FILE *f, const struct stack_tab *tab, int depth)
{
	cJSON *arr = cJSON_CreateArray();
	for (size_t k = 0; arr && k < tab->frames.n; k++) {
		cJSON *fo = key_frame_json(tab->frames.s[k]);
		if (!fo || !cJSON_AddItemToArray(arr, fo)) {
			cJSON_Delete(fo);
			cJSON_Delete(arr);
			return -ENOMEM;
		}
	}
	char *raw = arr ? cJSON_Print(arr) : NULL;
	cJSON_Delete(arr);
	int rc = raw ? write_indented(f, raw, depth) : -ENOMEM;
	free(raw);
	return rc;
}

/* "stack_nodes": [parent, frame] for each node of the tree but its root, a root's child's parent
 * null; printed as cJSON prints an array of arrays. */
static void write_nodes(FILE *f, const struct stack_tab *tab)
{
	fputc('[', f);
	for (size_t k = 1; k < tab->tree.n; k++) {
		const struct mgr_stacknode *nd = &tab->tree.nodes[k];
		if (nd->parent)
			fprintf(f, "%s[%u, %u]", k > 1 ? ", " : "", nd->parent - 1, nd->key);
		else
			fprintf(f, "%s[null, %u]", k > 1 ? ", " : "", nd->key);
	}
	fputc(']', f);
}

/* Writes part `part` of process p, its key `depth` tabs deep; the sites start the table afresh. */
static int write_part(FILE *f, const struct mgr_process *p, int part, int depth, struct stack_tab *tab)
{
	if (part == PART_FRAMES)
		return write_frames(f, tab, depth);
	if (part == PART_NODES) {
		write_nodes(f, tab);
		return 0;
	}
	mgr_strtab_free(&tab->frames);
	mgr_stacktree_free(&tab->tree);
	if (mgr_stacktree_init(&tab->tree) < 0)
		return -ENOMEM;
	return write_sites(f, p, depth, tab);
}

/* The first mark in text from `at` on, past its key: its part in *part. NULL when none is left. */
static const char *next_mark(const char *at, int *part)
{
	const char *first = NULL;
	for (int k = 0; k < PARTS; k++) {
		char pat[64];
		snprintf(pat, sizeof pat, "\"%s\":\t" PART_MARK, part_key[k]);
		const char *m = strstr(at, pat);
		if (m && (!first || m < first)) {
			first = m;
			*part = k;
		}
	}
	return first ? first + strlen(part_key[*part]) + 4 : NULL; /* past '"key":\t' */
}

/* Writes the document printed with a mark for each part written apart, the parts in their place. */
static int write_marked(FILE *f, const char *doc, const struct mgr_process *procs, size_t n)
{
	struct stack_tab tab = {0};
	const char *at = doc, *m;
	int part = 0, rc = 0;
	while (rc >= 0 && (m = next_mark(at, &part))) {
		const char *line = m;
		while (line > doc && line[-1] != '\n')
			line--;
		int depth = (int)strspn(line, "\t");
		size_t i = strtoul(m + strlen(PART_MARK), NULL, 10);
		char *head = strndup(at, (size_t)(m - at));
		rc = head ? write_indented(f, head, 0) : -ENOMEM;
		free(head);
		if (rc >= 0)
			rc = i < n ? write_part(f, &procs[i], part, depth, &tab) : -EINVAL;
		at = strchr(m + 1, '"') + 1; /* past the mark's closing quote */
	}
	mgr_strtab_free(&tab.frames);
	mgr_stacktree_free(&tab.tree);
	free(tab.key);
	if (rc < 0)
		return rc;
	rc = write_indented(f, at, 0);
	fputc('\n', f);
	return rc;
}

int mgr_print_json(FILE *f, struct mgr_process *procs, size_t n)
{
	cJSON *root = cJSON_CreateObject();
	if (!root)
		return -ENOMEM;
	cJSON_AddNumberToObject(root, "mg_report_version", 1);
	cJSON *arr = cJSON_CreateArray();
	for (size_t i = 0; i < n; i++)
		cJSON_AddItemToArray(arr, process_json(&procs[i], i));
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
		if (procs[i].a.have_verdict && (worst < 0 || rank[procs[i].a.verdict.verdict] > rank[worst]))
			worst = procs[i].a.verdict.verdict;
	cJSON_DeleteItemFromObject(root, "verdict");
	cJSON_AddStringToObject(root, "verdict", worst < 0 ? "stable" : mgc_verdict_name(worst));
	cJSON_AddItemToObject(root, "processes", arr);
	char *doc = cJSON_Print(root);
	cJSON_Delete(root);
	int rc = doc ? write_marked(f, doc, procs, n) : -ENOMEM;
	free(doc);
	return rc;
}

int mgr_json_emit(FILE *f, cJSON *root)
{
	char *raw = cJSON_Print(root);
	cJSON_Delete(root);
	char *s = raw ? mgc_json_clean(raw) : NULL; /* valid UTF-8 whatever the trace held */
	free(raw);
	if (!s)
		return -ENOMEM;
	fputs(s, f);
	fputc('\n', f);
	free(s);
	return 0;
}
