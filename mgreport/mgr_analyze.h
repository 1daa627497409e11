/* SPDX-License-Identifier: MIT */
/* mgr_analyze.h: what mgreport prints about one process: its trace, libmgcore's analysis of it
 * (mgc_analysis.h: the same rules as mgmon's live view) and the symbolized stacks of the sites it
 * shows; or the series of a CSV. No output here. */
#ifndef MGR_ANALYZE_H
#define MGR_ANALYZE_H

#include <stddef.h>
#include <stdint.h>

#include "mgc_analysis.h"
#include "mgc_symbols.h"
#include "mgc_trace.h"

/* Shown sites whose symbolized stacks are kept for the whole report: the first ones, which the
 * answer, the pictures and the exports read again. Stacks of shown sites past them (`--top 0` on a
 * program with 200k sites) are symbolized when printed and dropped, so the report's memory does not
 * grow with --top (the symbolizer still resolves each distinct address once). */
#define MGR_KEPT_STACKS 1024u

/* A site the report shows: whether it is a pymalloc arena, and its symbolized stack when kept. */
struct mgr_shown {
	struct mgc_stack stack;      /* empty past the first MGR_KEPT_STACKS: mgr_shown_stack */
	int pyarena;                 /* a pymalloc arena site (mgc_pyarena_site) */
};

struct mgr_scratch;

struct mgr_process {
	const struct mgc_trace *t;   /* NULL for a CSV */
	const char *origin;          /* file name */
	struct mgc_analysis a;
	size_t nshown;               /* sites shown: the first nshown of a.sites */
	struct mgr_shown *shown;     /* what only the shown sites get, nshown of them */
	size_t nkept;                /* shown sites with a kept stack: min(nshown, MGR_KEPT_STACKS) */
	struct mgc_symbolizer *sym;  /* the symbolizer the stacks came from (not owned) */
	struct mgr_scratch *scratch; /* the last stack symbolized past the kept ones */
};

struct mgr_options {
	size_t top;          /* sites to report; 0 = all */
	double limit;        /* --limit in bytes; 0 = the analysis's rule */
	const double *epochs; /* --series: the CSV's epoch boundaries; NULL: no epoch column */
	size_t nepochs;
};

/* Builds the report model for one trace. 0 or -ENOMEM. The symbolizer may be shared. */
int mgr_analyze_trace(const struct mgc_trace *t, const struct mgr_options *o,
		      struct mgc_symbolizer *sym, struct mgr_process *out);

/* Builds the report model for CSV series (x, columns). Takes no ownership of the arrays. */
int mgr_analyze_series(const char *origin, const double *x, size_t n, int x_is_steps,
		       const char *const *names, const double *const *ys, size_t ncols,
		       const struct mgr_options *o, struct mgr_process *out);

void mgr_process_free(struct mgr_process *p);

/* The trace's record of shown site i (i < nshown). */
const struct mgc_site *mgr_site(const struct mgr_process *p, size_t i);

/* Shown site i's symbolized stack (i < nshown): the kept one, or, past them, symbolized now into
 * a scratch stack that the next such call replaces (copy what must outlive it; the frames' strings
 * are the symbolizer's and stay). NULL on ENOMEM. */
const struct mgc_stack *mgr_shown_stack(const struct mgr_process *p, size_t i);

/* What names shown site i in one line: its naming frame (mgc_stack.named), a Python frame as
 * "function (file:line)"; "??" when none. Writes into buf when it formats, and returns buf or a
 * frame's string. */
const char *mgr_site_name(const struct mgr_process *p, size_t i, char *buf, size_t cap);

/* Symbolizes site s's stack against trace t's module map (its perf map for generated code, its
 * code objects for Python frames) into *out (free with mgc_stack_free; empty without addresses).
 * 0 or -ENOMEM. What the shown sites get, for any other site an output needs. */
int mgr_symbolize(const struct mgc_trace *t, const struct mgc_site *s, struct mgc_symbolizer *sym,
		  struct mgc_stack *out);

/* A DEVMEM cell's or CUDA site's name: "device:0", "pinned", "pool:1" (":N" when the device is
 * known). Writes into buf and returns it. */
const char *mgr_devcell_name(unsigned kind, char *buf, size_t cap);

#endif /* MGR_ANALYZE_H */
