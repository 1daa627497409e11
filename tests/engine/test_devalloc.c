/* SPDX-License-Identifier: MIT */
/* test_devalloc.c: the device caching allocator (engine/mge_devalloc.c) over host memory, with
 * exact numbers: rounding, which request reserves which segment, splitting, coalescing, the
 * warmup plateau, a leak's staircase, empty-cache, and the retry after the backend runs out.
 * It never needs a GPU: the allocator's logic does not depend on the backend. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "mg_test.h"
#include "mge_devalloc.h"

#define KiB ((size_t)1 << 10)
#define MiB ((size_t)1 << 20)

/* The host backend with a byte cap (0: none), counting what it was asked. */
struct capped {
	size_t cap, live;
};

static int capped_alloc(void *ctx, size_t bytes, void **out)
{
	struct capped *c = ctx;

	if (c->cap && c->live + bytes > c->cap)
		return -ENOMEM;
	if (mge_devalloc_host_backend.segment_alloc(NULL, bytes, out))
		return -ENOMEM;
	c->live += bytes;
	return 0;
}

static void capped_free(void *ctx, void *base, size_t bytes)
{
	struct capped *c = ctx;

	c->live -= bytes;
	mge_devalloc_host_backend.segment_free(NULL, base, bytes);
}

static struct mge_devalloc *new_capped(struct capped *c, size_t cap)
{
	struct mge_devalloc_backend be = {
		.name = "capped", .segment_alloc = capped_alloc, .segment_free = capped_free, .ctx = c,
	};

	c->cap = cap;
	c->live = 0;
	return mge_devalloc_new(&be);
}

static struct mge_devbuf *get(struct mge_devalloc *a, size_t bytes)
{
	struct mge_devbuf *b = NULL;

	MG_EQ(mge_devalloc_alloc(a, bytes, &b), 0);
	MG_TRUE(b != NULL, "alloc(%zu) gave a block", bytes);
	return b;
}

static struct mge_devalloc_stats stats(const struct mge_devalloc *a)
{
	struct mge_devalloc_stats st;

	mge_devalloc_stats(a, &st);
	return st;
}

static void test_rounding(void)
{
	MG_EQ(mge_devalloc_round(0), 512);
	MG_EQ(mge_devalloc_round(1), 512);
	MG_EQ(mge_devalloc_round(512), 512);
	MG_EQ(mge_devalloc_round(513), 1024);
	MG_EQ(mge_devalloc_round(MiB + 1), MiB + 512);
	MG_EQ(mge_devalloc_segment_bytes(1), 2 * MiB);
	MG_EQ(mge_devalloc_segment_bytes(MiB), 2 * MiB);
	MG_EQ(mge_devalloc_segment_bytes(MiB + 1), 20 * MiB);
	MG_EQ(mge_devalloc_segment_bytes(10 * MiB - 512), 20 * MiB);
	MG_EQ(mge_devalloc_segment_bytes(10 * MiB), 10 * MiB);
	MG_EQ(mge_devalloc_segment_bytes(11 * MiB), 12 * MiB);
	MG_EQ(mge_devalloc_segment_bytes(12 * MiB + 1), 14 * MiB);
}

/* test_sequence's blocks b1..b7 (b[0]..b[6]) freed, the segments given back, the allocator
 * destroyed. */
static void sequence_release(struct mge_devalloc *a, struct capped *c,
			     struct mge_devbuf *const b[7])
{
	struct mge_devalloc_stats st;
	/* Free everything, in an order that needs merging both ways. */
	mge_devalloc_free(a, b[1]);
	mge_devalloc_free(a, b[0]);
	mge_devalloc_free(a, b[4]);
	mge_devalloc_free(a, b[3]);
	mge_devalloc_free(a, b[6]);
	mge_devalloc_free(a, b[2]);
	mge_devalloc_free(a, b[5]);
	st = stats(a);
	MG_EQ(st.allocated_bytes, 0);
	MG_EQ(st.active_blocks, 0);
	MG_EQ(st.segments, 4);
	MG_EQ(st.reserved_bytes, 36 * MiB);
	MG_EQ(st.cached_blocks, 4); /* one block per segment: fully coalesced */
	MG_EQ(st.segment_frees, 0);
	/* A 20 MiB request now takes segment 3 whole: coalescing made it one block again. */
	struct mge_devbuf *whole = get(a, 20 * MiB);
	MG_TRUE(whole->ptr == b[3]->ptr, "the coalesced segment 3 serves 20 MiB");
	MG_EQ(stats(a).segments, 4);
	mge_devalloc_free(a, whole);
	MG_EQ(mge_devalloc_empty_cache(a), 4);
	st = stats(a);
	MG_EQ(st.segments, 0);
	MG_EQ(st.reserved_bytes, 0);
	MG_EQ(st.cached_blocks, 0);
	MG_EQ(st.segment_allocs, 4);
	MG_EQ(st.segment_frees, 4);
	MG_EQ(st.peak_reserved_bytes, 36 * MiB);
	MG_EQ(c->live, 0);
	mge_devalloc_destroy(a);
}

/* A fixed sequence, every number worked out by hand in the comments. */
static void test_sequence(void)
{
	struct capped c;
	struct mge_devalloc *a = new_capped(&c, 0);
	struct mge_devbuf *b1, *b2, *b3, *b4, *b5, *b6, *b7;
	struct mge_devalloc_stats st;

	/* 100 B -> 512 B, small pool: segment 1 (2 MiB), split: [512 used][2 MiB - 512 free]. */
	b1 = get(a, 100);
	st = stats(a);
	MG_EQ(b1->size, 512);
	MG_EQ(st.segments, 1);
	MG_EQ(st.reserved_bytes, 2 * MiB);
	MG_EQ(st.allocated_bytes, 512);
	MG_EQ(st.cached_blocks, 1);
	/* 1 MiB is still small: best fit is segment 1's rest, right after b1. */
	b2 = get(a, MiB);
	MG_TRUE((char *)b2->ptr == (char *)b1->ptr + 512, "b2 follows b1 in segment 1");
	MG_EQ(stats(a).segments, 1);
	/* Another 1 MiB: segment 1 has 1 MiB - 512 left: segment 2 (2 MiB), rest 1 MiB cached. */
	b3 = get(a, MiB);
	st = stats(a);
	MG_EQ(st.segments, 2);
	MG_EQ(st.reserved_bytes, 4 * MiB);
	MG_EQ(st.cached_blocks, 2);
	/* 3 MiB: large pool: segment 3 (20 MiB), the 17 MiB rest is split off. */
	b4 = get(a, 3 * MiB);
	st = stats(a);
	MG_EQ(st.segments, 3);
	MG_EQ(st.reserved_bytes, 24 * MiB);
	MG_EQ(st.cached_blocks, 3);
	/* 12 MiB fits the 17 MiB rest: split, 5 MiB left; no new segment. */
	b5 = get(a, 12 * MiB);
	MG_TRUE((char *)b5->ptr == (char *)b4->ptr + 3 * MiB, "b5 follows b4 in segment 3");
	MG_EQ(stats(a).segments, 3);
	/* 12 MiB again: nothing cached fits; >= 10 MiB: a segment of exactly 12 MiB, not split. */
	b6 = get(a, 12 * MiB);
	st = stats(a);
	MG_EQ(st.segments, 4);
	MG_EQ(st.reserved_bytes, 36 * MiB);
	MG_EQ(b6->size, 12 * MiB);
	/* 4.5 MiB: best fit is the 5 MiB rest (not a 2 MiB small rest: other pool); 0.5 MiB left is
	 * not worth a large block (<= 1 MiB): the whole 5 MiB is handed out. */
	b7 = get(a, 4 * MiB + 512 * KiB);
	st = stats(a);
	MG_EQ(b7->size, 5 * MiB);
	MG_EQ(st.segments, 4);
	MG_EQ(st.allocated_bytes, 512 + MiB + MiB + 3 * MiB + 12 * MiB + 12 * MiB + 5 * MiB);
	MG_EQ(st.peak_allocated_bytes, st.allocated_bytes);
	MG_EQ(st.active_blocks, 7);
	MG_EQ(st.cached_blocks, 2);
	sequence_release(a, &c, (struct mge_devbuf *const[7]){b1, b2, b3, b4, b5, b6, b7});
}

/* The shape of one mgtrain step at batch 32 (--device cuda): the input and labels, the forward's
 * activations, the backward's, all freed by the end of the step. */
static const size_t step_sizes[] = {
	393216, 128,                                  /* x, labels */
	1048576, 262144, 262144, 524288, 131072, 131072, 262144, 65536, 65536, 1024, /* forward */
	1024, 128, 128, 65536,                        /* dl, losses, correct, dfeat */
};

static void one_step(struct mge_devalloc *a, int persistent_first, struct mge_devbuf **keep, size_t nkeep)
{
	struct mge_devbuf *b[sizeof(step_sizes) / sizeof(step_sizes[0])];
	size_t n = sizeof(step_sizes) / sizeof(step_sizes[0]);

	if (persistent_first)
		for (size_t i = 0; i < nkeep; i++)
			keep[i] = get(a, 4 * KiB * (i + 1));
	for (size_t i = 0; i < n; i++)
		b[i] = get(a, step_sizes[i]);
	/* Backward frees as it goes, then everything else. */
	for (size_t i = n; i-- > 0;)
		mge_devalloc_free(a, b[i]);
}

static void test_warmup(void)
{
	struct capped c;
	struct mge_devalloc *a = new_capped(&c, 0);
	struct mge_devbuf *keep[8];
	struct mge_devalloc_stats first, st;
	size_t step_bytes = 0;

	for (size_t i = 0; i < sizeof(step_sizes) / sizeof(step_sizes[0]); i++)
		step_bytes += mge_devalloc_round(step_sizes[i]);
	one_step(a, 1, keep, 8);
	first = stats(a);
	/* 8 kept blocks (4..32 KiB, 144 KiB in all) and a step of 3.07 MiB, all small (2 MiB
	 * segments). Segment 1 takes the kept blocks, x (384 KiB), labels, the 1 MiB conv and pool0
	 * (256 KiB); idx0 (256 KiB) does not fit the 239.5 KiB left: segment 2 opens, and the later
	 * blocks fill both, best fit. */
	MG_EQ(first.segments, 2);
	MG_EQ(first.reserved_bytes, 4 * MiB);
	MG_EQ(first.allocated_bytes, 144 * KiB);
	MG_EQ(first.peak_allocated_bytes, 144 * KiB + step_bytes);
	for (int s = 0; s < 50; s++)
		one_step(a, 0, keep, 8);
	st = stats(a);
	MG_EQ(st.segment_allocs, first.segment_allocs);
	MG_EQ(st.reserved_bytes, first.reserved_bytes);
	MG_EQ(st.allocated_bytes, first.allocated_bytes);
	MG_EQ(st.peak_allocated_bytes, first.peak_allocated_bytes);
	/* Blocks in use stay; only empty segments go back. */
	MG_EQ(mge_devalloc_empty_cache(a), 1);
	MG_EQ(stats(a).segments, 1);
	for (int i = 0; i < 8; i++)
		mge_devalloc_free(a, keep[i]);
	MG_EQ(mge_devalloc_empty_cache(a), 1);
	MG_EQ(c.live, 0);
	mge_devalloc_destroy(a);
}

/* A leak: each step keeps 1.5 MiB (the collator's device cache) on top of a steady step. In the
 * large pool 13 fit a 20 MiB segment (12 split off, the 13th gets the last 2 MiB whole), so the
 * segments grow as a staircase of exactly one per 13 steps. */
static void test_leak(void)
{
	struct capped c;
	struct mge_devalloc *a = new_capped(&c, 0);
	struct mge_devbuf *kept[130];
	struct mge_devbuf *none[1];
	struct mge_devalloc_stats st;

	for (int s = 0; s < 130; s++) {
		one_step(a, 0, none, 0);
		kept[s] = get(a, 3 * MiB / 2);
		st = stats(a);
		/* The step holds 2 small segments from step 1 on; the kept blocks, large ones. */
		if (s == 12 || s == 13 || s == 129) {
			MG_EQ(st.segments - 2, s / 13 + 1);
			MG_EQ(st.reserved_bytes, 4 * MiB + (size_t)(s / 13 + 1) * 20 * MiB);
		}
	}
	MG_EQ(kept[12]->size, 2 * MiB);
	MG_EQ(kept[11]->size, 3 * MiB / 2);
	st = stats(a);
	MG_EQ(st.segments, 12);
	MG_EQ(st.reserved_bytes, 204 * MiB);
	MG_EQ(st.active_blocks, 130);
	for (int s = 0; s < 130; s++)
		mge_devalloc_free(a, kept[s]);
	st = stats(a);
	MG_EQ(st.reserved_bytes, 204 * MiB); /* freed is cached, not returned */
	MG_EQ(st.cached_blocks, 12);
	MG_EQ(mge_devalloc_empty_cache(a), 12);
	MG_EQ(c.live, 0);
	mge_devalloc_destroy(a);
}

/* When the backend refuses a segment, the allocator empties its cache and tries once more. */
static void test_out_of_memory(void)
{
	struct capped c;
	struct mge_devalloc *a = new_capped(&c, 20 * MiB);
	struct mge_devbuf *b, dummy, *big = &dummy;
	struct mge_devalloc_stats st;

	b = get(a, 100);
	mge_devalloc_free(a, b);
	MG_EQ(stats(a).reserved_bytes, 2 * MiB);
	/* 3 MiB needs a 20 MiB segment: 22 MiB > the cap; the cached 2 MiB segment goes first. */
	b = get(a, 3 * MiB);
	st = stats(a);
	MG_EQ(st.segments, 1);
	MG_EQ(st.reserved_bytes, 20 * MiB);
	MG_EQ(st.segment_frees, 1);
	/* 30 MiB cannot be had even with the cache empty: -ENOMEM, NULL, nothing changed. */
	MG_EQ(mge_devalloc_alloc(a, 30 * MiB, &big), -ENOMEM);
	MG_TRUE(big == NULL, "a failed alloc sets *out to NULL");
	MG_EQ(stats(a).reserved_bytes, 20 * MiB);
	MG_EQ(stats(a).active_blocks, 1);
	mge_devalloc_free(a, b);
	mge_devalloc_destroy(a);
	MG_EQ(c.live, 0);
}

/* Writes (check 0) or checks (check 1) block b's byte pattern `k`, every 256 bytes and its last
 * byte; returns the bytes that differ. */
static size_t pattern(struct mge_devbuf *b, unsigned char k, int check)
{
	unsigned char *p = b->ptr;
	size_t bad = 0;

	for (size_t j = 0; j < b->size; j += 256) {
		bad += check && p[j] != k;
		p[j] = k;
	}
	bad += check && p[b->size - 1] != k;
	p[b->size - 1] = k;
	return bad;
}

/* Random sizes and frees: blocks never overlap (each keeps its own byte pattern to the end) and,
 * everything freed, every segment is one block again. */
static void test_random(void)
{
	struct capped c;
	struct mge_devalloc *a = new_capped(&c, 0);
	struct mge_devbuf *live[64] = { 0 };
	unsigned seed = 12345;

	for (int i = 0; i < 20000; i++) {
		int k;
		seed = seed * 1103515245u + 12345u;
		k = (int)((seed >> 8) % 64);
		if (live[k]) {
			MG_EQ(pattern(live[k], (unsigned char)k, 1), 0);
			mge_devalloc_free(a, live[k]);
			live[k] = NULL;
		} else {
			size_t size = (seed >> 12) % 8 == 0 ? (seed >> 4) % (24 * MiB) : (seed >> 4) % (2 * MiB);
			live[k] = get(a, size);
			pattern(live[k], (unsigned char)k, 0);
		}
	}
	for (int k = 0; k < 64; k++)
		mge_devalloc_free(a, live[k]);
	MG_EQ(stats(a).cached_blocks, stats(a).segments);
	MG_EQ(stats(a).allocated_bytes, 0);
	mge_devalloc_destroy(a);
	MG_EQ(c.live, 0);
}

int main(void)
{
	test_rounding();
	test_sequence();
	test_warmup();
	test_leak();
	test_out_of_memory();
	test_random();
	return mg_test_done("engine-devalloc");
}
