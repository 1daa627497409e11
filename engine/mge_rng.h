/* SPDX-License-Identifier: MIT */
/* mge_rng.h: the engine's deterministic random numbers (splitmix64 seeding, xorshift64* stream).
 * Every random choice derives from the run seed and a purpose-specific key, never from time or
 * thread timing, so the same seed gives the same losses with any number of loader threads. */
#ifndef MGE_RNG_H
#define MGE_RNG_H

#include <stdint.h>

struct mge_rng {
	uint64_t s;
};

/* Seeds a stream from the run seed and up to three keys (e.g. purpose, epoch, index). */
void mge_rng_init(struct mge_rng *r, uint64_t seed, uint64_t k1, uint64_t k2, uint64_t k3);

static inline uint64_t mge_rng_u64(struct mge_rng *r)
{
	r->s ^= r->s >> 12;
	r->s ^= r->s << 25;
	r->s ^= r->s >> 27;
	return r->s * 0x2545F4914F6CDD1DULL;
}

/* Uniform in [0, n), n > 0 (the modulo bias is irrelevant at these sizes). */
static inline uint32_t mge_rng_below(struct mge_rng *r, uint32_t n)
{
	return (uint32_t)((mge_rng_u64(r) >> 32) % n);
}

/* Uniform in [0, 1). */
static inline float mge_rng_unit(struct mge_rng *r)
{
	return (float)(mge_rng_u64(r) >> 40) * (1.0f / 16777216.0f);
}

/* Uniform in [lo, hi). */
static inline float mge_rng_range(struct mge_rng *r, float lo, float hi)
{
	return lo + (hi - lo) * mge_rng_unit(r);
}

/* Fisher-Yates shuffle of n ints. */
void mge_rng_shuffle(struct mge_rng *r, int *v, int n);

#endif /* MGE_RNG_H */
