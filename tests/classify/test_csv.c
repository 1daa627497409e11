/* SPDX-License-Identifier: MIT */
/* test_csv.c: the series CSV reader on good files and on every bad input `mgreport --series` must
 * reject, each with the exact return code and a message naming the line and column. Reads only
 * the fixtures in tests/classify/data/ (directory given as argv[1]). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "mg_test.h"
#include "mgc_csv.h"

static void path_of(char *buf, size_t len, const char *dir, const char *name)
{
	snprintf(buf, len, "%s/%s", dir, name);
}

static void test_good(const char *dir)
{
	char p[512], err[256];
	struct mgc_csv c;
	path_of(p, sizeof p, dir, "good.csv");
	MG_EQ(mgc_csv_load(p, &c, err, sizeof err), 0);
	MG_EQ(c.nrows, 3);
	MG_EQ(c.nseries, 2);
	MG_EQ(c.x_is_steps, 1);
	MG_STR(c.x_name, "step");
	if (c.nseries == 2 && c.nrows == 3) {
		MG_STR(c.series[0].name, "rss_mb");
		MG_NEAR(c.series[0].unit, 1048576.0, 0);
		MG_NEAR(c.series[0].y[0], 5552.0 * 1048576.0, 0);
		MG_NEAR(c.series[1].y[2], 3145728.0, 0);
		MG_NEAR(c.x[2], 30, 0);
	}
	mgc_csv_free(&c);
	MG_TRUE(c.x == NULL && c.nseries == 0, "mgc_csv_free zeroes the struct");

	path_of(p, sizeof p, dir, "units_seconds.csv");
	MG_EQ(mgc_csv_load(p, &c, err, sizeof err), 0);
	MG_EQ(c.x_is_steps, 0);
	MG_STR(c.x_name, "time");
	if (c.nseries == 2 && c.nrows == 2) {
		MG_STR(c.series[0].name, "rss_kb");
		MG_NEAR(c.series[0].y[1], 2048.0 * 1024.0, 0);
		MG_NEAR(c.series[1].y[0], 1.5 * 1073741824.0, 0);
	} else {
		MG_TRUE(0, "units_seconds.csv: %zu series, %zu rows (expected 2, 2): %s", c.nseries, c.nrows, err);
	}
	mgc_csv_free(&c);

	/* an epoch column: not a series; its rises are epoch boundaries at their rows' x */
	path_of(p, sizeof p, dir, "epochs.csv");
	MG_EQ(mgc_csv_load(p, &c, err, sizeof err), 0);
	MG_EQ(c.nseries, 1);
	MG_EQ(c.has_epochs, 1);
	MG_EQ(c.epoch_col, 2);
	MG_EQ(c.nepochs, 2);
	if (c.nseries == 1 && c.nepochs == 2 && c.nrows == 5) {
		MG_STR(c.series[0].name, "rss_mb");
		MG_NEAR(c.series[0].y[4], 140.0 * 1048576.0, 0);
		MG_NEAR(c.epochs[0], 30, 0);
		MG_NEAR(c.epochs[1], 50, 0);
	}
	mgc_csv_free(&c);
	/* a file without one marks no epochs */
	path_of(p, sizeof p, dir, "good.csv");
	MG_EQ(mgc_csv_load(p, &c, err, sizeof err), 0);
	MG_EQ(c.has_epochs, 0);
	MG_EQ(c.nepochs, 0);
	MG_TRUE(c.epochs == NULL, "no epoch column, no epochs");
	mgc_csv_free(&c);

	/* from memory, x as steps because every x is an integer */
	const char text[] = "iter_no,rss\n1,100\n2,200\n";
	MG_EQ(mgc_csv_parse(text, sizeof text - 1, NULL, &c, err, sizeof err), 0);
	MG_EQ(c.x_is_steps, 1);
	mgc_csv_free(&c);
	mgc_csv_free(NULL);
}

struct bad_case {
	const char *file;
	int rc;
	const char *fragment; /* must appear in the message */
};

static void test_bad(const char *dir)
{
	static const struct bad_case cases[] = {
		{"does_not_exist.csv", -ENOENT, "cannot open"},
		{"empty.csv", -ENODATA, "empty file"},
		{"comments_only.csv", -ENODATA, "empty file"},
		{"header_only.csv", -ENODATA, "line 1: a header but no data rows"},
		{"one_row.csv", -ENODATA, "only one data row (line 2)"},
		{"non_numeric.csv", -EINVAL, "line 3, column 2 (rss_mb): 'abc' is not a number"},
		{"empty_cell.csv", -EINVAL, "line 3, column 2 (rss_mb): empty cell"},
		{"nan.csv", -EINVAL, "line 3, column 2 (rss_mb): 'NaN' is not a finite number"},
		{"inf.csv", -EINVAL, "line 3, column 2 (rss_mb): 'inf' is not a finite number"},
		{"overflow.csv", -EINVAL, "line 3, column 2 (rss_mb): '1e999' is not a finite number"},
		{"hex.csv", -EINVAL, "line 2, column 2 (rss_mb): '0x1F' is not a number"},
		{"x_decreasing.csv", -EINVAL, "line 4, column 1 (step): x goes back from 30"},
		{"x_duplicate.csv", -EINVAL, "line 4, column 1 (step): duplicate x 20 (also on line 3)"},
		{"negative.csv", -EINVAL, "line 3, column 2 (rss_mb): negative value -7159"},
		{"zeros.csv", -EINVAL, "column 3 (heap): every value is zero"},
		{"wrong_cells.csv", -EINVAL, "line 3: 3 cells, the header has 2 columns"},
		{"one_column.csv", -EINVAL, "line 1: the header has 1 column"},
		{"overflow_1e308.csv", -EINVAL, "line 3, column 2 (rss): 1e+308 is more than 2^60 bytes"},
		{"overflow_gb.csv", -EINVAL, "line 3, column 2 (rss_gb): 2000000000 is more than 2^60 bytes"},
		{"x_huge.csv", -EINVAL, "line 3, column 1 (step): x 1e+17 is beyond 2^53"},
		{"epoch_back.csv", -EINVAL, "line 3, column 3 (epoch): the epoch goes back from 2 to 1"},
		{"epoch_twice.csv", -EINVAL, "line 1, column 4: a second epoch column"},
		{"epoch_only.csv", -EINVAL, "line 1: no series column besides the x axis and the epoch"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char p[512], err[256];
		struct mgc_csv c;
		path_of(p, sizeof p, dir, cases[i].file);
		memset(err, 'x', sizeof err);
		int rc = mgc_csv_load(p, &c, err, sizeof err);
		MG_EQ(rc, cases[i].rc);
		MG_TRUE(strstr(err, cases[i].fragment) != NULL, "%s: message \"%s\" lacks \"%s\"", cases[i].file,
			err, cases[i].fragment);
		MG_TRUE(strstr(err, cases[i].file) != NULL, "%s: message \"%s\" does not name the file",
			cases[i].file, err);
		MG_TRUE(c.x == NULL && c.series == NULL && c.nrows == 0, "%s: output not left empty",
			cases[i].file);
		mgc_csv_free(&c);
	}
	/* a NUL byte in the text, and a tiny error buffer (truncated, still terminated) */
	char err[16];
	struct mgc_csv c;
	const char nul[] = "step,rss\n1,2\0\n2,3\n";
	MG_EQ(mgc_csv_parse(nul, sizeof nul - 1, "mem", &c, err, sizeof err), -EINVAL);
	MG_EQ(strlen(err), sizeof err - 1);
	MG_EQ(mgc_csv_parse("", 0, "mem", &c, NULL, 0), -ENODATA);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: test_csv DATA_DIR\n");
		return 2;
	}
	test_good(argv[1]);
	test_bad(argv[1]);
	return mg_test_done("classify-csv");
}
