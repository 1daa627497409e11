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
 * - The cost. Every site is ranked from two values of its series (kept as changes, mgc_grid.h);
 *   only the sites judged (the tool's top, at least MGC_JUDGED_SITES) get a dense series, one at a
 *   time, and a result. A program with 720k sites costs tens of bytes per site, not its points.
 * - Epoch boundaries (mgprobe_label("epoch...")) are found here and carried in the result
 *   (`epochs`), and the classifier is given those after the axis's first point (its options'
 *   `epochs`: growth from the start that stops at the first boundary is a cache filling epoch 1). */
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

/* A run as a source holds it: points in time order (a bounded grid), and sites. */
struct mgc_run {
	const struct mgc_point *points;
	size_t npoints;
	int x_is_steps;            /* the run has step markers */
	double first_marker_t;     /* time of the first marker's snapshot; < 0: none, or not known */
	int tracked;               /* 1: from the probe (heap, mmap, sites); 0: /proc only (RSS) */
	/* The sites, as the source indexes them (NULL entries, and sites no snapshot mentioned, are
	 * left out): each one's series is on `points`; it is judged by the cohorts in force at the
	 * last axis point, cohorts_step with step markers, else cohorts. They must outlive the
	 * analysis: its results point at them. */
	const struct mgc_site *const *sites;
	size_t nsites;
	uint64_t cgroup_limit;     /* bytes, 0: none */
	uint64_t mem_total;        /* bytes, 0: unknown */
	const struct mgc_label *labels; /* phase labels with their steps and times (may be NULL) */
	size_t nlabels;
	uint64_t sample_rate;      /* a sampled run's R (bytes): its sites are estimates; 0: exact */
};

struct mgc_analysis_opts {
	double limit; /* bytes; 0: the rule above */
	size_t top;   /* sites to judge, best ranked first; 0: all (at least MGC_JUDGED_SITES are) */
};

/* Every site of the run, in the ranking's order: what it is ranked by, read from two points of
 * its series. */
struct mgc_site_rank {
	const struct mgc_site *site; /* the source's */
	uint32_t id;
	uint32_t input;     /* its index in the run's sites */
	double growth;      /* live bytes at the last axis point minus at the first */
	double live_end;    /* live bytes at the last axis point (the latest without one) */
};

/* One site with its verdict: the judged ones (mgc_analysis.sites), or any site of the ranking
 * (mgc_analysis_site: without a verdict beyond the judged ones). */
struct mgc_site_result {
	uint32_t id;
	unsigned kind;
	struct mgc_site_counters counters; /* the source's latest */
	const uint64_t *cohorts;           /* judged (the source's; valid while the source is) */
	const struct mgc_site *site;       /* the source's: its series, mgc_analysis_site_at */
	size_t input;       /* its index in the run's sites */
	double growth;      /* as in struct mgc_site_rank */
	double live_end;
	int classified;     /* fit holds its verdict (judged, and n >= MGC_MIN_POINTS) */
	struct mgc_fit fit;
};

/* What the analysis found. The tools print it; the HTML, flame-graph and diff outputs read it. */
struct mgc_analysis {
	int table;                   /* series from a table (mgc_analyze_columns): no axis rule, no sites */
	int x_is_steps;
	uint64_t sample_rate;        /* the run's (struct mgc_run): sites are judged as estimates */
	size_t n;                    /* points on the axis */
	struct mgc_point end;        /* the last point on the axis ("the end" the tools show) */
	int have_end;
	double limit;                /* bytes; 0 = unknown */
	const char *limit_source;    /* "--limit", "cgroup", "MemTotal"; NULL when unknown */
	struct mgc_series *series;   /* a run's: MGC_S_N, by enum mgc_series_id; a CSV's: its columns */
	size_t nseries;
	int have_verdict;            /* verdict holds the process verdict */
	struct mgc_fit verdict;      /* RSS judged against the live allocations, then the sites */
	struct mgc_site_rank *ranked; /* every site of the run, ranked: nsites of them */
	size_t nsites;
	struct mgc_site_result *sites; /* the first nclassified of the ranking, judged: what the tools
					* show and the process verdict weighs (not every site!) */
	size_t nclassified;
	size_t *axis;                /* the run's point of each axis point (n): where series are read */
	size_t leaking_sites;        /* judged sites whose verdict is leak, device sites included */
	size_t leaking_device_sites; /* of those, CUDA sites */
	double *epochs;              /* x of each epoch boundary on the axis, increasing */
	size_t nepochs;
	int has_epochs;              /* the run marks epochs (labels "epoch...", a CSV epoch column),
				      * even if no boundary is on the axis: the classifier is told */
	char axis_note[200];         /* how steps were counted when x is not the step ("" when it is) */
	struct mgc_site *own_sites;  /* a segment's sites as the analysis reads them (mgc_analyze_shm) */
	struct mgc_grid_change *own_changes;
};

/* Analyses a run. 0, or -ENOMEM (out is then freed and zeroed). The run must outlive `out`. */
int mgc_analyze_run(const struct mgc_run *run, const struct mgc_analysis_opts *o, struct mgc_analysis *out);

/* A whole trace (mgc_trace_load): the run it recorded. */
int mgc_analyze_trace(const struct mgc_trace *t, const struct mgc_analysis_opts *o, struct mgc_analysis *out);

/* A copy of the live segment (mgc_shm_read): the run so far. */
int mgc_analyze_shm(const struct mgc_shm *s, const struct mgc_analysis_opts *o, struct mgc_analysis *out);

/* Series from a table (a CSV): x, and ncols columns of n values; the first column makes the
 * verdict. No sites, no axis rule (x is taken as it is: strictly increasing). epochs: the x where
 * each epoch begins (nepochs, increasing; the CSV's epoch column), NULL when the table has none. */
int mgc_analyze_columns(const double *x, size_t n, int x_is_steps, const char *const *names,
			const double *const *ys, size_t ncols, const double *epochs, size_t nepochs,
			double limit, struct mgc_analysis *out);

void mgc_analysis_free(struct mgc_analysis *a);

/* A site of the run (a ranked or judged one's `site`): its live bytes at axis point i (i < a->n),
 * its highest at any axis point (0 when it never held memory there), or at every axis point into
 * y (a->n of them). */
double mgc_analysis_site_at(const struct mgc_analysis *a, const struct mgc_site *s, size_t i);
double mgc_analysis_site_peak(const struct mgc_analysis *a, const struct mgc_site *s);
/* 1 when site s's live bytes (as mgc_analysis_site_at reads them) are the same at every axis point
 * (so with fewer than 2 points), else 0: its series on the axis is then its value at the last one. */
int mgc_analysis_site_flat(const struct mgc_analysis *a, const struct mgc_site *s);
void mgc_analysis_site_series(const struct mgc_analysis *a, const struct mgc_site *s, double *y);

/* Site k of the ranking (k < a->nsites) with its verdict: the judged result for k < nclassified,
 * else one filled into *tmp without a verdict (classified 0). Returns either. */
const struct mgc_site_result *mgc_analysis_site(const struct mgc_analysis *a, size_t k,
						struct mgc_site_result *tmp);

/* The series a tool shows for the process verdict: RSS, or a table's first column. NULL if none. */
const struct mgc_series *mgc_analysis_main(const struct mgc_analysis *a);

/* The device series when the run has CUDA memory, else NULL. */
const struct mgc_series *mgc_analysis_device(const struct mgc_analysis *a);

#endif /* MGC_ANALYSIS_H */
