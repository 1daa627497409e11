/* SPDX-License-Identifier: MIT */
/* mgc_csv.h: reads the CSV of memory series that `mgreport --series FILE.csv` classifies.
 * Pure parsing into plain arrays: it never guesses around bad input (every defect is reported
 * with its row and column), never aborts, and keeps no global state. */
#ifndef MGC_CSV_H
#define MGC_CSV_H

#include <stddef.h>

/* Accepted file shape:
 *
 *     step,rss_mb,heap
 *     10,5552,1048576
 *     20,7159,2097152
 *
 * - The first non-blank, non-comment line is the header. Lines starting with '#' and blank lines
 *   are skipped anywhere; CRLF line ends are accepted; cells may be surrounded by spaces and header
 *   names by double quotes.
 * - Column 1 is the x axis: its values must be finite and strictly increasing. It is taken as
 *   training steps when its name is step/steps/iter/iteration/epoch (any case) or, for any other
 *   name, when every x is an integer; otherwise (e.g. "time", "seconds", "t") as seconds.
 * - Every further column is one series, in bytes, unless its name ends (case-insensitively) in
 *   `_kb`, `_mb`, `_gb` (also `_kib`, `_mib`, `_gib`): those are multiplied by 1024, 1024^2, 1024^3.
 *   The units are binary on purpose: RSS tools (ps, /proc, top, psutil/1024**2) print KiB/MiB.
 * - One column (not the first) may be named `epoch` (any case): the training epoch of each row, a
 *   number that never decreases. It is not a series: where it rises, a new epoch begins at that
 *   row's x (`epochs`), and the classifier takes those boundaries as evidence (a cache that fills
 *   during epoch 1 stops at its end; a leak carries on).
 * - Every data row has exactly as many cells as the header. Cells are plain decimal numbers
 *   (an exponent is allowed); empty cells, text, hex, NaN and infinities are rejected.
 * - x values lie within +-2^53; series values must be >= 0 and at most 2^60 bytes once in bytes
 *   (1 EiB: larger is no memory size), and a series may not be all zeros (almost always a wrong
 *   column).
 * - At least two data rows are required (one point has no growth).
 */

struct mgc_csv_series {
	char *name;        /* the header cell as written (unit suffix included), NUL-terminated */
	double unit;       /* bytes per unit of the file: 1, 1024, 1048576 or 1073741824 */
	double *y;         /* nrows values, already in bytes */
};

struct mgc_csv {
	char *x_name;      /* header of the first column */
	int x_is_steps;    /* 1: steps, 0: seconds (see the rules above) */
	size_t nrows;
	double *x;         /* nrows values, strictly increasing */
	size_t nseries;
	struct mgc_csv_series *series;
	/* Added: */
	size_t ncols;      /* columns in the header (the x axis, the series, the epoch column) */
	int has_epochs;    /* 1: the file has an `epoch` column */
	size_t epoch_col;  /* its column, 1-based as in messages; 0: none */
	double *epochs;    /* the x of each row whose epoch is higher than the row before's: where an
			      epoch begins (nepochs of them, ascending; allocated whenever has_epochs) */
	size_t nepochs;
};

/* Parses `len` bytes of CSV text into *out. `origin` names the input in messages (a path; NULL
 * gives "input"). On error returns a negative errno and writes one line (no newline) into
 * err[errlen] naming the file, the row (1-based line number in the file) and the column (1-based)
 * where that applies, e.g. "run.csv: line 4, column 2 (rss_mb): 'abc' is not a number";
 * *out is then left empty (safe to pass to mgc_csv_free). Errors:
 *   -ENODATA  empty input, no header, no data rows, or a single data row
 *   -EINVAL   a malformed cell, a wrong cell count, NaN/inf, x not increasing, duplicated or beyond
 *             2^53, a negative value or one above 2^60 bytes, an all-zero column, an empty header
 *             name, an epoch that goes back, a second epoch column, no series column
 *   -ENOMEM   out of memory
 * err may be NULL when errlen is 0. Thread-safe; allocates with malloc. */
int mgc_csv_parse(const char *text, size_t len, const char *origin, struct mgc_csv *out, char *err,
		  size_t errlen);

/* Reads the file at `path` (at most 256 MiB) and parses it as mgc_csv_parse does. Adds: -errno
 * of open/read (e.g. -ENOENT for a missing file), -EFBIG for a larger file. */
int mgc_csv_load(const char *path, struct mgc_csv *out, char *err, size_t errlen);

/* Frees what a successful (or failed) load put into *csv and zeroes it. NULL is ignored. */
void mgc_csv_free(struct mgc_csv *csv);

#endif /* MGC_CSV_H */
