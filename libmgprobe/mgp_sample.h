/* SPDX-License-Identifier: MIT */
/* mgp_sample.h: sampled recording (MGPROBE_SAMPLE=R, `mgprobe run --sample R`), as tcmalloc and
 * jemalloc profile in production: allocated bytes form a Poisson process of mean gap R bytes and
 * an allocation is recorded when a sample point falls in it, so one of n bytes is recorded with
 * probability p = 1 - exp(-n/R); allocations of 4R and more always are. The fast path is one
 * thread-local countdown; a recorded allocation is counted as n/p bytes and 1/p allocations (an
 * unbiased estimate, per allocation, before anything is summed), with its variance term. Frees
 * of allocations that were not recorded are told apart by two small counting filters (64 KiB
 * regions, then 16-byte units) before the live table is looked at. Never calls malloc or a lock;
 * exp/log only for recorded ones. */
#ifndef MGP_SAMPLE_H
#define MGP_SAMPLE_H

#include <stddef.h>
#include <stdint.h>

/* Set once at start-up (the seed again in a fork child), read-only after. rate 0: every
 * allocation is recorded (exact mode). */
extern struct mgp_sample_conf {
	uint64_t rate;    /* R, bytes */
	uint64_t always;  /* 4R: allocations this big are always recorded */
	uint64_t seed;    /* the draws' seed; 0: from the clock and the stack */
	uint8_t *filter;  /* counters of live recorded blocks: by 16-byte unit (MGP_SAMPLE_FILTER_BITS),
			     then by 64 KiB region (MGP_SAMPLE_REGION_BITS) */
} mgp_sample_conf;

#define MGP_SAMPLE_FILTER_BITS 18u
#define MGP_SAMPLE_REGION_BITS 12u

/* Bytes until this thread's next sample point; 0 before its first draw. */
extern __thread int64_t mgp_sample_left __attribute__((tls_model("initial-exec")));

/* Sets sampling up (rate 0: off). seed 0: each thread seeds its draws from the clock and its
 * stack; else from seed and the order in which threads first draw (a run whose threads allocate
 * alike draws alike). 0, or -ENOMEM for the filter. Once, at start-up. */
int mgp_sample_init(uint64_t rate, uint64_t seed);

/* After fork (child 0: in the parent, 1: in the child, still one thread): the child draws afresh,
 * not its parent's sequence again; with a seed, from one made of it and how many children the
 * parent had forked before. */
void mgp_sample_forked(int child);

/* The slow half of mgp_sample_skip: a draw is due. */
int mgp_sample_slow(size_t n);

/* 1 when an allocation of n bytes is left out (sampling, and no sample point falls in it). */
static inline int mgp_sample_skip(size_t n)
{
	if (__builtin_expect(mgp_sample_conf.rate == 0, 1) || n >= mgp_sample_conf.always)
		return 0;
	int64_t left = mgp_sample_left;
	if (__builtin_expect(left > (int64_t)n, 1)) {
		mgp_sample_left = left - (int64_t)n;
		return 1;
	}
	return mgp_sample_slow(n);
}

/* The weighing of a sampled allocation, out of line (it needs exp). */
void mgp_sample_weigh_sampled(uint64_t n, uint64_t *est_bytes, uint64_t *est_count, int64_t *var);

/* What a recorded allocation of n bytes stands for: est_bytes (n/p), est_count (1/p) and the
 * variance term of est_bytes, divided by R (n^2 (1-p) / (p^2 R)). Exact mode (inline, on every
 * allocation and free): n, 1, 0. */
static inline void mgp_sample_weigh(uint64_t n, uint64_t *est_bytes, uint64_t *est_count, int64_t *var)
{
	if (__builtin_expect(mgp_sample_conf.rate == 0, 1) || n >= mgp_sample_conf.always || n == 0) {
		*est_bytes = n;
		*est_count = 1;
		*var = 0;
		return;
	}
	mgp_sample_weigh_sampled(n, est_bytes, est_count, var); /* a recorded, sampled one: n/p */
}

/* A block's counter. The 16-byte units of a 4 MiB window map one to one onto the filter (folded
 * with the window's number), and blocks freed near each other, as a program frees them, share the
 * counters' cache lines. A hashed slot was a cache miss on most frees (1.2% of the PyTorch sample's
 * time). */
static inline uint8_t *mgp_sample_slot(uint64_t ptr)
{
	uint64_t unit = ptr >> 4;
	return &mgp_sample_conf.filter[(unit ^ (unit >> MGP_SAMPLE_FILTER_BITS) * 0x9e3779b9u) &
				       ((1u << MGP_SAMPLE_FILTER_BITS) - 1)];
}

/* A 64 KiB region's counter: live recorded blocks that start in it (or in a region sharing the
 * counter). Every free reads one first: 4 KiB of counters stay in the cache where the block
 * counters' 256 KiB did not (a miss on 72% of free's samples in the PyTorch sample), and a free
 * in a region holding no recorded block, most of them, reads nothing else. */
static inline uint8_t *mgp_sample_region(uint64_t ptr)
{
	return &mgp_sample_conf.filter[(1u << MGP_SAMPLE_FILTER_BITS) +
				       (((ptr >> 16) * 0x9e3779b97f4a7c15ull) >> (64 - MGP_SAMPLE_REGION_BITS))];
}

/* One more (up) or one fewer recorded block on counter c; 255 sticks (always looked further). A
 * compare-and-swap, so two threads at 254 never wrap a counter to 0 (a recorded block's free
 * would be missed); recorded allocations only, a few per MiB allocated. */
static inline void mgp_sample_count(uint8_t *c, int up)
{
	uint8_t v = __atomic_load_n(c, __ATOMIC_RELAXED);
	while (v != 255 && !__atomic_compare_exchange_n(c, &v, (uint8_t)(up ? v + 1 : v - 1), 1,
							__ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
}

/* A recorded block entered or left the live table (sampling only). */
static inline void mgp_sample_enter(uint64_t ptr)
{
	if (mgp_sample_conf.filter) {
		mgp_sample_count(mgp_sample_region(ptr), 1);
		mgp_sample_count(mgp_sample_slot(ptr), 1);
	}
}

static inline void mgp_sample_leave(uint64_t ptr)
{
	if (mgp_sample_conf.filter) {
		mgp_sample_count(mgp_sample_region(ptr), 0);
		mgp_sample_count(mgp_sample_slot(ptr), 0);
	}
}

/* 1 when sampling and the region counter alone says ptr is no recorded block: all that most
 * frees need, read before anything else (the probe's state and the thread's guard included: a
 * block that was never recorded needs no lookup in any state). 0 in exact mode. */
static inline int mgp_sample_surely_not(uint64_t ptr)
{
	return mgp_sample_conf.filter && __atomic_load_n(mgp_sample_region(ptr), __ATOMIC_RELAXED) == 0;
}

/* 0 when ptr cannot be a recorded block (its free needs no lookup); 1 in exact mode. */
static inline int mgp_sample_maybe(uint64_t ptr)
{
	return !mgp_sample_conf.filter ||
	       (__atomic_load_n(mgp_sample_region(ptr), __ATOMIC_RELAXED) != 0 &&
		__atomic_load_n(mgp_sample_slot(ptr), __ATOMIC_RELAXED) != 0);
}

#endif /* MGP_SAMPLE_H */
