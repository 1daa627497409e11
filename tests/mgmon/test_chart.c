/* SPDX-License-Identifier: MIT */
/* test_chart: mgmon's chart grid (mgm_chart_render), cell by cell: the columns' heights scaled to
 * the series, a plateau's level and warmup end, a rising fit's line, the legend and the axis
 * labels. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "mg_test.h"
#include "mgm_format.h"

#define GIB (1024.0 * 1024.0 * 1024.0)
enum { W = 10, H = 5 };

/* How many '#' column c holds, and that they stand on the bottom row without gaps. */
static int column_height(const char *cells, int c)
{
	int k = 0;
	for (int r = 0; r < H; r++)
		if (cells[r * W + c] == '#') {
			k++;
			MG_TRUE(r == H - 1 || cells[(r + 1) * W + c] == '#', "column %d has a gap under row %d", c, r);
		}
	return k;
}

/* Renders steps 1..W of y with fit f into cells and lab, checks every column's height. */
static void render(const double *y, const struct mgc_fit *f, const int *heights, char *cells, struct mgm_chart *lab)
{
	double x[W];
	struct mgm_view v;
	memset(&v, 0, sizeof v);
	v.a.x_is_steps = 1;
	for (int i = 0; i < W; i++)
		x[i] = i + 1;
	MG_EQ(mgm_chart_render(&v, x, y, 0, 1, f, W, H, cells, lab), -1); /* no data */
	MG_EQ(mgm_chart_render(&v, x, y, W, 1, f, W, H, cells, lab), 0);
	for (int c = 0; c < W; c++)
		MG_EQ(column_height(cells, c), heights[c]);
}

/* 1..10 GiB at steps 1..10, a leak of 1 GiB per step: lo 0.9 GiB, hi 10 GiB, 5 rows, so step s
 * stands ceil((s - 0.9) / 9.1 * 5) rows high. */
static void test_rising(void)
{
	double y[W];
	for (int i = 0; i < W; i++)
		y[i] = (i + 1) * GIB;
	struct mgc_fit f = {.verdict = MGC_VERDICT_LEAK, .slope = GIB, .level = 10 * GIB, .change_at = NAN,
			    .plateau_level = NAN, .plateau_at = NAN};
	char cells[W * H];
	struct mgm_chart lab;
	static const int want[W] = {1, 1, 2, 2, 3, 3, 4, 4, 5, 5};
	render(y, &f, want, cells, &lab);
	MG_TRUE(strncmp(lab.legend, ". leak slope +", 14) == 0, "legend: %s", lab.legend);
	MG_STR(lab.xleft, "step 1");
	MG_STR(lab.xright, "step 10");
}

/* min(step, 5) GiB, a plateau at 5 GiB from step 3: lo 0.9, hi 5 GiB; the level on row 0 where no
 * column reaches it, the warmup end in column 2 (step 3) above its bars. */
static void test_plateau(void)
{
	double y[W];
	for (int i = 0; i < W; i++)
		y[i] = fmin(i + 1, 5) * GIB;
	struct mgc_fit f = {.verdict = MGC_VERDICT_PLATEAU, .plateau_level = 5 * GIB, .plateau_at = 3,
			    .slope = 0, .change_at = NAN};
	char cells[W * H];
	struct mgm_chart lab;
	static const int want[W] = {1, 2, 3, 4, 5, 5, 5, 5, 5, 5};
	render(y, &f, want, cells, &lab);
	for (int c = 0; c < 4; c++)
		MG_TRUE(cells[c] == '-', "row 0 column %d: '%c'", c, cells[c]);
	MG_TRUE(cells[W + 2] == '|', "row 1 column 2: '%c'", cells[W + 2]);
	MG_TRUE(strstr(lab.legend, "- plateau ") && strstr(lab.legend, "warmup end step 3"), "legend: %s",
		lab.legend);
	for (int r = 0; r < H; r++)
		printf("%.*s\n", W, cells + r * W);
	printf("%s\n", lab.legend);
}

/* Rows 0..H-2 of cells hold '.' exactly at row[c] in columns from `from` on. */
static void check_line(const char *cells, const int *row, int from)
{
	for (int c = 0; c < W; c++)
		for (int r = 0; r < H - 1; r++)
			MG_TRUE((cells[r * W + c] == '.') == (c >= from && r == row[c]), "row %d column %d: '%c'", r, c,
				cells[r * W + c]);
}

/* A leak's line ('.') over columns it does not touch: 1 GiB at steps 1..9, 10 GiB at step 10, the
 * fit rising 1 GiB per step to 10 GiB, so at step s it stands on row 5 - ceil((s - 0.9) / 9.1 * 5)
 * (row 4 and the last column are bars already). From change_at on only; a line above or far below
 * the chart is not drawn (its row never overflows an int: mgmon-chart-asan checks the cast). */
static void test_fit_line(void)
{
	double y[W];
	for (int i = 0; i < W; i++)
		y[i] = (i == W - 1 ? 10 : 1) * GIB;
	struct mgc_fit f = {.verdict = MGC_VERDICT_LEAK, .slope = GIB, .level = 10 * GIB, .change_at = NAN,
			    .plateau_level = NAN, .plateau_at = NAN};
	char cells[W * H];
	struct mgm_chart lab;
	static const int want[W] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 5}, row[W] = {4, 4, 3, 3, 2, 2, 1, 1, 0, -1};
	render(y, &f, want, cells, &lab);
	check_line(cells, row, 0);
	f.change_at = 5; /* step 5 is column 4 */
	render(y, &f, want, cells, &lab);
	check_line(cells, row, 4);
	f.change_at = NAN;
	f.level = 30 * GIB; /* the line over the top of the chart */
	render(y, &f, want, cells, &lab);
	MG_TRUE(memchr(cells, '.', sizeof cells) == NULL, "a line above the chart was drawn");
	f.level = 10 * GIB;
	f.slope = 1e300; /* a line steeper than any int row: far below the chart before the last column */
	render(y, &f, want, cells, &lab);
	MG_TRUE(memchr(cells, '.', sizeof cells) == NULL, "a line below the chart was drawn");
}

int main(void)
{
	test_rising();
	test_plateau();
	test_fit_line();
	return mg_test_done("mgmon-chart");
}
