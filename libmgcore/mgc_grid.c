/* SPDX-License-Identifier: MIT */
/* mgc_grid.c: see mgc_grid.h. */
#include "mgc_grid.h"

#include <string.h>

enum mgc_grid_place mgc_grid_append(struct mgc_grid *g)
{
	if (g->n < g->cap) {
		g->n++;
		return MGC_GRID_APPEND;
	}
	g->n = (g->n + 1) / 2 + 1;
	g->stride *= 2;
	return MGC_GRID_HALVE;
}

enum mgc_grid_place mgc_grid_offer(struct mgc_grid *g)
{
	uint64_t k = g->samples++;
	if (k % g->stride)
		return MGC_GRID_SKIP;
	return mgc_grid_append(g);
}

int mgc_grid_has_latest(const struct mgc_grid *g)
{
	return g->samples == 0 || (g->samples - 1) % g->stride == 0;
}

size_t mgc_grid_halve(void *arr, size_t n, size_t elem)
{
	unsigned char *a = arr;
	for (size_t k = 1; 2 * k < n; k++)
		memcpy(a + k * elem, a + 2 * k * elem, elem);
	return (n + 1) / 2;
}
