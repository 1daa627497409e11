/* SPDX-License-Identifier: MIT */
/* mgm_collect.h: what mgmon shows, as plain structs: one frame's view of a process, filled from
 * the probe's shared-memory segment (or /proc and NVML without the probe), classified with the
 * libmgcore classifier and symbolized. No drawing, no curses here; nothing in here may exit or
 * abort on what a process or segment holds. */
#ifndef MGM_COLLECT_H
#define MGM_COLLECT_H

#include <stddef.h>
#include <stdint.h>

#include "mgc_classify.h"

#define MGM_MAX_CHILDREN 64

enum mgm_series_id { MGM_S_RSS, MGM_S_HEAP, MGM_S_MMAP, MGM_S_FREE, MGM_S_GPU, MGM_S_N };

struct mgm_frame {
	const char *function, *file, *module; /* owned by the collector */
	int line, inlined;
};

/* A symbolized stack, cached per site id for the collector's lifetime. */
struct mgm_stack {
	uint32_t id;
	size_t n;
	struct mgm_frame *frames;
	size_t shown;             /* index of the frame named in tables (first outside libc) */
	int truncated;            /* the probe kept fewer frames than the stack has */
};

struct mgm_site {
	uint32_t id;
	unsigned kind;            /* mgc_kind_make code (mgc_kind_mem, mgc_kind_device) */
	uint64_t live_bytes, live_count, allocs, frees, peak_bytes;
	double band;              /* sampled runs: +- of live_bytes (two standard deviations); 0: exact */
	double growth;            /* bytes gained over the recent half of the window */
	int ok;                   /* fit is valid */
	struct mgc_fit fit;
	const struct mgm_stack *stack; /* NULL when not symbolized */
	double *y;                /* live bytes at the view's x points (series[0].x), n of them */
	size_t n;
};

struct mgm_series {
	const char *name;         /* "rss", "heap", "mmap", "free_kept", "gpu" */
	double *x, *y;
	size_t n;
	int valid;                /* has data in this view */
	int ok;                   /* fit is valid */
	struct mgc_fit fit;
};

struct mgm_view {
	int pid, ppid;
	char comm[64];
	char cmdline[256];
	int probe;                /* 1: from the probe's segment; 0: /proc only ("no probe: RSS only") */
	int exited;               /* the process is gone: this is its final state */
	int exit_known;
	int exit_status;
	char note[256];           /* a one-line notice for the header ("" when none) */
	double uptime;            /* seconds */
	int x_is_steps;
	uint64_t step;
	double steps_per_s;       /* < 0 when unknown */
	char label[32];
	uint64_t rss, rss_anon, rss_file, rss_shmem, swap;
	double limit;             /* bytes, 0 = unknown */
	const char *limit_source; /* "cgroup", "MemAvailable+RSS" */
	uint64_t heap, heap_count, mmap, mmap_count, free_kept, other;
	int have_gpu;
	uint64_t gpu;
	const char *gpu_source;   /* "probe", "NVML" */
	struct mgm_series series[MGM_S_N];
	int have_verdict;
	struct mgc_fit verdict;   /* process level (mgc_classify_process, or RSS only) */
	struct mgm_site *sites;
	size_t nsites;
	size_t sites_total;       /* sites the probe knows (only the top ones are published) */
	size_t leaking;
	int children[MGM_MAX_CHILDREN];
	size_t nchildren;
	uint64_t samples;         /* snapshots behind this view */
};

struct mgm_collector;

/* Attaches to pid. 0, or a negative errno with a one-line message in err: -ESRCH (no such
 * process), -EPERM (another user's process), -ESTALE (only a stale segment of a dead process is
 * left), -EPROTO (segment of another format version), -ENOMEM. */
int mgm_collector_open(int pid, struct mgm_collector **out, char *err, size_t errlen);
void mgm_collector_free(struct mgm_collector *c);

/* Refreshes *v (previous contents are freed first; zero it before the first call). 0, or -ENOMEM.
 * When the process has gone the view keeps its final state with exited = 1. */
int mgm_collect(struct mgm_collector *c, struct mgm_view *v);
void mgm_view_free(struct mgm_view *v);

enum mgm_sort { MGM_SORT_GROWTH, MGM_SORT_LIVE, MGM_SORT_ALLOCS, MGM_SORT_N };
const char *mgm_sort_name(enum mgm_sort s);
void mgm_sort_sites(struct mgm_view *v, enum mgm_sort s);

#endif /* MGM_COLLECT_H */
