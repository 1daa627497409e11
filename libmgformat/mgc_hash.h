/* SPDX-License-Identifier: MIT */
/* mgc_hash.h: hashing and open-addressing primitives shared by the probe and the readers: the
 * 64-bit finalizer, the trace's FNV-1a record check, and backward-shift deletion for tables with
 * linear probing. Header-only and inlined: the probe's allocation fast path uses them, so nothing
 * here may allocate, lock or call out. */
#ifndef MGC_HASH_H
#define MGC_HASH_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* A 64-bit finalizer (MurmurHash3's fmix64): every input bit reaches every output bit. The
 * probe's stack hash and the symbolizer's tables end with it. */
static inline uint64_t mgc_mix64(uint64_t h)
{
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdull;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ull;
	h ^= h >> 33;
	return h;
}

/* FNV-1a, 32 bit: the trace's record check. A payload written in parts hashes as one:
 *   h = mgc_fnv1a_more(mgc_fnv1a_more(MGC_FNV1A_INIT, a, na), b, nb) == mgc_fnv1a(ab, na + nb) */
#define MGC_FNV1A_INIT 2166136261u

static inline uint32_t mgc_fnv1a_more(uint32_t h, const void *p, size_t n)
{
	const unsigned char *b = (const unsigned char *)p;
	for (size_t i = 0; i < n; i++) {
		h ^= b[i];
		h *= 16777619u;
	}
	return h;
}

static inline uint32_t mgc_fnv1a(const void *p, size_t n)
{
	return mgc_fnv1a_more(MGC_FNV1A_INIT, p, n);
}

/* Backward-shift deletion for an open-addressing table with linear probing (no tombstones, so
 * churn never degrades lookups). `tab` holds mask + 1 entries of `esize` bytes; slot `hole` has
 * just been removed. Later entries of its cluster move back into the hole unless their home slot
 * lies cyclically in (hole, j], so every entry stays reachable from its home. `home(e)` is an
 * entry's home slot (any value: it is masked here), `empty(e)` whether a slot is free. Returns the
 * slot left over, which the caller marks empty. Both callbacks are inlined when they are constant
 * functions, as on the probe's fast path. */
static inline uint64_t mgc_oa_delete(void *tab, size_t esize, uint64_t mask, uint64_t hole,
				     uint64_t (*home)(const void *e), int (*empty)(const void *e))
{
	char *t = (char *)tab;
	for (uint64_t j = (hole + 1) & mask; !empty(t + j * esize); j = (j + 1) & mask) {
		uint64_t k = home(t + j * esize) & mask;
		if (((j - k) & mask) >= ((j - hole) & mask)) {
			memcpy(t + hole * esize, t + j * esize, esize);
			hole = j;
		}
	}
	return hole;
}

#endif /* MGC_HASH_H */
