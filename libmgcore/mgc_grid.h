/* SPDX-License-Identifier: MIT */
/* mgc_grid.h: a bounded grid over a run of any length, the one thinning rule of the readers (the
 * trace loader's points and site series, mgmon's own history of a process without the probe).
 * Every sample is a point until the grid is full; then every other point is dropped and only
 * every second sample is kept, and so on: the grid holds the samples whose number is a multiple
 * of the stride, at most `cap` of them. The caller keeps the latest sample as well when it is not
 * on the grid. Pure bookkeeping: it owns no memory and never fails. */
#ifndef MGC_GRID_H
#define MGC_GRID_H

#include <stddef.h>
#include <stdint.h>

struct mgc_grid {
	size_t n;         /* points held */
	size_t cap;       /* most points held (> 1) */
	uint64_t samples; /* samples offered so far */
	uint64_t stride;  /* samples per point now (a power of two) */
};

/* An empty grid of at most cap points. */
static inline struct mgc_grid mgc_grid_make(size_t cap)
{
	return (struct mgc_grid){.n = 0, .cap = cap, .samples = 0, .stride = 1};
}

enum mgc_grid_place {
	MGC_GRID_SKIP = 0,   /* between points: not kept */
	MGC_GRID_APPEND = 1, /* a new point: the caller writes it at index g->n - 1 */
	MGC_GRID_HALVE = 2,  /* the grid was full: the caller first halves every array it keeps on
	                      * this grid (they held g->cap points: mgc_grid_halve), then writes the
	                      * new point at index g->n - 1 */
};

/* Offers the next sample and says where it goes. */
enum mgc_grid_place mgc_grid_offer(struct mgc_grid *g);

/* 1 when the latest sample offered is a point of the grid (or none was offered yet). */
int mgc_grid_has_latest(const struct mgc_grid *g);

/* Adds one point outside the stride (the latest sample, at the end of a run): as mgc_grid_offer,
 * never MGC_GRID_SKIP. */
enum mgc_grid_place mgc_grid_append(struct mgc_grid *g);

/* Keeps elements 0, 2, 4, ... of arr[0..n), each `elem` bytes, packed at the front; returns how
 * many are left, (n + 1) / 2. */
size_t mgc_grid_halve(void *arr, size_t n, size_t elem);

#endif /* MGC_GRID_H */
