/* SPDX-License-Identifier: MIT */
/* mgc_analysis.h: the one analysis of a run, for the report (mgreport) and the live view (mgmon)
 * alike: from a run's points and sites to the x axis, the series with their verdicts, the process
 * verdict and the sites ranked, with theirs. Both tools call it on the same kind of input, so they
 * cannot disagree about the same run. It reads no file and prints nothing; it never aborts.
 *
 * Its rules, each in one place (mgc_analysis.c):
 * - The x axis. With step markers, one point per step: the snapshot taken at the step's marker (the
 *   state as the step begins), else the step's first snapshot. Snapshots before the first marker
 *   (the program's start-up) and the exit's snapshot (taken after the teardown) are not steps. A
 *   marker-to-marker axis judges every step at the same moment of its loop: a snapshot from the
 *   middle of a step would add the step's own temporaries as noise. Without markers: every
 *   snapshot, in time.
 * - Steps as x. A step is a u64 from the program, x a double: x is the step itself while that is
 *   exact (below 2^53). A marker below the one before it (a counter reset each epoch, a wrap past
 *   2^64 - 1) or leaping 2^53 past it starts a new segment that continues the axis one step after
 *   the last point, so the run stays one series; markers that start past 2^53 are counted from
 *   the first. Either way `axis_note` says so, in every output.
 * - The window. Verdicts and growth are over the whole axis, first point to last: the classifier
 *   finds where a series changed; a site's growth is its live bytes at the last point minus at the
 *   first. The live segment holds the run on 64 points and the trace on up to 512 (both halve as
 *   the run grows): up to 64 steps the two judge the very same points; past that, each judges its
 *   own sample of the same series.
 * - The limit (time to OOM). `--limit` when given; else the tightest cgroup v2 memory.max; else
 *   the machine's memory (MemTotal). Both are what the probe recorded at start, in the trace and in
 *   the segment alike (a process without the probe: read from /proc). MemAvailable is not used: the
 *   segment does not carry it, and a figure "now" would differ between a live view and a report
 *   read later.
 * - The minimum: a series or a site is judged from MGC_MIN_POINTS points on.
 * - The cohorts a site is judged by are those in force at the last point of the axis.
 * - The sites. Ranked by growth, then live bytes at the end, then id. The process verdict weighs
 *   the leaking host sites among the first MGC_JUDGED_SITES of that ranking, whatever a tool shows.
 * - Epoch boundaries (mgprobe_label("epoch...")) are found here and carried in the result
 *   (`epochs`); the classifier's options receive them in analysis_opts() once they have a field. */
#ifndef MGC_ANALYSIS_H
#define MGC_ANALYSIS_H

#include <stddef.h>
#include <stdint.h>

#include "mgc_classify.h"
#include "mgc_shm.h"
#include "mgc_trace.h"

#define MGC_MIN_POINTS 3      /* the fewest points a verdict is made from */
#define MGC_JUDGED_SITES 20u  /* the top-ranked sites the process verdict weighs */

/* A run's series, by index in mgc_analysis.series. */
enum mgc_series_id { MGC_S_RSS, MGC_S_HEAP, MGC_S_MMAP, MGC_S_FREE_KEPT, MGC_S_DEVICE, MGC_S_N };

struct mgc_series {
	const char *name;  /* "rss", "heap", "mmap", "free_kept", "device", or a CSV column's name */
	double *x, *y;     /* n points: x in steps or seconds, y in bytes */
	size_t n;
	int present;       /* the run has it (n may still be 0): rss always; heap, mmap and free_kept
	                    * with the probe; device once a CUDA byte is on the axis */
	int classified;    /* fit holds its verdict (present, and n >= MGC_MIN_POINTS) */
	struct mgc_fit fit;
};

/* One site as a source holds it: the input of mgc_analyze_run. */
struct mgc_site_input {
	uint32_t id;
	uint16_t kind;                     /* mgc_kind_make code */
	struct mgc_site_counters counters; /* the latest the source has */
	const struct mgc_grid_change *series; /* live bytes over the run's points, as changes */
	size_t nseries;
	const uint64_t *cohorts;           /* MGC_COHORTS, as of the run's last axis point */
};

/* A run as a source holds it: points in time order (a bounded grid), and sites. */
struct mgc_run {
	const struct mgc_point *points;
	size_t npoints;
	int x_is_steps;            /* the run has step markers */
	double first_marker_t;     /* time of the first marker's snapshot; < 0: none, or not known */
	int tracked;               /* 1: from the probe (heap, mmap, sites); 0: /proc only (RSS) */
	const struct mgc_site_input *sites;
	size_t nsites;
	uint64_t cgroup_limit;     /* bytes, 0: none */
	uint64_t mem_total;        /* bytes, 0: unknown */
	const struct mgc_label *labels; /* phase labels with their steps and times (may be NULL) */
	size_t nlabels;
};

struct mgc_analysis_opts {
	double limit; /* bytes; 0: the rule above */
	size_t top;   /* sites to judge, best ranked first; 0: all (at least MGC_JUDGED_SITES are) */
};

/* One site, judged. */
struct mgc_site_result {
	uint32_t id;
	unsigned kind;
	struct mgc_site_counters counters; /* the source's latest */
	const uint64_t *cohorts;           /* judged (the source's; valid while the source is) */
	size_t input;       /* its index in the run's sites */
	double *y;          /* live bytes at each axis point (n of them) */
	double growth;      /* y[n - 1] - y[0]: bytes gained over the window */
	double live_end;    /* y[n - 1]: live bytes at the last axis point (the latest without one) */
	int classified;     /* fit holds its verdict (judged, and n >= MGC_MIN_POINTS) */
	struct mgc_fit fit;
};

/* What the analysis found. The tools print it; the HTML, flame-graph and diff outputs read it. */
struct mgc_analysis {
	int table;                   /* series from a table (mgc_analyze_columns): no axis rule, no sites */
	int x_is_steps;
	size_t n;                    /* points on the axis */
	struct mgc_point end;        /* the last point on the axis ("the end" the tools show) */
	int have_end;
	double limit;                /* bytes; 0 = unknown */
	const char *limit_source;    /* "--limit", "cgroup", "MemTotal"; NULL when unknown */
	struct mgc_series *series;   /* a run's: MGC_S_N, by enum mgc_series_id; a CSV's: its columns */
	size_t nseries;
	int have_verdict;            /* verdict holds the process verdict */
	struct mgc_fit verdict;      /* RSS judged against the live allocations, then the sites */
	struct mgc_site_result *sites; /* every site of the run, ranked */
	size_t nsites;
	size_t nclassified;          /* the first nclassified sites were judged */
	size_t leaking_sites;        /* judged sites whose verdict is leak, device sites included */
	size_t leaking_device_sites; /* of those, CUDA sites */
	double *epochs;              /* x of each epoch boundary on the axis, increasing */
	size_t nepochs;
	char axis_note[200];         /* how steps were counted when x is not the step ("" when it is) */
};

/* Analyses a run. 0, or -ENOMEM (out is then freed and zeroed). The run must outlive `out`. */
int mgc_analyze_run(const struct mgc_run *run, const struct mgc_analysis_opts *o, struct mgc_analysis *out);

/* A whole trace (mgc_trace_load): the run it recorded. */
int mgc_analyze_trace(const struct mgc_trace *t, const struct mgc_analysis_opts *o, struct mgc_analysis *out);

/* A copy of the live segment (mgc_shm_read): the run so far. */
int mgc_analyze_shm(const struct mgc_shm *s, const struct mgc_analysis_opts *o, struct mgc_analysis *out);

/* Series from a table (a CSV): x, and ncols columns of n values; the first column makes the
 * verdict. No sites, no axis rule (x is taken as it is: strictly increasing). */
int mgc_analyze_columns(const double *x, size_t n, int x_is_steps, const char *const *names,
			const double *const *ys, size_t ncols, double limit, struct mgc_analysis *out);

void mgc_analysis_free(struct mgc_analysis *a);

/* The series a tool shows for the process verdict: RSS, or a table's first column. NULL if none. */
const struct mgc_series *mgc_analysis_main(const struct mgc_analysis *a);

/* The device series when the run has CUDA memory, else NULL. */
const struct mgc_series *mgc_analysis_device(const struct mgc_analysis *a);

#endif /* MGC_ANALYSIS_H */
