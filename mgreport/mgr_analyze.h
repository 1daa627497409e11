/* SPDX-License-Identifier: MIT */
/* mgr_analyze.h: turns a loaded trace (or a CSV of series) into what mgreport prints: series with
 * verdicts, sites ranked by growth with verdicts and symbolized frames. No output here. */
#ifndef MGR_ANALYZE_H
#define MGR_ANALYZE_H

#include <stddef.h>
#include <stdint.h>

#include "mgc_classify.h"
#include "mgc_symbols.h"
#include "mgc_trace.h"

struct mgr_series {
	const char *name;      /* "rss", "heap", "mmap", "free_kept", "device", or a CSV column */
	double *x, *y;         /* n points */
	size_t n;
	int ok;                /* classified */
	struct mgc_fit fit;
};

struct mgr_frame {
	const char *function, *file, *module;
	int line, inlined;
};

struct mgr_site {
	const struct mgc_site *s;
	struct mgc_fit fit;
	int classified;
	double growth;         /* bytes gained over the x window (last - first) */
	double live_end;       /* live bytes at the last point of the x axis */
	struct mgr_frame *frames;
	size_t nframes;
};

struct mgr_process {
	const struct mgc_trace *t;   /* NULL for a CSV */
	const char *origin;          /* file name */
	int x_is_steps;
	double limit;                /* bytes; 0 = unknown */
	struct mgr_series *series;
	size_t nseries;
	struct mgr_series *main;     /* the process verdict's series (rss), or the first CSV column */
	struct mgr_series *device;   /* live CUDA memory; NULL unless the trace has device bytes */
	const struct mgc_point *end; /* the last point of the x axis (the last step, not the teardown) */
	struct mgc_fit verdict;      /* process verdict */
	int have_verdict;
	struct mgr_site *sites;      /* ranked, nsites of them */
	size_t nsites;
	size_t sites_total;          /* sites in the trace */
	size_t leaking_sites;        /* shown sites classified leak, device sites included */
	size_t leaking_device_sites; /* of those, device (CUDA) sites */
};

struct mgr_options {
	size_t top;          /* sites to report; 0 = all */
	double limit;        /* --limit in bytes; 0 = from the trace */
	int symbolize;       /* 1: resolve frames */
	const double *epochs; /* --series: the CSV's epoch boundaries (mgc_classify_opts.epochs); NULL: none */
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

/* A DEVMEM cell's or CUDA site's name: "device:0", "pinned", "pool:1" (":N" when the device is
 * known). Writes into buf and returns it. */
const char *mgr_devcell_name(unsigned kind, char *buf, size_t cap);

#endif /* MGR_ANALYZE_H */
