/* SPDX-License-Identifier: MIT */
/* mgp_snapshot.h: what the probe tells both of its outputs (the trace file and the live segment),
 * each read once: who this process is (once per process: at start-up and in a fork child), and
 * what its memory looks like at a tick (one read of /proc/self/status, one mallinfo2; a step
 * marker reads /proc/self/statm instead, and mallinfo2 only every 100 ms or more). The site
 * totals of a snapshot are the trace writer's, which keeps them by difference. Never called from
 * an allocation hook; never calls malloc or stdio. */
#ifndef MGP_SNAPSHOT_H
#define MGP_SNAPSHOT_H

#include <stdint.h>

#include "mgc_format.h"

struct mgp_settings;

/* The process, for the trace's PROCESS record and the segment's header. */
struct mgp_process {
	int pid, ppid;
	int rank, local_rank;       /* RANK (else SLURM_PROCID), LOCAL_RANK; -1 when unset */
	uint64_t start_realtime_ns; /* CLOCK_REALTIME at start */
	uint64_t start_mono_ns;     /* CLOCK_MONOTONIC at start: every t_ns counts from it */
	uint64_t start_ticks;       /* /proc/self/stat starttime: tells this pid from a reused one */
	uint64_t mem_total;         /* bytes, /proc/meminfo */
	uint64_t mem_available;     /* bytes, MemAvailable at start */
	uint64_t cgroup_limit;      /* bytes, the tightest cgroup v2 memory.max; 0 none */
	uint32_t page_size;
	uint32_t interval_ms, depth, max_sites;
	char comm[16];              /* /proc/self/comm, NUL-terminated */
	char host[256];             /* NUL-terminated */
	char cmdline[4096];         /* the arguments, each NUL-terminated: cmdline_len bytes */
	uint32_t cmdline_len;       /* without the last NUL */
	char exe[1024];             /* /proc/self/exe: exe_len bytes, not NUL-terminated */
	uint32_t exe_len;
};

/* Reads who this process is now: pid and the rest, with the settings and start times given. */
void mgp_process_read(struct mgp_process *p, const struct mgp_settings *set, uint64_t start_mono_ns,
		      uint64_t start_realtime_ns);

/* Fills a snapshot's process-level fields: time since start_mono_ns, step, flags, label (cut to 31
 * bytes), RSS by kind, and glibc's free and obtained bytes. The site totals and nsites stay 0.
 * A step marker's snapshot (flags MGC_SNAP_STEP alone) is the cheap one: RssAnon exact and
 * RssFile + RssShmem exact from statm, split by the last status read's RssShmem; glibc's figures
 * those of the last mallinfo2, at most 100 ms (or 200 times that call's cost) old. */
void mgp_snapshot_take(struct mgc_rec_snapshot *sn, uint64_t start_mono_ns, uint64_t step,
		       uint32_t flags, const char *label);

#endif /* MGP_SNAPSHOT_H */
