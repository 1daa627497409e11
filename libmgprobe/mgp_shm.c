/* SPDX-License-Identifier: MIT */
/* mgp_shm.c: publishes the probe's live state in /dev/shm/mgprobe.<pid> (layout:
 * mgc_shm_format.h) for mgmon. Runs only with the writer lock held, never on the allocation fast
 * path; never calls malloc (tables come from mgp_os_alloc, the segment from raw mmap) and never
 * fails the target: the segment's pages are reserved with fallocate up front so a full /dev/shm
 * cannot SIGBUS the program later, and any error turns publishing off with one line. */
#define _GNU_SOURCE
#include "mgp_shm.h"

#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "mgc_proc.h"
#include "mgc_shm_format.h"
#include "mgp_elf.h"
#include "mgp_os.h"
#include "mgp_sites.h"

#define G MGC_SHM_GRID
#define STEP_MIN_GAP_NS 20000000ull /* step markers closer than this only update the step */

struct top {
	uint32_t id;
	double key;
};

/* The publisher's whole state. `seg` is NULL while publishing is off. */
static struct {
	struct mgc_shm *seg;
	int pid;
	uint64_t start_mono;
	uint32_t max_sites;
	float *hist;             /* max_sites * G: live bytes of every site at each grid point */
	size_t hist_size;
	struct mgc_rec_snapshot grid[G];
	uint32_t grid_n, stride, since;
	uint64_t steps_seen, cur_step, step_t, last_full;
	uint64_t scan_ns; /* how long the last full publish's site scan took */
	uint64_t ring_head, publishes;
	unsigned long long adds, subs;
	int mods_dirty;
	uint32_t nmods, names_used;
	struct mgc_shm_module mods[MGC_SHM_MODULES];
	char names[MGC_SHM_NAMES];
	struct top by_live[MGC_SHM_TOP], by_growth[MGC_SHM_TOP];
	uint32_t nlive, ngrowth;
	char status[8192];
} S;

static void turn_off(const char *what, int err)
{
	char name[32];
	mgc_shm_name(S.pid, name, sizeof name);
	mgp_log("cannot publish live state in /dev/shm%s (%s: %s): mgmon will show RSS only", name, what,
		strerror(err));
	if (S.seg)
		syscall(SYS_munmap, S.seg, sizeof *S.seg);
	S.seg = NULL;
}

static void fill_identity(struct mgc_shm_header *h)
{
	char buf[4096];
	long n = mgc_read_file("/proc/self/comm", buf, sizeof buf);
	size_t k = 0;
	for (long i = 0; i < n && buf[i] != '\n' && k + 1 < sizeof h->comm; i++)
		h->comm[k++] = buf[i];
	h->comm[k] = 0;
	n = mgc_read_file("/proc/self/cmdline", buf, sizeof buf);
	while (n > 0 && buf[n - 1] == 0)
		n--;
	k = 0;
	for (long i = 0; i < n && k + 1 < sizeof h->cmdline; i++)
		h->cmdline[k++] = buf[i] ? buf[i] : ' ';
	h->cmdline[k] = 0;
	if (mgc_read_file("/proc/meminfo", buf, sizeof buf) > 0)
		h->mem_total = mgc_kv_kb(buf, "MemTotal");
	h->cgroup_limit = mgc_cgroup_limit(0);
	h->start_ticks = mgc_proc_start_ticks(0);
	h->rank = h->local_rank = -1;
	const char *r = getenv("RANK");
	uint64_t v;
	if (!r)
		r = getenv("SLURM_PROCID");
	if (r && mgp_parse_u64(r, &v) == 0)
		h->rank = (int32_t)v;
	r = getenv("LOCAL_RANK");
	if (r && mgp_parse_u64(r, &v) == 0)
		h->local_rank = (int32_t)v;
}

/* Removes this user's segments whose process is gone (killed: no exit path ran). Raw getdents64:
 * opendir would malloc. A probe in another pid namespace sharing /dev/shm would look dead here:
 * that setup is not supported. */
static void sweep_stale(void)
{
	char buf[4096] __attribute__((aligned(8)));
	int fd = open("/dev/shm", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return;
	uid_t me = geteuid();
	for (;;) {
		long n = syscall(SYS_getdents64, fd, buf, sizeof buf);
		if (n <= 0)
			break;
		for (long off = 0; off < n;) {
			const char *ent = buf + off;
			unsigned short reclen;
			memcpy(&reclen, ent + 16, sizeof reclen);
			const char *name = ent + 19; /* d_ino 8, d_off 8, d_reclen 2, d_type 1 */
			off += reclen ? reclen : n;
			uint64_t pid;
			if (strncmp(name, "mgprobe.", 8) != 0 || mgp_parse_u64(name + 8, &pid) < 0 || pid == 0 ||
			    pid > 0x3fffffff)
				continue;
			char path[40];
			struct stat st;
			mgp_fmt(path, sizeof path, "/proc/%d", (int)pid);
			if (access(path, F_OK) == 0 || errno != ENOENT)
				continue;
			if (fstatat(fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && st.st_uid == me && S_ISREG(st.st_mode))
				unlinkat(fd, name, 0);
		}
	}
	close(fd);
}

void mgp_shm_open(const struct mgp_shm_info *info)
{
	char name[32];
	S.pid = mgp_getpid();
	S.start_mono = info->start_mono_ns;
	if (!S.hist) {
		sweep_stale(); /* once per program, not in every forked child */
		S.hist_size = (size_t)info->max_sites * G * sizeof(float);
		S.hist = mgp_os_alloc(S.hist_size);
		if (!S.hist) {
			turn_off("history table", ENOMEM);
			return;
		}
		S.max_sites = info->max_sites;
	}
	S.grid_n = 0;
	S.stride = 1;
	S.since = 0;
	S.ring_head = S.publishes = 0;
	S.last_full = 0;
	S.adds = S.subs = 0;
	S.mods_dirty = 1;
	mgc_shm_name(S.pid, name, sizeof name);
	shm_unlink(name); /* a stale segment of a dead process that had our pid, or our pre-exec image */
	int fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0) {
		turn_off("shm_open", errno);
		return;
	}
	int err = 0;
	const char *what = NULL;
	if (fchmod(fd, 0600) < 0)
		err = errno, what = "fchmod";
	else {
		sigset_t old;
		mgp_xfsz_hold(&old); /* a file-size limit turns publishing off, not the program */
		err = posix_fallocate(fd, 0, sizeof(struct mgc_shm));
		mgp_xfsz_release(&old, err == EFBIG);
		if (err)
			what = "reserve pages";
	}
	if (!what && !(S.seg = mgp_os_map(NULL, sizeof(struct mgc_shm), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)))
		err = ENOMEM, what = "mmap";
	close(fd);
	if (what) {
		shm_unlink(name);
		turn_off(what, err);
		return;
	}
	struct mgc_shm_header *h = &S.seg->h;
	h->version = MGC_SHM_VERSION;
	h->header_size = sizeof *h;
	h->total_size = sizeof(struct mgc_shm);
	h->pid = S.pid;
	h->ppid = (int32_t)getppid();
	h->start_realtime_ns = info->start_realtime_ns;
	h->start_mono_ns = info->start_mono_ns;
	h->interval_ms = info->interval_ms;
	h->depth = info->depth;
	h->state = MGC_SHM_RUNNING;
	h->grid_stride = 1;
	fill_identity(h);
	/* The magic last: a reader that sees it sees a filled header. */
	__atomic_thread_fence(__ATOMIC_RELEASE);
	memcpy(h->magic, MGC_SHM_MAGIC, 8);
}

void mgp_shm_forget(void)
{
	if (S.seg)
		syscall(SYS_munmap, S.seg, sizeof *S.seg);
	S.seg = NULL;
}

static void close_seg(uint32_t state, int status)
{
	char name[32];
	if (!S.seg || mgp_getpid() != S.pid)
		return;
	mgc_shm_write_begin(&S.seg->h);
	S.seg->h.state = state;
	S.seg->h.exit_status = status;
	mgc_shm_write_end(&S.seg->h);
	mgc_shm_name(S.pid, name, sizeof name);
	shm_unlink(name);
	syscall(SYS_munmap, S.seg, sizeof *S.seg);
	S.seg = NULL;
}

void mgp_shm_exit(int status)
{
	close_seg(MGC_SHM_EXITED, status);
}

void mgp_shm_exec(void)
{
	close_seg(MGC_SHM_EXECED, 0);
}

void mgp_shm_child(int pid)
{
	if (!S.seg)
		return;
	struct mgc_shm_header *h = &S.seg->h;
	mgc_shm_write_begin(h);
	if (h->nchildren == MGC_SHM_CHILDREN) {
		memmove(h->children, h->children + 1, (MGC_SHM_CHILDREN - 1) * sizeof h->children[0]);
		h->nchildren--;
	}
	h->children[h->nchildren++] = pid;
	mgc_shm_write_end(h);
}

/* ---- module map ---- */


static int on_module(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	(void)arg;
	char exe[1024];
	const char *name = mgp_elf_name(info, exe, sizeof exe);
	size_t nlen = strlen(name);
	if (S.nmods >= MGC_SHM_MODULES || S.names_used + nlen > MGC_SHM_NAMES)
		return 0;
	struct mgc_shm_module *m = &S.mods[S.nmods];
	memset(m, 0, sizeof *m);
	m->bias = info->dlpi_addr;
	if (mgp_elf_range(info, &m->start, &m->end) < 0)
		return 0; /* nothing mapped: nothing to symbolize */
	m->build_id_len = mgp_elf_build_id(info, m->build_id, sizeof m->build_id);
	m->path_off = S.names_used;
	m->path_len = (uint32_t)nlen;
	memcpy(S.names + S.names_used, name, nlen);
	S.names_used += (uint32_t)nlen;
	S.nmods++;
	return 0;
}

static int count_modules(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	unsigned long long *c = arg;
	c[0] = info->dlpi_adds;
	c[1] = info->dlpi_subs;
	return 1;
}

static void sync_modules(void)
{
	unsigned long long c[2] = {0, 0};
	dl_iterate_phdr(count_modules, c);
	if (!S.mods_dirty && c[0] == S.adds && c[1] == S.subs)
		return;
	S.adds = c[0];
	S.subs = c[1];
	S.nmods = 0;
	S.names_used = 0;
	dl_iterate_phdr(on_module, NULL);
	S.mods_dirty = 2; /* copy into the segment at this publish */
}

/* ---- sites ---- */

static void top_insert(struct top *t, uint32_t *n, uint32_t id, double key)
{
	if (*n == MGC_SHM_TOP && key <= t[*n - 1].key)
		return;
	uint32_t i = *n < MGC_SHM_TOP ? (*n)++ : MGC_SHM_TOP - 1;
	while (i > 0 && t[i - 1].key < key) {
		t[i] = t[i - 1];
		i--;
	}
	t[i] = (struct top){id, key};
}

/* Halves the grid: keeps every other point, for the process and for every site's history. */
static void thin(uint32_t nsites)
{
	for (uint32_t k = 0; k < G / 2; k++)
		S.grid[k] = S.grid[2 * k];
	for (uint32_t id = 1; id < nsites && id < S.max_sites; id++) {
		float *h = S.hist + (size_t)id * G;
		for (uint32_t k = 0; k < G / 2; k++)
			h[k] = h[2 * k];
	}
	S.grid_n = G / 2;
	S.stride *= 2;
}

static void fill_site(struct mgc_shm_site *e, uint32_t id, uint32_t ranks)
{
	const struct mgp_site *s = mgp_site_get(id);
	uint64_t a = __atomic_load_n(&s->allocs, __ATOMIC_RELAXED);
	uint64_t f = __atomic_load_n(&s->frees, __ATOMIC_RELAXED);
	e->site = id;
	e->kind = s->kind;
	e->full_nframes = s->nframes;
	e->nframes = (uint16_t)(s->nframes < MGC_SHM_FRAMES ? s->nframes : MGC_SHM_FRAMES);
	e->ranks = ranks;
	e->live_bytes = __atomic_load_n(&s->live_bytes, __ATOMIC_RELAXED);
	e->live_count = a >= f ? a - f : 0;
	e->allocs = a;
	e->alloc_bytes = __atomic_load_n(&s->alloc_bytes, __ATOMIC_RELAXED);
	e->frees = f;
	e->peak_bytes = __atomic_load_n(&s->peak_bytes, __ATOMIC_RELAXED);
	for (unsigned k = 0; k < MGC_COHORTS; k++) {
		uint64_t v = __atomic_load_n(&s->cohorts[k], __ATOMIC_RELAXED);
		e->cohorts[k] = v < (1ull << 62) ? v : 0; /* a transiently negative bucket */
	}
	memcpy(e->history, S.hist + (size_t)id * G, S.grid_n * sizeof(float));
	memcpy(e->ips, mgp_site_frames(s), (size_t)e->nframes * 8);
}

/* ---- publishing ---- */

void mgp_shm_publish(uint64_t step, uint32_t flags, const char *label)
{
	if (!S.seg || mgp_getpid() != S.pid)
		return;
	struct mgc_shm *seg = S.seg;
	struct mgc_shm_header *h = &seg->h;
	uint64_t now = mgp_now_ns() - S.start_mono;
	if (flags & MGC_SNAP_STEP) {
		if (S.steps_seen++ == 0) {
			S.grid_n = 0; /* steps become the x axis: restart the grid on it */
			S.stride = 1;
			S.since = 0;
		}
		if (step != S.cur_step || S.steps_seen == 1)
			S.step_t = now;
		S.cur_step = step;
		if (!(flags & (MGC_SNAP_FINAL | MGC_SNAP_FULL)) && S.publishes && S.steps_seen > 1 &&
		    now - S.last_full < (STEP_MIN_GAP_NS > 50 * S.scan_ns ? STEP_MIN_GAP_NS : 50 * S.scan_ns)) {
			mgc_shm_write_begin(h);
			h->step = step;
			h->step_t_ns = S.step_t;
			h->steps_seen = S.steps_seen;
			h->updated_ns = now;
			mgc_shm_write_end(h);
			return;
		}
	}
	S.last_full = now;

	/* The process snapshot, as the trace writer makes it. */
	struct mgc_rec_snapshot sn = {0};
	sn.t_ns = now;
	sn.step = step;
	sn.flags = flags;
	if (label) {
		size_t n = strnlen(label, sizeof sn.label - 1);
		memcpy(sn.label, label, n);
	}
	if (mgc_read_file("/proc/self/status", S.status, sizeof S.status) > 0) {
		sn.rss_anon = mgc_kv_kb(S.status, "RssAnon");
		sn.rss_file = mgc_kv_kb(S.status, "RssFile");
		sn.rss_shmem = mgc_kv_kb(S.status, "RssShmem");
	}
	struct mallinfo2 mi = mallinfo2();
	sn.malloc_free_bytes = mi.fordblks + mi.fsmblks;
	sn.malloc_arena_bytes = mi.arena + mi.hblkhd;

	/* Grid slot: the same step overwrites its point; between strides the last point moves on. */
	uint32_t nsites = mgp_sites_count();
	uint32_t slot;
	int step_axis = S.steps_seen > 0;
	if (S.grid_n > 0 && step_axis && S.grid[S.grid_n - 1].step == step) {
		slot = S.grid_n - 1;
	} else if (S.grid_n > 0 && S.since < S.stride) {
		slot = S.grid_n - 1;
		S.since++;
	} else {
		if (S.grid_n == G)
			thin(nsites);
		slot = S.grid_n++;
		S.since = 1;
	}
	uint32_t ref = slot / 2; /* growth is measured over the recent half of the window */

	S.nlive = S.ngrowth = 0;
	uint64_t scan_t0 = mgp_now_ns();
	for (uint32_t id = 1; id < nsites && id < S.max_sites; id++) {
		const struct mgp_site *s = mgp_site_get(id);
		uint64_t a = __atomic_load_n(&s->allocs, __ATOMIC_RELAXED);
		uint64_t f = __atomic_load_n(&s->frees, __ATOMIC_RELAXED);
		uint64_t live = __atomic_load_n(&s->live_bytes, __ATOMIC_RELAXED);
		if (live >= (1ull << 62))
			live = 0;
		uint64_t cnt = a >= f ? a - f : 0;
		if (s->kind == MGC_KIND_MMAP) {
			sn.mmap_live_bytes += live;
			sn.mmap_live_count += cnt;
		} else if (mgc_kind_is_cuda(s->kind)) {
			sn.device_live_bytes += live;
		} else {
			sn.heap_live_bytes += live;
			sn.heap_live_count += cnt;
		}
		sn.allocs_total += a;
		sn.frees_total += f;
		float *hs = S.hist + (size_t)id * G;
		hs[slot] = (float)live;
		if (a == 0)
			continue;
		if (live)
			top_insert(S.by_live, &S.nlive, id, (double)live);
		double growth = (double)live - (double)hs[ref];
		if (growth > 0)
			top_insert(S.by_growth, &S.ngrowth, id, growth);
	}
	/* A full publish scans every site: with 10^5 sites (PyTorch) that is milliseconds, so step
	 * markers in between only update the step number until 50 scans' time has passed (the
	 * target then spends at most ~2% of its time on publishing). */
	S.scan_ns = mgp_now_ns() - scan_t0;
	S.grid[slot] = sn;
	sync_modules();

	mgc_shm_write_begin(h);
	h->updated_ns = now;
	h->step = step;
	h->step_t_ns = S.step_t;
	h->steps_seen = S.steps_seen;
	h->publishes = ++S.publishes;
	if (label) {
		memset(h->label, 0, sizeof h->label);
		memcpy(h->label, sn.label, sizeof h->label);
	}
	h->state = MGC_SHM_RUNNING;
	seg->ring[S.ring_head % MGC_SHM_RING] = sn;
	h->ring_head = ++S.ring_head;
	memcpy(seg->grid, S.grid, S.grid_n * sizeof S.grid[0]);
	h->grid_n = S.grid_n;
	h->grid_stride = S.stride;
	h->nsites_total = nsites > 1 ? nsites - 1 : 0;
	uint32_t ne = 0;
	for (uint32_t i = 0; i < S.ngrowth; i++)
		fill_site(&seg->sites[ne++], S.by_growth[i].id, MGC_SHM_TOP_GROWTH);
	for (uint32_t i = 0; i < S.nlive; i++) {
		uint32_t k = 0;
		while (k < S.ngrowth && S.by_growth[k].id != S.by_live[i].id)
			k++;
		if (k < S.ngrowth)
			seg->sites[k].ranks |= MGC_SHM_TOP_LIVE;
		else
			fill_site(&seg->sites[ne++], S.by_live[i].id, MGC_SHM_TOP_LIVE);
	}
	h->nsites = ne;
	if (S.mods_dirty == 2) {
		memcpy(seg->modules, S.mods, S.nmods * sizeof S.mods[0]);
		memcpy(seg->names, S.names, S.names_used);
		h->nmodules = S.nmods;
		h->names_used = S.names_used;
		h->module_gen++;
		S.mods_dirty = 0;
	}
	mgc_shm_write_end(h);
}
