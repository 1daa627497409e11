/* SPDX-License-Identifier: MIT */
/* mgm_collect.h: what mgmon shows, as plain structs: one frame's view of a process, filled from
 * the probe's shared-memory segment (or /proc and NVML without the probe), judged by libmgcore's
 * analysis (mgc_analysis.h: the very rules mgreport applies to a trace) and symbolized. No
 * drawing, no curses here; nothing in here may exit or abort on what a process or segment holds. */
#ifndef MGM_COLLECT_H
#define MGM_COLLECT_H

#include <stddef.h>
#include <stdint.h>

#include "mgc_analysis.h"
#include "mgc_symbols.h"

#define MGM_MAX_CHILDREN 64

/* A site's symbolized stack, cached by the collector for its lifetime. */
struct mgm_stack {
	uint32_t id;
	struct mgc_stack st;
	int truncated;            /* the probe kept fewer frames than the stack has */
};

/* One site as mgmon shows it: the analysis's result for it and its stack. */
struct mgm_site {
	const struct mgc_site_result *r; /* in the view's analysis */
	const struct mgm_stack *stack;   /* NULL when it could not be symbolized */
	const double *y;                 /* its live bytes at each axis point (a.n of them) */
	double band;                     /* sampled runs: +- of its live bytes (two standard
					  * deviations; mgc_site_band); 0: exact */
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
	char notice[256];         /* what mgmon refused or gave up on at the segment's name (planted,
				   * or it shrank), shown with every frame ("" when none) */
	double uptime;            /* seconds */
	uint64_t step;
	double steps_per_s;       /* < 0 when unknown */
	char label[32];
	/* The latest figures (the segment's newest snapshot, or /proc now). */
	uint64_t rss, rss_anon, rss_file, rss_shmem, swap;
	uint64_t heap, heap_count, mmap, mmap_count, free_kept, other;
	int have_device;
	uint64_t device;          /* GPU memory: CUDA allocations (probe), or what NVML says */
	const char *device_source; /* "probe", "NVML" */
	/* The run so far, judged. */
	struct mgc_analysis a;
	struct mgm_site *sites;   /* the analysis's judged sites, in the order shown (mgm_sort_sites) */
	size_t nsites;
	double *site_y;           /* the sites' series (mgm_site.y point here) */
	size_t sites_total;       /* sites the probe knows (only the top ones are published) */
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

/* growth: the analysis's ranking (growth over the run, then live bytes), as mgreport lists them. */
enum mgm_sort { MGM_SORT_GROWTH, MGM_SORT_LIVE, MGM_SORT_ALLOCS, MGM_SORT_N };
const char *mgm_sort_name(enum mgm_sort s);
void mgm_sort_sites(struct mgm_view *v, enum mgm_sort s);

#endif /* MGM_COLLECT_H */
