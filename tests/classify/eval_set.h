/* SPDX-License-Identifier: MIT */
/* eval_set.h: what the classifier's evaluation program shares between its parts: the PRNG, the
 * training-like series of eval_train.c with their truth, and the classic set of eval_classic.c.
 * Generation is deterministic (fixed seeds, no clock, no files), so two runs print the same. */
#ifndef EVAL_SET_H
#define EVAL_SET_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#define MIB 1048576.0
#define GIB 1073741824.0

/* splitmix64 with uniform and normal draws */
struct rng {
	uint64_t s;
};

static inline uint64_t rng_next(struct rng *r)
{
	uint64_t z = (r->s += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static inline double rng_unif(struct rng *r)
{
	return ((double)(rng_next(r) >> 11) + 0.5) / 9007199254740992.0;
}

static inline double rng_gauss(struct rng *r)
{
	double u = rng_unif(r), v = rng_unif(r);
	return sqrt(-2 * log(u)) * cos(2 * M_PI * v);
}

/* One training-like series (eval_train.c) and what is true about it. x is in steps. */
struct tseries {
	char name[64];
	const char *family;
	int leak;          /* 1: a leak series (recall), 0: a non-leak (false leak) */
	size_t n;
	double *x, *y;     /* the logged points */
	double *floor;     /* noise-free floor under the spikes at each x */
	double sigma;      /* the noise scale (marginal) */
	double limit;      /* bytes: --limit 80G */
	/* leaks */
	double t_on;       /* onset */
	double t_stop;     /* growth stops (a fixed leak); INFINITY if never */
	double t_know;     /* knowable: onset + max(200 steps, 20 samples, rise 5 sigma); the 4th jump of a staircase */
	double t_oom;      /* first step at which floor + spikes reach the limit; INFINITY if never */
	/* non-leaks */
	double t_grow_end; /* the floor stops rising (warmups); x[0] for series that never rise */
	double t_settled;  /* knowable non-leak from here (the warmup is over and has been for a while) */
	double floor_ref;  /* the floor where growth starts (at t_on for leaks, at step 0 otherwise) */
	double *epochs;    /* epoch boundaries (x where epoch 2, 3, ... begin); NULL if the run marks none */
	size_t nepochs;
};

struct tset {
	struct tseries *v;
	size_t n;
};

/* Builds every training-like series (eval_train.c). Returns 0 or -ENOMEM. */
int tset_build(struct tset *set);
void tset_free(struct tset *set);

/* Runs the classic set (eval_classic.c), prints its figures; returns 1 when one of its targets is
 * missed. `stride` scores every stride-th prefix (1 = all); `only` keeps the series whose name or
 * family contains it (NULL: all). */
int classic_run(int verbose, size_t stride, const char *only);

#endif /* EVAL_SET_H */
