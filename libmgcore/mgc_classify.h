/* SPDX-License-Identifier: MIT */
/* mgc_classify.h: the growth classifier shared by mgreport and mgmon. Pure computation on
 * in-memory series: no I/O, no globals, thread-safe, never aborts on any input. */
#ifndef MGC_CLASSIFY_H
#define MGC_CLASSIFY_H

#include <stddef.h>
#include <stdint.h>

enum mgc_verdict {
	MGC_VERDICT_STABLE = 0,    /* no meaningful growth */
	MGC_VERDICT_PLATEAU = 1,   /* grew, then levelled (warmup) */
	MGC_VERDICT_LEAK = 2,      /* grows without bound */
	MGC_VERDICT_GROWING = 3,   /* still growing, cannot yet tell warmup from leak */
	MGC_VERDICT_RETENTION = 4, /* process level: RSS grows while live allocations do not */
};

/* "stable", "plateau", "leak", "growing", "retention". */
const char *mgc_verdict_name(enum mgc_verdict v);

struct mgc_classify_opts {
	double limit;      /* memory limit in the series' unit (bytes); 0 = unknown: no OOM projection */
	double min_growth; /* smallest growth per x unit that matters (absolute floor); 0 = default */
	int x_is_steps;    /* 1: x is training steps; 0: x is seconds */
	/* Added: the longest warmup considered plausible, in x units; 0 = default (200 steps, or 3600
	 * seconds). A series that rises in a straight line is `growing`, never `leak`, until it has risen
	 * for this long: no statistic can tell such a line from a warmup that has not ended yet. */
	double warmup_horizon;
	/* Added: sampled data (mgprobe --sample R): R in bytes, 0 = exact. A sampled site's estimate
	 * moves by about R with every recorded allocation, so a site is not a `leak` until its
	 * estimated growth exceeds MGC_SAMPLED_LEAK_RATES * R (then `growing`), and a flat end
	 * shorter than MGC_SAMPLED_FLAT_RATES * R of the rise before it is no plateau. */
	double sample_rate;
};

#define MGC_SAMPLED_LEAK_RATES 9.0
#define MGC_SAMPLED_FLAT_RATES 3.0 /* a continuing rise leaves no sample in it 5% of the time */

struct mgc_fit {
	enum mgc_verdict verdict;
	double confidence;     /* 0..1 */
	double slope;          /* growth per x unit over the recent segment (Theil-Sen) */
	double slope_lo;       /* its confidence interval */
	double slope_hi;
	double plateau_at;     /* x where the series levelled; NAN when not a plateau */
	double plateau_level;  /* level of the plateau; NAN when not a plateau */
	double level;          /* current level (robust estimate at the last x) */
	double noise;          /* sigma of the step-to-step noise */
	double change_at;      /* x of the last change point; NAN if none */
	double x_to_oom;       /* x units from the last point until `limit` is reached; INFINITY if never/unknown */
	double decidable_at;   /* for growing: x by which the answer should be known; NAN if unknown */
	char why[200];         /* one sentence of evidence, plain words */
	/* Added fields (after the original contract; callers may ignore them): */
	double projected_level; /* growing: level a saturating fit predicts, when one is identified; NAN otherwise */
	double period;          /* x length of the periodic spikes/sawtooth the verdict looked through; 0 if none */
	size_t npoints;         /* points the verdict used after decimation (inputs above 1024 points are binned) */
};

/* Classifies the series (x[i], y[i]), i < n, x strictly increasing. Returns 0 and fills *out,
 * or -EINVAL for n == 0, NULL pointers, non-finite values or x not increasing (out untouched). */
int mgc_classify(const double *x, const double *y, size_t n, const struct mgc_classify_opts *opts,
		 struct mgc_fit *out);

/* What only an allocation tracer sees about one site, at the end of the observed window. */
struct mgc_site_evidence {
	const double *x;        /* steps (or seconds) of the samples */
	const double *live;     /* live bytes at each x */
	size_t n;
	const uint64_t *cohorts; /* live bytes by birth-step bucket (mgc_format.h: mgc_cohort_bucket); may be NULL */
	unsigned ncohorts;
	double last_step;       /* the current step (to know which cohorts are recent) */
	uint64_t allocs, frees; /* totals */
	uint64_t live_count;
};

/* Classifies a site from its live-bytes series and its cohorts: a leak leaves survivors from
 * every recent birth bucket, a warmup only from early ones. Same return contract as mgc_classify. */
int mgc_classify_site(const struct mgc_site_evidence *ev, const struct mgc_classify_opts *opts,
		      struct mgc_fit *out);

/* Process level: rss, live (heap + mmap + device tracked bytes) and free_kept (allocator's free
 * bytes) over the same x. Returns the RSS verdict, turned into MGC_VERDICT_RETENTION when RSS
 * grows while live allocations do not. free_kept may be NULL. */
int mgc_classify_process(const double *x, const double *rss, const double *live,
			 const double *free_kept, size_t n, const struct mgc_classify_opts *opts,
			 struct mgc_fit *out);

/* The statistics the classifier is built from, exported for tests and for tools that want the
 * raw numbers. All are pure and thread-safe; each allocates its own scratch with malloc. */

struct mgc_trend {
	double slope;      /* Theil-Sen: median of the pairwise slopes (y_j - y_i)/(x_j - x_i) */
	double slope_lo;   /* rank confidence interval: slopes number (N - C)/2 and (N + C)/2 + 1 */
	double slope_hi;   /*   (1-based, rounded) of the N sorted ones, C = z * sqrt(var_s) */
	double intercept;  /* median of y_i - slope * x_i */
	double s;          /* Mann-Kendall S = sum over i < j of sgn(y_j - y_i) */
	double var_s;      /* Var S with the tie correction (no autocorrelation correction) */
	double z;          /* (S - sgn S)/sqrt(var_s); 0 when S == 0 */
};

/* Theil-Sen slope with its rank-based interval at normal quantile `z` (1.96 for 95%) and the
 * Mann-Kendall statistic of (x[i], y[i]), i < n, x strictly increasing. O(n^2) time; allocates
 * n(n-1)/2 doubles. Returns 0, -EINVAL (n < 2, NULL) or -ENOMEM. */
int mgc_trend(const double *x, const double *y, size_t n, double z, struct mgc_trend *out);

/* Median absolute deviation from the median (unscaled) of v[0..n); NAN for n == 0 or no memory. */
double mgc_mad(const double *v, size_t n);

/* Step-to-step noise: 1.4826 * MAD(first differences) / sqrt(2); 0 for n < 3, NAN for no memory. */
double mgc_noise_sigma(const double *y, size_t n);

/* The smallest growth a report of a whole process calls meaningful, per step and per second,
 * passed as min_growth for process series by mgreport and mgmon alike. The classifier's own
 * defaults (1 MiB/step) suit multi-GB training processes; a process of a few hundred MB leaking
 * 0.7 MB/step matters too. Relative growth (1e-4 of the level per x) still applies on top. */
#define MGC_PROCESS_MIN_GROWTH_STEP (64.0 * 1024)
#define MGC_PROCESS_MIN_GROWTH_SEC (1024.0)

/* What only the tracer sees decides earlier and more surely than RSS. Given the process verdict
 * (*proc, from mgc_classify_process on x/rss) and the leaking sites (their cohorts hold
 * survivors from every recent step): `leak_slope` is the sum of their slopes per x unit and
 * `leak_confidence` the top one's confidence. The verdict becomes `leak`
 * - when RSS cannot tell yet (growing) and the sites account for at least half its growth;
 * - when RSS looks flat (stable, plateau: noise, or the allocator reusing memory it kept) but the
 *   sites grow by at least 1e-4 of RSS per step (1e-6 per second).
 * Returns 1 when it changed *proc, else 0. `limit` (bytes, 0 = unknown) gives the time to OOM. */
int mgc_process_with_sites(struct mgc_fit *proc, const double *x, const double *rss, size_t n,
			   double leak_slope, double leak_confidence, int x_is_steps, double limit);

#endif /* MGC_CLASSIFY_H */
