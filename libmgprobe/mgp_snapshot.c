/* SPDX-License-Identifier: MIT */
/* mgp_snapshot.c: the process's identity and each tick's process-level figures (see
 * mgp_snapshot.h), read from /proc, uname and mallinfo2 into the caller's structs. Runs under the
 * writer lock or single-threaded at start-up; never calls malloc or stdio. */
#define _GNU_SOURCE
#include "mgp_snapshot.h"

#include <malloc.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
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

void mgp_snapshot_take(struct mgc_rec_snapshot *sn, uint64_t start_mono_ns, uint64_t step,
		       uint32_t flags, const char *label)
{
	static char status[8192]; /* writer lock held: one reader at a time */
	memset(sn, 0, sizeof *sn);
	sn->t_ns = (mgp_now_ns() - start_mono_ns) / 1000 * 1000; /* to the microsecond, as the trace keeps it */
	sn->step = step;
	sn->flags = flags;
	if (label)
		memcpy(sn->label, label, strnlen(label, sizeof sn->label - 1));
	if (mgc_read_file("/proc/self/status", status, sizeof status) > 0) {
		sn->rss_anon = mgc_kv_kb(status, "RssAnon");
		sn->rss_file = mgc_kv_kb(status, "RssFile");
		sn->rss_shmem = mgc_kv_kb(status, "RssShmem");
	}
	struct mallinfo2 mi = mallinfo2();
	sn->malloc_free_bytes = mi.fordblks + mi.fsmblks;
	sn->malloc_arena_bytes = mi.arena + mi.hblkhd;
}
