/* SPDX-License-Identifier: MIT */
/* mgc_grid.c: see mgc_grid.h. */
#include "mgc_grid.h"

#include <errno.h>
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

float mgc_grid_change_at(const struct mgc_grid_change *c, size_t n, size_t i)
{
	size_t lo = 0, hi = n; /* lo: the changes at or before point i */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (c[mid].at <= i)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? c[lo - 1].value : 0.0f;
}

int mgc_grid_change_set(struct mgc_grid_change *c, size_t *n, size_t cap, uint32_t at, float value)
{
	size_t k = *n && c[*n - 1].at == at ? *n - 1 : *n; /* a later sample of a point replaces it */
	float before = k ? c[k - 1].value : 0.0f;
	if (value == before) {
		*n = k;
		return 0;
	}
	if (k == cap)
		return -ENOSPC;
	c[k] = (struct mgc_grid_change){at, value};
	*n = k + 1;
	return 0;
}

size_t mgc_grid_halve_changes(struct mgc_grid_change *c, size_t n)
{
	size_t m = 0;
	for (size_t k = 0; k < n; k++) {
		uint32_t at = c[k].at / 2 + c[k].at % 2; /* ceil(at / 2): the first even old point from at */
		if (m && c[m - 1].at == at)
			m--; /* the later change holds at that point */
		float before = m ? c[m - 1].value : 0.0f;
		if (c[k].value != before)
			c[m++] = (struct mgc_grid_change){at, c[k].value};
	}
	return m;
}
