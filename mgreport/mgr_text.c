/* SPDX-License-Identifier: MIT */
/* mgr_text.c: the terminal report: the answer in one paragraph first, then the memory breakdown,
 * a per-step table at useful points, and the top sites with their verdicts and stacks. Colour
 * only when asked (mgreport asks on a tty). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "mgc_units.h"
#include "mgr_output.h"

const char *mgr_bytes(double b, char *buf, size_t cap)
{
	return mgc_human_bytes(b, buf, cap);
}

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

static const char *xunit(const struct mgr_process *p)
{
	return p->x_is_steps ? "step" : "s";
}

static void fmt_x(const struct mgr_process *p, double x, char *buf, size_t cap)
{
	if (!isfinite(x))
		snprintf(buf, cap, "?");
	else if (p->x_is_steps)
		snprintf(buf, cap, "step %.0f", x);
	else
		snprintf(buf, cap, "%.0f s", x);
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
			       const struct mgr_series *m, const struct mgc_fit *f, char *out, size_t cap)
{
	char a[32], b[32], c[32], d[32], xa[32], xb[32];
	double first = m->y[0], last = m->y[m->n - 1];
	fmt_x(p, m->x[0], xa, sizeof xa);
	fmt_x(p, m->x[m->n - 1], xb, sizeof xb);
	size_t n = 0;
	switch (f->verdict) {
	case MGC_VERDICT_RETENTION:
	case MGC_VERDICT_STABLE:
		n = (size_t)snprintf(out, cap, "%sstable: %s stayed at %s (±%s) from %s to %s", prefix, what,
				     mgr_bytes(f->level, a, sizeof a), mgr_bytes(f->noise, b, sizeof b), xa, xb);
		break;
	case MGC_VERDICT_PLATEAU:
		fmt_x(p, f->plateau_at, xb, sizeof xb);
		n = (size_t)snprintf(out, cap, "%swarmup: %s grew %s over %s to %s, flat at %s since (±%s)",
				     prefix, what, mgr_bytes(f->plateau_level - first, a, sizeof a), xa, xb,
				     mgr_bytes(f->plateau_level, b, sizeof b), mgr_bytes(f->noise, c, sizeof c));
		break;
	case MGC_VERDICT_LEAK:
		n = (size_t)snprintf(out, cap, "%sleak: %s grows %s per %s without levelling off (%s at %s)",
				     prefix, what, mgr_bytes(f->slope, a, sizeof a), xunit(p),
				     mgr_bytes(last, b, sizeof b), xb);
		break;
	case MGC_VERDICT_GROWING:
		n = (size_t)snprintf(out, cap,
				     "%sstill growing: %s rose %s per %s up to %s (%s); the evidence cannot yet "
				     "tell a warmup from a leak",
				     prefix, what, mgr_bytes(f->slope, a, sizeof a), xunit(p), xb,
				     mgr_bytes(last, b, sizeof b));
		if (isfinite(f->decidable_at) && n < cap) {
			fmt_x(p, f->decidable_at, d, sizeof d);
			n += (size_t)snprintf(out + n, cap - n, " (decidable by about %s)", d);
		}
		break;
	}
	if (n < cap && f->confidence < 0.8)
		n += (size_t)snprintf(out + n, cap - n, " (low confidence, %.2f: %zu points)", f->confidence,
				      m->n);
	return n < cap ? n : cap;
}

/* The answer in plain words, with the numbers behind it. */
static void summary(const struct mgr_process *p, char *out, size_t cap)
{
	char a[32], b[32], c[32];
	const struct mgc_fit *f = &p->verdict;
	const struct mgr_series *m = p->main;
	if (!p->have_verdict || !m || m->n == 0) {
		snprintf(out, cap, "no data: the trace holds no snapshots to judge.");
		return;
	}
	const char *series = p->t ? "RSS" : m->name;
	size_t n;
	if (f->verdict == MGC_VERDICT_RETENTION) {
		double heap = p->nseries > 1 ? p->series[1].y[p->series[1].n - 1] : 0;
		n = (size_t)snprintf(out, cap,
				     "retention: %s grew %s while live allocations stayed near %s: freed "
				     "memory kept by the allocator, not a leak in the program",
				     series, mgr_bytes(m->y[m->n - 1] - m->y[0], a, sizeof a), mgr_bytes(heap, b, sizeof b));
		if (n < cap && f->confidence < 0.8)
			n += (size_t)snprintf(out + n, cap - n, " (low confidence, %.2f: %zu points)",
					      f->confidence, m->n);
	} else {
		n = verdict_sentence(p, "", series, m, f, out, cap);
	}
	if (n < cap && (f->verdict == MGC_VERDICT_LEAK || f->verdict == MGC_VERDICT_GROWING) &&
	    isfinite(f->x_to_oom) && p->limit > 0) {
		n += (size_t)snprintf(out + n, cap - n, "; at this rate the %s limit is reached in %.0f %s%s",
				      mgr_bytes(p->limit, c, sizeof c), f->x_to_oom,
				      p->x_is_steps ? "steps" : "seconds", "");
	}
	if (n < cap && p->t) {
		const struct mgr_site *top = NULL;
		/* Host memory here: device sites have their own sentence (device_summary). */
		for (size_t i = 0; i < p->nsites && !top; i++)
			if (p->sites[i].classified && p->sites[i].fit.verdict == MGC_VERDICT_LEAK &&
			    !mgc_kind_is_cuda(p->sites[i].s->kind))
				top = &p->sites[i];
		size_t leaking = p->leaking_sites - p->leaking_device_sites;
		if (!top) {
			n += (size_t)snprintf(out + n, cap - n, "; no %ssite is leaking.", p->device ? "host " : "");
		} else {
			char nb[512];
			const char *fn = mgr_site_name(top, nb, sizeof nb);
			n += (size_t)snprintf(out + n, cap - n, "; %zu site%s leaking, the top one %s (+%s per %s).",
					      leaking, leaking == 1 ? " is" : "s are", fn,
					      mgr_bytes(top->fit.slope, a, sizeof a), xunit(p));
		}
	} else if (n < cap) {
		snprintf(out + n, cap - n, ".");
	}
}

/* The GPU's answer in one sentence: device memory is not part of RSS, so it gets its own. */
static void device_summary(const struct mgr_process *p, char *out, size_t cap)
{
	char a[32];
	size_t n = verdict_sentence(p, "GPU ", "device memory", p->device, &p->device->fit, out, cap);
	if (n < cap) {
		const struct mgr_site *top = NULL;
		for (size_t i = 0; i < p->nsites && !top; i++)
			if (mgc_kind_is_cuda(p->sites[i].s->kind) && p->sites[i].classified &&
			    p->sites[i].fit.verdict == MGC_VERDICT_LEAK)
				top = &p->sites[i];
		char nb[512];
		const char *fn = top ? mgr_site_name(top, nb, sizeof nb) : "??";
		if (top)
			snprintf(out + n, cap - n, "; %zu device site%s leaking, the top one %s (+%s per %s).",
				 p->leaking_device_sites, p->leaking_device_sites == 1 ? " is" : "s are", fn,
				 mgr_bytes(top->fit.slope, a, sizeof a), xunit(p));
		else
			snprintf(out + n, cap - n, "; no device site is leaking.");
	}
}

static void print_fit_line(FILE *f, const struct mgr_process *p, const char *label,
			   const struct mgr_series *s, int color)
{
	char a[32], b[32];
	const char *v = s->ok ? mgc_verdict_name(s->fit.verdict) : "-";
	fprintf(f, "  %-22s %10s  %s%-9s%s", label, mgr_bytes(s->n ? s->y[s->n - 1] : NAN, a, sizeof a),
		color && s->ok ? color_of(s->fit.verdict) : "", v, color && s->ok ? "\033[0m" : "");
	if (s->ok && (s->fit.verdict == MGC_VERDICT_LEAK || s->fit.verdict == MGC_VERDICT_GROWING))
		fprintf(f, " %s/%s", mgr_bytes(s->fit.slope, b, sizeof b), xunit(p));
	else if (s->ok && s->fit.verdict == MGC_VERDICT_PLATEAU && isfinite(s->fit.plateau_at))
		fprintf(f, " since %s %.0f", p->x_is_steps ? "step" : "t=", s->fit.plateau_at);
	if (s->ok)
		fprintf(f, " (confidence %.2f)", s->fit.confidence);
	fputc('\n', f);
}

static void print_process(FILE *f, const struct mgr_process *p, int color)
{
	char a[32], b[32], c[32], d[32], e[32], buf[1024];
	const struct mgc_trace *t = p->t;
	const char *bold = color ? "\033[1m" : "", *off = color ? "\033[0m" : "";
	if (t)
		fprintf(f, "%smg report%s: %s\n  pid %d (parent %d) on %s: %s\n  %llu snapshots, %llu step markers%s%s\n\n",
			bold, off, p->origin, t->proc.pid, t->proc.ppid, t->host ? t->host : "?",
			t->cmdline ? t->cmdline : "?", (unsigned long long)t->snapshots,
			(unsigned long long)t->steps,
			t->truncated ? "; the trace was cut short (the process died?): read up to its last whole record" : "",
			t->ended ? "" : (t->truncated ? "" : "; no end record (killed?)"));
	else
		fprintf(f, "%smg report%s: %s (%zu series)\n\n", bold, off, p->origin, p->nseries);
	summary(p, buf, sizeof buf);
	fprintf(f, "%s%s%s%s\n\n", color && p->have_verdict ? color_of(p->verdict.verdict) : "",
		p->have_verdict ? "" : "", buf, off);
	if (p->have_verdict && p->verdict.why[0])
		fprintf(f, "  evidence: %s\n\n", p->verdict.why);
	if (p->device && p->device->ok && p->device->n) {
		device_summary(p, buf, sizeof buf);
		fprintf(f, "%s%s%s\n", color ? color_of(p->device->fit.verdict) : "", buf, off);
		if (p->device->fit.why[0])
			fprintf(f, "  evidence: %s\n", p->device->fit.why);
		fputc('\n', f);
	}

	if (t && p->end) {
		const struct mgc_point *pt = p->end;
		double rss = (double)(pt->rss_anon + pt->rss_file + pt->rss_shmem);
		double other = (double)pt->rss_anon - (double)pt->heap - (double)pt->mmap - (double)pt->free_kept;
		fprintf(f, "%sMemory at the end%s (%s %.0f):\n", bold, off, p->x_is_steps ? "step" : "t =",
			p->x_is_steps ? (double)pt->step : pt->t);
		fprintf(f, "  %-22s %10s\n", "rss", mgr_bytes(rss, a, sizeof a));
		fprintf(f, "  %-22s %10s  (%llu blocks)\n", "  live heap", mgr_bytes((double)pt->heap, b, sizeof b),
			(unsigned long long)pt->heap_count);
		fprintf(f, "  %-22s %10s  (%llu mappings)\n", "  live anonymous mmap",
			mgr_bytes((double)pt->mmap, c, sizeof c), (unsigned long long)pt->mmap_count);
		fprintf(f, "  %-22s %10s\n", "  free, kept by malloc", mgr_bytes((double)pt->free_kept, d, sizeof d));
		fprintf(f, "  %-22s %10s\n", "  other anonymous", mgr_bytes(other > 0 ? other : 0, e, sizeof e));
		fprintf(f, "  %-22s %10s\n", "  file-backed + shared",
			mgr_bytes((double)(pt->rss_file + pt->rss_shmem), a, sizeof a));
		if (p->limit > 0)
			fprintf(f, "  %-22s %10s\n", "limit", mgr_bytes(p->limit, b, sizeof b));
		if (p->device)
			fprintf(f, "  %-22s %10s  (CUDA allocations; device memory is not in rss)\n",
				"live CUDA", mgr_bytes((double)pt->device, c, sizeof c));
		for (size_t k = 0; t && k < t->ndevcells; k++) {
			const struct mgc_devcell *dc = &t->devcells[k];
			char label[48];
			if (mgc_kind_mem(dc->kind) == MGC_KIND_POOL)
				fprintf(f, "  %-22s %10s  (%u stream-ordered pool%s: live and kept; peak %s)\n",
					devcell_label(dc->kind, label, sizeof label),
					mgr_bytes((double)pt->dev[k], a, sizeof a), dc->count,
					dc->count == 1 ? "" : "s", mgr_bytes((double)dc->peak, b, sizeof b));
			else
				fprintf(f, "  %-22s %10s  (%u allocation%s; peak %s)\n",
					devcell_label(dc->kind, label, sizeof label),
					mgr_bytes((double)pt->dev[k], a, sizeof a), dc->count, dc->count == 1 ? "" : "s",
					mgr_bytes((double)dc->peak, b, sizeof b));
		}
		if (t && t->devcells_dropped)
			fprintf(f, "    (the trace names more CUDA kinds and devices than the %u shown)\n", MGC_DEVCELLS);
		fputc('\n', f);
	}
	fprintf(f, "%sSeries%s:\n", bold, off);
	for (size_t i = 0; i < p->nseries; i++)
		print_fit_line(f, p, p->series[i].name, &p->series[i], color);
	fputc('\n', f);

	if (p->main && p->main->n) {
		const struct mgr_series *m = p->main;
		size_t rows = m->n < 12 ? m->n : 12;
		fprintf(f, "%sOver the run%s:\n  %10s %10s", bold, off, p->x_is_steps ? "step" : "seconds",
			t ? "rss" : "");
		if (t)
			fprintf(f, " %10s %10s %10s%s\n", "heap", "mmap", "free kept",
				p->device ? "     device" : "");
		else
			for (size_t i = 0; i < p->nseries && i < 4; i++)
				fprintf(f, " %10.10s", p->series[i].name);
		if (!t)
			fputc('\n', f);
		for (size_t r = 0; r < rows; r++) {
			size_t i = rows == 1 ? 0 : r * (m->n - 1) / (rows - 1);
			fprintf(f, "  %10.0f", m->x[i]);
			if (t) {
				fprintf(f, " %10s %10s %10s %10s", mgr_bytes(p->series[0].y[i], a, sizeof a),
					mgr_bytes(p->series[1].y[i], b, sizeof b),
					mgr_bytes(p->series[2].y[i], c, sizeof c),
					mgr_bytes(p->series[3].y[i], d, sizeof d));
				if (p->device)
					fprintf(f, " %10s", mgr_bytes(p->device->y[i], e, sizeof e));
				fputc('\n', f);
			} else {
				for (size_t k = 0; k < p->nseries && k < 4; k++)
					fprintf(f, " %10s", mgr_bytes(p->series[k].y[i], a, sizeof a));
				fputc('\n', f);
			}
		}
		fputc('\n', f);
	}

	if (!t)
		return;
	fprintf(f, "%sTop sites by growth%s (%zu of %zu):\n", bold, off, p->nsites, p->sites_total);
	for (size_t i = 0; i < p->nsites; i++) {
		const struct mgr_site *ms = &p->sites[i];
		const struct mgc_site *s = ms->s;
		const char *v = ms->classified ? mgc_verdict_name(ms->fit.verdict) : "-";
		char tag[40], band[40] = "", bb[24];
		if (t->sample_rate) /* sampled: estimates, +- two standard deviations */
			snprintf(band, sizeof band, " \u00b1 %s", mgr_bytes(mgc_trace_band(t, s, ms->live_end), bb, sizeof bb));
		fprintf(f, "  #%-3zu %s%-9s%s %s%s live%s (%s, %llu %s at exit), %s/%s; allocs %llu, frees %llu, peak %s\n",
			i + 1, color && ms->classified ? color_of(ms->fit.verdict) : "", v, off,
			ms->pyarena ? "[pymalloc arena] " : cuda_tag(s, tag, sizeof tag),
			mgr_bytes(ms->live_end, a, sizeof a), band, mgr_bytes((double)s->live_bytes, c, sizeof c),
			(unsigned long long)s->live_count,
			s->kind == MGC_KIND_MMAP ? "mappings" : mgc_kind_is_cuda(s->kind) ? "CUDA allocations" : "blocks",
			mgr_bytes(ms->classified ? ms->fit.slope : 0.0, d, sizeof d), xunit(p),
			(unsigned long long)s->allocs, (unsigned long long)s->frees,
			mgr_bytes((double)s->peak_bytes, b, sizeof b));
		if (s->cuda)
			fprintf(f, "        cuda: stream %u%s%s%s, %llu record%s joined%s\n", s->cuda->stream,
				s->cuda->flags & MGC_DEVSITE_ASYNC ? ", stream-ordered" : "",
				s->cuda->flags & MGC_DEVSITE_POOL ? ", pool " : "",
				s->cuda->flags & MGC_DEVSITE_POOL ? mgr_hex(s->cuda->pool_address, a, sizeof a) : "",
				(unsigned long long)s->cuda->records, s->cuda->records == 1 ? "" : "s",
				s->cuda->flags & MGC_DEVSITE_MISMATCH ? " (a record disagreed with its call)" : "");
		size_t shown = 0;
		for (size_t j = 0; j < ms->nframes && shown < 8; j++) {
			const struct mgr_frame *fr = &ms->frames[j];
			const char *mod = fr->module ? strrchr(fr->module, '/') : NULL;
			mod = mod ? mod + 1 : fr->module;
			const char *file = fr->file ? strrchr(fr->file, '/') : NULL;
			file = fr->python ? mgc_pyfile_short(fr->file) : file ? file + 1 : fr->file;
			if (file)
				fprintf(f, "        %s%s  %s:%d\n", fr->function, fr->inlined ? " (inlined)" : "",
					file, fr->line);
			else
				fprintf(f, "        %s  [%s]\n", fr->function, mod ? mod : "??");
			shown++;
		}
		if (ms->nframes > shown)
			fprintf(f, "        ... %zu more frames (--json has them all)\n", ms->nframes - shown);
	}
	fputc('\n', f);
}

/* Prints p and, indented below it, the processes whose parent it is. */
static void print_tree(FILE *f, const struct mgr_process *procs, size_t n, size_t i, int depth,
		       int color)
{
	const struct mgr_process *p = &procs[i];
	const struct mgc_trace *t = p->t;
	char a[32];
	const char *v = p->have_verdict ? mgc_verdict_name(p->verdict.verdict) : "-";
	fprintf(f, "  %*s%s pid %d  %s%-9s%s rss %s  %.60s\n", depth * 2, "", depth ? "└" : "", t->proc.pid,
		color && p->have_verdict ? color_of(p->verdict.verdict) : "", v, color ? "\033[0m" : "",
		mgr_bytes(p->main && p->main->n ? p->main->y[p->main->n - 1] : NAN, a, sizeof a),
		t->cmdline ? t->cmdline : "?");
	if (depth > 16)
		return;
	for (size_t k = 0; k < n; k++)
		if (k != i && procs[k].t && procs[k].t->proc.ppid == t->proc.pid)
			print_tree(f, procs, n, k, depth + 1, color);
}

void mgr_print_text(FILE *f, struct mgr_process *procs, size_t n, int color)
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
		print_process(f, &procs[i], color);
}
