/* SPDX-License-Identifier: MIT */
/* eval_train.c: the training-like evaluation set of the growth classifier (issue 12): RSS series
 * of 4-80 GiB logged every step or every 10 steps, built from the mechanisms of real runs
 * (allocator pools, dataset caches, running maxima, pinned pools, ramps, validation and checkpoint
 * spikes, gradient-accumulation sawtooth, heavy-tailed and AR(1) noise, level shifts) and the leaks
 * that hide in them. Fixed seeds; it never reads a file or a clock. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eval_set.h"

#define LIMIT (80 * GIB)
#define T_EXT_MAX 2000000 /* steps searched for the true OOM of a leak */

enum base { B_FLAT, B_RAMP, B_EXP, B_DOUBLING, B_CACHE, B_RUNMAX, B_PINNED, B_SHIFT, B_PHASE };
enum leak { LK_NONE, LK_LINEAR, LK_STAIR };
enum spikes { SP_NONE, SP_VAL, SP_CKPT, SP_SAW, SP_IRREG };
enum noise { N_GAUSS, N_T, N_AR };
/* A staircase's gaps between jumps (mean `gap`): a fifth of the mean plus an exponential draw;
 * exponential (a Poisson staircase); log-normal (sigma 1: more spread than exponential, rare very
 * long pauses); nearly regular (0.8-1.2 of the mean). */
enum gaps { G_SHIFTED, G_EXP, G_LOGNORM, G_REGULAR };

/* One series: a base (warmup shape), a leak, spikes and noise, each with its parameters. */
struct spec {
	const char *family, *name;
	int T, dx;           /* steps, logging interval */
	double L0;           /* GiB at step 0 */
	double ws, wa;       /* a start-up ramp: ws steps, wa GiB (0: none) */
	enum base base;
	double p1, p2, p3, p4;
	enum leak leak;
	double t_on, t_stop, rate; /* rate: MiB/step (linear) or MiB per jump (staircase) */
	double gap;          /* staircase: mean steps between jumps */
	enum spikes sp;
	double period, dur, height, first; /* steps, steps, GiB, step of the first */
	enum noise noise;
	double sigma, phi, outliers; /* MiB (marginal), AR coefficient, outlier probability */
	double epoch;        /* epoch length in steps; 0: the run marks no epochs */
	uint64_t seed;
	enum gaps gaps;      /* staircases */
};

/* Precomputed random events of one series (staircase jumps, irregular spikes, sequence lengths). */
struct events {
	double *jump_t, *jump_h;
	size_t njump;
	double *spk_t, *spk_d, *spk_h;
	size_t nspk;
	double *runmax; /* B_RUNMAX / B_PINNED: per-step value of the running maximum (GiB), T_ext + 1 */
	size_t nrun;
};

static const struct spec SPECS[] = {
	/* ---- non-leaks ---- */
	/* allocator pools that double when demand (an exponential approach) outgrows them */
	{"pool-doubling", "pool-12G-tau150", 3000, 1, 12, 0, 0, B_DOUBLING, 150, 6, 0.25, 0, LK_NONE, 0, 0, 0, 0,
	 SP_NONE, 0, 0, 0, 0, N_GAUSS, 20, 0, 0, 0, 101, G_SHIFTED},
	{"pool-doubling", "pool-40G-tau400", 6000, 10, 40, 0, 0, B_DOUBLING, 400, 20, 1, 0, LK_NONE, 0, 0, 0, 0,
	 SP_NONE, 0, 0, 0, 0, N_T, 50, 0, 0, 0, 102, G_SHIFTED},
	{"pool-doubling", "pool-6G-val", 2000, 1, 6, 0, 0, B_DOUBLING, 60, 3, 0.125, 0, LK_NONE, 0, 0, 0, 0,
	 SP_VAL, 500, 10, 2, 500, N_AR, 10, 0.6, 0, 0, 103, G_SHIFTED},
	{"pool-doubling", "pool-64G-tau800", 5000, 10, 64, 0, 0, B_DOUBLING, 800, 10, 0.5, 0, LK_NONE, 0, 0, 0, 0,
	 SP_NONE, 0, 0, 0, 0, N_GAUSS, 100, 0, 0, 0, 104, G_SHIFTED},
	/* a dataset cache that fills during the first epoch, then stays */
	{"cache-epoch1", "cache-1000-8G", 4000, 1, 8, 100, 2, B_CACHE, 100, 1000, 12, 0, LK_NONE, 0, 0, 0, 0,
	 SP_NONE, 0, 0, 0, 0, N_GAUSS, 30, 0, 0, 1000, 201, G_SHIFTED},
	{"cache-epoch1", "cache-1500-30G-val", 6000, 10, 30, 0, 0, B_CACHE, 0, 1500, 25, 0, LK_NONE, 0, 0, 0, 0,
	 SP_VAL, 1500, 30, 4, 1500, N_AR, 60, 0.8, 0, 1500, 202, G_SHIFTED},
	{"cache-epoch1", "cache-1200-16G-decel", 3000, 1, 16, 50, 1, B_CACHE, 50, 1200, 10, 1.5, LK_NONE, 0, 0, 0,
	 0, SP_NONE, 0, 0, 0, 0, N_T, 20, 0, 0, 1200, 203, G_SHIFTED},
	{"cache-epoch1", "cache-1100-50G", 6000, 10, 50, 0, 0, B_CACHE, 0, 1100, 20, 0, LK_NONE, 0, 0, 0, 0,
	 SP_CKPT, 1000, 3, 6, 1000, N_GAUSS, 100, 0, 0, 1100, 204, G_SHIFTED},
	/* the running maximum of bucketed sequence lengths (activation memory of the longest batch) */
	{"runmax", "runmax-10G", 3000, 1, 10, 0, 0, B_RUNMAX, 8, 1, 0, 0, LK_NONE, 0, 0, 0, 0, SP_NONE, 0, 0, 0, 0,
	 N_GAUSS, 20, 0, 0, 0, 301, G_SHIFTED},
	{"runmax", "runmax-36G-ar", 6000, 10, 36, 0, 0, B_RUNMAX, 16, 1, 0, 0, LK_NONE, 0, 0, 0, 0, SP_NONE, 0, 0, 0,
	 0, N_AR, 40, 0.9, 0, 0, 302, G_SHIFTED},
	{"runmax", "runmax-20G-sq", 2000, 1, 20, 0, 0, B_RUNMAX, 12, 1.5, 0, 0, LK_NONE, 0, 0, 0, 0, SP_VAL, 400, 8,
	 3, 400, N_T, 30, 0, 0, 0, 303, G_SHIFTED},
	/* pinned host-memory pools growing in chunks while the prefetch demand warms up */
	{"pinned-pool", "pinned-chunk512M", 3000, 1, 14, 0, 0, B_PINNED, 200, 4, 0.5, 0, LK_NONE, 0, 0, 0, 0,
	 SP_NONE, 0, 0, 0, 0, N_GAUSS, 15, 0, 0, 0, 401, G_SHIFTED},
	{"pinned-pool", "pinned-chunk1G", 5000, 10, 45, 0, 0, B_PINNED, 500, 8, 1, 0, LK_NONE, 0, 0, 0, 0, SP_CKPT,
	 1000, 5, 10, 1000, N_GAUSS, 60, 0, 0, 0, 402, G_SHIFTED},
	{"pinned-pool", "pinned-chunk256M", 2000, 1, 5, 0, 0, B_PINNED, 80, 2, 0.25, 0, LK_NONE, 0, 0, 0, 0, SP_NONE,
	 0, 0, 0, 0, N_AR, 8, 0.5, 0, 0, 403, G_SHIFTED},
	/* ramps of 60-320 steps that then flatten (the seeds' shape) */
	{"ramp", "ramp80-seeds", 1000, 1, 5, 0, 0, B_RAMP, 80, 12, 0.03, 0, LK_NONE, 0, 0, 0, 0, SP_NONE, 0, 0, 0, 0,
	 N_GAUSS, 20, 0, 0, 0, 501, G_SHIFTED},
	{"ramp", "ramp320-40G", 2000, 1, 8, 0, 0, B_RAMP, 320, 40, 0, 0, LK_NONE, 0, 0, 0, 0, SP_NONE, 0, 0, 0, 0,
	 N_GAUSS, 50, 0, 0, 0, 502, G_SHIFTED},
	{"ramp", "ramp200-dx10", 3000, 10, 40, 0, 0, B_RAMP, 200, 30, 0.02, 0, LK_NONE, 0, 0, 0, 0, SP_NONE, 0, 0, 0,
	 0, N_AR, 80, 0.5, 0, 0, 503, G_SHIFTED},
	{"ramp", "ramp60-4G", 800, 1, 4, 0, 0, B_RAMP, 60, 3, 0, 0, LK_NONE, 0, 0, 0, 0, SP_NONE, 0, 0, 0, 0, N_T, 10,
	 0, 0, 0, 504, G_SHIFTED},
	{"ramp", "ramp260-ckpt", 2500, 1, 20, 0, 0, B_RAMP, 260, 20, 0.01, 0, LK_NONE, 0, 0, 0, 0, SP_CKPT, 500, 2, 5,
	 500, N_GAUSS, 30, 0, 0, 0, 505, G_SHIFTED},
	/* exponential approach */
	{"exp-warmup", "exp-tau50", 1500, 1, 10, 0, 0, B_EXP, 50, 8, 0, 0, LK_NONE, 0, 0, 0, 0, SP_NONE, 0, 0, 0, 0,
	 N_GAUSS, 30, 0, 0, 0, 601, G_SHIFTED},
	{"exp-warmup", "exp-tau300", 4000, 10, 24, 0, 0, B_EXP, 300, 16, 0, 0, LK_NONE, 0, 0, 0, 0, SP_VAL, 1000, 20,
	 4, 1000, N_GAUSS, 50, 0, 0, 0, 602, G_SHIFTED},
	{"exp-warmup", "exp-tau1000", 6000, 10, 30, 0, 0, B_EXP, 1000, 20, 0, 0, LK_NONE, 0, 0, 0, 0, SP_NONE, 0, 0,
	 0, 0, N_GAUSS, 60, 0, 0, 0, 603, G_SHIFTED},
	/* validation spikes every N steps */
	{"val-spikes", "val200-d3", 2000, 1, 12, 50, 3, B_FLAT, 0, 0, 0, 0, LK_NONE, 0, 0, 0, 0, SP_VAL, 200, 3, 1,
	 200, N_GAUSS, 20, 0, 0, 0, 701, G_SHIFTED},
	{"val-spikes", "val500-d30", 5000, 10, 30, 100, 6, B_FLAT, 0, 0, 0, 0, LK_NONE, 0, 0, 0, 0, SP_VAL, 500, 30,
	 3, 500, N_GAUSS, 60, 0, 0, 0, 702, G_SHIFTED},
	{"val-spikes", "val950-d60", 6000, 10, 40, 200, 8, B_FLAT, 0, 0, 0, 0, LK_NONE, 0, 0, 0, 0, SP_VAL, 950, 60,
	 8, 950, N_T, 80, 0, 0, 0, 703, G_SHIFTED},
	{"val-spikes", "val1000-d10", 4000, 1, 60, 100, 4, B_FLAT, 0, 0, 0, 0, LK_NONE, 0, 0, 0, 0, SP_VAL, 1000, 10,
	 12, 1000, N_GAUSS, 100, 0, 0, 0, 704, G_SHIFTED},
	/* checkpoint-save spikes */
	{"ckpt-spikes", "ckpt500", 3000, 1, 16, 80, 2, B_FLAT, 0, 0, 0, 0, LK_NONE, 0, 0, 0, 0, SP_CKPT, 500, 1, 5,
	 500, N_GAUSS, 25, 0, 0, 0, 801, G_SHIFTED},
	{"ckpt-spikes", "ckpt1000", 6000, 10, 48, 150, 6, B_FLAT, 0, 0, 0, 0, LK_NONE, 0, 0, 0, 0, SP_CKPT, 1000, 5,
	 16, 1000, N_GAUSS, 80, 0, 0, 0, 802, G_SHIFTED},
	{"ckpt-spikes", "ckpt2000", 8000, 10, 25, 0, 0, B_FLAT, 0, 0, 0, 0, LK_NONE, 0, 0, 0, 0, SP_CKPT, 2000, 3, 8,
	 2000, N_AR, 40, 0.7, 0, 0, 803, G_SHIFTED},
	/* gradient-accumulation sawtooth */
	{"grad-accum", "saw4", 2000, 1, 9, 40, 2, B_FLAT, 0, 0, 0, 0, LK_NONE, 0, 0, 0, 0, SP_SAW, 4, 0, 1, 0,
	 N_GAUSS, 15, 0, 0, 0, 901, G_SHIFTED},
	{"grad-accum", "saw16", 3000, 1, 22, 60, 3, B_FLAT, 0, 0, 0, 0, LK_NONE, 0, 0, 0, 0, SP_SAW, 16, 0, 3, 0,
	 N_GAUSS, 30, 0, 0, 0, 902, G_SHIFTED},
	{"grad-accum", "saw8-dx10", 5000, 10, 35, 100, 5, B_FLAT, 0, 0, 0, 0, LK_NONE, 0, 0, 0, 0, SP_SAW, 8, 0, 2,
	 0, N_GAUSS, 50, 0, 0, 0, 903, G_SHIFTED},
	/* heavy-tailed noise with rare outliers */
	{"heavy-tail", "t3-20G", 3000, 1, 20, 100, 4, B_FLAT, 0, 0, 0, 0, LK_NONE, 0, 0, 0, 0, SP_NONE, 0, 0, 0, 0,
	 N_T, 40, 0, 0.005, 0, 1001, G_SHIFTED},
	{"heavy-tail", "t3-70G-dx10", 6000, 10, 70, 0, 0, B_FLAT, 0, 0, 0, 0, LK_NONE, 0, 0, 0, 0, SP_NONE, 0, 0, 0,
	 0, N_T, 150, 0, 0.01, 0, 1002, G_SHIFTED},
	{"heavy-tail", "t3-6G", 1500, 1, 6, 30, 1, B_FLAT, 0, 0, 0, 0, LK_NONE, 0, 0, 0, 0, SP_NONE, 0, 0, 0, 0, N_T,
	 10, 0, 0.01, 0, 1003, G_SHIFTED},
	/* AR(1) noise: a wandering series whose local slope is large */
	{"ar-noise", "ar0.8", 3000, 1, 15, 50, 2, B_FLAT, 0, 0, 0, 0, LK_NONE, 0, 0, 0, 0, SP_NONE, 0, 0, 0, 0, N_AR,
	 50, 0.8, 0, 0, 1101, G_SHIFTED},
	{"ar-noise", "ar0.9-dx10", 6000, 10, 40, 0, 0, B_FLAT, 0, 0, 0, 0, LK_NONE, 0, 0, 0, 0, SP_NONE, 0, 0, 0, 0,
	 N_AR, 100, 0.9, 0, 0, 1102, G_SHIFTED},
	{"ar-noise", "ar0.95-a", 3000, 1, 25, 80, 4, B_FLAT, 0, 0, 0, 0, LK_NONE, 0, 0, 0, 0, SP_NONE, 0, 0, 0, 0,
	 N_AR, 200, 0.95, 0, 0, 1103, G_SHIFTED},
	{"ar-noise", "ar0.95-b", 5000, 10, 60, 0, 0, B_FLAT, 0, 0, 0, 0, LK_NONE, 0, 0, 0, 0, SP_NONE, 0, 0, 0, 0,
	 N_AR, 300, 0.95, 0, 0, 1104, G_SHIFTED},
	/* level shifts: one jump, then flat */
	{"level-shift", "shift800", 3000, 1, 10, 50, 2, B_SHIFT, 800, 3, 0, 0, LK_NONE, 0, 0, 0, 0, SP_NONE, 0, 0, 0,
	 0, N_GAUSS, 20, 0, 0, 0, 1201, G_SHIFTED},
	{"level-shift", "shift2500-dx10", 6000, 10, 35, 0, 0, B_SHIFT, 2500, 8, 0, 0, LK_NONE, 0, 0, 0, 0, SP_VAL,
	 1000, 20, 4, 1000, N_GAUSS, 60, 0, 0, 0, 1202, G_SHIFTED},
	{"level-shift", "shift-first-val", 4000, 1, 28, 100, 3, B_SHIFT, 1000, 1.5, 0, 0, LK_NONE, 0, 0, 0, 0, SP_VAL,
	 1000, 15, 3, 1000, N_AR, 30, 0.5, 0, 0, 1203, G_SHIFTED},
	/* a second, short warmup when a phase starts (the first validation) */
	{"phase-warmup", "phase1000", 3000, 1, 18, 100, 3, B_PHASE, 1000, 120, 2, 0, LK_NONE, 0, 0, 0, 0, SP_VAL,
	 1000, 10, 2, 1000, N_GAUSS, 20, 0, 0, 0, 1301, G_SHIFTED},
	{"phase-warmup", "phase2000-dx10", 6000, 10, 32, 150, 4, B_PHASE, 2000, 150, 3, 0, LK_NONE, 0, 0, 0, 0,
	 SP_NONE, 0, 0, 0, 0, N_GAUSS, 50, 0, 0, 0, 1302, G_SHIFTED},

	/* ---- more non-leaks: the same mechanisms, mixed, and long series logged every step ---- */
	{"ar-noise", "ar0.95-long-dx1", 6000, 1, 30, 100, 3, B_FLAT, 0, 0, 0, 0, LK_NONE, 0, 0, 0, 0, SP_NONE, 0, 0,
	 0, 0, N_AR, 150, 0.95, 0, 0, 1401, G_SHIFTED},
	{"ar-noise", "ar0.9-val", 5000, 10, 45, 0, 0, B_EXP, 100, 5, 0, 0, LK_NONE, 0, 0, 0, 0, SP_VAL, 800, 30, 6,
	 800, N_AR, 120, 0.9, 0, 0, 1402, G_SHIFTED},
	{"ramp", "ramp150-to75G", 1500, 1, 30, 0, 0, B_RAMP, 150, 45, 0, 0, LK_NONE, 0, 0, 0, 0, SP_NONE, 0, 0, 0, 0,
	 N_GAUSS, 60, 0, 0, 0, 1403, G_SHIFTED},
	{"pool-doubling", "pool-long-dx1", 6000, 1, 20, 0, 0, B_DOUBLING, 600, 12, 0.5, 0, LK_NONE, 0, 0, 0, 0,
	 SP_CKPT, 1500, 4, 8, 1500, N_GAUSS, 40, 0, 0, 0, 1404, G_SHIFTED},
	{"val-spikes", "val950-long-dx1", 6000, 1, 35, 200, 5, B_FLAT, 0, 0, 0, 0, LK_NONE, 0, 0, 0, 0, SP_VAL, 950, 40,
	 7, 950, N_T, 50, 0, 0.002, 0, 1405, G_SHIFTED},
	{"val-spikes", "irregular-eval", 4000, 1, 25, 100, 4, B_FLAT, 0, 0, 0, 0, LK_NONE, 0, 0, 0, 0, SP_IRREG, 500,
	 30, 5, 0, N_GAUSS, 30, 0, 0, 0, 1406, G_SHIFTED},
	{"cache-epoch1", "cache-1300-ar-val", 5000, 10, 18, 80, 2, B_CACHE, 80, 1300, 15, 0, LK_NONE, 0, 0, 0, 0,
	 SP_VAL, 1300, 20, 3, 1300, N_AR, 50, 0.7, 0, 1300, 1407, G_SHIFTED},
	{"exp-warmup", "exp-tau100-ar", 3000, 1, 12, 0, 0, B_EXP, 100, 6, 0, 0, LK_NONE, 0, 0, 0, 0, SP_NONE, 0, 0, 0, 0,
	 N_AR, 40, 0.8, 0, 0, 1408, G_SHIFTED},
	{"level-shift", "shift-down", 3000, 1, 40, 100, 3, B_SHIFT, 1200, -2, 0, 0, LK_NONE, 0, 0, 0, 0, SP_NONE, 0, 0,
	 0, 0, N_GAUSS, 40, 0, 0, 0, 1409, G_SHIFTED},
	{"heavy-tail", "t3-ckpt", 4000, 10, 50, 0, 0, B_EXP, 80, 3, 0, 0, LK_NONE, 0, 0, 0, 0, SP_CKPT, 800, 5, 9, 800,
	 N_T, 80, 0, 0.01, 0, 1410, G_SHIFTED},

	/* ---- leaks ---- */
	/* late leaks: the run had settled */
	{"late-leak", "late800-4M", 3000, 1, 48, 80, 3, B_FLAT, 0, 0, 0, 0, LK_LINEAR, 800, INFINITY, 4, 0, SP_NONE,
	 0, 0, 0, 0, N_GAUSS, 30, 0, 0, 0, 2001, G_SHIFTED},
	{"late-leak", "late2500-20M-dx10", 6000, 10, 20, 0, 0, B_EXP, 150, 6, 0, 0, LK_LINEAR, 2500, INFINITY, 20, 0,
	 SP_NONE, 0, 0, 0, 0, N_GAUSS, 80, 0, 0, 0, 2002, G_SHIFTED},
	{"late-leak", "late1500-1M", 4000, 1, 30, 100, 5, B_FLAT, 0, 0, 0, 0, LK_LINEAR, 1500, INFINITY, 1, 0,
	 SP_NONE, 0, 0, 0, 0, N_T, 25, 0, 0.005, 0, 2003, G_SHIFTED},
	{"late-leak", "late3000-12M-dx10", 7000, 10, 8, 0, 0, B_RAMP, 200, 10, 0, 0, LK_LINEAR, 3000, INFINITY, 12, 0,
	 SP_NONE, 0, 0, 0, 0, N_AR, 60, 0.7, 0, 0, 2004, G_SHIFTED},
	{"late-leak", "late600-2M", 2500, 1, 45, 0, 0, B_RAMP, 150, 8, 0, 0, LK_LINEAR, 600, INFINITY, 2, 0, SP_NONE,
	 0, 0, 0, 0, N_GAUSS, 15, 0, 0, 0, 2005, G_SHIFTED},
	/* slow leaks of 0.1-1 MiB/step at 20-60 GiB */
	{"slow-leak", "slow0.1-20G", 8000, 10, 20, 0, 0, B_FLAT, 0, 0, 0, 0, LK_LINEAR, 0, INFINITY, 0.1, 0, SP_NONE,
	 0, 0, 0, 0, N_GAUSS, 3, 0, 0, 0, 2101, G_SHIFTED},
	{"slow-leak", "slow0.3-35G", 4000, 1, 35, 100, 3, B_FLAT, 0, 0, 0, 0, LK_LINEAR, 500, INFINITY, 0.3, 0,
	 SP_NONE, 0, 0, 0, 0, N_GAUSS, 8, 0, 0, 0, 2102, G_SHIFTED},
	{"slow-leak", "slow0.5-50G-ar", 8000, 10, 50, 0, 0, B_FLAT, 0, 0, 0, 0, LK_LINEAR, 1000, INFINITY, 0.5, 0,
	 SP_NONE, 0, 0, 0, 0, N_AR, 20, 0.9, 0, 0, 2103, G_SHIFTED},
	{"slow-leak", "slow1-60G", 6000, 10, 60, 0, 0, B_EXP, 200, 4, 0, 0, LK_LINEAR, 0, INFINITY, 1, 0, SP_NONE, 0,
	 0, 0, 0, N_T, 30, 0, 0, 0, 2104, G_SHIFTED},
	{"slow-leak", "slow0.2-25G", 3000, 1, 25, 50, 2, B_FLAT, 0, 0, 0, 0, LK_LINEAR, 300, INFINITY, 0.2, 0,
	 SP_NONE, 0, 0, 0, 0, N_GAUSS, 5, 0, 0, 0, 2105, G_SHIFTED},
	/* staircases: jumps at irregular intervals */
	{"staircase", "stair300M-g150", 4000, 1, 40, 100, 3, B_FLAT, 0, 0, 0, 0, LK_STAIR, 600, INFINITY, 300, 150,
	 SP_NONE, 0, 0, 0, 0, N_GAUSS, 20, 0, 0, 0, 2201, G_SHIFTED},
	{"staircase", "stair500M-g300-dx10", 8000, 10, 30, 0, 0, B_RAMP, 150, 5, 0, 0, LK_STAIR, 1000, INFINITY, 500,
	 300, SP_NONE, 0, 0, 0, 0, N_GAUSS, 50, 0, 0, 0, 2202, G_SHIFTED},
	{"staircase", "stair100M-g60", 3000, 1, 30, 50, 2, B_FLAT, 0, 0, 0, 0, LK_STAIR, 400, INFINITY, 100, 60,
	 SP_NONE, 0, 0, 0, 0, N_T, 10, 0, 0, 0, 2203, G_SHIFTED},
	{"staircase", "stair250M-from0", 3000, 1, 20, 0, 0, B_FLAT, 0, 0, 0, 0, LK_STAIR, 0, INFINITY, 250, 100,
	 SP_NONE, 0, 0, 0, 0, N_GAUSS, 25, 0, 0, 0, 2204, G_SHIFTED},
	/* leaks under periodic spikes (validation, checkpoints) */
	{"leak-periodic-spikes", "val800-6M-at1800", 6000, 10, 50, 100, 4, B_FLAT, 0, 0, 0, 0, LK_LINEAR, 1800,
	 INFINITY, 6, 0, SP_VAL, 800, 25, 6, 800, N_GAUSS, 50, 0, 0, 0, 2301, G_SHIFTED},
	{"leak-periodic-spikes", "ckpt1000-3M", 8000, 10, 40, 0, 0, B_FLAT, 0, 0, 0, 0, LK_LINEAR, 500, INFINITY, 3,
	 0, SP_CKPT, 1000, 3, 10, 1000, N_GAUSS, 60, 0, 0, 0, 2302, G_SHIFTED},
	{"leak-periodic-spikes", "val1200-12M-at2600", 7000, 10, 15, 150, 5, B_FLAT, 0, 0, 0, 0, LK_LINEAR, 2600,
	 INFINITY, 12, 0, SP_VAL, 1200, 40, 5, 1200, N_AR, 50, 0.6, 0, 0, 2303, G_SHIFTED},
	{"leak-periodic-spikes", "val300-2M", 3000, 1, 30, 80, 4, B_FLAT, 0, 0, 0, 0, LK_LINEAR, 700, INFINITY, 2, 0,
	 SP_VAL, 300, 8, 4, 300, N_GAUSS, 30, 0, 0, 0, 2304, G_SHIFTED},
	/* leaks under irregular spikes */
	{"leak-irregular-spikes", "irr-5M", 4000, 1, 55, 100, 3, B_FLAT, 0, 0, 0, 0, LK_LINEAR, 1000, INFINITY, 5, 0,
	 SP_IRREG, 400, 20, 6, 0, N_GAUSS, 30, 0, 0, 0, 2401, G_SHIFTED},
	{"leak-irregular-spikes", "irr-1.5M-dx10", 7000, 10, 40, 0, 0, B_FLAT, 0, 0, 0, 0, LK_LINEAR, 1500, INFINITY,
	 1.5, 0, SP_IRREG, 700, 40, 10, 0, N_GAUSS, 60, 0, 0, 0, 2402, G_SHIFTED},
	{"leak-irregular-spikes", "irr-3M-t", 3000, 1, 12, 60, 2, B_FLAT, 0, 0, 0, 0, LK_LINEAR, 500, INFINITY, 3, 0,
	 SP_IRREG, 250, 6, 3, 0, N_T, 20, 0, 0, 0, 2403, G_SHIFTED},
	/* leaks that stop (fixed) */
	{"leak-fixed", "fixed500-2500", 4000, 1, 35, 80, 3, B_FLAT, 0, 0, 0, 0, LK_LINEAR, 500, 2500, 3, 0, SP_NONE,
	 0, 0, 0, 0, N_GAUSS, 25, 0, 0, 0, 2501, G_SHIFTED},
	{"leak-fixed", "fixed0-1500-dx10", 5000, 10, 22, 0, 0, B_FLAT, 0, 0, 0, 0, LK_LINEAR, 0, 1500, 8, 0, SP_NONE,
	 0, 0, 0, 0, N_GAUSS, 50, 0, 0, 0, 2502, G_SHIFTED},
	{"leak-fixed", "fixed1000-1600", 3000, 1, 30, 100, 4, B_FLAT, 0, 0, 0, 0, LK_LINEAR, 1000, 1600, 10, 0,
	 SP_VAL, 500, 10, 3, 500, N_GAUSS, 30, 0, 0, 0, 2503, G_SHIFTED},
	/* fast leaks of 50+ MiB/step: the run dies soon */
	{"fast-leak", "fast60-from0", 2000, 1, 10, 0, 0, B_FLAT, 0, 0, 0, 0, LK_LINEAR, 0, INFINITY, 60, 0, SP_NONE,
	 0, 0, 0, 0, N_GAUSS, 40, 0, 0, 0, 2601, G_SHIFTED},
	{"fast-leak", "fast150-at300", 2000, 1, 20, 50, 3, B_FLAT, 0, 0, 0, 0, LK_LINEAR, 300, INFINITY, 150, 0,
	 SP_NONE, 0, 0, 0, 0, N_GAUSS, 60, 0, 0, 0, 2602, G_SHIFTED},
	{"fast-leak", "fast80-at800-val", 3000, 1, 8, 60, 2, B_FLAT, 0, 0, 0, 0, LK_LINEAR, 800, INFINITY, 80, 0,
	 SP_VAL, 400, 10, 4, 400, N_GAUSS, 30, 0, 0, 0, 2603, G_SHIFTED},
	{"fast-leak", "fast50-dx10", 4000, 10, 4, 0, 0, B_RAMP, 100, 2, 0, 0, LK_LINEAR, 400, INFINITY, 50, 0,
	 SP_NONE, 0, 0, 0, 0, N_GAUSS, 30, 0, 0, 0, 2604, G_SHIFTED},
	/* leaks under a gradient-accumulation sawtooth */
	{"leak-sawtooth", "saw8-2M", 3000, 1, 20, 60, 3, B_FLAT, 0, 0, 0, 0, LK_LINEAR, 400, INFINITY, 2, 0, SP_SAW, 8,
	 0, 2, 0, N_GAUSS, 20, 0, 0, 0, 2701, G_SHIFTED},
	{"leak-sawtooth", "saw4-5M-dx10", 5000, 10, 55, 0, 0, B_FLAT, 0, 0, 0, 0, LK_LINEAR, 1200, INFINITY, 5, 0,
	 SP_SAW, 4, 0, 1.5, 0, N_GAUSS, 40, 0, 0, 0, 2702, G_SHIFTED},
	/* leaks under AR(1) noise */
	{"leak-ar-noise", "ar0.9-4M", 4000, 1, 45, 80, 3, B_FLAT, 0, 0, 0, 0, LK_LINEAR, 600, INFINITY, 4, 0, SP_NONE,
	 0, 0, 0, 0, N_AR, 150, 0.9, 0, 0, 2801, G_SHIFTED},
	{"leak-ar-noise", "ar0.95-6M-dx10", 6000, 10, 36, 0, 0, B_FLAT, 0, 0, 0, 0, LK_LINEAR, 1500, INFINITY, 6, 0,
	 SP_NONE, 0, 0, 0, 0, N_AR, 200, 0.95, 0, 0, 2802, G_SHIFTED},
	/* a leak from the first step across epochs (the cache's counterpart) */
	{"leak-epochs", "from0-5M-epoch1000", 5000, 1, 16, 0, 0, B_FLAT, 0, 0, 0, 0, LK_LINEAR, 0, INFINITY, 5, 0,
	 SP_NONE, 0, 0, 0, 0, N_GAUSS, 30, 0, 0, 1000, 2901, G_SHIFTED},
	{"leak-epochs", "from100-12M-epoch1200", 5000, 10, 28, 100, 4, B_FLAT, 0, 0, 0, 0, LK_LINEAR, 100, INFINITY,
	 12, 0, SP_VAL, 1200, 20, 4, 1200, N_GAUSS, 60, 0, 0, 1200, 2902, G_SHIFTED},

	/* ---- more leaks: mixed mechanisms, long series logged every step ---- */
	{"slow-leak", "slow0.1-60G-ar", 8000, 10, 60, 0, 0, B_FLAT, 0, 0, 0, 0, LK_LINEAR, 1500, INFINITY, 0.1, 0,
	 SP_NONE, 0, 0, 0, 0, N_AR, 6, 0.8, 0, 0, 3001, G_SHIFTED},
	{"late-leak", "late-val950-ar", 7000, 10, 30, 100, 4, B_FLAT, 0, 0, 0, 0, LK_LINEAR, 2200, INFINITY, 5, 0,
	 SP_VAL, 950, 30, 6, 950, N_AR, 60, 0.8, 0, 0, 3002, G_SHIFTED},
	{"staircase", "stair-ckpt", 6000, 10, 28, 80, 3, B_FLAT, 0, 0, 0, 0, LK_STAIR, 1200, INFINITY, 400, 250,
	 SP_CKPT, 1000, 3, 8, 1000, N_GAUSS, 50, 0, 0, 0, 3003, G_SHIFTED},
	{"staircase", "stair50M-g40", 3000, 1, 22, 60, 2, B_FLAT, 0, 0, 0, 0, LK_STAIR, 700, INFINITY, 50, 40, SP_NONE,
	 0, 0, 0, 0, N_GAUSS, 8, 0, 0, 0, 3004, G_SHIFTED},
	{"fast-leak", "fast100-at500", 2000, 1, 25, 100, 5, B_FLAT, 0, 0, 0, 0, LK_LINEAR, 500, INFINITY, 100, 0,
	 SP_NONE, 0, 0, 0, 0, N_GAUSS, 50, 0, 0, 0, 3005, G_SHIFTED},
	{"leak-periodic-spikes", "from0-2M-val-dx1", 6000, 1, 40, 0, 0, B_FLAT, 0, 0, 0, 0, LK_LINEAR, 0, INFINITY, 2,
	 0, SP_VAL, 700, 25, 5, 700, N_GAUSS, 40, 0, 0, 0, 3006, G_SHIFTED},
	{"leak-fixed", "fixed600-1400-val", 4000, 1, 26, 80, 3, B_FLAT, 0, 0, 0, 0, LK_LINEAR, 600, 1400, 6, 0,
	 SP_VAL, 600, 15, 4, 600, N_GAUSS, 35, 0, 0, 0, 3007, G_SHIFTED},
	{"leak-irregular-spikes", "irr-t3-2M", 5000, 10, 33, 0, 0, B_EXP, 120, 4, 0, 0, LK_LINEAR, 1800, INFINITY, 2,
	 0, SP_IRREG, 600, 40, 6, 0, N_T, 50, 0, 0.005, 0, 3008, G_SHIFTED},

	/* ---- staircases whose gaps spread in other shapes, and leaks that stop after a staircase ---- */
	{"stair-gaps", "stairexp-300M-g200", 6000, 1, 30, 80, 3, B_FLAT, 0, 0, 0, 0, LK_STAIR, 800, INFINITY, 300,
	 200, SP_NONE, 0, 0, 0, 0, N_GAUSS, 30, 0, 0, 0, 3101, G_EXP},
	{"stair-gaps", "stairlogn-400M-g250-dx10", 8000, 10, 40, 0, 0, B_RAMP, 200, 6, 0, 0, LK_STAIR, 1000, INFINITY,
	 400, 250, SP_NONE, 0, 0, 0, 0, N_GAUSS, 50, 0, 0, 0, 3102, G_LOGNORM},
	{"stair-gaps", "stairreg-200M-g100", 3000, 1, 20, 50, 2, B_FLAT, 0, 0, 0, 0, LK_STAIR, 500, INFINITY, 200, 100,
	 SP_NONE, 0, 0, 0, 0, N_T, 15, 0, 0, 0, 3103, G_REGULAR},
	{"stair-gaps", "stairexp-ar-250M-g150", 5000, 1, 24, 60, 2, B_FLAT, 0, 0, 0, 0, LK_STAIR, 600, INFINITY, 250,
	 150, SP_NONE, 0, 0, 0, 0, N_AR, 40, 0.9, 0, 0, 3104, G_EXP},
	{"stair-gaps", "stairlogn-val-500M-g300", 7000, 10, 35, 100, 4, B_FLAT, 0, 0, 0, 0, LK_STAIR, 1200, INFINITY,
	 500, 300, SP_VAL, 800, 25, 5, 800, N_GAUSS, 50, 0, 0, 0, 3105, G_LOGNORM},
	{"leak-fixed", "stairexp-fixed-300M-g150", 6000, 1, 28, 80, 3, B_FLAT, 0, 0, 0, 0, LK_STAIR, 600, 2600, 300,
	 150, SP_NONE, 0, 0, 0, 0, N_GAUSS, 25, 0, 0, 0, 3106, G_EXP},
	{"leak-fixed", "ar0.9-fixed-4M", 5000, 1, 40, 80, 3, B_FLAT, 0, 0, 0, 0, LK_LINEAR, 600, 2000, 4, 0, SP_NONE,
	 0, 0, 0, 0, N_AR, 45, 0.9, 0, 0, 3107, G_SHIFTED},
	{"leak-fixed", "stair-fixed-400M-g250-dx10", 8000, 10, 30, 0, 0, B_FLAT, 0, 0, 0, 0, LK_STAIR, 1000, 4000, 400,
	 250, SP_CKPT, 1000, 3, 8, 1000, N_GAUSS, 50, 0, 0, 0, 3108, G_SHIFTED},
};

#define NSPECS (sizeof(SPECS) / sizeof(SPECS[0]))

/* ---------------------------------------------------------------- random events */

/* Student t with 3 degrees of freedom, scaled to unit variance. */
static double rng_t3(struct rng *r)
{
	double z = rng_gauss(r), c = 0;
	for (int i = 0; i < 3; i++) {
		double g = rng_gauss(r);
		c += g * g;
	}
	return z / sqrt(c / 3) / sqrt(3.0);
}

static int push(double **v, size_t *n, size_t *cap, double a)
{
	if (*n == *cap) {
		size_t nc = *cap ? 2 * *cap : 64;
		double *nv = realloc(*v, nc * sizeof(double));
		if (!nv)
			return -ENOMEM;
		*v = nv;
		*cap = nc;
	}
	(*v)[(*n)++] = a;
	return 0;
}

/* One gap between staircase jumps, in steps (enum gaps). */
static double gen_gap(const struct spec *s, struct rng *r)
{
	switch (s->gaps) {
	case G_EXP:
		return s->gap * -log(rng_unif(r));
	case G_LOGNORM:
		return s->gap * exp(rng_gauss(r) - 0.5);
	case G_REGULAR:
		return s->gap * (0.8 + 0.4 * rng_unif(r));
	case G_SHIFTED:
		break;
	}
	return s->gap * (0.2 + 0.8 * -log(rng_unif(r)));
}

/* Staircase jumps from t_on up to t_end (or the stop), gen_gap apart. */
static int gen_jumps(const struct spec *s, struct rng *r, double t_end, struct events *ev)
{
	size_t cap_t = 0, cap_h = 0, nh = 0;
	for (double t = s->t_on + gen_gap(s, r); t < t_end && t < s->t_stop; t += gen_gap(s, r)) {
		double before = nh ? ev->jump_h[nh - 1] : 0; /* heights are kept cumulative */
		if (push(&ev->jump_t, &ev->njump, &cap_t, floor(t)) ||
		    push(&ev->jump_h, &nh, &cap_h, before + s->rate * MIB * (0.7 + 0.6 * rng_unif(r))))
			return -ENOMEM;
	}
	return 0;
}

/* Irregular spikes up to t_end: exponential gaps around the period, durations and heights drawn. */
static int gen_spikes(const struct spec *s, struct rng *r, double t_end, struct events *ev)
{
	size_t ct = 0, cd = 0, ch = 0, nd = 0, nh = 0;
	for (double t = s->period * -log(rng_unif(r)); t < t_end; t += s->dur + s->period * -log(rng_unif(r))) {
		if (push(&ev->spk_t, &ev->nspk, &ct, floor(t)) ||
		    push(&ev->spk_d, &nd, &cd, ceil(s->dur * (0.3 + 0.7 * rng_unif(r)))) ||
		    push(&ev->spk_h, &nh, &ch, s->height * GIB * (0.5 + 0.5 * rng_unif(r))))
			return -ENOMEM;
	}
	return 0;
}

/* B_RUNMAX: activation memory of the longest batch so far, p1 GiB x (bucket / 8192)^p2, with
 * sequence lengths lognormal (median 512) in buckets of 256 up to 8192.
 * B_PINNED: chunks of p3 GiB covering the running maximum of a noisy demand p2 (1 - e^{-t/p1}). */
static int gen_running(const struct spec *s, struct rng *r, size_t steps, struct events *ev)
{
	ev->runmax = malloc((steps + 1) * sizeof(double));
	if (!ev->runmax)
		return -ENOMEM;
	ev->nrun = steps + 1;
	double mx = 0;
	for (size_t t = 0; t <= steps; t++) {
		double v;
		if (s->base == B_RUNMAX) {
			double len = fmin(8192, 512 * exp(0.6 * rng_gauss(r)));
			double bucket = 256 * ceil(len / 256);
			v = s->p1 * pow(bucket / 8192, s->p2);
		} else {
			double demand = s->p2 * -expm1(-(double)t / s->p1) * (1 + 0.08 * rng_gauss(r));
			v = s->p3 * ceil(fmax(demand, 0) / s->p3);
		}
		mx = fmax(mx, v);
		ev->runmax[t] = mx;
	}
	return 0;
}

static void events_free(struct events *ev)
{
	free(ev->jump_t);
	free(ev->jump_h);
	free(ev->spk_t);
	free(ev->spk_d);
	free(ev->spk_h);
	free(ev->runmax);
	memset(ev, 0, sizeof(*ev));
}

/* ---------------------------------------------------------------- the deterministic parts */

/* The warmup shape (GiB above L0) at step t. */
static double base_at(const struct spec *s, const struct events *ev, double t)
{
	double w = s->ws > 0 ? s->wa * fmin(t, s->ws) / s->ws : 0;
	switch (s->base) {
	case B_FLAT:
		return w;
	case B_RAMP: /* p1 steps, p2 GiB, then a settling of p3 x p2 over the next 100 steps */
		return w + s->p2 * fmin(t, s->p1) / s->p1 - s->p3 * s->p2 * fmin(fmax(t - s->p1, 0), 100) / 100;
	case B_EXP:
		return w + s->p2 * -expm1(-t / s->p1);
	case B_DOUBLING: { /* capacity p3 x 2^k, the least that holds the demand p2 (1 - e^{-t/p1}) */
		double demand = s->p2 * -expm1(-t / s->p1), cap = s->p3;
		while (cap < demand)
			cap *= 2;
		return w + cap;
	}
	case B_CACHE: { /* fills from p1 to p2 with p3 GiB; p4 > 0 decelerates */
		double u = fmin(fmax((t - s->p1) / (s->p2 - s->p1), 0), 1);
		if (s->p4 > 0)
			u = -expm1(-s->p4 * u) / -expm1(-s->p4);
		return w + s->p3 * u;
	}
	case B_RUNMAX:
	case B_PINNED: {
		size_t i = (size_t)t;
		return w + (ev->nrun ? ev->runmax[i < ev->nrun ? i : ev->nrun - 1] : 0);
	}
	case B_SHIFT:
		return w + (t >= s->p1 ? s->p2 : 0);
	case B_PHASE:
		return w + s->p3 * fmin(fmax(t - s->p1, 0), s->p2) / s->p2;
	}
	return w;
}

/* Number of v[0..n) that are <= t (v sorted). */
static size_t count_le(const double *v, size_t n, double t)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (v[mid] <= t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The leak (bytes) at step t. */
static double leak_at(const struct spec *s, const struct events *ev, double t)
{
	if (s->leak == LK_LINEAR)
		return s->rate * MIB * fmax(fmin(t, s->t_stop) - s->t_on, 0);
	size_t k = count_le(ev->jump_t, ev->njump, t);
	return k ? ev->jump_h[k - 1] : 0;
}

static double floor_at(const struct spec *s, const struct events *ev, double t)
{
	return s->L0 * GIB + base_at(s, ev, t) * GIB + leak_at(s, ev, t);
}

/* Spikes (bytes above the floor) at step t. */
static double spike_at(const struct spec *s, const struct events *ev, double t)
{
	double h = s->height * GIB;
	switch (s->sp) {
	case SP_NONE:
		return 0;
	case SP_VAL: { /* rises over its first fifth, holds, then drops */
		if (t < s->first)
			return 0;
		double ph = fmod(t - s->first, s->period);
		if (ph >= s->dur)
			return 0;
		return h * fmin(1, (ph + 1) / fmax(1, 0.2 * s->dur));
	}
	case SP_CKPT: { /* the copy, then half of it for one more step while it is written out */
		if (t < s->first)
			return 0;
		double ph = fmod(t - s->first, s->period);
		return ph < s->dur ? h : ph < s->dur + 1 ? 0.4 * h : 0;
	}
	case SP_SAW:
		return h * (fmod(t, s->period) + 1) / s->period;
	case SP_IRREG: {
		size_t k = count_le(ev->spk_t, ev->nspk, t);
		return k && t < ev->spk_t[k - 1] + ev->spk_d[k - 1] ? ev->spk_h[k - 1] : 0;
	}
	}
	return 0;
}

/* ---------------------------------------------------------------- one series and its truth */

static double noise_draw(const struct spec *s, struct rng *r, double *ar)
{
	double sig = s->sigma * MIB, e;
	if (s->noise == N_AR) {
		*ar = s->phi * *ar + sqrt(1 - s->phi * s->phi) * sig * rng_gauss(r);
		e = *ar;
	} else {
		e = sig * (s->noise == N_T ? rng_t3(r) : rng_gauss(r));
	}
	if (s->outliers > 0 && rng_unif(r) < s->outliers) /* rare outliers, mostly upward */
		e += (rng_unif(r) < 0.7 ? 1 : -1) * (5 + 10 * rng_unif(r)) * sig;
	return e;
}

/* The first step at which floor + spikes reach the limit, or INFINITY. */
static double true_oom(const struct spec *s, const struct events *ev)
{
	for (int t = 0; t <= T_EXT_MAX; t++)
		if (floor_at(s, ev, t) + spike_at(s, ev, t) >= LIMIT)
			return t;
	return INFINITY;
}

/* Leaks: knowable from onset + max(200 steps, 20 samples, the steps until the rise reaches 5 sigma);
 * a staircase from its 4th jump after onset. Non-leaks: the floor's growth is over (within
 * max(2 sigma, 2% of the rise) of its final level), and knowable some time after. */
static void set_truth(const struct spec *s, const struct events *ev, struct tseries *ts)
{
	ts->t_on = s->leak ? s->t_on : 0;
	ts->t_stop = s->leak ? s->t_stop : INFINITY;
	ts->t_know = INFINITY;
	if (s->leak == LK_LINEAR)
		ts->t_know = s->t_on + fmax(fmax(200, 20.0 * s->dx), 5 * ts->sigma / (s->rate * MIB));
	else if (s->leak == LK_STAIR && ev->njump >= 4)
		ts->t_know = ev->jump_t[3];
	if (ts->t_know >= ts->t_stop)
		ts->t_know = INFINITY;
	ts->floor_ref = floor_at(s, ev, ts->t_on);
	ts->t_grow_end = s->leak ? ts->t_stop : 0;
	if (!s->leak) {
		double fin = floor_at(s, ev, s->T), tol = fmax(2 * ts->sigma, 0.02 * (fin - ts->floor_ref));
		for (int t = s->T; t >= 0; t--)
			if (floor_at(s, ev, t) < fin - tol) {
				ts->t_grow_end = t + 1;
				break;
			}
	}
	ts->t_settled = ts->t_grow_end + fmax(fmax(200, 20.0 * s->dx), 0.25 * ts->t_grow_end);
}

static int set_epochs(const struct spec *s, struct tseries *ts)
{
	if (!(s->epoch > 0))
		return 0;
	size_t k = (size_t)((s->T - 1) / s->epoch);
	ts->epochs = malloc((k ? k : 1) * sizeof(double));
	if (!ts->epochs)
		return -ENOMEM;
	for (size_t i = 0; i < k; i++)
		ts->epochs[i] = s->epoch * (double)(i + 1);
	ts->nepochs = k;
	return 0;
}

/* The logged points: every dx steps from dx, up to T or the step before the OOM. */
static int sample(const struct spec *s, const struct events *ev, struct rng *r, struct tseries *ts)
{
	size_t cap = (size_t)(s->T / s->dx) + 1;
	ts->x = malloc(cap * sizeof(double));
	ts->y = malloc(cap * sizeof(double));
	ts->floor = malloc(cap * sizeof(double));
	if (!ts->x || !ts->y || !ts->floor)
		return -ENOMEM;
	double ar = 0;
	if (s->noise == N_AR)
		ar = s->sigma * MIB * rng_gauss(r);
	ts->n = 0;
	for (double t = s->dx; t <= s->T && t < ts->t_oom; t += s->dx) {
		double f = floor_at(s, ev, t);
		ts->x[ts->n] = t;
		ts->floor[ts->n] = f;
		ts->y[ts->n] = fmax(f + spike_at(s, ev, t) + noise_draw(s, r, &ar), 1 * MIB);
		ts->n++;
	}
	return 0;
}

static int build_one(const struct spec *s, struct tseries *ts)
{
	struct rng r = {s->seed * 0x9e3779b97f4a7c15ull};
	struct events ev;
	memset(&ev, 0, sizeof ev);
	memset(ts, 0, sizeof(*ts));
	snprintf(ts->name, sizeof ts->name, "%s", s->name);
	ts->family = s->family;
	ts->leak = s->leak != LK_NONE;
	ts->sigma = s->sigma * MIB;
	ts->limit = LIMIT;
	double t_end = ts->leak ? T_EXT_MAX : s->T;
	int rc = 0;
	if (s->leak == LK_STAIR)
		rc = gen_jumps(s, &r, t_end, &ev);
	if (!rc && s->sp == SP_IRREG)
		rc = gen_spikes(s, &r, t_end, &ev);
	if (!rc && (s->base == B_RUNMAX || s->base == B_PINNED))
		rc = gen_running(s, &r, (size_t)s->T, &ev);
	if (!rc) {
		ts->t_oom = ts->leak ? true_oom(s, &ev) : INFINITY;
		set_truth(s, &ev, ts);
		rc = set_epochs(s, ts);
	}
	if (!rc)
		rc = sample(s, &ev, &r, ts);
	events_free(&ev);
	return rc;
}

void tset_free(struct tset *set)
{
	for (size_t i = 0; set->v && i < set->n; i++) {
		free(set->v[i].x);
		free(set->v[i].y);
		free(set->v[i].floor);
		free(set->v[i].epochs);
	}
	free(set->v);
	memset(set, 0, sizeof(*set));
}

int tset_build(struct tset *set)
{
	set->v = calloc(NSPECS, sizeof(struct tseries));
	set->n = 0;
	if (!set->v)
		return -ENOMEM;
	for (size_t i = 0; i < NSPECS; i++) {
		int rc = build_one(&SPECS[i], &set->v[i]);
		set->n = i + 1;
		if (rc) {
			tset_free(set);
			return rc;
		}
	}
	return 0;
}
