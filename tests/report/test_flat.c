/* SPDX-License-Identifier: MIT */
/* test_flat.c: mgc_analysis_site_flat, the rule that decides which sites --json writes in the
 * compact form (report-json.md): a site is flat when its live bytes are the same at every point of
 * the x axis, whatever they did between axis points or off the axis (start-up, the exit). */
#include "mg_test.h"
#include "mgc_analysis.h"

/* The axis of these cases: grid points 2, 4, 6 and 8 (the others are off the axis). */
static size_t axis[] = {2, 4, 6, 8};

static int flat(const struct mgc_grid_change *c, uint32_t n, size_t npoints)
{
	struct mgc_analysis a = {.n = npoints, .axis = axis};
	struct mgc_site s = {.series = (struct mgc_grid_change *)c, .nseries = n};
	return mgc_analysis_site_flat(&a, &s);
}

int main(void)
{
	MG_EQ(flat(NULL, 0, 4), 1, "no change: 0 at every axis point");
	const struct mgc_grid_change startup[] = {{0, 48}};
	MG_EQ(flat(startup, 1, 4), 1, "set at start-up, kept");
	const struct mgc_grid_change at_first[] = {{2, 48}};
	MG_EQ(flat(at_first, 1, 4), 1, "set at the first axis point, kept");
	const struct mgc_grid_change blip[] = {{0, 48}, {3, 96}, {4, 48}, {7, 0}, {8, 48}};
	MG_EQ(flat(blip, 5, 4), 1, "changes between axis points, undone by the next one");
	const struct mgc_grid_change teardown[] = {{1, 48}, {9, 0}};
	MG_EQ(flat(teardown, 2, 4), 1, "freed after the last axis point (the exit's teardown)");
	const struct mgc_grid_change grows[] = {{0, 48}, {5, 96}};
	MG_EQ(flat(grows, 2, 4), 0, "changed between axis points and kept: differs at point 6");
	const struct mgc_grid_change on_axis[] = {{0, 48}, {8, 49}};
	MG_EQ(flat(on_axis, 2, 4), 0, "changed at the last axis point");
	const struct mgc_grid_change late[] = {{4, 48}};
	MG_EQ(flat(late, 1, 4), 0, "born at the second axis point: 0 at the first");
	const struct mgc_grid_change back[] = {{0, 48}, {3, 0}, {5, 48}};
	MG_EQ(flat(back, 3, 4), 0, "0 at point 4 only");
	MG_EQ(flat(grows, 2, 1), 1, "one axis point: flat");
	MG_EQ(flat(grows, 2, 0), 1, "no axis: flat");
	return mg_test_done("site-flat");
}
