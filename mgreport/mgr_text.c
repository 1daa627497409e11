/* SPDX-License-Identifier: MIT */
/* mgr_text.c: the terminal report: the answer in one paragraph first, then the memory breakdown,
 * a per-step table at useful points, and the top sites with their verdicts and stacks. Colour
 * only when asked (mgreport asks on a tty). Text from the traced program (its command line, host,
 * symbols, paths) never reaches the terminal raw: mgc_escape.h. */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mgc_escape.h"
#include "mgc_units.h"
#include "mgr_output.h"

static const char *mgr_hex(uint64_t v, char *buf, size_t cap)
{
	snprintf(buf, cap, "0x%llx", (unsigned long long)v);
	return buf;
}

/* "  device, GPU 0", "  pinned host", "  pool reserved, GPU 1": a DEVMEM cell in the breakdown. */
static const char *devcell_label(unsigned kind, char *buf, size_t cap)
{
	int dev = mgc_kind_device(kind);
	unsigned mem = mgc_kind_mem(kind);
	const char *what = mem == MGC_KIND_PINNED ? "pinned host" : mem == MGC_KIND_POOL ? "pool reserved"
							    : mgc_kind_name(kind);
	if (dev >= 0)
		snprintf(buf, cap, "  %s, GPU %d", what, dev);
	else
		snprintf(buf, cap, "  %s", what);
	return buf;
}

/* "[device GPU 0] ", "[pinned] ", "" for host sites: the kind tag of a site's line. */
static const char *cuda_tag(const struct mgc_site *s, char *buf, size_t cap)
{
	if (!mgc_kind_is_cuda(s->kind))
		return "";
	int dev = mgc_kind_device(s->kind);
	if (dev < 0 && s->cuda && mgc_kind_mem(s->kind) != MGC_KIND_PINNED)
		dev = (int)s->cuda->device; /* the callback did not know it; the records did */
	if (dev >= 0)
		snprintf(buf, cap, "[%s GPU %d] ", mgc_kind_name(s->kind), dev);
	else
		snprintf(buf, cap, "[%s] ", mgc_kind_name(s->kind));
	return buf;
}

/* The x unit in a sentence ("per step", "per second") and after a slash ("/step", "/s"). */
static const char *per_x(const struct mgr_process *p)
{
	return p->a.x_is_steps ? "per step" : "per second";
}

static const char *slash_x(const struct mgr_process *p)
{
	return p->a.x_is_steps ? "/step" : "/s";
}

static const char *color_of(enum mgc_verdict v)
{
	switch (v) {
	case MGC_VERDICT_LEAK:
		return "\033[1;31m";
	case MGC_VERDICT_GROWING:
		return "\033[1;33m";
	case MGC_VERDICT_RETENTION:
		return "\033[1;35m";
	case MGC_VERDICT_PLATEAU:
		return "\033[1;36m";
	default:
		return "\033[1;32m";
	}
}

/* "<prefix><verdict>: <what> ..." for series m with fit f, the low-confidence note included;
 * returns the length written. Retention is the caller's (it needs the process's live bytes). */
static size_t verdict_sentence(const struct mgr_process *p, const char *prefix, const char *what,
			       const struct mgc_series *m, const struct mgc_fit *f, char *out, size_t cap)
{
	char a[32], b[32], c[32], d[32], xa[32], xb[32];
	double first = m->y[0], last = m->y[m->n - 1];
	mgc_human_x(m->x[0], p->a.x_is_steps, xa, sizeof xa);
	mgc_human_x(m->x[m->n - 1], p->a.x_is_steps, xb, sizeof xb);
	size_t n = 0;
	switch (f->verdict) {
	case MGC_VERDICT_RETENTION:
	case MGC_VERDICT_STABLE:
		n = (size_t)snprintf(out, cap, "%sstable: %s stayed at %s (±%s) from %s to %s", prefix, what,
				     mgc_human_bytes(f->level, a, sizeof a), mgc_human_bytes(f->noise, b, sizeof b), xa, xb);
		break;
	case MGC_VERDICT_PLATEAU:
		mgc_human_x(f->plateau_at, p->a.x_is_steps, xb, sizeof xb);
		n = (size_t)snprintf(out, cap, "%swarmup: %s grew %s over %s to %s, flat at %s since (±%s)",
				     prefix, what, mgc_human_bytes(f->plateau_level - first, a, sizeof a), xa, xb,
				     mgc_human_bytes(f->plateau_level, b, sizeof b), mgc_human_bytes(f->noise, c, sizeof c));
		break;
	case MGC_VERDICT_LEAK:
		n = (size_t)snprintf(out, cap, "%sleak: %s grows %s %s without levelling off (%s at %s)",
				     prefix, what, mgc_human_bytes(f->slope, a, sizeof a), per_x(p),
				     mgc_human_bytes(last, b, sizeof b), xb);
		break;
	case MGC_VERDICT_GROWING:
		n = (size_t)snprintf(out, cap,
				     "%sstill growing: %s rose %s %s up to %s (%s); the evidence cannot yet "
				     "tell a warmup from a leak",
				     prefix, what, mgc_human_bytes(f->slope, a, sizeof a), per_x(p), xb,
				     mgc_human_bytes(last, b, sizeof b));
		if (isfinite(f->decidable_at) && n < cap) {
			mgc_human_x(f->decidable_at, p->a.x_is_steps, d, sizeof d);
			n += (size_t)snprintf(out + n, cap - n, " (decidable by about %s)", d);
		}
		break;
	}
	if (n < cap && f->confidence < 0.8)
		n += (size_t)snprintf(out + n, cap - n, " (low confidence, %.2f: %zu points)", f->confidence,
				      m->n);
	return n < cap ? n : cap;
}

/* The first shown site that leaks, device (CUDA) sites or host ones; SIZE_MAX when none. */
static size_t top_leak(const struct mgr_process *p, int device)
{
	for (size_t i = 0; i < p->nshown; i++) {
		const struct mgc_site_result *r = &p->a.sites[i];
		if (r->classified && r->fit.verdict == MGC_VERDICT_LEAK && !mgc_kind_is_cuda(r->kind) == !device)
			return i;
	}
	return SIZE_MAX;
}

/* "; N sites are leaking, the top one F (+X per step)." or "; no site is leaking." */
static void leaking_sites(const struct mgr_process *p, int device, char *out, size_t cap)
{
	char a[32], name[512], shown[MGC_ESCAPED_MAX(sizeof name)];
	size_t top = top_leak(p, device);
	size_t leaking = device ? p->a.leaking_device_sites : p->a.leaking_sites - p->a.leaking_device_sites;
	const char *what = device ? "device site" : mgc_analysis_device(&p->a) ? "host site" : "site";
	if (top == SIZE_MAX)
		snprintf(out, cap, "; no %s is leaking.", what);
	else if (device) /* a CUDA call's stack grew the allocator's cache; what holds it is elsewhere */
		snprintf(out, cap, "; %zu %s%s leaking, the top one grew the cache: %s (+%s %s).", leaking,
			 what, leaking == 1 ? " is" : "s are",
			 mgc_esc(shown, sizeof shown, mgr_site_name(p, top, name, sizeof name)),
			 mgc_human_bytes(p->a.sites[top].fit.slope, a, sizeof a), per_x(p));
	else
		snprintf(out, cap, "; %zu %s%s leaking, the top one %s (+%s %s).", leaking, what,
			 leaking == 1 ? " is" : "s are",
			 mgc_esc(shown, sizeof shown, mgr_site_name(p, top, name, sizeof name)),
			 mgc_human_bytes(p->a.sites[top].fit.slope, a, sizeof a), per_x(p));
}

/* The answer in plain words, with the numbers behind it. */
static void summary(const struct mgr_process *p, char *out, size_t cap)
{
	char a[32], b[32], c[32];
	const struct mgc_fit *f = &p->a.verdict;
	const struct mgc_series *m = mgc_analysis_main(&p->a);
	if (!p->a.have_verdict || !m || m->n == 0) {
		snprintf(out, cap, "no verdict: the trace holds %zu point%s on its x axis, and a verdict needs %d.",
			 m ? m->n : 0, m && m->n == 1 ? "" : "s", MGC_MIN_POINTS);
		return;
	}
	char name[MGC_ESCAPED_MAX(64)];
	const char *series = p->t ? "RSS" : mgc_escape(name, sizeof name, m->name, strlen(m->name));
	size_t n;
	if (f->verdict == MGC_VERDICT_RETENTION) {
		const struct mgc_series *heap = &p->a.series[MGC_S_HEAP];
		n = (size_t)snprintf(out, cap,
				     "retention: %s grew %s while live allocations stayed near %s: freed "
				     "memory kept by the allocator, not a leak in the program",
				     series, mgc_human_bytes(m->y[m->n - 1] - m->y[0], a, sizeof a),
				     mgc_human_bytes(heap->y[heap->n - 1], b, sizeof b));
		if (n < cap && f->confidence < 0.8)
			n += (size_t)snprintf(out + n, cap - n, " (low confidence, %.2f: %zu points)",
					      f->confidence, m->n);
	} else {
		n = verdict_sentence(p, "", series, m, f, out, cap);
	}
	if (n < cap && (f->verdict == MGC_VERDICT_LEAK || f->verdict == MGC_VERDICT_GROWING) &&
	    isfinite(f->x_to_oom) && p->a.limit > 0)
		n += (size_t)snprintf(out + n, cap - n, "; projected to reach the %s limit in %.0f %s",
				      mgc_human_bytes(p->a.limit, c, sizeof c), f->x_to_oom,
				      p->a.x_is_steps ? "steps" : "seconds");
	if (n < cap && p->t)
		leaking_sites(p, 0, out + n, cap - n);
	else if (n < cap)
		snprintf(out + n, cap - n, ".");
}

static void print_fit_line(FILE *f, const struct mgr_process *p, const struct mgc_series *s, int color)
{
	char a[32], b[32], name[MGC_ESCAPED_MAX(64)];
	const char *v = s->classified ? mgc_verdict_name(s->fit.verdict) : "-";
	fprintf(f, "  %-22s %10s  %s%-9s%s", mgc_esc(name, sizeof name, s->name),
		mgc_human_bytes(s->n ? s->y[s->n - 1] : NAN, a, sizeof a),
		color && s->classified ? color_of(s->fit.verdict) : "", v, color && s->classified ? "\033[0m" : "");
	if (s->classified && (s->fit.verdict == MGC_VERDICT_LEAK || s->fit.verdict == MGC_VERDICT_GROWING))
		fprintf(f, " %s%s", mgc_human_bytes(s->fit.slope, b, sizeof b), slash_x(p));
	else if (s->classified && s->fit.verdict == MGC_VERDICT_PLATEAU && isfinite(s->fit.plateau_at))
		fprintf(f, " since %s", mgc_human_x(s->fit.plateau_at, p->a.x_is_steps, b, sizeof b));
	if (s->classified)
		fprintf(f, " (confidence %.2f)", s->fit.confidence);
	fputc('\n', f);
}

/* The title: which process, where, how much the trace holds. Names and the command line come
 * from the traced program: escaped (mgc_escape.h). */
static void print_title(FILE *f, const struct mgr_process *p, const char *bold, const char *off)
{
	const struct mgc_trace *t = p->t;
	char *origin = mgc_escape_dup(p->origin ? p->origin : "?");
	if (!t) {
		fprintf(f, "%smg report%s: %s (%zu series)\n\n", bold, off, origin ? origin : "?", p->a.nseries);
		free(origin);
		return;
	}
	char *host = mgc_escape_dup(t->host ? t->host : "?");
	char *cmd = mgc_escape_dup(t->cmdline ? t->cmdline : "?");
	fprintf(f, "%smg report%s: %s\n  pid %d (parent %d) on %s: %s\n  %llu snapshots, %llu step markers%s%s\n\n",
		bold, off, origin ? origin : "?", t->proc.pid, t->proc.ppid, host ? host : "?",
		cmd ? cmd : "?", (unsigned long long)t->snapshots, (unsigned long long)t->steps,
		t->truncated ? "; the trace was cut short (the process died?): read up to its last whole record" : "",
		t->ended || t->truncated ? "" : "; no end record (killed?)");
	free(origin);
	free(host);
	free(cmd);
}

/* The answer: the process verdict and its evidence, then the GPU's. */
static void print_answer(FILE *f, const struct mgr_process *p, int color, const char *off)
{
	char buf[1024];
	const struct mgc_series *dev = mgc_analysis_device(&p->a);
	summary(p, buf, sizeof buf);
	fprintf(f, "%s%s%s\n\n", color && p->a.have_verdict ? color_of(p->a.verdict.verdict) : "", buf, off);
	if (p->a.have_verdict && p->a.verdict.why[0])
		fprintf(f, "  evidence: %s\n\n", p->a.verdict.why);
	if (!dev || !dev->classified || !dev->n)
		return;
	mgr_device_answer(p, buf, sizeof buf);
	fprintf(f, "%s%s%s\n", color ? color_of(dev->fit.verdict) : "", buf, off);
	if (dev->fit.why[0])
		fprintf(f, "  evidence: %s\n", dev->fit.why);
	fputc('\n', f);
}

static void print_devcells(FILE *f, const struct mgc_trace *t, const struct mgc_point *pt)
{
	char a[32], b[32], label[48];
	for (size_t k = 0; k < t->ndevcells; k++) {
		const struct mgc_devcell *dc = &t->devcells[k];
		if (mgc_kind_mem(dc->kind) == MGC_KIND_POOL)
			fprintf(f, "  %-22s %10s  (%u stream-ordered pool%s: live and kept; peak %s)\n",
				devcell_label(dc->kind, label, sizeof label), mgc_human_bytes((double)pt->dev[k], a, sizeof a),
				dc->count, dc->count == 1 ? "" : "s", mgc_human_bytes((double)dc->peak, b, sizeof b));
		else
			fprintf(f, "  %-22s %10s  (%u allocation%s; peak %s)\n", devcell_label(dc->kind, label, sizeof label),
				mgc_human_bytes((double)pt->dev[k], a, sizeof a), dc->count, dc->count == 1 ? "" : "s",
				mgc_human_bytes((double)dc->peak, b, sizeof b));
	}
	if (t->devcells_dropped)
		fprintf(f, "    (the trace names more CUDA kinds and devices than the %u shown)\n", MGC_DEVCELLS);
}

/* Memory at the last point of the axis, broken down. */
static void print_end(FILE *f, const struct mgr_process *p, const char *bold, const char *off)
{
	char a[32];
	const struct mgc_point *pt = &p->a.end;
	double rss = (double)(pt->rss_anon + pt->rss_file + pt->rss_shmem);
	double other = (double)pt->rss_anon - (double)pt->heap - (double)pt->mmap - (double)pt->free_kept;
	if (p->a.x_is_steps) /* the program's own step, exactly (a double would round it near 2^64) */
		fprintf(f, "%sMemory at the end%s (step %llu):\n", bold, off, (unsigned long long)pt->step);
	else
		fprintf(f, "%sMemory at the end%s (t = %.0f):\n", bold, off, pt->t);
	fprintf(f, "  %-22s %10s\n", "rss", mgc_human_bytes(rss, a, sizeof a));
	fprintf(f, "  %-22s %10s  (%llu blocks)\n", "  live heap", mgc_human_bytes((double)pt->heap, a, sizeof a),
		(unsigned long long)pt->heap_count);
	fprintf(f, "  %-22s %10s  (%llu mappings)\n", "  live anonymous mmap",
		mgc_human_bytes((double)pt->mmap, a, sizeof a), (unsigned long long)pt->mmap_count);
	fprintf(f, "  %-22s %10s\n", "  free, kept by malloc", mgc_human_bytes((double)pt->free_kept, a, sizeof a));
	fprintf(f, "  %-22s %10s\n", "  other anonymous", mgc_human_bytes(other > 0 ? other : 0, a, sizeof a));
	fprintf(f, "  %-22s %10s\n", "  file-backed + shared", mgc_human_bytes((double)(pt->rss_file + pt->rss_shmem), a, sizeof a));
	if (p->a.limit > 0)
		fprintf(f, "  %-22s %10s\n", "limit", mgc_human_bytes(p->a.limit, a, sizeof a));
	if (mgc_analysis_device(&p->a))
		fprintf(f, "  %-22s %10s  (CUDA allocations; device memory is not in rss)\n", "live CUDA",
			mgc_human_bytes((double)pt->device, a, sizeof a));
	print_devcells(f, p->t, pt);
	fputc('\n', f);
}

/* The series over the run, at up to 12 rows spread over the axis. */
static void print_table(FILE *f, const struct mgr_process *p, const char *bold, const char *off)
{
	char a[32];
	const struct mgc_series *m = mgc_analysis_main(&p->a);
	size_t rows = m->n < 12 ? m->n : 12, cols = 0, col[MGC_S_N];
	for (size_t k = 0; k < p->a.nseries && cols < (p->t ? MGC_S_N : 4); k++)
		if (p->a.series[k].present)
			col[cols++] = k;
	fprintf(f, "%sOver the run%s:\n  %10s", bold, off, p->a.x_is_steps ? "step" : "seconds");
	for (size_t c = 0; c < cols; c++) {
		const char *name = p->t && col[c] == MGC_S_FREE_KEPT ? "free kept" : p->a.series[col[c]].name;
		char shown[11];
		fprintf(f, " %10s", mgc_escape(shown, sizeof shown, name, strlen(name)));
	}
	fputc('\n', f);
	for (size_t r = 0; r < rows; r++) {
		size_t i = rows == 1 ? 0 : r * (m->n - 1) / (rows - 1);
		fprintf(f, "  %10.0f", m->x[i]);
		for (size_t c = 0; c < cols; c++)
			fprintf(f, " %10s", mgc_human_bytes(p->a.series[col[c]].y[i], a, sizeof a));
		fputc('\n', f);
	}
	fputc('\n', f);
}

static int frame_unnamed(const struct mgc_frame *fr)
{
	return !fr->python && (!fr->function || !strcmp(fr->function, "??"));
}

/* How many frames from j on are unnamed and in j's module (0 when j is named). */
static size_t unnamed_run(const struct mgc_stack *st, size_t j)
{
	size_t k = j;
	const char *mod = st->frames[j].module;
	while (k < st->n && frame_unnamed(&st->frames[k]) &&
	       (st->frames[k].module == mod || (mod && st->frames[k].module && !strcmp(st->frames[k].module, mod))))
		k++;
	return k - j;
}

/* Up to 8 lines of frames; a run of unnamed frames in one module (a stripped driver) is one line. */
static void print_frames(FILE *f, const struct mgc_stack *st)
{
	size_t j = 0;
	for (size_t lines = 0; j < st->n && lines < 8; lines++) {
		const struct mgc_frame *fr = &st->frames[j];
		const char *mod = fr->module ? strrchr(fr->module, '/') : NULL;
		mod = mod ? mod + 1 : fr->module;
		char where[MGC_ESCAPED_MAX(1024)];
		size_t run = unnamed_run(st, j);
		if (run > 1) {
			fprintf(f, "        ?? x%zu  [%s]\n", run, mgc_esc(where, sizeof where, mod ? mod : "??"));
			j += run;
			continue;
		}
		const char *file = fr->file ? strrchr(fr->file, '/') : NULL;
		file = fr->python ? mgc_pyfile_short(fr->file) : file ? file + 1 : fr->file;
		char *fn = mgc_escape_dup(fr->function ? fr->function : "??");
		if (file)
			fprintf(f, "        %s%s  %s:%d\n", fn ? fn : "?", fr->inlined ? " (inlined)" : "",
				mgc_esc(where, sizeof where, file), fr->line);
		else
			fprintf(f, "        %s  [%s]\n", fn ? fn : "?", mgc_esc(where, sizeof where, mod ? mod : "??"));
		free(fn);
		j++;
	}
	if (st->n > j)
		fprintf(f, "        ... %zu more frames (--json has them all)\n", st->n - j);
}

static void print_cuda(FILE *f, const struct mgc_rec_devsite *cu)
{
	char a[32];
	fprintf(f, "        cuda: stream %u%s%s%s, %llu record%s joined%s\n", cu->stream,
		cu->flags & MGC_DEVSITE_ASYNC ? ", stream-ordered" : "", cu->flags & MGC_DEVSITE_POOL ? ", pool " : "",
		cu->flags & MGC_DEVSITE_POOL ? mgr_hex(cu->pool_address, a, sizeof a) : "",
		(unsigned long long)cu->records, cu->records == 1 ? "" : "s",
		cu->flags & MGC_DEVSITE_MISMATCH ? " (a record disagreed with its call)" : "");
}

/* 0, or -ENOMEM when a stack could not be symbolized. */
static int print_sites(FILE *f, const struct mgr_process *p, int color, const char *bold, const char *off)
{
	char a[32], b[32], c[32], d[32], tag[40];
	const struct mgc_site *u = mgc_trace_unattributed(p->t);
	if (u)
		fprintf(f, "%llu allocations (%s, %s live at exit) went unattributed: the probe's site table "
			"was full, so they have no stack; run again with a larger MGPROBE_MAX_SITES\n\n",
			(unsigned long long)u->counters.allocs,
			mgc_human_bytes((double)u->counters.alloc_bytes, a, sizeof a),
			mgc_human_bytes((double)u->counters.live_bytes, b, sizeof b));
	fprintf(f, "%sTop sites by growth%s (%zu of %zu):\n", bold, off, p->nshown, p->a.nsites);
	for (size_t i = 0; i < p->nshown; i++) {
		const struct mgc_site_result *r = &p->a.sites[i];
		const struct mgc_site *s = mgr_site(p, i);
		const char *v = r->classified ? mgc_verdict_name(r->fit.verdict) : "-";
		char band[40] = "", bb[24];
		if (p->t->sample_rate) /* sampled: estimates, +- two standard deviations */
			snprintf(band, sizeof band, " \u00b1 %s",
				 mgc_human_bytes(mgc_site_band(p->t->sample_rate, s, r->live_end), bb, sizeof bb));
		fprintf(f, "  #%-3zu %s%-9s%s %s%s live%s (%s, %llu %s at exit), %s%s; allocs %llu, frees %llu, peak %s\n",
			i + 1, color && r->classified ? color_of(r->fit.verdict) : "", v, off,
			p->shown[i].pyarena ? "[pymalloc arena] " : cuda_tag(s, tag, sizeof tag),
			mgc_human_bytes(r->live_end, a, sizeof a), band,
			mgc_human_bytes((double)r->counters.live_bytes, c, sizeof c),
			(unsigned long long)r->counters.live_count,
			r->kind == MGC_KIND_MMAP ? "mappings" : mgc_kind_is_cuda(r->kind) ? "CUDA allocations" : "blocks",
			mgc_human_bytes(r->classified ? r->fit.slope : 0.0, d, sizeof d), slash_x(p),
			(unsigned long long)r->counters.allocs, (unsigned long long)r->counters.frees,
			mgc_human_bytes((double)r->counters.peak_bytes, b, sizeof b));
		if (s->cuda)
			print_cuda(f, s->cuda);
		const struct mgc_stack *st = mgr_shown_stack(p, i);
		if (!st)
			return -ENOMEM;
		print_frames(f, st);
	}
	fputc('\n', f);
	return 0;
}

static int print_process(FILE *f, const struct mgr_process *p, int color)
{
	const char *bold = color ? "\033[1m" : "", *off = color ? "\033[0m" : "";
	const struct mgc_series *m = mgc_analysis_main(&p->a);
	print_title(f, p, bold, off);
	if (p->a.axis_note[0])
		fprintf(f, "note: %s\n\n", p->a.axis_note);
	print_answer(f, p, color, off);
	if (p->t && p->a.have_end)
		print_end(f, p, bold, off);
	fprintf(f, "%sSeries%s:\n", bold, off);
	for (size_t i = 0; i < p->a.nseries; i++)
		if (p->a.series[i].present)
			print_fit_line(f, p, &p->a.series[i], color);
	fputc('\n', f);
	if (m && m->n)
		print_table(f, p, bold, off);
	return p->t ? print_sites(f, p, color, bold, off) : 0;
}

/* Prints p and, indented below it, the processes whose parent it is. */
static void print_tree(FILE *f, const struct mgr_process *procs, size_t n, size_t i, int depth,
		       int color)
{
	const struct mgr_process *p = &procs[i];
	const struct mgc_trace *t = p->t;
	char a[32];
	const struct mgc_series *m = mgc_analysis_main(&p->a);
	const char *v = p->a.have_verdict ? mgc_verdict_name(p->a.verdict.verdict) : "-";
	const char *cmd = t->cmdline ? t->cmdline : "?";
	char shown[61]; /* the first 60 bytes, escaped, cut before a whole character */
	fprintf(f, "  %*s%s pid %d  %s%-9s%s rss %s  %s\n", depth * 2, "", depth ? "└" : "", t->proc.pid,
		color && p->a.have_verdict ? color_of(p->a.verdict.verdict) : "", v, color ? "\033[0m" : "",
		mgc_human_bytes(m && m->n ? m->y[m->n - 1] : NAN, a, sizeof a),
		mgc_escape(shown, sizeof shown, cmd, strlen(cmd)));
	if (depth > 16)
		return;
	for (size_t k = 0; k < n; k++)
		if (k != i && procs[k].t && procs[k].t->proc.ppid == t->proc.pid)
			print_tree(f, procs, n, k, depth + 1, color);
}

int mgr_print_text(FILE *f, struct mgr_process *procs, size_t n, int color)
{
	size_t traces = 0;
	for (size_t i = 0; i < n; i++)
		traces += procs[i].t != NULL;
	if (traces > 1) {
		fprintf(f, "%sProcesses%s (%zu traces):\n", color ? "\033[1m" : "", color ? "\033[0m" : "", traces);
		for (size_t i = 0; i < n; i++) {
			int has_parent = 0;
			for (size_t k = 0; k < n && procs[i].t; k++)
				has_parent |= k != i && procs[k].t && procs[k].t->proc.pid == procs[i].t->proc.ppid;
			if (procs[i].t && !has_parent)
				print_tree(f, procs, n, i, 0, color);
		}
		fputc('\n', f);
	}
	for (size_t i = 0; i < n; i++)
		if (print_process(f, &procs[i], color) < 0)
			return -ENOMEM;
	return 0;
}

void mgr_answer(const struct mgr_process *p, char *out, size_t cap)
{
	summary(p, out, cap);
}

void mgr_device_answer(const struct mgr_process *p, char *out, size_t cap)
{
	const struct mgc_series *dev = mgc_analysis_device(&p->a);
	if (cap)
		out[0] = 0;
	if (!dev || !dev->classified || !dev->n)
		return;
	/* device memory is not part of RSS: it gets its own sentence */
	size_t n = verdict_sentence(p, "GPU ", "device memory", dev, &dev->fit, out, cap);
	if (n < cap)
		leaking_sites(p, 1, out + n, cap - n);
}
