/* SPDX-License-Identifier: MIT */
/* mge_rng.c: seeding and shuffling for the engine's deterministic random streams.
 * It must never read a clock or any other source of run-to-run variation. */
#include "mge_rng.h"

static uint64_t splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9E3779B97F4A7C15ULL);
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
	return z ^ (z >> 31);
}

void mge_rng_init(struct mge_rng *r, uint64_t seed, uint64_t k1, uint64_t k2, uint64_t k3)
{
	uint64_t x = seed;
	uint64_t h = splitmix64(&x);

	x = h ^ k1;
	h = splitmix64(&x);
	x = h ^ k2;
	h = splitmix64(&x);
	x = h ^ k3;
	h = splitmix64(&x);
	r->s = h ? h : 0x9E3779B97F4A7C15ULL; /* xorshift needs a non-zero state */
}

void mge_rng_shuffle(struct mge_rng *r, int *v, int n)
{
	for (int i = n - 1; i > 0; i--) {
		int j = (int)mge_rng_below(r, (uint32_t)i + 1);
		int t = v[i];
		v[i] = v[j];
		v[j] = t;
	}
}
