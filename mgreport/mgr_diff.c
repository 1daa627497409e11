/* SPDX-License-Identifier: MIT */
/* mgr_diff.c: see mgr_diff.h. Each run's sites are grouped by stack text (the sites of one run
 * with the same symbolized stack are one entry: their growth adds up, the worst verdict counts),
 * then matched: first by the whole text, then, for those left, by the text without line numbers
 * (a fix that adds lines above a site moves it). */
#define _GNU_SOURCE
#include "mgr_diff.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "mgc_escape.h"
#include "mgc_json.h"
#include "mgc_units.h"
#include "mgr_output.h"
#include "mgr_strtab.h"
#include "mgr_view.h"

/* One stack of one run: its sites summed. */
struct entry {
	double growth, live, slope; /* bytes over the axis, bytes at its end, per x (classified sites) */
	int verdict;                /* the worst of its classified sites; -1: none classified */
	size_t nsites;
	const struct mgr_pick *rep; /* the one that grew most: its stack names the entry */
	char *noline;               /* the stack's text without line numbers */
	long match;                 /* the other run's entry, or -1 */
	int exact;                  /* matched by the whole text (else without line numbers) */
};

struct side {
	const struct mgr_process *p;
	struct mgr_picked pk;
	struct mgr_strtab keys; /* stack text -> entry index */
	struct entry *e;
	size_t n;
};

/* A line of a site list: an entry of either run or both. */
struct row {
	const struct entry *b, *a;
};

struct rows {
	struct row *r;
	size_t n;
};

struct mgr_diff {
	struct side b, a;
	struct rows stopped, started, still, other;
};

static int rank(int verdict)
{
	static const int r[] = {[MGC_VERDICT_STABLE] = 0, [MGC_VERDICT_PLATEAU] = 1, [MGC_VERDICT_RETENTION] = 2,
				[MGC_VERDICT_GROWING] = 3, [MGC_VERDICT_LEAK] = 4};
	return verdict < 0 ? -1 : r[verdict];
}

/* The stack's text: per frame "function|file name|line|module name", innermost first. */
static char *stack_text(const struct mgc_stack *st, int lines)
{
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);
	if (!f)
		return NULL;
	for (size_t j = 0; j < st->n; j++) {
		const struct mgc_frame *fr = &st->frames[j];
		fprintf(f, "%s|%s|%d|%s\n", fr->function ? fr->function : "??", mgr_basename(fr->file),
			lines ? fr->line : 0, mgr_basename(fr->module));
	}
	if (fclose(f) != 0) {
		free(out);
		return NULL;
	}
	return out;
}

static int add_site(struct side *s, const struct mgr_pick *pk)
{
	const struct mgc_site_result *r = pk->r;
	char *key = stack_text(pk->stack, 1);
	long i = key ? mgr_strtab_add(&s->keys, key) : -1;
	free(key);
	if (i < 0)
		return -ENOMEM;
	struct entry *e = &s->e[i];
	if ((size_t)i == s->n) {
		s->n++;
		*e = (struct entry){.verdict = -1, .rep = pk, .match = -1, .noline = stack_text(pk->stack, 0)};
		if (!e->noline)
			return -ENOMEM;
	}
	e->growth += r->growth;
	e->live += r->live_end;
	e->nsites++;
	if (r->growth > e->rep->r->growth)
		e->rep = pk;
	if (r->classified) {
		e->slope += r->fit.slope;
		if (rank((int)r->fit.verdict) > rank(e->verdict))
			e->verdict = (int)r->fit.verdict;
	}
	return 0;
}

/* The run's growing sites (and every site the analysis ranked), grouped by stack. */
static int side_build(struct side *s, const struct mgr_process *p, struct mgc_symbolizer *sym)
{
	struct mgr_view v;
	s->p = p;
	int rc = mgr_view_open(&v, p, sym);
	if (rc < 0)
		return rc;
	struct mgr_weight w = {.mode = MGR_WEIGHT_GROWTH, .from = 0, .to = v.n ? v.n - 1 : 0};
	rc = mgr_view_pick(&v, &w, MGR_DIFF_SITES, 1, &s->pk);
	if (rc == 0) {
		s->e = calloc(s->pk.n + 1, sizeof *s->e);
		rc = s->e ? 0 : -ENOMEM;
	}
	for (size_t i = 0; rc == 0 && i < s->pk.n; i++)
		rc = add_site(s, &s->pk.sites[i]);
	return rc;
}

static void side_free(struct side *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->e[i].noline);
	free(s->e);
	mgr_strtab_free(&s->keys);
	mgr_picked_free(&s->pk);
}

static void pair(struct side *b, size_t i, struct side *a, size_t j, int exact)
{
	b->e[i].match = (long)j;
	a->e[j].match = (long)i;
	b->e[i].exact = a->e[j].exact = exact;
}

/* By the whole stack text, then what is left by the text without line numbers (each such text's
 * first unmatched entry). */
static int match(struct side *b, struct side *a)
{
	for (size_t i = 0; i < b->n; i++) {
		long j = mgr_strtab_find(&a->keys, b->keys.s[i]);
		if (j >= 0)
			pair(b, i, a, (size_t)j, 1);
	}
	struct mgr_strtab nl = {0};
	size_t *first = calloc(a->n + 1, sizeof *first);
	int rc = first ? 0 : -ENOMEM;
	for (size_t j = 0; rc == 0 && j < a->n; j++) {
		if (a->e[j].match >= 0)
			continue;
		size_t before = nl.n;
		long k = mgr_strtab_add(&nl, a->e[j].noline);
		if (k < 0)
			rc = -ENOMEM;
		else if (nl.n > before)
			first[k] = j;
	}
	for (size_t i = 0; rc == 0 && i < b->n; i++) {
		long k = b->e[i].match < 0 ? mgr_strtab_find(&nl, b->e[i].noline) : -1;
		if (k >= 0 && a->e[first[k]].match < 0)
			pair(b, i, a, first[k], 0);
	}
	free(first);
	mgr_strtab_free(&nl);
	return rc;
}

static int leaks(const struct entry *e)
{
	return e && e->verdict == MGC_VERDICT_LEAK;
}

static double row_growth(const struct row *r)
{
	return fmax(r->b ? r->b->growth : 0, r->a ? r->a->growth : 0);
}

static int cmp_row(const void *x, const void *y)
{
	double gx = row_growth(x), gy = row_growth(y);
	if (gx != gy)
		return gx < gy ? 1 : -1;
	const struct row *a = x, *b = y;
	const char *ka = a->b ? a->b->noline : a->a->noline, *kb = b->b ? b->b->noline : b->a->noline;
	return strcmp(ka, kb);
}

static int push(struct rows *rs, const struct entry *b, const struct entry *a)
{
	struct row *nr = realloc(rs->r, (rs->n + 1) * sizeof *nr);
	if (!nr)
		return -ENOMEM;
	rs->r = nr;
	rs->r[rs->n++] = (struct row){b, a};
	return 0;
}

/* Every entry of both runs in one list: stopped, started, still leaking, or the others. */
static int classify_rows(struct mgr_diff *d)
{
	int rc = 0;
	for (size_t i = 0; rc == 0 && i < d->b.n; i++) {
		const struct entry *b = &d->b.e[i], *a = b->match >= 0 ? &d->a.e[b->match] : NULL;
		struct rows *to = leaks(b) ? (leaks(a) ? &d->still : &d->stopped) : leaks(a) ? &d->started : &d->other;
		rc = push(to, b, a);
	}
	for (size_t j = 0; rc == 0 && j < d->a.n; j++) {
		const struct entry *a = &d->a.e[j];
		if (a->match < 0)
			rc = push(leaks(a) ? &d->started : &d->other, NULL, a);
	}
	struct rows *all[] = {&d->stopped, &d->started, &d->still, &d->other};
	for (size_t k = 0; k < 4; k++)
		if (all[k]->n)
			qsort(all[k]->r, all[k]->n, sizeof *all[k]->r, cmp_row);
	return rc;
}

int mgr_diff_build(const struct mgr_process *before, const struct mgr_process *after,
		   struct mgc_symbolizer *sym, struct mgr_diff **out)
{
	*out = NULL;
	if (!before->t || !after->t)
		return -EINVAL;
	struct mgr_diff *d = calloc(1, sizeof *d);
	if (!d)
		return -ENOMEM;
	int rc = side_build(&d->b, before, sym);
	if (rc == 0)
		rc = side_build(&d->a, after, sym);
	if (rc == 0)
		rc = match(&d->b, &d->a);
	if (rc == 0)
		rc = classify_rows(d);
	if (rc < 0) {
		mgr_diff_free(d);
		return rc;
	}
	*out = d;
	return 0;
}

void mgr_diff_free(struct mgr_diff *d)
{
	if (!d)
		return;
	side_free(&d->b);
	side_free(&d->a);
	free(d->stopped.r);
	free(d->started.r);
	free(d->still.r);
	free(d->other.r);
	free(d);
}

/* ---- output ---- */

static const char *per_x(const struct mgr_process *p)
{
	return p->a.x_is_steps ? "per step" : "per second";
}

/* The name of an entry: the first frame in the user's code, with its file and line. */
static const char *entry_where(const struct entry *e, char *buf, size_t cap)
{
	const struct mgc_frame *f = mgr_named_frame(e->rep->stack);
	char label[512], file[256];
	if (!f)
		snprintf(buf, cap, "[no stack]");
	else if (f->file && !f->python)
		snprintf(buf, cap, "%s %s:%d", mgr_frame_label(f, label, sizeof label),
			 mgc_esc(file, sizeof file, mgr_basename(f->file)), f->line);
	else
		snprintf(buf, cap, "%s", mgr_frame_label(f, label, sizeof label));
	return buf;
}

/* A row's name: its entry before, else after. */
static const char *row_where(const struct row *r, char *buf, size_t cap)
{
	return entry_where(r->b ? r->b : r->a, buf, cap);
}

/* Where the row is after, when it moved (matched without line numbers); NULL otherwise. */
static const char *row_moved(const struct row *r, char *buf, size_t cap)
{
	char w[512];
	if (!r->b || !r->a || r->b->exact)
		return NULL;
	entry_where(r->a, buf, cap);
	return strcmp(entry_where(r->b, w, sizeof w), buf) ? buf : NULL;
}

/* "leak, +1.24 MB per step, +472 MB over the run" for one run's entry. */
static const char *entry_brief(const struct mgr_process *p, const struct entry *e, char *buf, size_t cap)
{
	char a[32], b[32];
	if (!e) {
		snprintf(buf, cap, "did not grow (or too little to be among the sites compared)");
	} else if (e->verdict < 0) {
		snprintf(buf, cap, "not judged (outside the ranked sites), %s over the run",
			 mgc_human_bytes(e->growth, b, sizeof b));
	} else {
		snprintf(buf, cap, "%s, %s %s, %s over the run", mgc_verdict_name((enum mgc_verdict)e->verdict),
			 mgc_human_bytes(e->slope, a, sizeof a), per_x(p), mgc_human_bytes(e->growth, b, sizeof b));
	}
	return buf;
}

/* "leak, 1.62 MB per step", "plateau since step 81", "stable": one series' verdict. */
static const char *fit_brief(const struct mgr_process *p, int ok, const struct mgc_fit *f, char *buf, size_t cap)
{
	char a[32];
	if (!ok)
		snprintf(buf, cap, "not judged");
	else if (f->verdict == MGC_VERDICT_LEAK || f->verdict == MGC_VERDICT_GROWING)
		snprintf(buf, cap, "%s, %s %s", mgc_verdict_name(f->verdict), mgc_human_bytes(f->slope, a, sizeof a), per_x(p));
	else if (f->verdict == MGC_VERDICT_PLATEAU && isfinite(f->plateau_at))
		snprintf(buf, cap, "plateau since %s", mgc_human_x(f->plateau_at, p->a.x_is_steps, a, sizeof a));
	else
		snprintf(buf, cap, "%s", mgc_verdict_name(f->verdict));
	return buf;
}

/* The run's series of that name, or NULL when it lacks it. */
static const struct mgc_series *series_named(const struct mgr_process *p, const char *name)
{
	for (size_t i = 0; i < p->a.nseries; i++)
		if (p->a.series[i].present && strcmp(p->a.series[i].name, name) == 0)
			return &p->a.series[i];
	return NULL;
}

/* The answer in one sentence: what happened to the leaking sites, then to the process verdict. */
static void headline(const struct mgr_diff *d, char *buf, size_t cap)
{
	char w[512];
	const struct mgr_process *b = d->b.p, *a = d->a.p;
	size_t n;
	if (d->started.n)
		n = (size_t)snprintf(buf, cap, "A new leak: %zu site%s started leaking, the top one %s.", d->started.n,
				     d->started.n == 1 ? "" : "s", row_where(&d->started.r[0], w, sizeof w));
	else if (d->stopped.n && !d->still.n)
		n = (size_t)snprintf(buf, cap, "The fix worked: %zu site%s stopped leaking (the top one %s) and no "
				     "site leaks after.", d->stopped.n, d->stopped.n == 1 ? "" : "s",
				     row_where(&d->stopped.r[0], w, sizeof w));
	else if (d->stopped.n)
		n = (size_t)snprintf(buf, cap, "Partly: %zu site%s stopped leaking, %zu still leak%s (the top one %s).",
				     d->stopped.n, d->stopped.n == 1 ? "" : "s", d->still.n,
				     d->still.n == 1 ? "s" : "", row_where(&d->still.r[0], w, sizeof w));
	else if (d->still.n)
		n = (size_t)snprintf(buf, cap, "No change: %zu site%s leak%s in both runs (the top one %s).",
				     d->still.n, d->still.n == 1 ? "" : "s", d->still.n == 1 ? "s" : "",
				     row_where(&d->still.r[0], w, sizeof w));
	else
		n = (size_t)snprintf(buf, cap, "No site leaks in either run.");
	const char *vb = b->a.have_verdict ? mgc_verdict_name(b->a.verdict.verdict) : "stable";
	const char *va = a->a.have_verdict ? mgc_verdict_name(a->a.verdict.verdict) : "stable";
	if (n < cap && strcmp(vb, va) != 0)
		snprintf(buf + n, cap - n, " The process verdict went from %s to %s.", vb, va);
	else if (n < cap)
		snprintf(buf + n, cap - n, " The process verdict is %s in both runs.", vb);
}

static void text_rows(FILE *f, const struct mgr_diff *d, const char *title, const struct rows *rs, size_t top)
{
	char w[512], m[512], note[600], x[256], y[256];
	size_t shown = top && top < rs->n ? top : rs->n;
	fprintf(f, "%s (%zu)%s\n", title, rs->n, rs->n ? ":" : ": none");
	for (size_t i = 0; i < shown; i++) {
		const struct row *r = &rs->r[i];
		const char *moved = row_moved(r, m, sizeof m);
		note[0] = 0;
		if (r->b && r->a && !r->b->exact)
			snprintf(note, sizeof note, "  (matched without line numbers%s%s)", moved ? "; after: " : "",
				 moved ? moved : "");
		fprintf(f, "  %s%s\n    before: %s\n    after:  %s\n", row_where(r, w, sizeof w), note,
			entry_brief(d->b.p, r->b, x, sizeof x), entry_brief(d->a.p, r->a, y, sizeof y));
	}
	if (shown < rs->n)
		fprintf(f, "  ... %zu more (--top 0 lists them all)\n", rs->n - shown);
	fputc('\n', f);
}

static void text_header(FILE *f, const struct mgr_diff *d)
{
	const struct mgr_process *ps[2] = {d->b.p, d->a.p};
	static const char *const names[2] = {"before", "after "};
	char buf[2048], x[1024], y[1024];
	/* the files' names and the command lines are text from outside: escaped (mgc_escape.h) */
	fprintf(f, "mg diff: %s -> %s\n", mgc_esc(x, sizeof x, d->b.p->origin), mgc_esc(y, sizeof y, d->a.p->origin));
	for (int k = 0; k < 2; k++)
		fprintf(f, "  %s pid %d, %llu step markers: %s\n", names[k], ps[k]->t->proc.pid,
			(unsigned long long)ps[k]->t->steps, mgc_esc(buf, sizeof buf, ps[k]->t->cmdline ? ps[k]->t->cmdline : "?"));
	headline(d, buf, sizeof buf);
	fprintf(f, "\n%s\n\n", buf);
	for (int k = 0; k < 2; k++) {
		mgr_answer(ps[k], buf, sizeof buf);
		fprintf(f, "  %s %s\n", names[k], buf);
	}
	fputc('\n', f);
}

void mgr_diff_print_text(FILE *f, const struct mgr_diff *d, size_t top)
{
	char x[128], y[128];
	const struct mgr_process *b = d->b.p, *a = d->a.p;
	text_header(f, d);
	fprintf(f, "Series:\n  %-10s %-36s %s\n", "", "before", "after");
	fprintf(f, "  %-10s %-36s %s\n", "process", fit_brief(b, b->a.have_verdict, &b->a.verdict, x, sizeof x),
		fit_brief(a, a->a.have_verdict, &a->a.verdict, y, sizeof y));
	for (size_t i = 0; i < b->a.nseries; i++) {
		const struct mgc_series *sb = &b->a.series[i], *sa = series_named(a, sb->name);
		if (sb->present)
			fprintf(f, "  %-10s %-36s %s\n", sb->name, fit_brief(b, sb->classified, &sb->fit, x, sizeof x),
				sa ? fit_brief(a, sa->classified, &sa->fit, y, sizeof y) : "absent");
	}
	for (size_t i = 0; i < a->a.nseries; i++)
		if (a->a.series[i].present && !series_named(b, a->a.series[i].name))
			fprintf(f, "  %-10s %-36s %s\n", a->a.series[i].name, "absent",
				fit_brief(a, a->a.series[i].classified, &a->a.series[i].fit, y, sizeof y));
	fputc('\n', f);
	text_rows(f, d, "Sites that stopped leaking", &d->stopped, top);
	text_rows(f, d, "Sites that started leaking", &d->started, top);
	text_rows(f, d, "Sites that leak in both runs", &d->still, top);
	text_rows(f, d, "Other sites, by growth in either run", &d->other, top ? top : 0);
}

/* A verdict as report-json.md's FIT fields. */
static cJSON *fit_json(int ok, const struct mgc_fit *fit, int x_is_steps)
{
	cJSON *o = cJSON_CreateObject();
	mgc_json_fit(o, fit, ok, x_is_steps);
	return o;
}

static cJSON *entry_json(const struct entry *e)
{
	if (!e)
		return cJSON_CreateNull();
	cJSON *o = cJSON_CreateObject();
	cJSON_AddItemToObject(o, "verdict", e->verdict >= 0 ? cJSON_CreateString(mgc_verdict_name((enum mgc_verdict)e->verdict))
							    : cJSON_CreateNull());
	cJSON_AddItemToObject(o, "growth_per_x", mgc_json_number(e->verdict >= 0 ? e->slope : NAN));
	cJSON_AddItemToObject(o, "growth", mgc_json_number(e->growth));
	cJSON_AddItemToObject(o, "live_bytes_last_x", mgc_json_number(e->live));
	cJSON_AddNumberToObject(o, "sites", (double)e->nsites);
	return o;
}

static cJSON *row_json(const struct row *r)
{
	char w[512];
	const struct mgc_stack *ms = (r->b ? r->b : r->a)->rep->stack;
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "where", row_where(r, w, sizeof w));
	if (row_moved(r, w, sizeof w))
		cJSON_AddStringToObject(o, "where_after", w);
	cJSON_AddItemToObject(o, "matched", !(r->b && r->a) ? cJSON_CreateNull()
					    : cJSON_CreateString(r->b->exact ? "stack" : "stack without line numbers"));
	cJSON_AddItemToObject(o, "before", entry_json(r->b));
	cJSON_AddItemToObject(o, "after", entry_json(r->a));
	mgr_json_frames(o, ms);
	return o;
}

static cJSON *rows_json(const struct rows *rs, size_t top)
{
	cJSON *a = cJSON_CreateArray();
	for (size_t i = 0; i < rs->n && (!top || i < top); i++)
		cJSON_AddItemToArray(a, row_json(&rs->r[i]));
	return a;
}

static cJSON *run_json(const struct mgr_process *p)
{
	char buf[2048];
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "file", p->origin ? p->origin : "");
	cJSON_AddNumberToObject(o, "pid", p->t->proc.pid);
	cJSON_AddStringToObject(o, "command", p->t->cmdline ? p->t->cmdline : "");
	cJSON_AddStringToObject(o, "x_axis", p->a.x_is_steps ? "step" : "seconds");
	cJSON_AddStringToObject(o, "verdict", p->a.have_verdict ? mgc_verdict_name(p->a.verdict.verdict) : "stable");
	mgr_answer(p, buf, sizeof buf);
	cJSON_AddStringToObject(o, "answer", buf);
	return o;
}

static cJSON *series_json(const struct mgr_diff *d)
{
	const struct mgr_process *b = d->b.p, *a = d->a.p;
	cJSON *arr = cJSON_CreateArray();
	for (int pass = 0; pass < 2; pass++) {
		const struct mgr_process *p = pass ? a : b, *q = pass ? b : a;
		for (size_t i = 0; i < p->a.nseries; i++) {
			const struct mgc_series *s = &p->a.series[i], *o = series_named(q, s->name);
			if (!s->present || (pass && o))
				continue; /* not in this run, or listed in the first pass */
			const struct mgc_series *sb = pass ? o : s, *sa = pass ? s : o;
			cJSON *e = cJSON_CreateObject();
			cJSON_AddStringToObject(e, "name", s->name);
			cJSON_AddItemToObject(e, "before", sb ? fit_json(sb->classified, &sb->fit, b->a.x_is_steps) : cJSON_CreateNull());
			cJSON_AddItemToObject(e, "after", sa ? fit_json(sa->classified, &sa->fit, a->a.x_is_steps) : cJSON_CreateNull());
			cJSON_AddItemToArray(arr, e);
		}
	}
	return arr;
}

int mgr_diff_print_json(FILE *f, const struct mgr_diff *d, size_t top)
{
	char buf[2048];
	cJSON *root = cJSON_CreateObject();
	if (!root)
		return -ENOMEM;
	cJSON_AddNumberToObject(root, "mg_diff_version", 1);
	headline(d, buf, sizeof buf);
	cJSON_AddStringToObject(root, "answer", buf);
	cJSON_AddBoolToObject(root, "new_leak", mgr_diff_new_leak(d, 0));
	cJSON_AddItemToObject(root, "before", run_json(d->b.p));
	cJSON_AddItemToObject(root, "after", run_json(d->a.p));
	cJSON *proc = cJSON_AddObjectToObject(root, "process_verdict");
	cJSON_AddItemToObject(proc, "before", fit_json(d->b.p->a.have_verdict, &d->b.p->a.verdict, d->b.p->a.x_is_steps));
	cJSON_AddItemToObject(proc, "after", fit_json(d->a.p->a.have_verdict, &d->a.p->a.verdict, d->a.p->a.x_is_steps));
	cJSON_AddItemToObject(root, "series", series_json(d));
	cJSON *sites = cJSON_AddObjectToObject(root, "sites");
	cJSON_AddItemToObject(sites, "stopped", rows_json(&d->stopped, top));
	cJSON_AddItemToObject(sites, "started", rows_json(&d->started, top));
	cJSON_AddItemToObject(sites, "still", rows_json(&d->still, top));
	cJSON_AddItemToObject(sites, "other", rows_json(&d->other, top));
	return mgr_json_emit(f, root);
}

static int fails(int ok, enum mgc_verdict v, int growing)
{
	return ok && (v == MGC_VERDICT_LEAK || (growing && v == MGC_VERDICT_GROWING));
}

int mgr_diff_new_leak(const struct mgr_diff *d, int growing)
{
	const struct mgr_process *b = d->b.p, *a = d->a.p;
	if (d->started.n)
		return 1;
	if (fails(a->a.have_verdict, a->a.verdict.verdict, growing) &&
	    !fails(b->a.have_verdict, b->a.verdict.verdict, growing))
		return 1;
	for (size_t i = 0; i < a->a.nseries; i++) {
		const struct mgc_series *sa = &a->a.series[i], *sb = series_named(b, sa->name);
		if (sa->present && fails(sa->classified, sa->fit.verdict, growing) &&
		    !(sb && fails(sb->classified, sb->fit.verdict, growing)))
			return 1;
	}
	for (size_t i = 0; growing && i < d->other.n; i++) {
		const struct row *r = &d->other.r[i];
		if (r->a && r->a->verdict == MGC_VERDICT_GROWING &&
		    !(r->b && (r->b->verdict == MGC_VERDICT_GROWING || r->b->verdict == MGC_VERDICT_LEAK)))
			return 1;
	}
	return 0;
}
