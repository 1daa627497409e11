/* SPDX-License-Identifier: MIT */
/* mgc_shm_format.h: the layout of the live shared-memory segment /dev/shm/mgprobe.<pid>, shared by
 * the writer (libmgprobe/mgp_shm.c) and every reader (libmgcore/mgc_shm.h maps and checks it).
 * Header-only and dependency-free (libmgformat) so the probe can include it; fixed-width fields,
 * sizes frozen by _Static_assert. Documented in docs/shm-format.md: keep both in step and bump
 * MGC_SHM_VERSION on any incompatible change. */
#ifndef MGC_SHM_FORMAT_H
#define MGC_SHM_FORMAT_H

#include <stddef.h>
#include <stdint.h>

#include "mgc_format.h"

#define MGC_SHM_MAGIC "MGPRSHM"   /* 7 chars + NUL = 8 bytes; written last by the creator */
#define MGC_SHM_VERSION 3u        /* 2: the Python code objects of the published stacks (py);
				     3: sampled runs' rate and per-site variance (sampling) */
#define MGC_SHM_RING 256u         /* most recent process snapshots, raw */
#define MGC_SHM_GRID 64u          /* the whole run, thinned: process snapshots and site histories */
#define MGC_SHM_TOP 32u           /* sites per ranking (by live bytes, by recent growth) */
#define MGC_SHM_SITES (2u * MGC_SHM_TOP)
#define MGC_SHM_FRAMES 64u        /* stack frames kept per published site */
#define MGC_SHM_CHILDREN 64u
#define MGC_SHM_MODULES 1024u
#define MGC_SHM_NAMES (128u << 10) /* module path bytes */
#define MGC_SHM_PYCODES 2048u     /* Python code objects named by the published stacks */
#define MGC_SHM_PYBYTES (512u << 10) /* their names, file names and line tables */

enum mgc_shm_state {
	MGC_SHM_RUNNING = 1, /* the probe publishes */
	MGC_SHM_EXITED = 2,  /* final state: the process exited (exit_status holds its status) */
	MGC_SHM_EXECED = 3,  /* the process called exec: this image stopped publishing */
};

/* The segment's first 616 bytes. Everything after `seq` is written only between
 * mgc_shm_write_begin and mgc_shm_write_end. */
struct mgc_shm_header {
	char magic[8];            /* "MGPRSHM\0" */
	uint32_t version;         /* MGC_SHM_VERSION of the writer */
	uint32_t header_size;     /* sizeof(struct mgc_shm_header) */
	uint64_t total_size;      /* sizeof(struct mgc_shm) of the writer */
	uint64_t seq;             /* seqlock counter: odd while the writer updates */
	int32_t pid;
	int32_t ppid;
	uint64_t start_realtime_ns;
	uint64_t start_mono_ns;   /* CLOCK_MONOTONIC at start; snapshot t_ns are relative to it */
	uint64_t start_ticks;     /* /proc/<pid>/stat starttime: tells our pid from a reused one */
	uint64_t mem_total;       /* bytes, /proc/meminfo MemTotal */
	uint64_t cgroup_limit;    /* bytes, cgroup v2 memory.max; 0 = none */
	uint64_t updated_ns;      /* relative time of the last publish */
	uint64_t step;            /* current step */
	uint64_t step_t_ns;       /* relative time the current step began */
	uint64_t steps_seen;      /* step markers so far; 0 = seconds are the x axis */
	uint64_t publishes;       /* full publishes so far */
	uint64_t ring_head;       /* snapshots written to the ring; latest at (ring_head-1) % RING */
	uint32_t interval_ms;
	uint32_t depth;
	uint32_t state;           /* enum mgc_shm_state */
	int32_t exit_status;
	int32_t rank;             /* RANK / SLURM_PROCID, -1 if unset */
	int32_t local_rank;
	uint32_t grid_n;          /* valid grid points */
	uint32_t grid_stride;     /* samples per grid point now */
	uint32_t nsites_total;    /* sites the probe knows */
	uint32_t nsites;          /* published site entries */
	uint32_t nchildren;       /* valid entries in children */
	uint32_t nmodules;        /* valid entries in modules */
	uint32_t names_used;      /* valid bytes in names */
	uint32_t module_gen;      /* bumped whenever the module map changes */
	char comm[16];            /* /proc/self/comm */
	char cmdline[128];        /* arguments joined by spaces, cut */
	char label[32];           /* phase label in force */
	int32_t children[MGC_SHM_CHILDREN]; /* forked children, oldest first (round robin when full) */
};
_Static_assert(sizeof(struct mgc_shm_header) == 616, "shm header is frozen");

enum mgc_shm_site_rank { MGC_SHM_TOP_LIVE = 1u, MGC_SHM_TOP_GROWTH = 2u };

/* One published site: counters as in struct mgc_rec_site, cohorts, its live bytes at each grid
 * point, and its stack (innermost first, return addresses). */
struct mgc_shm_site {
	uint32_t site;
	uint16_t kind;            /* mgc_kind_make: enum mgc_kind, CUDA device + 1 in the high byte */
	uint16_t nframes;         /* frames kept (<= MGC_SHM_FRAMES) */
	uint32_t ranks;           /* enum mgc_shm_site_rank bits */
	uint32_t full_nframes;    /* the stack's real depth */
	uint64_t live_bytes;
	uint64_t live_count;
	uint64_t allocs;
	uint64_t alloc_bytes;
	uint64_t frees;
	uint64_t peak_bytes;
	uint64_t cohorts[MGC_COHORTS];
	float history[MGC_SHM_GRID]; /* live bytes at grid[i], i < grid_n */
	uint64_t ips[MGC_SHM_FRAMES];
};
_Static_assert(sizeof(struct mgc_shm_site) == 1088, "shm site is frozen");

struct mgc_shm_module {
	uint64_t bias;            /* runtime address = bias + ELF vaddr */
	uint64_t start, end;      /* runtime range of its PT_LOAD segments */
	uint32_t path_off;        /* into names */
	uint32_t path_len;
	uint32_t build_id_len;
	uint32_t reserved;
	uint8_t build_id[40];
};
_Static_assert(sizeof(struct mgc_shm_module) == 80, "shm module is frozen");

/* A Python code object named by a published stack's frames (mgc_format.h: MGC_PYFRAME_TAG): as
 * the trace's PYCODE record, its qualified name, file name and line table one after the other at
 * bytes[off]. A table that did not fit is left out (linetable_len 0). */
struct mgc_shm_pycode {
	uint32_t id;
	int32_t firstlineno;
	uint32_t off;
	uint32_t qualname_len;
	uint32_t file_len;
	uint32_t linetable_len;
};
_Static_assert(sizeof(struct mgc_shm_pycode) == 24, "shm pycode is frozen");

struct mgc_shm_py {
	uint32_t ncodes;          /* valid entries in codes */
	uint32_t bytes_used;      /* valid bytes in bytes */
	struct mgc_shm_pycode codes[MGC_SHM_PYCODES];
	char bytes[MGC_SHM_PYBYTES];
};

/* A sampled run (mgc_format.h, struct mgc_rec_sampling): its rate, and each published site's
 * variance of the live-bytes estimate over R (sites[i] <-> live_var[i]); rate 0: exact. */
struct mgc_shm_sampling {
	uint64_t rate;
	uint64_t live_var[MGC_SHM_SITES];
};

struct mgc_shm {
	struct mgc_shm_header h;
	struct mgc_rec_snapshot ring[MGC_SHM_RING]; /* nsites = 0 in these copies */
	struct mgc_rec_snapshot grid[MGC_SHM_GRID];
	struct mgc_shm_site sites[MGC_SHM_SITES];
	struct mgc_shm_module modules[MGC_SHM_MODULES];
	char names[MGC_SHM_NAMES];
	struct mgc_shm_py py;
	struct mgc_shm_sampling sampling;
};
_Static_assert(offsetof(struct mgc_shm, ring) == 616, "shm layout is frozen");
_Static_assert(sizeof(struct mgc_shm) == 616 + 152 * (256 + 64) + 1088 * 64 + 80 * 1024 + (128 << 10) +
			       8 + 24 * 2048 + (512 << 10) + 8 + 8 * 64,
	       "shm layout is frozen");

/* ---- the seqlock protocol (writer side: libmgprobe, and tests that play the writer) ----
 * One writer. Readers: s1 = seq (acquire); if odd, retry; copy; acquire fence; s2 = seq; the copy
 * is consistent iff s1 == s2. */
static inline void mgc_shm_write_begin(struct mgc_shm_header *h)
{
	uint64_t s = __atomic_load_n(&h->seq, __ATOMIC_RELAXED);
	__atomic_store_n(&h->seq, s + 1, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
}

static inline void mgc_shm_write_end(struct mgc_shm_header *h)
{
	uint64_t s = __atomic_load_n(&h->seq, __ATOMIC_RELAXED);
	__atomic_store_n(&h->seq, s + 1, __ATOMIC_RELEASE);
}

/* "/mgprobe.<pid>" for shm_open, into buf (cap >= 32). */
static inline void mgc_shm_name(int pid, char *buf, size_t cap)
{
	const char *pre = "/mgprobe.";
	char dig[16];
	size_t n = 0, k = 0;
	unsigned v = pid < 0 ? 0u : (unsigned)pid;
	do {
		dig[k++] = (char)('0' + v % 10);
		v /= 10;
	} while (v && k < sizeof dig);
	for (const char *p = pre; *p && n + 1 < cap; p++)
		buf[n++] = *p;
	while (k && n + 1 < cap)
		buf[n++] = dig[--k];
	if (cap)
		buf[n < cap ? n : cap - 1] = 0;
}

#endif /* MGC_SHM_FORMAT_H */
