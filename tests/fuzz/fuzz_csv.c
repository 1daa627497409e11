/* SPDX-License-Identifier: MIT */
/* fuzz_csv.c: libFuzzer target for the CSV reader: any bytes as `mgreport --series` input,
 * parsed (mgc_csv_parse) and, when they parse, judged as mgreport judges them
 * (mgc_analyze_columns). Passes when nothing crashes and no sanitizer speaks. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "mgc_analysis.h"
#include "mgc_csv.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct mgc_csv csv = {0};
	char err[256];
	if (mgc_csv_parse((const char *)data, size, "fuzz.csv", &csv, err, sizeof err) == 0) {
		const char **names = calloc(csv.nseries + 1, sizeof *names);
		const double **ys = calloc(csv.nseries + 1, sizeof *ys);
		struct mgc_analysis a;
		for (size_t i = 0; names && ys && i < csv.nseries; i++) {
			names[i] = csv.series[i].name;
			ys[i] = csv.series[i].y;
		}
		if (names && ys &&
		    mgc_analyze_columns(csv.x, csv.nrows, csv.x_is_steps, names, ys, csv.nseries,
					csv.has_epochs ? csv.epochs : NULL, csv.nepochs, 0, &a) == 0)
			mgc_analysis_free(&a);
		free(names);
		free(ys);
	}
	mgc_csv_free(&csv);
	return 0;
}
