/* SPDX-License-Identifier: MIT */
/* mgc_grid.h: a bounded grid over a run of any length, the one thinning rule of the readers (the
 * trace loader's points and site series, mgmon's own history of a process without the probe) and
 * of the probe's live segment (its grid and site histories, mgp_shm.c). Every sample is a point
 * until the grid is full; then every other point is dropped and only every second sample is kept,
 * and so on: the grid holds the samples whose number is a multiple of the stride, at most `cap` of
 * them. The caller keeps the latest sample as well when it is not on the grid. A series that
 * rarely changes is kept as its changes (struct mgc_grid_change), halved by the same rule. Pure
 * bookkeeping, safe inside the probe: it owns no memory, never fails, no malloc, stdio or lock. */
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

/* A series on the grid kept as its changes: from point `at` on (up to the next change) it is
 * `value`; before the first change it is 0. Changes are in increasing `at`, and no change repeats
 * the value before it, so a series that changed k times costs k changes however many points the
 * grid holds (most of a big program's allocation sites change once or twice in a run). */
struct mgc_grid_change {
	uint32_t at;
	float value;
};

/* The value at point i of the series c[0..n). */
float mgc_grid_change_at(const struct mgc_grid_change *c, size_t n, size_t i);

/* Sets the series c[0..*n) (room for cap changes) to `value` from point `at` on, where `at` is at
 * or after every change's point (a sample is always the latest): a change at `at` is replaced, and
 * none is kept that repeats the value before it. 0, or -ENOSPC when a new change does not fit in
 * cap (the series is then unchanged: make room and call again). */
int mgc_grid_change_set(struct mgc_grid_change *c, size_t *n, size_t cap, uint32_t at, float value);

/* mgc_grid_halve for a series of changes, with the grid: the value at new point j is the one at old
 * point 2j, so each change moves to point ceil(at / 2), a later one replacing an earlier one there.
 * Changes past the grid's last point (pending for the next one) move the same way. Returns how
 * many are left (at most n). */
size_t mgc_grid_halve_changes(struct mgc_grid_change *c, size_t n);

#endif /* MGC_GRID_H */
