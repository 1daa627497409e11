/* SPDX-License-Identifier: MIT */
/* mgr_html_data.h: the data the HTML report's script draws, as one JSON document (described in
 * docs/report-html.md): per process the series (downsampled to at most MGR_HTML_POINTS points,
 * keeping each bucket's minimum and maximum), the verdicts, the phases, and the sites the page
 * shows: the analysis's ranked sites (the table) and the heaviest sites over the run (the flame
 * graph), each with its stack and its live bytes at up to MGR_HTML_SLIDER points, frames interned
 * (the distinct frames are what it holds).
 * Builds data only: no HTML here, no verdict decided. */
#ifndef MGR_HTML_DATA_H
#define MGR_HTML_DATA_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "mgr_analyze.h"

#define MGR_HTML_POINTS 2000u   /* most points per series in the chart */
#define MGR_HTML_SLIDER 121u    /* most positions of the flame graph's step slider */
#define MGR_HTML_FLAME_SITES 400u /* sites embedded for the flame graph, by peak live bytes */

/* Writes the page's data for the processes (traces or a CSV analysis) to f: compact JSON, valid
 * UTF-8, every '<' written as \u003c (the content of a <script> block). Written as it is built:
 * a site at a time, each site's stack symbolized, written and dropped (`--top 0` shows every site
 * of the run). 0 or -ENOMEM (f then holds part of it). */
int mgr_html_data_write(FILE *f, const struct mgr_process *procs, size_t n, struct mgc_symbolizer *sym);

/* How the page names a series: "RSS", "live heap", "live anonymous mmap", "free, kept by malloc",
 * "GPU memory (CUDA)"; a CSV column keeps its own name. */
const char *mgr_series_title(const char *name);

/* Downsamples (x[i], y[i]), i < n, to at most `max` points (max >= 2): when n > max, buckets of
 * consecutive points, each giving its first x, its minimum (lo) and maximum (hi); otherwise
 * lo = hi = y. Writes up to `max` values to ox, lo, hi; returns how many. */
size_t mgr_downsample(const double *x, const double *y, size_t n, size_t max, double *ox, double *lo,
		      double *hi);

#endif /* MGR_HTML_DATA_H */
