/* SPDX-License-Identifier: MIT */
/* mgc_csv.c: the CSV series reader behind `mgreport --series` (contract in mgc_csv.h).
 * It must never accept a file it cannot read exactly: every defect becomes one error line with
 * its line and column, never a guess, a crash or a silently dropped cell. */
#include "mgc_csv.h"
#include "mgc_input.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define MGC_CSV_MAX_FILE (256u << 20)
#define MGC_CSV_MAX_BYTES 1152921504606846976.0 /* 2^60: no memory series is larger */
#define MGC_CSV_MAX_X 9007199254740992.0        /* 2^53: steps and seconds stay exact below it */

struct mgc_csv_ctx {
	const char *origin;
	char *err;
	size_t errlen;
};

__attribute__((format(printf, 3, 4))) static int mgc_csv_fail(const struct mgc_csv_ctx *c, int rc,
							      const char *fmt, ...)
{
	if (c->err && c->errlen) {
		int k = snprintf(c->err, c->errlen, "%s: ", c->origin);
		if (k >= 0 && (size_t)k < c->errlen) {
			va_list ap;
			va_start(ap, fmt);
			vsnprintf(c->err + k, c->errlen - (size_t)k, fmt, ap);
			va_end(ap);
		}
	}
	return rc;
}

/* One cell of a line: [b, e) with surrounding spaces removed. */
struct mgc_csv_cell {
	const char *b, *e;
};

static void mgc_csv_trim(struct mgc_csv_cell *cell)
{
	while (cell->b < cell->e && (*cell->b == ' ' || *cell->b == '\t'))
		cell->b++;
	while (cell->e > cell->b && (cell->e[-1] == ' ' || cell->e[-1] == '\t' || cell->e[-1] == '\r'))
		cell->e--;
}

/* Splits [b, e) at commas into cells[0..max); returns the number of cells (may exceed max). */
static size_t mgc_csv_split(const char *b, const char *e, struct mgc_csv_cell *cells, size_t max)
{
	size_t n = 0;
	const char *s = b;
	for (const char *p = b;; p++) {
		if (p == e || *p == ',') {
			if (n < max) {
				cells[n].b = s;
				cells[n].e = p;
				mgc_csv_trim(&cells[n]);
			}
			n++;
			if (p == e)
				break;
			s = p + 1;
		}
	}
	return n;
}

/* A line worth reading: not blank and not a '#' comment. */
static int mgc_csv_is_data(const char *b, const char *e)
{
	while (b < e && isspace((unsigned char)*b))
		b++;
	return b < e && *b != '#';
}

/* Parses a plain decimal number (sign, digits, one '.', optional exponent). Returns 0, or -1 for
 * text, -2 for nan/inf spelled out or an overflow to infinity. */
static int mgc_csv_number(struct mgc_csv_cell cell, double *v)
{
	size_t len = (size_t)(cell.e - cell.b);
	char buf[64];
	if (len == 0 || len >= sizeof(buf))
		return -1;
	memcpy(buf, cell.b, len);
	buf[len] = 0;
	const char *p = buf;
	if (*p == '+' || *p == '-')
		p++;
	if (strncasecmp(p, "nan", 3) == 0 || strncasecmp(p, "inf", 3) == 0)
		return -2;
	int digits = 0;
	for (const char *q = p; *q; q++) {
		if (isdigit((unsigned char)*q))
			digits = 1;
		else if (*q != '.' && *q != 'e' && *q != 'E' && *q != '+' && *q != '-')
			return -1;
	}
	if (!digits)
		return -1;
	char *end = NULL;
	errno = 0;
	double d = strtod(buf, &end);
	if (end == buf || *end != 0)
		return -1;
	if (!isfinite(d))
		return -2;
	*v = d;
	return 0;
}

/* Unit of a series from its name's suffix: 1024-based (see mgc_csv.h). */
static double mgc_csv_unit(const char *name)
{
	static const struct {
		const char *suffix;
		double unit;
	} units[] = {
		{"_kb", 1024.0},	 {"_kib", 1024.0},	  {"_mb", 1048576.0},
		{"_mib", 1048576.0},	 {"_gb", 1073741824.0}, {"_gib", 1073741824.0},
	};
	size_t n = strlen(name);
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		size_t k = strlen(units[i].suffix);
		if (n > k && strcasecmp(name + n - k, units[i].suffix) == 0)
			return units[i].unit;
	}
	return 1.0;
}

static int mgc_csv_x_named_steps(const char *name)
{
	static const char *const steps[] = {"step", "steps", "iter", "iteration", "iterations",
					    "epoch", "global_step"};
	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++)
		if (strcasecmp(name, steps[i]) == 0)
			return 1;
	return 0;
}

static char *mgc_csv_strdup_cell(struct mgc_csv_cell cell)
{
	if (cell.e - cell.b >= 2 && *cell.b == '"' && cell.e[-1] == '"') {
		cell.b++;
		cell.e--;
	}
	size_t len = (size_t)(cell.e - cell.b);
	char *s = malloc(len + 1);
	if (s) {
		memcpy(s, cell.b, len);
		s[len] = 0;
	}
	return s;
}

void mgc_csv_free(struct mgc_csv *csv)
{
	if (!csv)
		return;
	for (size_t i = 0; i < csv->nseries; i++) {
		free(csv->series[i].name);
		free(csv->series[i].y);
	}
	free(csv->series);
	free(csv->x);
	free(csv->epochs);
	free(csv->x_name);
	memset(csv, 0, sizeof(*csv));
}

/* Grows every column array to hold `cap` rows. */
static int mgc_csv_reserve(struct mgc_csv *out, size_t cap)
{
	double *x = realloc(out->x, cap * sizeof(double));
	if (!x)
		return -ENOMEM;
	out->x = x;
	if (out->has_epochs) {
		double *ep = realloc(out->epochs, cap * sizeof(double));
		if (!ep)
			return -ENOMEM;
		out->epochs = ep;
	}
	for (size_t i = 0; i < out->nseries; i++) {
		double *y = realloc(out->series[i].y, cap * sizeof(double));
		if (!y)
			return -ENOMEM;
		out->series[i].y = y;
	}
	return 0;
}

/* The column a header cell names: the x axis (column 1), the `epoch` column, or a series. */
static int mgc_csv_name_column(const struct mgc_csv_ctx *c, char *name, size_t j, size_t line,
			       struct mgc_csv *out)
{
	if (j == 0) {
		out->x_name = name;
	} else if (strcasecmp(name, "epoch") == 0 && !out->epoch_col) {
		out->epoch_col = j + 1;
		out->has_epochs = 1;
		free(name);
	} else if (strcasecmp(name, "epoch") == 0) {
		free(name);
		return mgc_csv_fail(c, -EINVAL, "line %zu, column %zu: a second epoch column", line, j + 1);
	} else {
		struct mgc_csv_series *s = &out->series[out->nseries++];
		s->name = name;
		s->unit = mgc_csv_unit(name);
	}
	return 0;
}

static int mgc_csv_header(const struct mgc_csv_ctx *c, const char *b, const char *e, size_t line,
			  struct mgc_csv *out)
{
	size_t ncols = mgc_csv_split(b, e, NULL, 0);
	if (ncols < 2)
		return mgc_csv_fail(c, -EINVAL,
				    "line %zu: the header has %zu column; need the x axis and at least one series",
				    line, ncols);
	struct mgc_csv_cell *cells = calloc(ncols, sizeof(*cells));
	out->series = calloc(ncols - 1, sizeof(*out->series));
	if (!cells || !out->series) {
		free(cells);
		return mgc_csv_fail(c, -ENOMEM, "out of memory");
	}
	out->ncols = ncols;
	mgc_csv_split(b, e, cells, ncols);
	int rc = 0;
	for (size_t j = 0; j < ncols && rc == 0; j++) {
		char *name = mgc_csv_strdup_cell(cells[j]);
		if (!name)
			rc = mgc_csv_fail(c, -ENOMEM, "out of memory");
		else if (!name[0]) {
			free(name);
			rc = mgc_csv_fail(c, -EINVAL, "line %zu, column %zu: empty column name in the header",
					  line, j + 1);
		} else {
			rc = mgc_csv_name_column(c, name, j, line, out);
		}
	}
	free(cells);
	if (rc == 0 && out->nseries == 0)
		rc = mgc_csv_fail(c, -EINVAL, "line %zu: no series column besides the x axis and the epoch",
				  line);
	return rc;
}

/* The series of column j (0-based, not the x axis nor the epoch column). */
static struct mgc_csv_series *mgc_csv_series_of(struct mgc_csv *out, size_t j)
{
	return &out->series[j - 1 - (out->epoch_col && j + 1 > out->epoch_col)];
}

static const char *mgc_csv_col_name(struct mgc_csv *out, size_t j)
{
	if (j == 0)
		return out->x_name;
	return out->epoch_col == j + 1 ? "epoch" : mgc_csv_series_of(out, j)->name;
}

/* One cell as a finite number, or one error line. */
static int mgc_csv_cell_value(const struct mgc_csv_ctx *c, struct mgc_csv_cell cell, size_t line, size_t j,
			      struct mgc_csv *out, double *v)
{
	int k = mgc_csv_number(cell, v);
	int w = (int)(cell.e - cell.b);
	if (k == -1 && w == 0)
		return mgc_csv_fail(c, -EINVAL, "line %zu, column %zu (%s): empty cell", line, j + 1,
				    mgc_csv_col_name(out, j));
	if (k == -1)
		return mgc_csv_fail(c, -EINVAL, "line %zu, column %zu (%s): '%.*s' is not a number", line, j + 1,
				    mgc_csv_col_name(out, j), w > 40 ? 40 : w, cell.b);
	if (k == -2)
		return mgc_csv_fail(c, -EINVAL, "line %zu, column %zu (%s): '%.*s' is not a finite number (NaN/inf)",
				    line, j + 1, mgc_csv_col_name(out, j), w > 40 ? 40 : w, cell.b);
	return 0;
}

/* The x of row r: finite, below 2^53 in size (exact), strictly after the row before. */
static int mgc_csv_x(const struct mgc_csv_ctx *c, double v, size_t line, struct mgc_csv *out, size_t xline)
{
	size_t r = out->nrows;
	if (fabs(v) > MGC_CSV_MAX_X)
		return mgc_csv_fail(c, -EINVAL, "line %zu, column 1 (%s): x %.17g is beyond 2^53; not a step or a time",
				    line, out->x_name, v);
	if (r > 0 && v == out->x[r - 1])
		return mgc_csv_fail(c, -EINVAL, "line %zu, column 1 (%s): duplicate x %.17g (also on line %zu)", line,
				    out->x_name, v, xline);
	if (r > 0 && v < out->x[r - 1])
		return mgc_csv_fail(c, -EINVAL,
				    "line %zu, column 1 (%s): x goes back from %.17g (line %zu) to %.17g; x must increase",
				    line, out->x_name, out->x[r - 1], xline, v);
	out->x[r] = v;
	return 0;
}

/* The epoch of row r: it never decreases; where it rises, the row's x is an epoch boundary. */
static int mgc_csv_epoch(const struct mgc_csv_ctx *c, double v, size_t line, struct mgc_csv *out, double *last)
{
	size_t r = out->nrows;
	if (r > 0 && v < *last)
		return mgc_csv_fail(c, -EINVAL, "line %zu, column %zu (epoch): the epoch goes back from %.17g to %.17g",
				    line, out->epoch_col, *last, v);
	if (r > 0 && v > *last)
		out->epochs[out->nepochs++] = out->x[r];
	*last = v;
	return 0;
}

/* A series value: not negative, and at most 2^60 bytes (1 EiB) once in bytes. */
static int mgc_csv_y(const struct mgc_csv_ctx *c, double v, size_t line, size_t j, struct mgc_csv *out)
{
	struct mgc_csv_series *s = mgc_csv_series_of(out, j);
	if (v < 0)
		return mgc_csv_fail(c, -EINVAL, "line %zu, column %zu (%s): negative value %.17g; memory is never negative",
				    line, j + 1, s->name, v);
	if (v * s->unit > MGC_CSV_MAX_BYTES)
		return mgc_csv_fail(c, -EINVAL, "line %zu, column %zu (%s): %.17g is more than 2^60 bytes (1 EiB); "
				    "not a memory size", line, j + 1, s->name, v);
	s->y[out->nrows] = v * s->unit;
	return 0;
}

/* What the rows read so far leave for the next one. */
struct mgc_csv_state {
	size_t xline;      /* line of the last row */
	double last_epoch; /* its epoch */
};

/* Checks and stores one data row. */
static int mgc_csv_row(const struct mgc_csv_ctx *c, const char *b, const char *e, size_t line,
		       struct mgc_csv_cell *cells, struct mgc_csv *out, struct mgc_csv_state *st)
{
	size_t ncols = out->ncols;
	size_t got = mgc_csv_split(b, e, cells, ncols);
	if (got != ncols)
		return mgc_csv_fail(c, -EINVAL, "line %zu: %zu cells, the header has %zu columns", line, got,
				    ncols);
	for (size_t j = 0; j < ncols; j++) { /* the x first: an epoch boundary is at its row's x */
		double v = 0;
		int rc = mgc_csv_cell_value(c, cells[j], line, j, out, &v);
		if (rc == 0)
			rc = j == 0 ? mgc_csv_x(c, v, line, out, st->xline)
			     : out->epoch_col == j + 1 ? mgc_csv_epoch(c, v, line, out, &st->last_epoch)
						       : mgc_csv_y(c, v, line, j, out);
		if (rc)
			return rc;
	}
	st->xline = line;
	out->nrows++;
	return 0;
}

static int mgc_csv_parse_lines(const struct mgc_csv_ctx *c, const char *text, size_t len,
			       struct mgc_csv *out)
{
	const char *end = text + len;
	const char *p = text;
	size_t line = 0, header_line = 0, cap = 0;
	struct mgc_csv_state st = {0, 0};
	struct mgc_csv_cell *cells = NULL;
	int rc = 0;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *e = nl ? nl : end;
		line++;
		if (memchr(p, 0, (size_t)(e - p))) {
			rc = mgc_csv_fail(c, -EINVAL, "line %zu: contains a NUL byte; not a text CSV", line);
			break;
		}
		if (mgc_csv_is_data(p, e)) {
			if (!header_line) {
				header_line = line;
				rc = mgc_csv_header(c, p, e, line, out);
				if (rc == 0) {
					cells = calloc(out->ncols, sizeof(*cells));
					if (!cells)
						rc = mgc_csv_fail(c, -ENOMEM, "out of memory");
				}
			} else {
				if (out->nrows == cap) {
					cap = cap ? 2 * cap : 64;
					rc = mgc_csv_reserve(out, cap);
					if (rc) {
						mgc_csv_fail(c, rc, "out of memory");
						break;
					}
				}
				rc = mgc_csv_row(c, p, e, line, cells, out, &st);
			}
			if (rc)
				break;
		}
		p = nl ? nl + 1 : end;
	}
	free(cells);
	if (rc)
		return rc;
	if (!header_line)
		return mgc_csv_fail(c, -ENODATA, "empty file: no header row and no data");
	if (out->nrows == 0)
		return mgc_csv_fail(c, -ENODATA, "line %zu: a header but no data rows", header_line);
	if (out->nrows == 1)
		return mgc_csv_fail(c, -ENODATA,
				    "only one data row (line %zu); need at least two points to see growth", st.xline);
	for (size_t j = 0; j < out->nseries; j++) {
		int any = 0;
		for (size_t r = 0; r < out->nrows && !any; r++)
			any = out->series[j].y[r] != 0;
		if (!any)
			return mgc_csv_fail(c, -EINVAL,
					    "column %zu (%s): every value is zero; wrong column, or the values were lost in export",
					    j + 2, out->series[j].name);
	}
	out->x_is_steps = mgc_csv_x_named_steps(out->x_name);
	if (!out->x_is_steps) {
		static const char *const secs[] = {"t", "time", "sec", "secs", "second", "seconds", "s",
						   "elapsed", "elapsed_s", "time_s", "timestamp"};
		int named_seconds = 0;
		for (size_t i = 0; i < sizeof(secs) / sizeof(secs[0]); i++)
			named_seconds |= strcasecmp(out->x_name, secs[i]) == 0;
		int integral = 1;
		for (size_t r = 0; r < out->nrows && integral; r++)
			integral = out->x[r] == floor(out->x[r]);
		out->x_is_steps = !named_seconds && integral;
	}
	return 0;
}

/* Common start of both entry points: empty message, empty output. */
static int mgc_csv_begin(struct mgc_csv_ctx *c, const char *origin, struct mgc_csv *out, char *err,
			 size_t errlen)
{
	c->origin = origin ? origin : "input";
	c->err = err;
	c->errlen = errlen;
	if (err && errlen)
		err[0] = 0;
	if (!out)
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	return 0;
}

int mgc_csv_parse(const char *text, size_t len, const char *origin, struct mgc_csv *out, char *err,
		  size_t errlen)
{
	struct mgc_csv_ctx c;
	if (mgc_csv_begin(&c, origin, out, err, errlen))
		return -EINVAL;
	if (!text && len)
		return mgc_csv_fail(&c, -EINVAL, "no text");
	if (len == 0)
		return mgc_csv_fail(&c, -ENODATA, "empty file: no header row and no data");
	int rc = mgc_csv_parse_lines(&c, text, len, out);
	if (rc)
		mgc_csv_free(out);
	return rc;
}

int mgc_csv_load(const char *path, struct mgc_csv *out, char *err, size_t errlen)
{
	struct mgc_csv_ctx c;
	if (mgc_csv_begin(&c, path, out, err, errlen))
		return -EINVAL;
	if (!path)
		return mgc_csv_fail(&c, -EINVAL, "no file name");
	FILE *f;
	char why[512];
	int opened = mgc_input_open(path, &f, why, sizeof why);
	if (opened < 0)
		return mgc_csv_fail(&c, opened, "cannot open: %s", why);
	size_t cap = 1 << 16, len = 0;
	char *buf = malloc(cap);
	int rc = buf ? 0 : mgc_csv_fail(&c, -ENOMEM, "out of memory");
	while (rc == 0) {
		if (len == cap) {
			if (cap >= MGC_CSV_MAX_FILE) {
				rc = mgc_csv_fail(&c, -EFBIG, "larger than %u MiB; not a series CSV",
						  MGC_CSV_MAX_FILE >> 20);
				break;
			}
			char *nb = realloc(buf, cap * 2);
			if (!nb) {
				rc = mgc_csv_fail(&c, -ENOMEM, "out of memory");
				break;
			}
			buf = nb;
			cap *= 2;
		}
		size_t k = fread(buf + len, 1, cap - len, f);
		len += k;
		if (k == 0) {
			if (ferror(f)) {
				int e = errno ? errno : EIO;
				rc = mgc_csv_fail(&c, -e, "read error: %s", strerror(e));
			}
			break;
		}
	}
	fclose(f);
	if (rc == 0)
		rc = mgc_csv_parse(buf, len, path, out, err, errlen);
	free(buf);
	return rc;
}
