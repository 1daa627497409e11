/* SPDX-License-Identifier: MIT */
/* mgc_classify.h: the growth classifier shared by mgreport and mgmon. Pure computation on
 * in-memory series: no I/O, no globals, thread-safe, never aborts on any input. */
#ifndef MGC_CLASSIFY_H
#define MGC_CLASSIFY_H

#include <stddef.h>
#include <stdint.h>

#include "mgc_stats.h" /* mgc_trend, mgc_mad, mgc_noise_sigma */

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
	double min_growth; /* smallest growth per step (or second) that matters (absolute floor);
			    * 0 = default: 16 KiB per step, 1 KiB per second (64 B, 1 B for sites); above
			    * it, what reaches `limit` within 10^6 steps (seconds), or doubles the level */
	int x_is_steps;    /* 1: x is training steps; 0: x is seconds */
	/* Added: the warmup horizon, in x units; 0 = default (200 steps, or 3600 seconds). A rise is a
	 * leak only once it has lasted this long (and 20 samples): no statistic tells a straight line
	 * from a warmup that has not ended. A rise that began after the series had been flat for half
	 * of it needs no more; one from the start of the run needs 5 of them (the start horizon: 1000
	 * steps, a dataset cache filling epoch 1), unless epochs are marked (below). */
	double warmup_horizon;
	/* Added: epochs, when the run marks them (a CSV `epoch` column, mgprobe_label("epoch")): the x
	 * where each epoch after the first begins, increasing, as many as have begun (nepochs, may be 0:
	 * still in the first epoch). NULL: the run marks no epochs. Growth from the start that stops
	 * at the first boundary is a cache filling epoch 1; growth that goes on past it is a leak. */
	const double *epochs;
	size_t nepochs;
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
	double slope;          /* growth per step (or second) over the recent segment (Theil-Sen) */
	double slope_lo;       /* its confidence interval */
	double slope_hi;
	double plateau_at;     /* x where the series levelled; NAN when not a plateau */
	double plateau_level;  /* level of the plateau; NAN when not a plateau */
	double level;          /* current level (robust estimate at the last x) */
	double noise;          /* sigma of the step-to-step noise */
	double change_at;      /* x of the last change point; NAN if none */
	double x_to_oom;       /* x units from the last point until `limit` is reached; INFINITY if never/unknown */
	double decidable_at;   /* for growing: x by which the answer should be known; NAN if unknown */
	char why[384];         /* one sentence of evidence, plain words */
	/* Added fields (after the original contract; callers may ignore them): */
	double projected_level; /* growing: level a saturating fit predicts, when one is identified; NAN otherwise */
	double period;          /* x length of the longest spike (or sawtooth period) the verdict looked
				 * through by judging the floor under spikes; 0 if none */
	size_t npoints;         /* points after binning (inputs above 1024 points are binned in powers of 2) */
};

/* Classifies the series (x[i], y[i]), i < n, x strictly increasing. Returns 0 and fills *out,
 * or -EINVAL for n == 0, NULL pointers, non-finite values, x not increasing, or epochs that do not
 * increase or are missing for nepochs > 0 (out untouched), or -ENOMEM. */
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
 * grows while live allocations do not. free_kept may be NULL. With opts->sample_rate R, live is a
 * sampled estimate: a rise of live within three standard deviations of the estimate's change
 * (sqrt(R x the live bytes at both ends)) is no growth of live. */
int mgc_classify_process(const double *x, const double *rss, const double *live,
			 const double *free_kept, size_t n, const struct mgc_classify_opts *opts,
			 struct mgc_fit *out);

/* The smallest growth a report of a whole process calls meaningful, per step and per second,
 * passed as min_growth for process series by mgreport and mgmon alike (a process of a few hundred
 * MiB leaking 0.7 MiB/step matters). The limit's headroom over 10^6 steps applies on top. */
#define MGC_PROCESS_MIN_GROWTH_STEP (64.0 * 1024)
#define MGC_PROCESS_MIN_GROWTH_SEC (1024.0)

/* What only the tracer sees decides earlier and more surely than RSS. Given the process verdict
 * (*proc, from mgc_classify_process on x/rss; or a device series and its CUDA sites) and the
 * leaking sites (their cohorts hold survivors from every recent step): `leak_slope` is the sum of
 * their slopes per step (or second) and `leak_confidence` the top one's confidence. The verdict becomes `leak`
 * - when RSS cannot tell yet (growing) and the sites account for at least half its growth;
 * - when RSS looks flat (stable, plateau: noise, or the allocator reusing memory it kept) but the
 *   sites grow by the meaningful growth: what reaches `limit` within 10^6 steps (seconds), or
 *   doubles RSS without a limit, and at least 4 KiB per step (64 B per second).
 * Returns 1 when it changed *proc, else 0. `limit` (bytes, 0 = unknown) gives the time to OOM. */
int mgc_process_with_sites(struct mgc_fit *proc, const double *x, const double *rss, size_t n,
			   double leak_slope, double leak_confidence, int x_is_steps, double limit);

#endif /* MGC_CLASSIFY_H */
