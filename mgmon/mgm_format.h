/* SPDX-License-Identifier: MIT */
/* mgm_format.h: the words and pictures of an mgmon frame, as plain strings and character grids,
 * shared by the curses screen (mgm_draw.c) and the plain-text frame of --once (mgm_text.c) so
 * both say the same thing. Pure formatting: no I/O, no curses. */
#ifndef MGM_FORMAT_H
#define MGM_FORMAT_H

#include <stddef.h>

#include "mgm_collect.h"

/* "1:02:03" or "4m05s" or "12s". Returns buf. */
const char *mgm_duration(double seconds, char *buf, size_t cap);

/* The header line: pid, command, uptime, step and rate, RSS and limit. */
void mgm_fmt_header(const struct mgm_view *v, char *buf, size_t cap);

/* One sentence: the process verdict with confidence, slope and time to OOM. */
void mgm_fmt_verdict(const struct mgm_view *v, char *buf, size_t cap);

/* The breakdown line: heap, mmap, free-but-kept, other, file, device. */
void mgm_fmt_breakdown(const struct mgm_view *v, char *buf, size_t cap);

/* One series' verdict row ("rss   1.20 GiB  leak 0.93  +2.10 MiB/step  OOM 5400 steps ~9m00s"). */
void mgm_fmt_series(const struct mgm_view *v, const struct mgc_series *s, char *buf, size_t cap);

/* Time to OOM of a fit, in steps (or seconds) and wall time when the rate is known ("" when never). */
void mgm_fmt_oom(const struct mgm_view *v, const struct mgc_fit *f, char *buf, size_t cap);

/* The sites table header and one row, fitting `width` columns. */
void mgm_fmt_site_header(const struct mgm_view *v, int width, char *buf, size_t cap);
void mgm_fmt_site_row(const struct mgm_view *v, const struct mgm_site *s, int width, char *buf, size_t cap);

/* 1 when the site is a pymalloc arena (mgc_pyarena_is): the row and JSON say so, as the report
 * does. */
int mgm_site_pyarena(const struct mgm_site *s);

/* The frame a site is named by ("??" when unknown), as the process's symbols say it (raw: escape
 * it to show it), and its "file:line" ("" when unknown), escaped for a terminal. */
const char *mgm_site_function(const struct mgm_site *s);
void mgm_site_where(const struct mgm_site *s, char *buf, size_t cap);

/* Verdict word of a fit, "-" when not classified. */
const char *mgm_verdict_word(int ok, const struct mgc_fit *f);

/* A chart of a series in a w x h grid of cells (row 0 at the top), cells[r * w + c]:
 * ' ' empty, '#' data, '-' plateau level, '|' warmup end, '.' fitted leak slope. The labels give
 * the y range and x range. Returns 0, or -1 when the series has no data. */
struct mgm_chart {
	char ytop[16], ybot[16];
	char xleft[24], xright[24];
	char legend[96];
};
int mgm_chart_render(const struct mgm_view *v, const double *x, const double *y, size_t n, int ok,
		     const struct mgc_fit *f, int w, int h, char *cells, struct mgm_chart *labels);

#endif /* MGM_FORMAT_H */
