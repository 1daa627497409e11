/* SPDX-License-Identifier: MIT */
/* mgc_trace.h: reading *.mgt traces. A streaming record reader (mgc_reader) and a loader that
 * builds the whole-run model (mgc_trace) in memory bounded by the number of sites, not by the
 * run's length: series are kept on a grid of at most MGC_GRID points, halved as the run grows.
 * Readers never abort: bad input gives an error string and -errno; a truncated or torn tail is
 * dropped and flagged, never misread. */
#ifndef MGC_TRACE_H
#define MGC_TRACE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "mgc_format.h"
#include "mgc_python.h"

#define MGC_GRID 512u /* most points kept per series */
#define MGC_DEVCELLS 64u /* most (CUDA kind, device) cells kept (DEVMEM): the probe writes <= 2 x 32 */

/* ---- streaming ---- */

struct mgc_reader;

/* Opens a trace and checks its header. 0, or -errno with a one-line reason in err:
 * -ENOENT/-EACCES (cannot open), -ENODATA (empty), -EINVAL (not a trace), -EPROTO (a newer
 * format version than this reader). */
int mgc_reader_open(const char *path, struct mgc_reader **out, char *err, size_t errlen);

/* The next whole record: 1 and (type, payload, len) valid until the next call; 0 at a clean end;
 * -EBADMSG when the rest of the file is a truncated or corrupt record (reading stops there). */
int mgc_reader_next(struct mgc_reader *r, uint32_t *type, const void **payload, uint32_t *len);

/* Byte offset of the end of the last whole record read. */
uint64_t mgc_reader_offset(const struct mgc_reader *r);
/* The file header's flags (mgc_file_flags; 0 before version 3). */
uint64_t mgc_reader_flags(const struct mgc_reader *r);

void mgc_reader_close(struct mgc_reader *r);

/* ---- the loaded model ---- */

struct mgc_module {
	uint32_t id;
	uint32_t gen_loaded;   /* generation it was first seen in */
	uint32_t gen_unloaded; /* first generation without it; UINT32_MAX while loaded */
	uint64_t bias, start, end;
	uint8_t build_id[40];
	uint32_t build_id_len;
	char *path;
};

struct mgc_point {
	double t;             /* seconds since start */
	uint64_t step;
	uint64_t rss_anon, rss_file, rss_shmem;
	uint64_t heap, heap_count, mmap, mmap_count;
	uint64_t free_kept, arena, device;
	uint32_t flags;
	char label[32];
	uint64_t dev[MGC_DEVCELLS]; /* bytes of each of the trace's devcells (DEVMEM), 0 before one */
};

/* CUDA memory of one kind on one device (a DEVMEM cell): kind is mgc_kind_make(mem, device). */
struct mgc_devcell {
	uint16_t kind;
	uint32_t count; /* as of the last DEVMEM: live allocations (pools: live pools) */
	uint64_t bytes; /* as of the last DEVMEM */
	uint64_t peak;  /* highest bytes seen */
};

struct mgc_site_base;

struct mgc_site {
	uint32_t id;
	uint16_t kind;    /* mgc_kind_make: memory kind, CUDA device + 1 in the high byte */
	uint16_t nframes;
	uint32_t gen;     /* module generation its IPs belong to */
	uint64_t *ips;
	int seen;         /* 1 once a snapshot mentioned it */
	uint64_t live_bytes, live_count, allocs, alloc_bytes, frees, peak_bytes;
	uint64_t live_var; /* sampled traces: the variance of live_bytes' estimate over R (0: exact) */
	uint64_t cohorts[MGC_COHORTS];
	uint64_t cohorts_step[MGC_COHORTS]; /* as of the last step-marker snapshot (the step axis's end) */
	uint64_t updated_at; /* internal: snapshot number of its last entry */
	float *series;    /* live bytes at each grid point (t.npoints of them), NULL if never seen */
	struct mgc_rec_devsite *cuda; /* CUDA sites: what activity records said (DEVSITE), or NULL */
	uint32_t filled;  /* internal: grid points filled so far */
	struct mgc_site_base *base; /* internal: a forked child's values of the site at the fork */
	uint64_t first_step_seen;
};

struct mgc_child {
	int pid;
	double t;
};

struct mgc_label {
	double t;
	uint64_t step;
	char text[32];
};

struct mgc_perf_sym {
	uint64_t start, size;
	const char *name;
};

struct mgc_trace {
	char *path;
	uint32_t version;
	struct mgc_rec_process proc;
	char *host, *cmdline, *exe; /* cmdline: arguments joined by spaces */
	struct mgc_module *modules;
	size_t nmodules;
	struct mgc_site **sites; /* indexed by id; NULL where absent */
	size_t nsites;            /* length of `sites` (max id + 1) */
	struct mgc_point *points; /* the grid, npoints of them */
	size_t npoints;
	uint64_t snapshots;       /* snapshots read (before thinning) */
	uint32_t stride;          /* snapshots per grid point now */
	struct mgc_point last;    /* the last snapshot, always kept */
	uint64_t last_step_snapshot; /* number (1-based) of the last step-marker snapshot; 0 if none */
	int have_last;
	uint64_t steps;           /* step markers seen */
	uint64_t max_step;
	struct mgc_label *labels;
	size_t nlabels;
	struct mgc_child *children;
	size_t nchildren;
	int ended;                /* an END record was read */
	uint32_t end_reason;
	int end_status;
	int truncated;            /* the tail was cut or corrupt and was dropped */
	uint64_t bytes_ok;        /* bytes of whole records */
	char **notices;
	size_t nnotices;
	struct mgc_devcell devcells[MGC_DEVCELLS]; /* in the order first seen */
	size_t ndevcells;
	int devcells_dropped;     /* a DEVMEM named more cells than MGC_DEVCELLS */
	char *perfmap;            /* the process's /tmp/perf-PID.map text, NUL-terminated, or NULL */
	size_t perfmap_len;
	struct mgc_perf_sym *perf_syms; /* its entries, sorted by address */
	size_t nperf_syms;
	struct mgc_pycodes *pycodes; /* Python code objects (PYCODE), NULL without: mgc_python.h */
	uint64_t sample_rate;     /* R of a sampled trace (MGC_REC_SAMPLING), 0: every allocation */
};

/* A name from the trace's perf map ("py::train_step:/src/train.py") for an address outside every
 * module (generated code), or NULL. */
const char *mgc_trace_perfmap_name(const struct mgc_trace *t, uint64_t ip);

/* Loads a whole trace. 0, or -errno with the reason in err (as mgc_reader_open, plus -ENOMEM
 * and -EBADMSG for a file whose first records are already unreadable). A cut tail is not an
 * error: t->truncated says so. */
int mgc_trace_load(const char *path, struct mgc_trace **out, char *err, size_t errlen);
void mgc_trace_free(struct mgc_trace *t);

/* The module holding `ip` in module generation `gen`, or NULL. */
const struct mgc_module *mgc_trace_module_for(const struct mgc_trace *t, uint64_t ip, uint32_t gen);

/* A sampled trace's +-band (two standard deviations) of site s's estimate `value` of live bytes:
 * its variance at the end (live_var) scaled to value, or, with nothing live at the end, that of
 * blocks of its mean size. 0 for an exact trace. */
double mgc_trace_band(const struct mgc_trace *t, const struct mgc_site *s, double value);

/* 1 when the run has step markers (steps are the natural x axis), else 0 (seconds). */
int mgc_trace_has_steps(const struct mgc_trace *t);

#endif /* MGC_TRACE_H */
