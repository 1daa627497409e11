/* SPDX-License-Identifier: MIT */
/* mgc_trace.h: reading *.mgt traces. A streaming record reader (mgc_reader) and a loader that
 * builds the whole-run model (mgc_trace) in memory bounded by what changed, not by the run's
 * length: series are kept on a grid of at most MGC_GRID points, halved as the run grows, and a
 * site's series only as its changes on that grid (cohorts only where some are set).
 * Readers never abort: bad input gives an error string and -errno; a truncated or torn tail is
 * dropped and flagged, never misread. */
#ifndef MGC_TRACE_H
#define MGC_TRACE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "mgc_format.h"
#include "mgc_grid.h"
#include "mgc_python.h"

#define MGC_GRID 512u /* most points kept per series */
#define MGC_TRACE_READER_VERSION MGC_TRACE_VERSION /* the newest format version this reader reads */
#define MGC_DEVCELLS 64u /* most (CUDA kind, device) cells kept (DEVMEM): the probe writes <= 2 x 32 */

/* ---- streaming ---- */

struct mgc_reader;

/* Opens a trace and checks its header. 0, or -errno with a one-line reason in err:
 * -ENOENT/-EACCES (cannot open), -ENODATA (empty), -EINVAL (not a trace), -EPROTO (a newer
 * format version than MGC_TRACE_READER_VERSION). */
int mgc_reader_open(const char *path, struct mgc_reader **out, char *err, size_t errlen);

/* The format version the file's header names (1 .. MGC_TRACE_READER_VERSION). */
uint32_t mgc_reader_version(const struct mgc_reader *r);

/* The next whole record: 1 and (type, payload, len) valid until the next call (payload is never
 * NULL, even when len is 0); 0 at a clean end; -EBADMSG when the rest of the file is a truncated
 * or corrupt record (reading stops there). */
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

/* One process snapshot, as either format version wrote it. */
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

/* The fixed part of a snapshot record (version 1's layout; the live segment's ring and grid hold
 * it too) as a point: the process figures, no DEVMEM cells. */
void mgc_point_from_snapshot(const struct mgc_rec_snapshot *sn, struct mgc_point *pt);

/* A site's counters: the six fields of struct mgc_rec_site and struct mgc_shm_site, in their
 * order, so both formats could embed it unchanged. */
struct mgc_site_counters {
	uint64_t live_bytes, live_count, allocs, alloc_bytes, frees, peak_bytes;
};

/* CUDA memory of one kind on one device (a DEVMEM cell): kind is mgc_kind_make(mem, device). */
struct mgc_devcell {
	uint16_t kind;
	uint32_t count; /* as of the last DEVMEM: live allocations (pools: live pools) */
	uint64_t bytes; /* as of the last DEVMEM */
	uint64_t peak;  /* highest bytes seen */
};

/* MGC_COHORTS zeros: the cohorts of a site that has none set. */
extern const uint64_t mgc_no_cohorts[MGC_COHORTS];

struct mgc_site_base;

struct mgc_site {
	uint32_t id;
	uint16_t kind;    /* mgc_kind_make: memory kind, CUDA device + 1 in the high byte */
	uint16_t nframes;
	uint32_t gen;     /* module generation its IPs belong to */
	uint64_t *ips;
	int seen;         /* 1 once a snapshot mentioned it */
	struct mgc_site_counters counters; /* as of the last snapshot */
	uint64_t live_var; /* sampled traces: the variance of live_bytes' estimate over R (0: exact) */
	/* Its live bytes at each grid point (t.npoints of them), as changes (mgc_grid.h): nseries of
	 * them, none for a site that never held memory at a point; read with mgc_site_live_at. */
	struct mgc_grid_change *series;
	uint32_t nseries;
	uint32_t series_cap; /* internal */
	/* MGC_COHORTS each, never NULL (mgc_no_cohorts when all are 0): the latest, and those in force
	 * at the last step-marker snapshot (the step axis's end) */
	const uint64_t *cohorts;
	const uint64_t *cohorts_step;
	struct mgc_rec_devsite *cuda; /* CUDA sites: what activity records said (DEVSITE), or NULL */
	uint64_t updated_at; /* internal: snapshot number of its last entry */
	struct mgc_site_base *base; /* internal: a forked child's values of the site at the fork */
};

/* Site s's live bytes at grid point i (i < the trace's npoints), as a float as the grid keeps them. */
static inline double mgc_site_live_at(const struct mgc_site *s, size_t i)
{
	return (double)mgc_grid_change_at(s->series, s->nseries, i);
}

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
	uint32_t version;         /* the file's format version */
	struct mgc_rec_process proc;
	char *host, *cmdline, *exe; /* cmdline: arguments joined by spaces */
	struct mgc_module *modules;
	size_t nmodules;
	struct mgc_site **sites; /* indexed by id; NULL where absent */
	size_t nsites;            /* length of `sites` (max id + 1) */
	struct mgc_point *points; /* the grid, npoints of them */
	size_t npoints;
	uint64_t snapshots;       /* snapshots read (before thinning) */
	struct mgc_point last;    /* the last snapshot, always kept */
	uint64_t last_step_snapshot; /* number (1-based) of the last step-marker snapshot; 0 if none */
	int have_last;
	double first_marker_t;    /* time of the first step-marker snapshot; -1 if none */
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

/* A sampled run's +-band (two standard deviations) of site s's estimate `value` of live bytes,
 * sample_rate its R (a trace's sample_rate, a segment's sampling.rate): its variance at the end
 * (live_var) scaled to value, or, with nothing live at the end, that of blocks of its mean size.
 * 0 for an exact run. */
double mgc_site_band(uint64_t sample_rate, const struct mgc_site *s, double value);

/* 1 when the run has step markers (steps are the natural x axis), else 0 (seconds). */
int mgc_trace_has_steps(const struct mgc_trace *t);

/* The overflow site (MGC_SITE_OVERFLOW: no frames) when the probe's site table filled up and
 * allocations went to it unattributed, else NULL. */
const struct mgc_site *mgc_trace_unattributed(const struct mgc_trace *t);

#endif /* MGC_TRACE_H */
