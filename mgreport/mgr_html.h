/* SPDX-License-Identifier: MIT */
/* mgr_html.h: `mgreport --html OUT.html`: one self-contained page (docs/report-html.md). The
 * answer, the verdict of every series and the process tree are HTML text, readable without
 * JavaScript; the charts, the site table and the flame graph are drawn by the page's own script
 * (mgreport/html/report.js, embedded at build time) from a JSON block. No URL, nothing loaded
 * from anywhere, no date: the same traces give the same bytes. Formats only; decides nothing. */
#ifndef MGR_HTML_H
#define MGR_HTML_H

#include <stdio.h>

#include "mgr_analyze.h"

/* Writes the page for the processes to f. 0 or -ENOMEM. */
int mgr_html_write(FILE *f, const struct mgr_process *procs, size_t n, struct mgc_symbolizer *sym);

#endif /* MGR_HTML_H */
