/* SPDX-License-Identifier: MIT */
/* mgp_snapshot.c: the process's identity and each tick's process-level figures (see
 * mgp_snapshot.h), read from /proc, uname and mallinfo2 into the caller's structs. Runs under the
 * writer lock or single-threaded at start-up; never calls malloc or stdio. */
#define _GNU_SOURCE
#include "mgp_snapshot.h"

#include <fcntl.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "mgc_proc.h"
#include "mgp_os.h"
#include "mgp_settings.h"
#include "mgp_sites.h"

/* RANK (else SLURM_PROCID) and LOCAL_RANK: what names a process of a multi-GPU job. */
static void read_ranks(struct mgp_process *p)
{
	const char *r = getenv("RANK");
	uint64_t v;
	if (!r)
		r = getenv("SLURM_PROCID");
	p->rank = r && mgp_parse_u64(r, &v) == 0 ? (int)v : -1;
	r = getenv("LOCAL_RANK");
	p->local_rank = r && mgp_parse_u64(r, &v) == 0 ? (int)v : -1;
}

/* comm, cmdline, exe and the host name. */
static void read_names(struct mgp_process *p)
{
	long n = mgc_read_file("/proc/self/comm", p->comm, sizeof p->comm);
	while (n > 0 && p->comm[n - 1] == '\n')
		p->comm[--n] = 0;
	if (n < 0)
		p->comm[0] = 0;
	n = mgc_read_file("/proc/self/cmdline", p->cmdline, sizeof p->cmdline);
	while (n > 0 && p->cmdline[n - 1] == 0)
		n--;
	p->cmdline_len = n > 0 ? (uint32_t)n : 0;
	ssize_t el = readlink("/proc/self/exe", p->exe, sizeof p->exe - 1);
	p->exe_len = el > 0 ? (uint32_t)el : 0;
	struct utsname u;
	p->host[0] = 0;
	if (uname(&u) == 0)
		mgp_fmt(p->host, sizeof p->host, "%s", u.nodename);
}

void mgp_process_read(struct mgp_process *p, const struct mgp_settings *set, uint64_t start_mono_ns,
		      uint64_t start_realtime_ns)
{
	char meminfo[4096];
	memset(p, 0, sizeof *p);
	p->pid = mgp_getpid();
	p->ppid = (int)getppid();
	read_ranks(p);
	p->start_mono_ns = start_mono_ns;
	p->start_realtime_ns = start_realtime_ns;
	p->start_ticks = mgc_proc_start_ticks(0);
	if (mgc_read_file("/proc/meminfo", meminfo, sizeof meminfo) > 0) {
		p->mem_total = mgc_kv_kb(meminfo, "MemTotal");
		p->mem_available = mgc_kv_kb(meminfo, "MemAvailable");
	}
	p->cgroup_limit = mgc_cgroup_limit(0);
	p->page_size = (uint32_t)sysconf(_SC_PAGESIZE);
	p->interval_ms = set->interval_ms;
	p->depth = set->depth;
	p->max_sites = mgp_sites_capacity(set->max_sites); /* per-site arrays' size */
	read_names(p);
}

/* What a snapshot read last (writer lock held: one reader at a time). A step marker reads only
 * /proc/self/statm, through a descriptor kept open (reopened in a fork child, or when the program
 * closed it), and mallinfo2 (a walk of glibc's free lists: ~40 us in the PyTorch sample, 13 ms with
 * 50,000 free chunks) at most every MALLINFO_GAP_NS and MALLINFO_SHARE times its CPU cost. Sooner,
 * within that share, when the anonymous RSS or the live heap moved by 1/MALLINFO_DRIFT since: a
 * marker just after a snapshot taken in the middle of a burst must not carry that burst's free
 * bytes beside its own RSS (the retention verdict weighs the two against each other). */
#define MALLINFO_GAP_NS 100000000ull
#define MALLINFO_SHARE 200u
#define MALLINFO_DRIFT 128
static struct {
	int statm_fd, statm_pid;
	dev_t statm_dev;                 /* which file statm_fd is: the program may have put */
	ino_t statm_ino;                 /* another of its own on that number */
	uint64_t shmem;                  /* RssShmem of the last status read: splits statm's shared */
	uint64_t mi_t, mi_cpu, mi_free, mi_arena; /* the last mallinfo2: when, its CPU cost, its values */
	uint64_t mi_anon, mi_live;       /* the anonymous RSS and live heap it was read beside */
} last = {.statm_fd = -1};

/* A step marker's snapshot, not also the last or a full one. */
static int marker_only(const struct mgc_rec_snapshot *sn)
{
	return (sn->flags & (MGC_SNAP_STEP | MGC_SNAP_FINAL | MGC_SNAP_FULL)) == MGC_SNAP_STEP;
}

/* RSS from statm: resident and shared (file + shmem) pages, in bytes; -1 when unreadable. */
static int read_statm(uint64_t *resident, uint64_t *shared)
{
	char b[128];
	struct stat st;
	for (int tries = 0; tries < 2; tries++) {
		if (last.statm_fd < 0 || last.statm_pid != mgp_getpid()) {
			/* a fork child's copy of the parent's descriptor is left open, not closed: the
			 * child may have closed it and reused the number (one descriptor, CLOEXEC) */
			last.statm_fd = open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
			last.statm_pid = mgp_getpid();
			if (last.statm_fd >= 0 && fstat(last.statm_fd, &st) == 0) {
				last.statm_dev = st.st_dev;
				last.statm_ino = st.st_ino;
			}
		}
		ssize_t n = -1;
		if (last.statm_fd >= 0 && fstat(last.statm_fd, &st) == 0 && st.st_dev == last.statm_dev &&
		    st.st_ino == last.statm_ino)
			n = pread(last.statm_fd, b, sizeof b - 1, 0);
		uint64_t v[3];
		int k = 0;
		for (ssize_t i = 0; n > 0 && i < n && k < 3; k++) { /* "size resident shared ..." */
			for (v[k] = 0; i < n && b[i] >= '0' && b[i] <= '9'; i++)
				v[k] = v[k] * 10 + (uint64_t)(b[i] - '0');
			if (i == n || b[i++] != ' ')
				break;
		}
		if (k == 3) {
			*resident = v[1] * (uint64_t)getpagesize();
			*shared = v[2] * (uint64_t)getpagesize();
			return 0;
		}
		last.statm_fd = -1; /* closed by the program, or now another file: not ours to close */
	}
	return -1;
}

static void read_rss(struct mgc_rec_snapshot *sn)
{
	static char status[8192];
	uint64_t res, shared;
	if (marker_only(sn) && read_statm(&res, &shared) == 0) {
		sn->rss_anon = res > shared ? res - shared : 0;
		sn->rss_shmem = last.shmem < shared ? last.shmem : shared;
		sn->rss_file = shared - sn->rss_shmem;
	} else if (mgc_read_file("/proc/self/status", status, sizeof status) > 0) {
		sn->rss_anon = mgc_kv_kb(status, "RssAnon");
		sn->rss_file = mgc_kv_kb(status, "RssFile");
		sn->rss_shmem = last.shmem = mgc_kv_kb(status, "RssShmem");
	}
}

/* a and b differ by more than 1/MALLINFO_DRIFT of the larger */
static int drifted(uint64_t a, uint64_t b)
{
	uint64_t d = a > b ? a - b : b - a, m = a > b ? a : b;
	return d > m / MALLINFO_DRIFT;
}

static void read_malloc(struct mgc_rec_snapshot *sn, uint64_t now)
{
	uint64_t share = MALLINFO_SHARE * last.mi_cpu, age = now - last.mi_t;
	struct mgp_totals tot;
	mgp_sites_totals(&tot);
	int moved = drifted(sn->rss_anon, last.mi_anon) || drifted(tot.live[0], last.mi_live);
	if (!marker_only(sn) || !last.mi_t || (age >= share && (age >= MALLINFO_GAP_NS || moved))) {
		uint64_t cpu = mgp_thread_cpu_ns();
		struct mallinfo2 mi = mallinfo2();
		last.mi_cpu = mgp_thread_cpu_ns() - cpu;
		last.mi_t = now;
		last.mi_free = mi.fordblks + mi.fsmblks;
		last.mi_arena = mi.arena + mi.hblkhd;
		last.mi_anon = sn->rss_anon;
		last.mi_live = tot.live[0];
	}
	sn->malloc_free_bytes = last.mi_free;
	sn->malloc_arena_bytes = last.mi_arena;
}

void mgp_snapshot_take(struct mgc_rec_snapshot *sn, uint64_t start_mono_ns, uint64_t step,
		       uint32_t flags, const char *label)
{
	uint64_t now = mgp_now_ns();
	memset(sn, 0, sizeof *sn);
	sn->t_ns = (now - start_mono_ns) / 1000 * 1000; /* to the microsecond, as the trace keeps it */
	sn->step = step;
	sn->flags = flags;
	if (label)
		memcpy(sn->label, label, strnlen(label, sizeof sn->label - 1));
	read_rss(sn);
	read_malloc(sn, now);
}
