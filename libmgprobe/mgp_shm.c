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
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "mgc_grid.h"
#include "mgp_chunks.h"
#include "mgc_shm_format.h"
#include "mgp_modules.h"
#include "mgp_os.h"
#include "mgp_pycode.h"
#include "mgc_hash.h"
#include "mgp_sample.h"
#include "mgp_sites.h"

#define G MGC_SHM_GRID
#define STEP_MIN_GAP_NS 20000000ull /* step markers closer than this only update the step */
#define SCAN_SHARE 200u             /* ... or than this many times the last site scan's time */
#define ROWS 4096u                  /* sites with a history: those holding ROW_MIN bytes or more */
#define ROW_MIN (64u << 10)
#define ROW_SLOTS (2u * ROWS)        /* site -> row index, at most half full */
#define STALE_GRACE_S 60             /* a dead process's segment is left this long after its last write */

struct top {
	uint32_t id;
	double key;
};

/* The publisher's whole state. `seg` is NULL while publishing is off. */
static struct {
	struct mgc_shm *seg;
	int pid;
	float *hist;             /* ROWS * G: live bytes at each grid point of the sites with a row */
	uint32_t *row_site;      /* ROWS: the site of each row, 0 = free */
	uint64_t *row_of;        /* ROW_SLOTS: site << 32 | row, 0 = empty (a map, linear probing) */
	uint32_t rows_used;
	uint64_t row_kept[ROWS / 64]; /* a full scan: the rows whose site still holds ROW_MIN / 2 */
	struct mgc_rec_snapshot grid[G];
	uint32_t grid_n, stride, since;
	uint64_t steps_seen, cur_step, step_t, last_full;
	uint64_t scan_ns; /* the CPU time of the last full publish's site scan (not its wall time: a
			     late scan on a loaded machine would hold off the next markers' points) */
	uint64_t ring_head, publishes;
	uint32_t modules_gen;    /* the module generation in the segment */
	int modules_copied;      /* any module map is in the segment */
	struct top by_live[MGC_SHM_TOP], by_growth[MGC_SHM_TOP];
	uint32_t nlive, ngrowth;
	uint64_t fp[2 * MGC_SHM_TOP]; /* each published entry's stack (mgp_site.fp) */
	uint32_t py_codes;            /* the registry's count at the last code objects' publish */
	int pending;                  /* a marker's site part waits for mgp_shm_publish_pending */
	struct mgc_rec_snapshot pending_sn; /* ... for this snapshot's grid point */
} pub;

/* Each site's live bytes as the last snapshot wrote them into the trace (mgp_shm_keep): what every
 * site scan reads, so a scan done after the snapshot (a step marker's, on the sampler thread)
 * still shows the snapshot's figures, as the trace does, to the byte. Indexed by site id; a page
 * is touched only when a site on it holds memory at a snapshot (8 bytes a site). */
static struct mgp_chunks snap_live = {.esize = sizeof(uint64_t), .shift = 13};

static void turn_off(const char *what, int err)
{
	char name[32];
	mgc_shm_name(pub.pid, name, sizeof name);
	if (err == EFBIG)
		mgp_log_fsize("leaves no room for the live state in /dev/shm%s: mgmon will show RSS "
			      "only, and the trace stops if it reaches the limit", name);
	else
		mgp_log("cannot publish live state in /dev/shm%s (%s: %s): mgmon will show RSS only",
			name, what, strerror(err));
	if (pub.seg)
		syscall(SYS_munmap, pub.seg, sizeof *pub.seg);
	pub.seg = NULL;
}

/* Removes this user's segments whose process is gone (killed: no exit path ran) and that have not
 * been written for a minute (one written since may be a copy being put back, or a crash that mgmon
 * is about to report as a stale segment). Raw getdents64: opendir would malloc. A probe in another
 * pid namespace sharing /dev/shm would look dead here: that setup is not supported. */
static void sweep_stale(void)
{
	char buf[4096] __attribute__((aligned(8)));
	int fd = open("/dev/shm", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return;
	uid_t me = geteuid();
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	time_t now = ts.tv_sec;
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
			if (fstatat(fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && st.st_uid == me && S_ISREG(st.st_mode) &&
			    now - st.st_mtim.tv_sec >= STALE_GRACE_S)
				unlinkat(fd, name, 0);
		}
	}
	close(fd);
}

/* The history rows: once per program (a forked child clears its parent's). Histories are kept
 * only for sites holding at least ROW_MIN bytes (the ones that rank), at most ROWS of them, so the
 * publisher's memory does not grow with the 10^5 small sites of a PyTorch process. */
static int reserve_history(void)
{
	if (pub.hist) { /* a forked child: the parent's rows go back to the kernel, unread */
		mgp_os_discard(pub.hist, (size_t)ROWS * G * sizeof(float));
		mgp_os_discard(pub.row_site, ROWS * sizeof *pub.row_site);
		mgp_os_discard(pub.row_of, ROW_SLOTS * sizeof *pub.row_of);
		mgp_chunks_discard(&snap_live); /* the child's counters start afresh, or all are rewritten */
		pub.rows_used = 0;
		return 0;
	}
	sweep_stale(); /* once per program, not in every forked child */
	pub.hist = mgp_os_alloc((size_t)ROWS * G * sizeof(float));
	pub.row_site = mgp_os_alloc(ROWS * sizeof *pub.row_site);
	pub.row_of = mgp_os_alloc(ROW_SLOTS * sizeof *pub.row_of);
	if (!pub.hist || !pub.row_site || !pub.row_of) {
		turn_off("history table", ENOMEM);
		return -ENOMEM;
	}
	return 0;
}

static inline uint64_t row_home(uint32_t site)
{
	return mgc_mix64(site) & (ROW_SLOTS - 1);
}

/* The row of a site, or -1. */
static int row_find(uint32_t site)
{
	for (uint64_t i = row_home(site);; i = (i + 1) & (ROW_SLOTS - 1)) {
		uint64_t e = pub.row_of[i];
		if (!e)
			return -1;
		if ((uint32_t)(e >> 32) == site)
			return (int)(uint32_t)e;
	}
}

static uint64_t row_entry_home(const void *e)
{
	return row_home((uint32_t)(*(const uint64_t *)e >> 32));
}

static int row_entry_empty(const void *e)
{
	return *(const uint64_t *)e == 0;
}

/* Gives a site a row: history zero up to now (it held less than ROW_MIN until now). -1: none. */
static int row_take(uint32_t site)
{
	if (pub.rows_used == ROWS)
		return -1;
	uint32_t r = 0;
	while (pub.row_site[r])
		r++;
	pub.row_site[r] = site;
	pub.rows_used++;
	memset(pub.hist + (size_t)r * G, 0, G * sizeof(float));
	uint64_t i = row_home(site);
	while (pub.row_of[i])
		i = (i + 1) & (ROW_SLOTS - 1);
	pub.row_of[i] = (uint64_t)site << 32 | r;
	return (int)r;
}

static void row_drop(uint32_t site, int r)
{
	uint64_t i = row_home(site);
	while ((uint32_t)(pub.row_of[i] >> 32) != site)
		i = (i + 1) & (ROW_SLOTS - 1);
	pub.row_of[mgc_oa_delete(pub.row_of, 8, ROW_SLOTS - 1, i, row_entry_home, row_entry_empty)] = 0;
	pub.row_site[r] = 0;
	pub.rows_used--;
}

/* Creates /dev/shm/mgprobe.<pid> afresh and maps it; NULL after one line. */
static struct mgc_shm *create_segment(void)
{
	char name[32];
	mgc_shm_name(pub.pid, name, sizeof name);
	shm_unlink(name); /* a stale segment of a dead process that had our pid, or our pre-exec image */
	int fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0) {
		turn_off("shm_open", errno);
		return NULL;
	}
	int err = 0;
	const char *what = NULL;
	struct mgc_shm *seg = NULL;
	if (fchmod(fd, 0600) < 0) {
		err = errno, what = "fchmod";
	} else {
		sigset_t old;
		mgp_xfsz_hold(&old); /* a file-size limit turns publishing off, not the program */
		err = posix_fallocate(fd, 0, sizeof(struct mgc_shm));
		mgp_xfsz_release(&old, err == EFBIG);
		if (err)
			what = "reserve pages";
	}
	if (!what)
		seg = mgp_os_map(NULL, sizeof(struct mgc_shm), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (!what && !seg)
		err = ENOMEM, what = "mmap";
	close(fd);
	if (what) {
		shm_unlink(name);
		turn_off(what, err);
	}
	return seg;
}

/* The header's fixed part: who this process is. */
static void fill_header(struct mgc_shm_header *h, const struct mgp_process *p)
{
	h->version = MGC_SHM_VERSION;
	h->header_size = sizeof *h;
	h->total_size = sizeof(struct mgc_shm);
	h->pid = p->pid;
	h->ppid = p->ppid;
	h->start_realtime_ns = p->start_realtime_ns;
	h->start_mono_ns = p->start_mono_ns;
	h->interval_ms = p->interval_ms;
	h->depth = p->depth;
	h->state = MGC_SHM_RUNNING;
	h->grid_stride = 1;
	memcpy(h->comm, p->comm, sizeof h->comm - 1);
	size_t k = 0;
	for (uint32_t i = 0; i < p->cmdline_len && k + 1 < sizeof h->cmdline; i++)
		h->cmdline[k++] = p->cmdline[i] ? p->cmdline[i] : ' ';
	h->mem_total = p->mem_total;
	h->cgroup_limit = p->cgroup_limit;
	h->start_ticks = p->start_ticks;
	h->rank = p->rank;
	h->local_rank = p->local_rank;
}

void mgp_shm_open(const struct mgp_process *p)
{
	pub.pid = p->pid;
	if (reserve_history() < 0)
		return;
	pub.grid_n = 0;
	pub.stride = 1;
	pub.since = 0;
	pub.ring_head = pub.publishes = 0;
	pub.last_full = 0;
	pub.modules_copied = 0;
	pub.pending = 0;
	if (!(pub.seg = create_segment()))
		return;
	fill_header(&pub.seg->h, p);
	/* The magic last: a reader that sees it sees a filled header. */
	__atomic_thread_fence(__ATOMIC_RELEASE);
	memcpy(pub.seg->h.magic, MGC_SHM_MAGIC, 8);
}

void mgp_shm_forget(void)
{
	if (pub.seg)
		syscall(SYS_munmap, pub.seg, sizeof *pub.seg);
	pub.seg = NULL;
}

static void close_seg(uint32_t state, int status)
{
	char name[32];
	if (!pub.seg || mgp_getpid() != pub.pid)
		return;
	mgc_shm_write_begin(&pub.seg->h);
	pub.seg->h.state = state;
	pub.seg->h.exit_status = status;
	mgc_shm_write_end(&pub.seg->h);
	mgc_shm_name(pub.pid, name, sizeof name);
	shm_unlink(name);
	syscall(SYS_munmap, pub.seg, sizeof *pub.seg);
	pub.seg = NULL;
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
	if (!pub.seg)
		return;
	struct mgc_shm_header *h = &pub.seg->h;
	mgc_shm_write_begin(h);
	if (h->nchildren == MGC_SHM_CHILDREN) {
		memmove(h->children, h->children + 1, (MGC_SHM_CHILDREN - 1) * sizeof h->children[0]);
		h->nchildren--;
	}
	h->children[h->nchildren++] = pid;
	mgc_shm_write_end(h);
}

/* ---- module map ---- */

/* The modules loaded now (those that map something: the rest have nothing to symbolize), from
 * the map both outputs share. Inside the sequence counter. */
static void copy_modules(struct mgc_shm *seg)
{
	uint32_t n, k = 0, used = 0;
	const struct mgp_module *mods = mgp_modules_all(&n);
	const char *names = mgp_modules_names();
	for (uint32_t i = 0; i < n && k < MGC_SHM_MODULES; i++) {
		const struct mgp_module *m = &mods[i];
		if (m->gen_unloaded || (!m->start && !m->end) || used + m->path_len > MGC_SHM_NAMES)
			continue;
		struct mgc_shm_module *e = &seg->modules[k++];
		*e = (struct mgc_shm_module){.bias = m->bias, .start = m->start, .end = m->end,
					     .path_off = used, .path_len = m->path_len,
					     .build_id_len = m->build_id_len};
		memcpy(e->build_id, m->build_id, m->build_id_len);
		memcpy(seg->names + used, names + m->path_off, m->path_len);
		used += m->path_len;
	}
	seg->h.nmodules = k;
	seg->h.names_used = used;
	seg->h.module_gen++;
	pub.modules_gen = mgp_modules_gen();
	pub.modules_copied = 1;
}

/* ---- sites ---- */

void mgp_shm_keep(uint32_t id, uint64_t live_bytes)
{
	if (!pub.seg)
		return;
	uint64_t *v = mgp_chunk_find(&snap_live, id);
	if (!v && live_bytes == 0)
		return; /* reads as 0 already */
	if (!v && (mgp_chunks_ensure(&snap_live, id) < 0 || !(v = mgp_chunk_find(&snap_live, id)))) {
		turn_off("site values", ENOMEM);
		return;
	}
	*v = live_bytes;
}

/* Site id's live bytes at the last snapshot; 0 for a site not in use or transiently negative. */
static uint64_t live_at_snapshot(uint32_t id)
{
	const uint64_t *v = mgp_chunk_find(&snap_live, id);
	return v && *v < (1ull << 62) ? *v : 0;
}

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

/* Halves the grid: keeps every other point, for the process and for every site's history (the
 * readers' one thinning rule, mgc_grid_halve). */
static void thin(void)
{
	pub.grid_n = (uint32_t)mgc_grid_halve(pub.grid, G, sizeof pub.grid[0]);
	for (uint32_t r = 0; r < ROWS; r++)
		if (pub.row_site[r])
			mgc_grid_halve(pub.hist + (size_t)r * G, G, sizeof(float));
	pub.stride *= 2;
}

/* An entry's figures; its frames only when it held another site (or stack) before: `same`. */
static void fill_site(struct mgc_shm_site *e, uint32_t id, uint32_t ranks, int same)
{
	const struct mgp_site *s = mgp_site_get(id);
	const struct mgp_site_counts *c = mgp_site_counts(id);
	uint64_t a = __atomic_load_n(&c->allocs, __ATOMIC_RELAXED);
	uint64_t f = __atomic_load_n(&c->frees, __ATOMIC_RELAXED);
	e->site = id;
	e->kind = s->kind;
	e->full_nframes = s->nframes;
	e->ranks = ranks;
	e->live_bytes = live_at_snapshot(id);
	e->live_count = a >= f ? a - f : 0;
	e->allocs = a;
	e->alloc_bytes = __atomic_load_n(&c->alloc_bytes, __ATOMIC_RELAXED);
	e->frees = f;
	e->peak_bytes = __atomic_load_n(&c->peak_bytes, __ATOMIC_RELAXED);
	for (unsigned k = 0; k < MGC_COHORTS; k++) {
		uint64_t v = mgp_site_cohort(c, k);
		e->cohorts[k] = v < (1ull << 62) ? v : 0; /* a transiently negative bucket */
	}
	int r = row_find(id);
	if (r >= 0)
		memcpy(e->history, pub.hist + (size_t)r * G, pub.grid_n * sizeof(float));
	else
		memset(e->history, 0, sizeof e->history);
	if (!same)
		e->nframes = (uint16_t)mgp_site_frames(id, e->ips, MGC_SHM_FRAMES);
}

/* ---- publishing ---- */

/* Steps become the x axis at the first marker. A marker that comes within 20 ms (or SCAN_SHARE
 * site scans' time) of the last full publish only updates the step, so a fast loop spends at most
 * ~0.5% of its time on scans, on its own thread: with 10^5 sites (PyTorch) a scan takes
 * milliseconds. Returns 1 when that was all. */
static int publish_step(const struct mgc_rec_snapshot *sn)
{
	struct mgc_shm_header *h = &pub.seg->h;
	if (pub.steps_seen++ == 0) {
		pub.grid_n = 0; /* steps become the x axis: restart the grid on it */
		pub.stride = 1;
		pub.since = 0;
	}
	if (sn->step != pub.cur_step || pub.steps_seen == 1)
		pub.step_t = sn->t_ns;
	pub.cur_step = sn->step;
	uint64_t gap = STEP_MIN_GAP_NS > SCAN_SHARE * pub.scan_ns ? STEP_MIN_GAP_NS : SCAN_SHARE * pub.scan_ns;
	if ((sn->flags & (MGC_SNAP_FINAL | MGC_SNAP_FULL)) || !pub.publishes || pub.steps_seen == 1 ||
	    sn->t_ns - pub.last_full >= gap)
		return 0;
	mgc_shm_write_begin(h);
	h->step = sn->step;
	h->step_t_ns = pub.step_t;
	h->steps_seen = pub.steps_seen;
	h->updated_ns = sn->t_ns;
	mgc_shm_write_end(h);
	return 1;
}

/* The grid point this publish writes. With steps, a step's point is its marker's snapshot, else its
 * first (the x axis of libmgcore/mgc_analysis.h, mgreport's too): *keep says that a later publish in
 * the same step (a sampler tick, the exit) leaves the point, the histories and the published sites
 * as they were. Between strides the last point moves on; a new point thins the grid when full. */
static uint32_t grid_slot(const struct mgc_rec_snapshot *sn, uint32_t nsites, int *keep)
{
	*keep = 0;
	if (pub.grid_n > 0 && pub.steps_seen > 0 && pub.grid[pub.grid_n - 1].step == sn->step) {
		*keep = (pub.grid[pub.grid_n - 1].flags & MGC_SNAP_STEP) || !(sn->flags & MGC_SNAP_STEP);
		return pub.grid_n - 1;
	}
	if (pub.grid_n > 0 && pub.since < pub.stride) {
		pub.since++;
		return pub.grid_n - 1;
	}
	if (pub.grid_n == G)
		thin();
	pub.since = 1;
	return pub.grid_n++;
}

/* Every site's live bytes go into its history at the slot (sites holding ROW_MIN or more have
 * one; a site whose bytes fell under half that gives its row back), and the sites are ranked by
 * live bytes and by growth over the recent half of the grid window. Only a site holding half of
 * ROW_MIN can have a row worth keeping, so only those look theirs up (a few thousand of 10^5
 * sites in PyTorch); the rows nobody claimed are given back after the pass. */
static void scan_sites(uint32_t slot, uint32_t nsites)
{
	uint32_t ref = slot / 2;
	uint64_t t0 = mgp_thread_cpu_ns();
	pub.nlive = pub.ngrowth = 0;
	memset(pub.row_kept, 0, sizeof pub.row_kept);
	for (uint32_t id = 1; id < nsites; id++) {
		uint64_t live = live_at_snapshot(id);
		if (live && __atomic_load_n(&mgp_site_counts(id)->allocs, __ATOMIC_RELAXED))
			top_insert(pub.by_live, &pub.nlive, id, (double)live);
		if (live < ROW_MIN / 2)
			continue;
		int r = row_find(id);
		if (r < 0 && live >= ROW_MIN)
			r = row_take(id);
		if (r < 0)
			continue;
		pub.row_kept[r / 64] |= 1ull << (r % 64);
		float *hs = pub.hist + (size_t)r * G;
		hs[slot] = (float)live;
		double growth = (double)live - (double)hs[ref];
		if (growth > 0)
			top_insert(pub.by_growth, &pub.ngrowth, id, growth);
	}
	for (uint32_t r = 0; r < ROWS; r++)
		if (pub.row_site[r] && !(pub.row_kept[r / 64] >> (r % 64) & 1))
			row_drop(pub.row_site[r], (int)r);
	pub.scan_ns = mgp_thread_cpu_ns() - t0;
}

/* Entry ne of this publish is to hold site id: whether it held the same site and stack before,
 * and the site still has its stack (then its frames stand). */
static int entry_same(struct mgc_shm *seg, uint32_t ne, uint32_t id)
{
	const struct mgp_site *site = mgp_site_get(id);
	uint64_t fp = site->fp;
	int same = ne < seg->h.nsites && seg->sites[ne].site == id && pub.fp[ne] == fp &&
		   mgp_site_leaf(id) != 0; /* a retired site shows none */
	pub.fp[ne] = fp;
	return same;
}

/* The ranked sites into the segment: the growth list, then the live list's others. Entries that
 * hold the sites they held (the same stacks) keep their frames, and when all do, the code
 * objects published for those frames stand too (a steady loop's publish writes only figures). */
static void write_sites(struct mgc_shm *seg)
{
	uint32_t ne = 0;
	int same = 1;
	for (uint32_t i = 0; i < pub.ngrowth; i++, ne++) {
		int s = entry_same(seg, ne, pub.by_growth[i].id);
		same &= s;
		fill_site(&seg->sites[ne], pub.by_growth[i].id, MGC_SHM_TOP_GROWTH, s);
	}
	for (uint32_t i = 0; i < pub.nlive; i++) {
		uint32_t k = 0;
		while (k < pub.ngrowth && pub.by_growth[k].id != pub.by_live[i].id)
			k++;
		if (k < pub.ngrowth) {
			seg->sites[k].ranks |= MGC_SHM_TOP_LIVE;
			continue;
		}
		int s = entry_same(seg, ne, pub.by_live[i].id);
		same &= s;
		fill_site(&seg->sites[ne++], pub.by_live[i].id, MGC_SHM_TOP_LIVE, s);
	}
	same &= ne == seg->h.nsites;
	seg->h.nsites = ne;
	seg->sampling.rate = mgp_sample_conf.rate;
	for (uint32_t i = 0; i < ne && mgp_sample_conf.rate; i++)
		seg->sampling.live_var[i] = mgp_site_var(seg->sites[i].site);
	uint32_t codes = mgp_pycode_count();
	if (!same || pub.py_codes != codes)
		mgp_pycode_publish(&seg->py, seg->sites, ne); /* the code objects their frames name */
	pub.py_codes = codes;
}

/* The grid point, the site histories, the ranked sites and the module map of a full publish of sn,
 * whose header and ring entry are written already: the scan outside the sequence counter (with
 * 10^5 sites it takes milliseconds), the rest inside. */
static void publish_sites(struct mgc_shm *seg, const struct mgc_rec_snapshot *sn)
{
	uint32_t nsites = mgp_sites_count();
	int keep;
	uint32_t slot = grid_slot(sn, nsites, &keep);
	if (!keep) {
		scan_sites(slot, nsites);
		pub.grid[slot] = *sn;
	}
	mgc_shm_write_begin(&seg->h);
	if (!keep) {
		memcpy(seg->grid, pub.grid, pub.grid_n * sizeof pub.grid[0]);
		seg->h.grid_n = pub.grid_n;
		seg->h.grid_stride = pub.stride;
		uint32_t used = mgp_sites_used();
		seg->h.nsites_total = used > 1 ? used - 1 : 0;
		write_sites(seg);
	}
	if (!pub.modules_copied || pub.modules_gen != mgp_modules_gen())
		copy_modules(seg);
	mgc_shm_write_end(&seg->h);
}

void mgp_shm_publish_pending(void)
{
	if (!pub.pending || !pub.seg || mgp_getpid() != pub.pid)
		return;
	pub.pending = 0;
	publish_sites(pub.seg, &pub.pending_sn);
}

int mgp_shm_publish(const struct mgc_rec_snapshot *sn, int defer)
{
	if (!pub.seg || mgp_getpid() != pub.pid)
		return 0;
	if ((sn->flags & MGC_SNAP_STEP) && publish_step(sn))
		return 0;
	mgp_shm_publish_pending(); /* an older step's point first */
	pub.last_full = sn->t_ns;
	struct mgc_rec_snapshot now = *sn;
	now.nsites = 0; /* the segment's snapshots carry no site entries */

	struct mgc_shm *seg = pub.seg;
	struct mgc_shm_header *h = &seg->h;
	mgc_shm_write_begin(h);
	h->updated_ns = sn->t_ns;
	h->step = sn->step;
	h->step_t_ns = pub.step_t;
	h->steps_seen = pub.steps_seen;
	h->publishes = ++pub.publishes;
	memcpy(h->label, sn->label, sizeof h->label);
	h->state = MGC_SHM_RUNNING;
	seg->ring[pub.ring_head % MGC_SHM_RING] = now;
	h->ring_head = ++pub.ring_head;
	mgc_shm_write_end(h);
	if (defer) {
		pub.pending_sn = now;
		pub.pending = 1;
	} else {
		publish_sites(seg, &now);
	}
	return defer;
}
