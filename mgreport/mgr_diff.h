/* SPDX-License-Identifier: MIT */
/* mgr_diff.h: `mgreport --diff BEFORE.mgt AFTER.mgt`: did the fix work? Per series the two
 * verdicts and slopes; per site the growth before and after, the sites matched by their
 * symbolized stacks (function, source file name, line and module file name of every frame; never
 * addresses or build ids, which every rebuild and ASLR change); and which sites stopped leaking,
 * started, or leak in both. Text and JSON (docs/report-json.md). Reads two analyses; decides
 * no verdict of its own. */
#ifndef MGR_DIFF_H
#define MGR_DIFF_H

#include <stdio.h>

#include "mgr_analyze.h"

#define MGR_DIFF_SITES 1000u /* most growing sites of each run compared, beside the ranked ones */

struct mgr_diff;

/* Compares two analyses of traces (before, after), both ranked with at least the sites to show;
 * sym symbolizes the further growing sites and must outlive the diff. 0, -EINVAL (not traces) or
 * -ENOMEM. */
int mgr_diff_build(const struct mgr_process *before, const struct mgr_process *after,
		   struct mgc_symbolizer *sym, struct mgr_diff **out);
void mgr_diff_free(struct mgr_diff *d);

/* The text report: the answer first, then series, then sites (at most `top` per list, 0 = all). */
void mgr_diff_print_text(FILE *f, const struct mgr_diff *d, size_t top);

/* The JSON document (docs/report-json.md, "mgreport --diff"). 0 or -ENOMEM. */
int mgr_diff_print_json(FILE *f, const struct mgr_diff *d, size_t top);

/* 1 when AFTER has a leak that BEFORE did not: a site that started leaking, or a series whose
 * verdict became leak (with `growing`, also a growing verdict that was neither leak nor growing
 * before). What `--fail-on` gates on. */
int mgr_diff_new_leak(const struct mgr_diff *d, int growing);

#endif /* MGR_DIFF_H */
