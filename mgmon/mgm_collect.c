/* SPDX-License-Identifier: MIT */
/* mgm_collect.c: fills struct mgm_view from the probe's segment (a seqlock-consistent copy via
 * libmgcore's reader) or, without the probe, from /proc/PID (status, smaps_rollup) and NVML;
 * judges the run with libmgcore's analysis, as mgreport does, and symbolizes stacks once per
 * site. It must never write to the target or its segment, and never abort. */
#define _GNU_SOURCE
#include "mgm_collect.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "mgc_grid.h"
#include "mgc_proc.h"
#include "mgc_python.h"
#include "mgc_shm.h"
#include "mgm_nvml.h"

#define HISTORY_POINTS 512u /* the no-probe history's grid (mgc_grid.h), as a trace's */

/* Without the probe: mgmon's own samples of the process, on a bounded grid. */
struct proc_history {
	struct mgc_grid grid;
	struct mgc_point *points;  /* grid.n of them */
	struct mgc_point latest;   /* the newest sample (kept when it is not on the grid) */
};

struct mgm_collector {
	int pid;
	uint64_t start_ticks;        /* of the process we attached to */
	struct mgc_shm_map *map;     /* NULL without the probe */
	struct mgc_shm *copy;        /* the last consistent copy */
	int have_copy;
	struct mgc_symbolizer *sym;
	struct mgc_pycodes *py;      /* Python code objects seen in the segment (never replaced) */
	struct mgm_stack **stacks;   /* cache, by site id; each allocated once, never moved */
	size_t nstacks, cap_stacks;
	struct mgm_nvml *nvml;
	int nvml_tried;
	struct proc_history hist;
	int gone;
	char refused[256];           /* why the segment's name holds nothing usable ("" when fine) */
};

/* ---- /proc ---- */

/* The machine's memory (MemTotal) in bytes; 0 when unknown. */
static uint64_t mem_total(void)
{
	char buf[4096];
	return mgc_read_file("/proc/meminfo", buf, sizeof buf) > 0 ? mgc_kv_kb(buf, "MemTotal") : 0;
}

static double proc_uptime(int pid)
{
	char buf[128];
	uint64_t ticks = mgc_proc_start_ticks(pid);
	if (!ticks || mgc_read_file("/proc/uptime", buf, sizeof buf) <= 0)
		return 0;
	double up = strtod(buf, NULL) - (double)ticks / (double)sysconf(_SC_CLK_TCK);
	return up > 0 ? up : 0;
}

static void proc_identity(int pid, struct mgm_view *v)
{
	char path[64], buf[4096];
	snprintf(path, sizeof path, "/proc/%d/comm", pid);
	if (mgc_read_file(path, buf, sizeof buf) > 0) {
		buf[strcspn(buf, "\n")] = 0;
		snprintf(v->comm, sizeof v->comm, "%.63s", buf);
	}
	snprintf(path, sizeof path, "/proc/%d/cmdline", pid);
	long n = mgc_read_file(path, buf, sizeof buf);
	while (n > 0 && buf[n - 1] == 0)
		n--;
	for (long i = 0; i < n; i++)
		if (!buf[i])
			buf[i] = ' ';
	if (n > 0) {
		buf[n] = 0;
		snprintf(v->cmdline, sizeof v->cmdline, "%.255s", buf);
	}
	snprintf(path, sizeof path, "/proc/%d/status", pid);
	if (mgc_read_file(path, buf, sizeof buf) > 0) {
		const char *pp = strstr(buf, "\nPPid:");
		if (pp)
			v->ppid = atoi(pp + 6);
	}
}

/* ---- opening ---- */

/* A pid without a process: a stale segment it left says so; else no such process. */
static int not_running(int pid, char *err, size_t errlen)
{
	char path[64], e2[256];
	struct mgc_shm_map *m;
	if (pid > 0 && mgc_shm_open(pid, &m, e2, sizeof e2) == 0) {
		mgc_shm_close(m);
		mgc_shm_path(pid, path, sizeof path);
		snprintf(err, errlen,
			 "process %d is not running; %s is a stale segment it left (killed?): remove it with rm %s",
			 pid, path, path);
		return -ESTALE;
	}
	snprintf(err, errlen, "no such process: %d", pid);
	return -ESRCH;
}

/* Maps the segment when there is one (it may be being created: retried for half a second). A
 * segment whose writer is not this process (a reused pid) is ignored. */
static int attach_segment(struct mgm_collector *c, char *err, size_t errlen)
{
	char e2[256];
	int r = -EAGAIN;
	for (int t = 0; t < 50 && r == -EAGAIN; t++) {
		r = mgc_shm_open(c->pid, &c->map, e2, sizeof e2);
		if (r == -EAGAIN)
			usleep(10000);
	}
	if (r == -EPROTO || r == -EACCES) {
		snprintf(err, errlen, "%s", e2);
		return r == -EACCES ? -EPERM : -EPROTO;
	}
	if (r == -EPERM || r == -EINVAL) /* planted, or not a segment: the /proc view, with a notice */
		snprintf(c->refused, sizeof c->refused, "%s", e2);
	if (r == 0 && mgc_shm_read(c->map, c->copy, 0) == 0 && mgc_shm_is_stale(c->copy)) {
		mgc_shm_close(c->map);
		c->map = NULL;
	}
	return 0;
}

int mgm_collector_open(int pid, struct mgm_collector **out, char *err, size_t errlen)
{
	char path[64];
	struct stat st;
	*out = NULL;
	snprintf(path, sizeof path, "/proc/%d", pid);
	if (pid <= 0 || stat(path, &st) < 0)
		return not_running(pid, err, errlen);
	if (st.st_uid != geteuid() && geteuid() != 0) {
		snprintf(err, errlen, "process %d belongs to another user (uid %u): mgmon can watch only "
			 "your own processes", pid, (unsigned)st.st_uid);
		return -EPERM;
	}
	struct mgm_collector *c = calloc(1, sizeof *c);
	if (!c || !(c->copy = malloc(sizeof *c->copy)) || !(c->sym = mgc_symbolizer_new()) ||
	    !(c->hist.points = calloc(HISTORY_POINTS, sizeof *c->hist.points))) {
		mgm_collector_free(c);
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	c->pid = pid;
	c->start_ticks = mgc_proc_start_ticks(pid);
	c->hist.grid = mgc_grid_make(HISTORY_POINTS);
	int r = attach_segment(c, err, errlen);
	if (r < 0) {
		mgm_collector_free(c);
		return r;
	}
	*out = c;
	return 0;
}

void mgm_collector_free(struct mgm_collector *c)
{
	if (!c)
		return;
	mgc_shm_close(c->map);
	free(c->copy);
	for (size_t i = 0; i < c->nstacks; i++) {
		mgc_stack_free(&c->stacks[i]->st);
		free(c->stacks[i]);
	}
	free(c->stacks);
	mgc_symbolizer_free(c->sym);
	mgc_pycodes_free(c->py);
	mgm_nvml_close(c->nvml);
	free(c->hist.points);
	free(c);
}

void mgm_view_free(struct mgm_view *v)
{
	mgc_analysis_free(&v->a);
	free(v->sites);
	free(v->site_y);
	memset(v, 0, sizeof *v);
}

/* The process's GPU memory from NVML (loaded on first use), into v when NVML knows the process. */
static void device_from_nvml(struct mgm_collector *c, struct mgm_view *v)
{
	int found = 0;
	if (!c->nvml_tried) {
		c->nvml_tried = 1;
		c->nvml = mgm_nvml_open();
	}
	uint64_t g = c->nvml ? mgm_nvml_process_bytes(c->nvml, c->pid, &found) : 0;
	if (found) {
		v->have_device = 1;
		v->device = g;
		v->device_source = "NVML";
	}
}

/* ---- stacks ---- */

/* The segment's module map, and room for the path of the module last found. */
struct segment_modules {
	const struct mgc_shm *s;
	char path[4096];
};

static void segment_module(void *ctx, uint64_t addr, struct mgc_module_ref *out)
{
	struct segment_modules *sm = ctx;
	const struct mgc_shm_module *m = mgc_shm_module_for(sm->s, addr);
	if (m)
		*out = (struct mgc_module_ref){mgc_shm_module_path(sm->s, m, sm->path, sizeof sm->path),
					       m->build_id, m->build_id_len, m->bias, NULL};
}

/* The segment's Python code objects not known yet, when the stack names one (ids never change
 * meaning in a process). */
static void import_pycodes(struct mgm_collector *c, const struct mgc_shm_site *e)
{
	int unknown = 0;
	for (unsigned i = 0; i < e->nframes && !unknown; i++)
		unknown = mgc_pyframe_is(e->ips[i]) && !mgc_pycodes_has(c->py, mgc_pyframe_code(e->ips[i]));
	if (unknown)
		mgc_shm_pycodes(c->copy, &c->py);
}

/* The site's stack, symbolized on first sight against the segment's module map and code objects. */
static const struct mgm_stack *stack_for(struct mgm_collector *c, const struct mgc_shm_site *e)
{
	for (size_t i = 0; i < c->nstacks; i++)
		if (c->stacks[i]->id == e->site)
			return c->stacks[i];
	if (c->nstacks == c->cap_stacks) {
		size_t nc = c->cap_stacks ? c->cap_stacks * 2 : 64;
		struct mgm_stack **ns = realloc(c->stacks, nc * sizeof *ns);
		if (!ns)
			return NULL;
		c->stacks = ns;
		c->cap_stacks = nc;
	}
	struct mgm_stack *st = calloc(1, sizeof *st);
	struct segment_modules sm = {.s = c->copy};
	import_pycodes(c, e);
	if (!st || mgc_symbolize_stack(c->sym, e->ips, e->nframes, segment_module, &sm, c->py, &st->st) < 0) {
		free(st);
		return NULL;
	}
	st->id = e->site;
	st->truncated = e->full_nframes > e->nframes;
	c->stacks[c->nstacks++] = st;
	return st;
}

/* The view's sites (all judged: mgmon asks for every site), in the analysis's order, each with its
 * stack (src: its published entry) and its series for the chart. */
static int view_sites(struct mgm_collector *c, struct mgm_view *v, const struct mgc_shm *src)
{
	size_t n = v->a.nclassified, np = v->a.n ? v->a.n : 1;
	v->sites = calloc(n ? n : 1, sizeof *v->sites);
	v->site_y = calloc(n ? n * np : 1, sizeof *v->site_y);
	if (!v->sites || !v->site_y)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		const struct mgc_site_result *r = &v->a.sites[i];
		double *y = v->site_y + i * np;
		mgc_analysis_site_series(&v->a, r->site, y);
		v->sites[v->nsites++] = (struct mgm_site){r, src ? stack_for(c, &src->sites[r->input]) : NULL, y,
							  mgc_site_band(v->a.sample_rate, r->site,
									(double)r->counters.live_bytes)};
	}
	return 0;
}

/* ---- the probe's view ---- */

static void probe_identity(const struct mgc_shm_header *h, struct mgm_view *v)
{
	struct timespec ts;
	v->probe = 1;
	v->pid = h->pid;
	v->ppid = h->ppid;
	snprintf(v->comm, sizeof v->comm, "%.*s", (int)sizeof h->comm, h->comm);
	snprintf(v->cmdline, sizeof v->cmdline, "%.*s", (int)sizeof h->cmdline, h->cmdline);
	snprintf(v->label, sizeof v->label, "%.*s", (int)sizeof h->label - 1, h->label);
	v->step = h->step;
	v->samples = h->publishes;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	uint64_t now = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	v->uptime = v->exited ? (double)h->updated_ns / 1e9 : (double)(now - h->start_mono_ns) / 1e9;
	for (uint32_t i = 0; i < h->nchildren && i < MGM_MAX_CHILDREN; i++)
		v->children[v->nchildren++] = h->children[i];
}

/* Steps per second over the last ~10 s of the ring, ending at the current step's start. */
static double steps_per_second(const struct mgc_shm *s)
{
	const struct mgc_shm_header *h = &s->h;
	const struct mgc_rec_snapshot *last = &s->ring[(h->ring_head - 1) % MGC_SHM_RING], *old = last;
	uint64_t have = h->ring_head < MGC_SHM_RING ? h->ring_head : MGC_SHM_RING;
	for (uint64_t k = 1; k < have; k++) {
		const struct mgc_rec_snapshot *o = &s->ring[(h->ring_head - 1 - k) % MGC_SHM_RING];
		if (o->t_ns > last->t_ns || last->t_ns - o->t_ns > 10000000000ull)
			break;
		old = o;
	}
	uint64_t t1 = h->step_t_ns > last->t_ns ? h->step_t_ns : last->t_ns;
	if (!h->steps_seen || t1 <= old->t_ns + 200000000ull || h->step < old->step)
		return -1;
	return (double)(h->step - old->step) / ((double)(t1 - old->t_ns) / 1e9);
}

/* The latest figures: the ring's newest snapshot. */
static void probe_now(const struct mgc_shm *s, struct mgm_view *v)
{
	const struct mgc_shm_header *h = &s->h;
	v->steps_per_s = -1;
	if (h->ring_head == 0)
		return;
	const struct mgc_rec_snapshot *last = &s->ring[(h->ring_head - 1) % MGC_SHM_RING];
	v->steps_per_s = steps_per_second(s);
	v->rss_anon = last->rss_anon;
	v->rss_file = last->rss_file;
	v->rss_shmem = last->rss_shmem;
	v->rss = last->rss_anon + last->rss_file + last->rss_shmem;
	v->heap = last->heap_live_bytes;
	v->heap_count = last->heap_live_count;
	v->mmap = last->mmap_live_bytes;
	v->mmap_count = last->mmap_live_count;
	v->free_kept = last->malloc_free_bytes;
	uint64_t used = v->heap + v->mmap + v->free_kept;
	v->other = v->rss_anon > used ? v->rss_anon - used : 0;
	if (last->device_live_bytes) {
		v->have_device = 1;
		v->device = last->device_live_bytes;
		v->device_source = "probe";
	}
}

static int collect_probe(struct mgm_collector *c, struct mgm_view *v)
{
	const struct mgc_shm *s = c->copy;
	struct mgc_analysis_opts ao = {0};
	probe_identity(&s->h, v);
	probe_now(s, v);
	if (!v->have_device && !v->exited)
		device_from_nvml(c, v);
	v->sites_total = s->h.nsites_total;
	if (mgc_analyze_shm(s, &ao, &v->a) < 0)
		return -ENOMEM;
	return view_sites(c, v, s);
}

/* ---- without the probe ---- */

/* The process's figures now, from /proc (and NVML); 0, or -ESRCH when it is gone. */
static int proc_now(struct mgm_collector *c, struct mgm_view *v)
{
	char path[64], buf[8192];
	proc_identity(c->pid, v);
	snprintf(path, sizeof path, "/proc/%d/status", c->pid);
	if (mgc_read_file(path, buf, sizeof buf) <= 0)
		return -ESRCH;
	v->rss = mgc_kv_kb(buf, "VmRSS");
	v->rss_anon = mgc_kv_kb(buf, "RssAnon");
	v->rss_file = mgc_kv_kb(buf, "RssFile");
	v->rss_shmem = mgc_kv_kb(buf, "RssShmem");
	v->swap = mgc_kv_kb(buf, "VmSwap");
	snprintf(path, sizeof path, "/proc/%d/smaps_rollup", c->pid);
	if (mgc_read_file(path, buf, sizeof buf) > 0) {
		uint64_t r = mgc_kv_kb(buf, "Rss");
		if (r)
			v->rss = r;
		v->swap = mgc_kv_kb(buf, "Swap");
	}
	v->uptime = proc_uptime(c->pid);
	device_from_nvml(c, v);
	return 0;
}

/* Keeps the sample on the history's grid (mgc_grid.h), and always as the latest. */
static void history_add(struct proc_history *h, const struct mgm_view *v)
{
	struct mgc_point pt = {.t = v->uptime, .rss_anon = v->rss, .device = v->device};
	if (h->grid.samples && !(pt.t > h->latest.t))
		return; /* time must go forward */
	enum mgc_grid_place place = mgc_grid_offer(&h->grid);
	if (place == MGC_GRID_HALVE)
		mgc_grid_halve(h->points, h->grid.cap, sizeof *h->points);
	if (place != MGC_GRID_SKIP)
		h->points[h->grid.n - 1] = pt;
	h->latest = pt;
}

/* The history as a run in seconds: its grid points, then the latest sample when it is not one. */
static int history_analyze(const struct mgm_collector *c, struct mgm_view *v)
{
	const struct proc_history *h = &c->hist;
	size_t n = h->grid.n;
	struct mgc_point *pts = malloc((n + 1) * sizeof *pts);
	if (!pts)
		return -ENOMEM;
	memcpy(pts, h->points, n * sizeof *pts);
	if (h->grid.samples && !mgc_grid_has_latest(&h->grid))
		pts[n++] = h->latest;
	struct mgc_run run = {.points = pts, .npoints = n, .first_marker_t = -1,
			      .cgroup_limit = mgc_cgroup_limit(c->pid), .mem_total = mem_total()};
	struct mgc_analysis_opts ao = {0};
	int rc = mgc_analyze_run(&run, &ao, &v->a);
	free(pts);
	v->samples = n;
	return rc < 0 ? rc : view_sites(NULL, v, NULL);
}

static int collect_proc(struct mgm_collector *c, struct mgm_view *v)
{
	v->probe = 0;
	v->pid = c->pid;
	v->steps_per_s = -1;
	snprintf(v->note, sizeof v->note, "no probe: RSS only");
	if (!v->exited && proc_now(c, v) < 0)
		v->exited = 1;
	else if (!v->exited)
		history_add(&c->hist, v);
	return history_analyze(c, v);
}

/* ---- one refresh ---- */

/* Follows the process: gone (or replaced under its pid), a segment that appeared (a probe that
 * started after mgmon, or after an exec), an exec'd image without the probe (back to /proc). */
static void follow(struct mgm_collector *c)
{
	if (!c->gone) {
		uint64_t t = mgc_proc_start_ticks(c->pid);
		if (t == 0 || (c->start_ticks && t != c->start_ticks))
			c->gone = 1;
	}
	if (!c->map && !c->gone) {
		char e2[256];
		struct mgc_shm_map *m;
		int r = mgc_shm_open(c->pid, &m, e2, sizeof e2);
		if (r == 0) {
			c->refused[0] = 0;
			if (mgc_shm_read(m, c->copy, 0) == 0 && !mgc_shm_is_stale(c->copy)) {
				c->map = m;
				c->have_copy = 1;
			} else {
				mgc_shm_close(m);
			}
		} else if (r == -EPERM || r == -EINVAL) {
			snprintf(c->refused, sizeof c->refused, "%s", e2);
		}
	}
	int r = c->map ? mgc_shm_read(c->map, c->copy, 0) : -ENOENT;
	if (r == 0) {
		c->have_copy = 1;
	} else if (r == -ESTALE) { /* the file was cut under us (a short read, never a SIGBUS) */
		char path[64];
		mgc_shm_path(c->pid, path, sizeof path);
		snprintf(c->refused, sizeof c->refused, "%s changed: it was cut while mgmon read it, so "
			 "its figures stop here (RSS from /proc)", path);
		mgc_shm_close(c->map);
		c->map = NULL;
		c->have_copy = 0;
	}
	if (c->map && c->have_copy && c->copy->h.state == MGC_SHM_EXECED && !c->gone) {
		mgc_shm_close(c->map);
		c->map = NULL;
		c->have_copy = 0;
	}
}

int mgm_collect(struct mgm_collector *c, struct mgm_view *v)
{
	char keep_comm[64], keep_cmd[256];
	snprintf(keep_comm, sizeof keep_comm, "%s", v->comm);
	snprintf(keep_cmd, sizeof keep_cmd, "%s", v->cmdline);
	mgm_view_free(v);
	v->pid = c->pid;
	follow(c);
	if (c->have_copy && c->copy->h.state == MGC_SHM_EXITED) {
		v->exited = v->exit_known = 1;
		v->exit_status = c->copy->h.exit_status;
	}
	v->exited |= c->gone;
	int r = c->have_copy ? collect_probe(c, v) : collect_proc(c, v);
	if (!c->have_copy && v->exited) {
		c->gone = 1;
		if (!v->comm[0]) { /* the name it had while it ran */
			snprintf(v->comm, sizeof v->comm, "%s", keep_comm);
			snprintf(v->cmdline, sizeof v->cmdline, "%s", keep_cmd);
		}
	}
	snprintf(v->notice, sizeof v->notice, "%s", c->refused);
	if (v->exited && v->exit_known)
		snprintf(v->note, sizeof v->note, "exited (status %d): final state", v->exit_status);
	else if (v->exited)
		snprintf(v->note, sizeof v->note, "exited: final state%s", v->probe ? "" : " (no probe: RSS only)");
	return r;
}

/* ---- sorting ---- */

const char *mgm_sort_name(enum mgm_sort s)
{
	switch (s) {
	case MGM_SORT_LIVE:
		return "live bytes";
	case MGM_SORT_ALLOCS:
		return "allocations";
	default:
		return "growth";
	}
}

/* The analysis's ranking: its sites are in that order. */
static int by_rank(const void *a, const void *b)
{
	const struct mgm_site *x = a, *y = b;
	return x->r < y->r ? -1 : x->r > y->r;
}

static int by_live(const void *a, const void *b)
{
	const struct mgm_site *x = a, *y = b;
	if (x->r->counters.live_bytes != y->r->counters.live_bytes)
		return x->r->counters.live_bytes < y->r->counters.live_bytes ? 1 : -1;
	return by_rank(a, b);
}

static int by_allocs(const void *a, const void *b)
{
	const struct mgm_site *x = a, *y = b;
	if (x->r->counters.allocs != y->r->counters.allocs)
		return x->r->counters.allocs < y->r->counters.allocs ? 1 : -1;
	return by_rank(a, b);
}

void mgm_sort_sites(struct mgm_view *v, enum mgm_sort s)
{
	if (v->nsites)
		qsort(v->sites, v->nsites, sizeof *v->sites,
		      s == MGM_SORT_LIVE ? by_live : s == MGM_SORT_ALLOCS ? by_allocs : by_rank);
}
