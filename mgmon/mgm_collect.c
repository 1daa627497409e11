/* SPDX-License-Identifier: MIT */
/* mgm_collect.c: fills struct mgm_view from the probe's segment (a seqlock-consistent copy via
 * libmgcore's reader) or, without the probe, from /proc/PID (status, smaps_rollup) and NVML;
 * classifies series and sites with the same libmgcore classifier as mgreport and symbolizes
 * stacks once per site. It must never write to the target or its segment, and never abort. */
#define _GNU_SOURCE
#include "mgm_collect.h"

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "mgc_shm.h"
#include "mgc_python.h"
#include "mgc_symbols.h"
#include "mgm_nvml.h"

#define HIST_CAP 512u /* points kept by the no-probe history before it is halved */

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
	char **strings;              /* module paths handed out in frames */
	size_t nstrings;
	struct mgm_nvml *nvml;
	int nvml_tried;
	/* Without the probe: our own history of samples. */
	double *hx, *hrss, *hgpu;
	size_t hn;
	uint32_t hstride, hsince;
	int gone;
	struct mgm_view last;        /* scratch for the identity of a vanished process */
};

/* ---- small /proc helpers ---- */

static long read_file(const char *path, char *buf, size_t cap)
{
	FILE *f = fopen(path, "re");
	if (!f)
		return -errno;
	size_t n = fread(buf, 1, cap - 1, f);
	fclose(f);
	buf[n] = 0;
	return (long)n;
}

static uint64_t kv_kb(const char *text, const char *key)
{
	size_t kl = strlen(key);
	for (const char *p = text; p && *p;) {
		if (strncmp(p, key, kl) == 0 && p[kl] == ':')
			return strtoull(p + kl + 1, NULL, 10) * 1024;
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return 0;
}

static double proc_uptime(int pid)
{
	char buf[128];
	uint64_t ticks = mgc_proc_start_ticks(pid);
	if (!ticks || read_file("/proc/uptime", buf, sizeof buf) <= 0)
		return 0;
	double up = strtod(buf, NULL) - (double)ticks / (double)sysconf(_SC_CLK_TCK);
	return up > 0 ? up : 0;
}

static void proc_identity(int pid, struct mgm_view *v)
{
	char path[64], buf[4096];
	snprintf(path, sizeof path, "/proc/%d/comm", pid);
	if (read_file(path, buf, sizeof buf) > 0) {
		buf[strcspn(buf, "\n")] = 0;
		snprintf(v->comm, sizeof v->comm, "%.63s", buf);
	}
	snprintf(path, sizeof path, "/proc/%d/cmdline", pid);
	long n = read_file(path, buf, sizeof buf);
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
	if (read_file(path, buf, sizeof buf) > 0) {
		const char *pp = strstr(buf, "\nPPid:");
		if (pp)
			v->ppid = atoi(pp + 6);
	}
}

/* The memory limit that matters: the tightest cgroup memory.max, else what the machine can give. */
static void find_limit(int pid, uint64_t cgroup_from_probe, uint64_t rss, struct mgm_view *v)
{
	char path[1100], cg[512], val[64], meminfo[4096];
	uint64_t best = cgroup_from_probe;
	snprintf(path, sizeof path, "/proc/%d/cgroup", pid);
	if (!best && read_file(path, cg, sizeof cg) > 0) {
		char *p = strstr(cg, "0::");
		if (p) {
			p += 3;
			p[strcspn(p, "\n")] = 0;
			for (;;) {
				snprintf(path, sizeof path, "/sys/fs/cgroup%s/memory.max", strcmp(p, "/") ? p : "");
				if (read_file(path, val, sizeof val) > 0 && val[0] >= '0' && val[0] <= '9') {
					uint64_t x = strtoull(val, NULL, 10);
					if (x && (!best || x < best))
						best = x;
				}
				char *slash = strrchr(p, '/');
				if (!slash || slash == p)
					break;
				*slash = 0;
			}
		}
	}
	if (best) {
		v->limit = (double)best;
		v->limit_source = "cgroup";
	} else if (read_file("/proc/meminfo", meminfo, sizeof meminfo) > 0) {
		v->limit = (double)(kv_kb(meminfo, "MemAvailable") + rss);
		v->limit_source = "MemAvailable+RSS";
	}
}

/* ---- opening ---- */

int mgm_collector_open(int pid, struct mgm_collector **out, char *err, size_t errlen)
{
	char path[64];
	struct stat st;
	*out = NULL;
	snprintf(path, sizeof path, "/proc/%d", pid);
	if (pid <= 0 || stat(path, &st) < 0) {
		struct mgc_shm_map *m;
		char e2[256];
		if (pid > 0 && mgc_shm_open(pid, &m, e2, sizeof e2) == 0) {
			mgc_shm_close(m);
			mgc_shm_path(pid, path, sizeof path);
			snprintf(err, errlen,
				 "process %d is not running; %s is a stale segment it left (killed?): remove it "
				 "with rm %s",
				 pid, path, path);
			return -ESTALE;
		}
		snprintf(err, errlen, "no such process: %d", pid);
		return -ESRCH;
	}
	if (st.st_uid != geteuid() && geteuid() != 0) {
		snprintf(err, errlen, "process %d belongs to another user (uid %u): mgmon can watch only "
			 "your own processes", pid, (unsigned)st.st_uid);
		return -EPERM;
	}
	struct mgm_collector *c = calloc(1, sizeof *c);
	if (!c || !(c->copy = malloc(sizeof *c->copy)) || !(c->sym = mgc_symbolizer_new())) {
		if (c)
			free(c->copy);
		free(c);
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	c->pid = pid;
	c->start_ticks = mgc_proc_start_ticks(pid);
	c->hstride = 1;
	char e2[256];
	int r = -EAGAIN;
	for (int t = 0; t < 50 && r == -EAGAIN; t++) {
		r = mgc_shm_open(pid, &c->map, e2, sizeof e2);
		if (r == -EAGAIN)
			usleep(10000);
	}
	if (r == -EPROTO || r == -EINVAL || r == -EACCES) {
		snprintf(err, errlen, "%s", e2);
		mgm_collector_free(c);
		return r == -EACCES ? -EPERM : -EPROTO;
	}
	if (r == 0) {
		/* A segment whose writer is not this process (a reused pid): ignore it. */
		if (mgc_shm_read(c->map, c->copy, 0) == 0 && mgc_shm_is_stale(c->copy)) {
			mgc_shm_close(c->map);
			c->map = NULL;
		} else {
			c->have_copy = 0;
		}
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
		free(c->stacks[i]->frames);
		free(c->stacks[i]);
	}
	free(c->stacks);
	for (size_t i = 0; i < c->nstrings; i++)
		free(c->strings[i]);
	free(c->strings);
	mgc_symbolizer_free(c->sym);
	mgc_pycodes_free(c->py);
	mgm_nvml_close(c->nvml);
	free(c->hx);
	free(c->hrss);
	free(c->hgpu);
	free(c);
}

void mgm_view_free(struct mgm_view *v)
{
	for (int k = 0; k < MGM_S_N; k++) {
		free(v->series[k].x);
		free(v->series[k].y);
	}
	for (size_t i = 0; i < v->nsites; i++)
		free(v->sites[i].y);
	free(v->sites);
	memset(v, 0, sizeof *v);
}

static const char *const series_names[MGM_S_N] = {"rss", "heap", "mmap", "free_kept", "gpu"};

static int alloc_series(struct mgm_view *v, size_t n)
{
	for (int k = 0; k < MGM_S_N; k++) {
		v->series[k].name = series_names[k];
		v->series[k].x = calloc(n ? n : 1, sizeof(double));
		v->series[k].y = calloc(n ? n : 1, sizeof(double));
		if (!v->series[k].x || !v->series[k].y)
			return -ENOMEM;
	}
	return 0;
}

/* The process's GPU memory from NVML (loaded on first use), into v when NVML knows the process. */
static void gpu_from_nvml(struct mgm_collector *c, struct mgm_view *v)
{
	int found = 0;
	if (!c->nvml_tried) {
		c->nvml_tried = 1;
		c->nvml = mgm_nvml_open();
	}
	uint64_t g = c->nvml ? mgm_nvml_process_bytes(c->nvml, c->pid, &found) : 0;
	if (found) {
		v->have_gpu = 1;
		v->gpu = g;
		v->gpu_source = "NVML";
	}
}

/* ---- symbolization ---- */

static const char *keep_string(struct mgm_collector *c, const char *s)
{
	char **ns = realloc(c->strings, (c->nstrings + 1) * sizeof *ns);
	if (!ns)
		return "??";
	c->strings = ns;
	if (!(ns[c->nstrings] = strdup(s)))
		return "??";
	return ns[c->nstrings++];
}

static int boring_module(const char *m)
{
	const char *b = m ? strrchr(m, '/') : NULL;
	b = b ? b + 1 : m;
	if (!b)
		return 1;
	return strncmp(b, "libc.so", 7) == 0 || strncmp(b, "libc-", 5) == 0 || strncmp(b, "ld-linux", 8) == 0 ||
	       strncmp(b, "libstdc++", 9) == 0 || strncmp(b, "libmgprobe", 10) == 0;
}

/* The segment's Python code objects not known yet (ids never change meaning in a process). */
static void import_pycodes(struct mgm_collector *c)
{
	const struct mgc_shm_py *py = &c->copy->py;
	for (uint32_t i = 0; i < py->ncodes; i++) {
		const struct mgc_shm_pycode *pc = &py->codes[i];
		const char *b = py->bytes + pc->off;
		if (!mgc_pycodes_has(c->py, pc->id))
			mgc_pycodes_put(&c->py, pc->id, pc->firstlineno, b, pc->qualname_len, b + pc->qualname_len,
					pc->file_len, b + pc->qualname_len + pc->file_len, pc->linetable_len);
	}
}

/* The frame to name in tables: the first Python frame in the user's own code, else the first
 * Python frame, else the first known function outside libc and the allocator. */
static size_t shown_frame(const struct mgm_stack *st)
{
	size_t py = st->n;
	for (size_t i = 0; i < st->n; i++) {
		if (!st->frames[i].module && st->frames[i].file && py == st->n)
			py = i;
		if (!st->frames[i].module && !mgc_pyfile_is_library(st->frames[i].file))
			return i;
	}
	if (py < st->n)
		return py;
	size_t first_known = st->n;
	for (size_t i = 0; i < st->n; i++) {
		int known = strcmp(st->frames[i].function, "??") != 0;
		if (known && first_known == st->n)
			first_known = i;
		if (known && !boring_module(st->frames[i].module))
			return i;
	}
	return first_known < st->n ? first_known : 0;
}

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
	if (!st)
		return NULL;
	st->id = e->site;
	st->truncated = e->full_nframes > e->nframes;
	size_t cap = (size_t)e->nframes * 2 + 1;
	st->frames = calloc(cap, sizeof *st->frames);
	if (!st->frames) {
		free(st);
		return NULL;
	}
	for (unsigned i = 0; i < e->nframes; i++) {
		uint64_t ip = e->ips[i];
		if (mgc_pyframe_is(ip)) { /* a Python frame: module NULL, file and line from its code */
			struct mgc_pyframe pf;
			if (!mgc_pycodes_has(c->py, mgc_pyframe_code(ip)))
				import_pycodes(c);
			mgc_pycodes_frame(c->py, ip, &pf);
			if (st->n + 1 <= cap)
				st->frames[st->n++] = (struct mgm_frame){pf.function, pf.file, NULL, pf.line, 0};
			continue;
		}
		const struct mgc_shm_module *m = mgc_shm_module_for(c->copy, ip - 1);
		struct mgc_frame fr[8];
		int k = 0;
		const char *mpath = "??";
		if (m) {
			char buf[4096];
			mgc_shm_module_path(c->copy, m, buf, sizeof buf);
			mpath = keep_string(c, buf);
			k = mgc_symbolize(c->sym, mpath, m->build_id, m->build_id_len, m->bias, ip, fr, 8);
		}
		if (k <= 0) {
			if (st->n + 1 <= cap)
				st->frames[st->n++] = (struct mgm_frame){"??", NULL, mpath, 0, 0};
			continue;
		}
		for (int j = 0; j < k; j++) {
			if (st->n + 1 > cap) {
				struct mgm_frame *nf = realloc(st->frames, cap * 2 * sizeof *nf);
				if (!nf)
					break;
				st->frames = nf;
				cap *= 2;
			}
			st->frames[st->n++] = (struct mgm_frame){fr[j].function, fr[j].file, mpath, fr[j].line,
								 fr[j].inlined};
		}
	}
	st->shown = shown_frame(st);
	c->stacks[c->nstacks++] = st;
	return st;
}

/* ---- the probe's view ---- */

static int collect_probe(struct mgm_collector *c, struct mgm_view *v)
{
	const struct mgc_shm *s = c->copy;
	const struct mgc_shm_header *h = &s->h;
	v->probe = 1;
	v->pid = h->pid;
	v->ppid = h->ppid;
	snprintf(v->comm, sizeof v->comm, "%.*s", (int)sizeof h->comm, h->comm);
	snprintf(v->cmdline, sizeof v->cmdline, "%.*s", (int)sizeof h->cmdline, h->cmdline);
	snprintf(v->label, sizeof v->label, "%.*s", (int)sizeof h->label - 1, h->label);
	v->x_is_steps = h->steps_seen > 0;
	v->step = h->step;
	v->samples = h->publishes;
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	uint64_t now = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	v->uptime = v->exited ? (double)h->updated_ns / 1e9 : (double)(now - h->start_mono_ns) / 1e9;
	for (uint32_t i = 0; i < h->nchildren && i < MGM_MAX_CHILDREN; i++)
		v->children[v->nchildren++] = h->children[i];

	/* Steps per second over the last ~10 s of the ring. */
	v->steps_per_s = -1;
	if (h->ring_head > 0) {
		const struct mgc_rec_snapshot *last = &s->ring[(h->ring_head - 1) % MGC_SHM_RING];
		uint64_t have = h->ring_head < MGC_SHM_RING ? h->ring_head : MGC_SHM_RING;
		const struct mgc_rec_snapshot *old = last;
		for (uint64_t k = 1; k < have; k++) {
			const struct mgc_rec_snapshot *o = &s->ring[(h->ring_head - 1 - k) % MGC_SHM_RING];
			if (o->t_ns > last->t_ns || last->t_ns - o->t_ns > 10000000000ull)
				break;
			old = o;
		}
		uint64_t t1 = h->step_t_ns > last->t_ns ? h->step_t_ns : last->t_ns;
		uint64_t st1 = h->step;
		if (v->x_is_steps && t1 > old->t_ns + 200000000ull && st1 >= old->step)
			v->steps_per_s = (double)(st1 - old->step) / ((double)(t1 - old->t_ns) / 1e9);
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
			v->have_gpu = 1;
			v->gpu = last->device_live_bytes;
			v->gpu_source = "probe";
		}
	}
	if (!v->have_gpu && !v->exited)
		gpu_from_nvml(c, v);
	find_limit(v->pid, h->cgroup_limit, v->rss, v);

	/* The x axis: grid points with strictly increasing x. */
	uint32_t gn = h->grid_n;
	size_t idx[MGC_SHM_GRID], n = 0;
	for (uint32_t i = 0; i < gn; i++) {
		double x = v->x_is_steps ? (double)s->grid[i].step : (double)s->grid[i].t_ns / 1e9;
		double px = n ? (v->x_is_steps ? (double)s->grid[idx[n - 1]].step
					       : (double)s->grid[idx[n - 1]].t_ns / 1e9)
			      : -INFINITY;
		if (x > px)
			idx[n++] = i;
		else if (n && x == px)
			idx[n - 1] = i;
	}
	if (alloc_series(v, n) < 0)
		return -ENOMEM;
	int any_device = 0;
	for (size_t i = 0; i < n; i++) {
		const struct mgc_rec_snapshot *p = &s->grid[idx[i]];
		double x = v->x_is_steps ? (double)p->step : (double)p->t_ns / 1e9;
		double ys[MGM_S_N] = {(double)(p->rss_anon + p->rss_file + p->rss_shmem),
				      (double)p->heap_live_bytes, (double)p->mmap_live_bytes,
				      (double)p->malloc_free_bytes, (double)p->device_live_bytes};
		for (int k = 0; k < MGM_S_N; k++) {
			v->series[k].x[i] = x;
			v->series[k].y[i] = ys[k];
		}
		any_device |= p->device_live_bytes != 0;
	}
	/* the same floors as mgreport: the process's series, and the classifier's own for sites */
	struct mgc_classify_opts co = {.limit = v->limit, .x_is_steps = v->x_is_steps,
				       .min_growth = v->x_is_steps ? MGC_PROCESS_MIN_GROWTH_STEP
								   : MGC_PROCESS_MIN_GROWTH_SEC};
	struct mgc_classify_opts site_co = {.limit = v->limit, .x_is_steps = v->x_is_steps,
					    .sample_rate = (double)s->sampling.rate};
	for (int k = 0; k < MGM_S_N; k++) {
		struct mgm_series *se = &v->series[k];
		se->n = n;
		se->valid = n > 0 && (k != MGM_S_GPU || any_device);
		se->ok = se->valid && n >= 3 && mgc_classify(se->x, se->y, n, &co, &se->fit) == 0;
	}
	if (n >= 3) {
		double *live = calloc(n, sizeof *live);
		if (!live)
			return -ENOMEM;
		for (size_t i = 0; i < n; i++)
			live[i] = v->series[MGM_S_HEAP].y[i] + v->series[MGM_S_MMAP].y[i] + v->series[MGM_S_GPU].y[i];
		v->have_verdict = mgc_classify_process(v->series[0].x, v->series[0].y, live,
						       v->series[MGM_S_FREE].y, n, &co, &v->verdict) == 0;
		free(live);
	}

	/* Sites. */
	v->sites_total = h->nsites_total;
	v->sites = calloc(h->nsites ? h->nsites : 1, sizeof *v->sites);
	if (!v->sites)
		return -ENOMEM;
	double y[MGC_SHM_GRID];
	double leak_slope = 0, leak_conf = 0;
	for (uint32_t i = 0; i < h->nsites; i++) {
		const struct mgc_shm_site *e = &s->sites[i];
		struct mgm_site *ms = &v->sites[v->nsites++];
		ms->id = e->site;
		ms->kind = e->kind;
		ms->live_bytes = e->live_bytes;
		ms->band = s->sampling.rate ? 2.0 * sqrt((double)s->sampling.live_var[i] *
							 (double)s->sampling.rate) : 0;
		ms->live_count = e->live_count;
		ms->allocs = e->allocs;
		ms->frees = e->frees;
		ms->peak_bytes = e->peak_bytes;
		for (size_t k = 0; k < n; k++)
			y[k] = e->history[idx[k]];
		if ((ms->y = malloc((n ? n : 1) * sizeof(double))) != NULL) {
			memcpy(ms->y, y, n * sizeof(double));
			ms->n = n;
		}
		ms->growth = n >= 2 ? y[n - 1] - y[n / 2 > 0 ? (n - 1) / 2 : 0] : 0;
		struct mgc_site_evidence ev = {.x = v->series[0].x, .live = y, .n = n, .cohorts = e->cohorts,
					       .ncohorts = MGC_COHORTS, .last_step = (double)h->step,
					       .allocs = e->allocs, .frees = e->frees, .live_count = e->live_count};
		ms->ok = n >= 3 && mgc_classify_site(&ev, &site_co, &ms->fit) == 0;
		if (ms->ok && ms->fit.verdict == MGC_VERDICT_LEAK) {
			v->leaking++;
			/* device sites judge the GPU series, not the host process (as in mgreport) */
			if (ms->fit.slope > 0 && !mgc_kind_is_cuda(e->kind)) {
				leak_slope += ms->fit.slope;
				leak_conf = fmax(leak_conf, ms->fit.confidence);
			}
		}
		ms->stack = stack_for(c, e);
	}
	if (v->have_verdict)
		mgc_process_with_sites(&v->verdict, v->series[0].x, v->series[0].y, n, leak_slope, leak_conf,
				       v->x_is_steps, v->limit);
	return 0;
}

/* ---- without the probe ---- */

static void hist_add(struct mgm_collector *c, double x, double rss, double gpu)
{
	if (!c->hx) {
		c->hx = calloc(HIST_CAP, sizeof(double));
		c->hrss = calloc(HIST_CAP, sizeof(double));
		c->hgpu = calloc(HIST_CAP, sizeof(double));
		if (!c->hx || !c->hrss || !c->hgpu)
			return;
	}
	if (c->hn && !(x > c->hx[c->hn - 1]))
		return;
	size_t slot;
	if (c->hn && c->hsince < c->hstride) {
		slot = c->hn - 1;
		c->hsince++;
	} else {
		if (c->hn == HIST_CAP) {
			for (size_t k = 0; k < HIST_CAP / 2; k++) {
				c->hx[k] = c->hx[2 * k];
				c->hrss[k] = c->hrss[2 * k];
				c->hgpu[k] = c->hgpu[2 * k];
			}
			c->hn = HIST_CAP / 2;
			c->hstride *= 2;
		}
		slot = c->hn++;
		c->hsince = 1;
	}
	c->hx[slot] = x;
	c->hrss[slot] = rss;
	c->hgpu[slot] = gpu;
}

static int collect_proc(struct mgm_collector *c, struct mgm_view *v)
{
	char path[64], buf[8192];
	v->probe = 0;
	v->pid = c->pid;
	v->steps_per_s = -1;
	snprintf(v->note, sizeof v->note, "no probe: RSS only");
	if (!v->exited) {
		proc_identity(c->pid, v);
		snprintf(path, sizeof path, "/proc/%d/status", c->pid);
		if (read_file(path, buf, sizeof buf) <= 0) {
			v->exited = 1;
		} else {
			v->rss = kv_kb(buf, "VmRSS");
			v->rss_anon = kv_kb(buf, "RssAnon");
			v->rss_file = kv_kb(buf, "RssFile");
			v->rss_shmem = kv_kb(buf, "RssShmem");
			v->swap = kv_kb(buf, "VmSwap");
			snprintf(path, sizeof path, "/proc/%d/smaps_rollup", c->pid);
			if (read_file(path, buf, sizeof buf) > 0) {
				uint64_t r = kv_kb(buf, "Rss");
				if (r)
					v->rss = r;
				v->swap = kv_kb(buf, "Swap");
			}
			v->uptime = proc_uptime(c->pid);
			gpu_from_nvml(c, v);
			hist_add(c, v->uptime, (double)v->rss, (double)v->gpu);
			find_limit(c->pid, 0, v->rss, v);
		}
	}
	size_t n = c->hn;
	if (alloc_series(v, n) < 0)
		return -ENOMEM;
	v->samples = n;
	for (int k = 0; k < MGM_S_N; k++) {
		struct mgm_series *se = &v->series[k];
		se->n = n;
		if (k != MGM_S_RSS && !(k == MGM_S_GPU && v->have_gpu))
			continue;
		se->valid = n > 0;
		memcpy(se->x, c->hx, n * sizeof(double));
		memcpy(se->y, k == MGM_S_RSS ? c->hrss : c->hgpu, n * sizeof(double));
	}
	struct mgc_classify_opts co = {.limit = v->limit, .x_is_steps = 0};
	for (int k = 0; k < MGM_S_N; k++) {
		struct mgm_series *se = &v->series[k];
		se->ok = se->valid && n >= 3 && mgc_classify(se->x, se->y, n, &co, &se->fit) == 0;
	}
	if (v->series[MGM_S_RSS].ok) {
		v->have_verdict = 1;
		v->verdict = v->series[MGM_S_RSS].fit;
	}
	return 0;
}

/* ---- one refresh ---- */

int mgm_collect(struct mgm_collector *c, struct mgm_view *v)
{
	char keep_comm[64], keep_cmd[256];
	int had_probe = v->probe;
	snprintf(keep_comm, sizeof keep_comm, "%s", v->comm);
	snprintf(keep_cmd, sizeof keep_cmd, "%s", v->cmdline);
	mgm_view_free(v);
	v->pid = c->pid;

	if (!c->gone) {
		uint64_t t = mgc_proc_start_ticks(c->pid);
		if (t == 0 || (c->start_ticks && t != c->start_ticks))
			c->gone = 1;
	}
	/* Attach late: a probe that started after mgmon (or after an exec) creates its segment. */
	if (!c->map && !c->gone) {
		char e2[256];
		struct mgc_shm_map *m;
		if (mgc_shm_open(c->pid, &m, e2, sizeof e2) == 0) {
			if (mgc_shm_read(m, c->copy, 0) == 0 && !mgc_shm_is_stale(c->copy)) {
				c->map = m;
				c->have_copy = 1;
			} else {
				mgc_shm_close(m);
			}
		}
	}
	if (c->map) {
		int r = mgc_shm_read(c->map, c->copy, 0);
		if (r == 0)
			c->have_copy = 1;
		/* An exec'd image without the probe: back to /proc. */
		if (c->have_copy && c->copy->h.state == MGC_SHM_EXECED && !c->gone) {
			mgc_shm_close(c->map);
			c->map = NULL;
			c->have_copy = 0;
		}
	}
	if (c->have_copy && c->copy->h.state == MGC_SHM_EXITED) {
		v->exited = 1;
		v->exit_known = 1;
		v->exit_status = c->copy->h.exit_status;
	}
	if (c->gone)
		v->exited = 1;
	int r;
	if (c->have_copy) {
		r = collect_probe(c, v);
	} else {
		r = collect_proc(c, v);
		if (v->exited && !v->comm[0]) {
			snprintf(v->comm, sizeof v->comm, "%s", keep_comm);
			snprintf(v->cmdline, sizeof v->cmdline, "%s", keep_cmd);
		}
		if (v->exited)
			c->gone = 1;
	}
	(void)had_probe;
	if (v->exited) {
		if (v->exit_known)
			snprintf(v->note, sizeof v->note, "exited (status %d): final state", v->exit_status);
		else
			snprintf(v->note, sizeof v->note, "exited: final state%s", v->probe ? "" : " (no probe: RSS only)");
	}
	mgm_sort_sites(v, MGM_SORT_GROWTH);
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

/* Growth that matters: more than 4 KB and 1% of what the site holds; smaller is noise. */
static double real_growth(const struct mgm_site *s)
{
	return s->growth > 4096 && s->growth > 0.01 * (double)s->live_bytes ? s->growth : 0;
}

/* Leaks first, then what is still growing (by slope), then the rest by recent growth and size. */
static int by_growth(const void *a, const void *b)
{
	const struct mgm_site *x = a, *y = b;
	int rx = x->ok && x->fit.verdict == MGC_VERDICT_LEAK ? 2 : x->ok && x->fit.verdict == MGC_VERDICT_GROWING ? 1 : 0;
	int ry = y->ok && y->fit.verdict == MGC_VERDICT_LEAK ? 2 : y->ok && y->fit.verdict == MGC_VERDICT_GROWING ? 1 : 0;
	if (rx != ry)
		return ry - rx;
	if (rx && x->fit.slope != y->fit.slope)
		return x->fit.slope < y->fit.slope ? 1 : -1;
	double gx = real_growth(x), gy = real_growth(y);
	if (gx != gy)
		return gx < gy ? 1 : -1;
	if (x->live_bytes != y->live_bytes)
		return x->live_bytes < y->live_bytes ? 1 : -1;
	return x->id < y->id ? -1 : x->id > y->id;
}

static int by_live(const void *a, const void *b)
{
	const struct mgm_site *x = a, *y = b;
	if (x->live_bytes != y->live_bytes)
		return x->live_bytes < y->live_bytes ? 1 : -1;
	return x->id < y->id ? -1 : x->id > y->id;
}

static int by_allocs(const void *a, const void *b)
{
	const struct mgm_site *x = a, *y = b;
	if (x->allocs != y->allocs)
		return x->allocs < y->allocs ? 1 : -1;
	return x->id < y->id ? -1 : x->id > y->id;
}

void mgm_sort_sites(struct mgm_view *v, enum mgm_sort s)
{
	if (v->nsites)
		qsort(v->sites, v->nsites, sizeof *v->sites,
		      s == MGM_SORT_LIVE ? by_live : s == MGM_SORT_ALLOCS ? by_allocs : by_growth);
}
