/* SPDX-License-Identifier: MIT */
/* mgr_html_assets.h: the HTML report's stylesheet and script, kept as readable source files in
 * mgreport/html/ and turned into these strings at build time by mgreport/html/embed.py. */
#ifndef MGR_HTML_ASSETS_H
#define MGR_HTML_ASSETS_H

extern const char mgr_html_css[]; /* mgreport/html/report.css */
extern const char mgr_html_js[];  /* mgreport/html/report.js */

#endif /* MGR_HTML_ASSETS_H */
