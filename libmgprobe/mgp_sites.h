/* SPDX-License-Identifier: MIT */
/* mgp_sites.h: allocation sites: call stacks (as nodes of the stack store, mgp_stacks) interned
 * to dense ids, each with counters and cohorts (live bytes by birth-step bucket). Lookups are
 * lock-free (a table of 32-bit slots: the id and 8 bits of the stack's hash); only a new stack
 * takes a mutex. Memory grows with the sites in use: a site that holds nothing and never reached
 * the trace can be evicted by the writer (mgp_sites_evict) and its id used again, and a written
 * site that went quiet gives its stack back (retirement, below). Never calls malloc: tables come
 * from the kernel as they grow. */
#ifndef MGP_SITES_H
#define MGP_SITES_H

#include <stdint.h>

#include "mgc_format.h"
#include "mgp_chunks.h"

/* A site's identity: written once before the site is published, then read by anyone, and never
 * written again while the site is in use: a forked worker shares these pages with its parent for
 * as long as both run (the stack's innermost node, which retirement and compaction rewrite, is
 * kept apart: mgp_site_leaf). */
struct mgp_site {
	uint64_t fp;      /* a second 64-bit hash of the stack: confirms a table hit; 0 when free */
	uint16_t nframes;
	uint16_t kind;    /* mgc_kind_make(mem, device) */
} __attribute__((packed, aligned(4)));
_Static_assert(sizeof(struct mgp_site) == 12, "a site's identity is 12 bytes");

/* A site's counters: relaxed atomics, changed only through mgp_site_apply (the writer draining
 * the threads' deltas, a thread flushing one, CUDA callbacks). Differences are modular: a bucket
 * or a total may read transiently negative (huge) while deltas are in flight. All zero is a site
 * in use that has done nothing (a forked child starts its counters afresh: mgp_sites_forked). */
struct mgp_site_counts {
	uint64_t live_bytes;
	uint64_t allocs;
	uint64_t alloc_bytes;
	uint64_t frees;
	uint64_t peak_bytes;
	uint32_t coh_ext;     /* 0, or 1 + the index of a cohort array: the buckets but the first */
	uint8_t coh0;         /* 1 + the first cohort bucket the site used (0: none yet); its live
				 bytes are live_bytes less the other buckets' */
	uint8_t dirty;        /* enum mgp_site_dirty bits since the writer last took them */
	uint8_t state;        /* enum mgp_site_state: sites lock */
	uint8_t quiet;        /* set by a retirement scan that found the site holding nothing,
				 cleared by any change (mgp_site_apply) */
};
_Static_assert(sizeof(struct mgp_site_counts) == 48, "a site's counters are 48 bytes");

enum mgp_site_dirty {
	MGP_SITE_LIVE = 1u,  /* live bytes or count moved */
	MGP_SITE_CHURN = 2u, /* allocations and frees that left live bytes and count as they were */
};

enum mgp_site_state {
	MGP_SITE_LINKED = 0,   /* in use and found by lookups */
	MGP_SITE_FREE = 1,     /* not in use */
	MGP_SITE_UNLINKED = 2, /* being evicted: lookups no longer find it */
	MGP_SITE_DETACHED = 3, /* revived while being evicted, its stack taken by a newer site */
};

/* One change of a site's counters, as a thread gathers them (mgp_thread) and as CUDA callbacks
 * apply them directly: what changed within one cohort bucket. */
struct mgp_delta {
	uint32_t key;        /* mgp_delta_key(site, bucket); 0 = unused */
	uint32_t pad;
	uint64_t allocs;
	uint64_t frees;
	uint64_t alloc_bytes;
	int64_t live;        /* bytes */
	int64_t peak;        /* the highest `live` reached since the delta began (>= 0) */
	int64_t var;
	int64_t pad2;
};
_Static_assert(sizeof(struct mgp_delta) == 64, "a delta is one cache line");

static inline uint32_t mgp_delta_key(uint32_t site, unsigned bucket)
{
	return site << 5 | bucket;
}

/* CUDA allocations keep their own room beyond MGPROBE_MAX_SITES: a program whose start-up fills
 * the table (PyTorch's import and CUDA's initialisation make over a million stacks) still gets
 * every CUDA allocation site with its whole stack, the stack a GPU leak is found by. */
#define MGP_CUDA_SPARE_SITES 16384u

/* The ids a table for max_sites sites may hand out (the CUDA room included). */
static inline uint32_t mgp_sites_capacity(uint32_t max_sites)
{
	return max_sites + MGP_CUDA_SPARE_SITES;
}

/* Reserves the lookup table for up to max_sites sites and the CUDA room (chunks are mapped as
 * sites appear). 0 or -ENOMEM. Call once, single-threaded. */
int mgp_sites_init(uint32_t max_sites);

/* Returns the id (>= 1) of the site for this stack and kind, creating it if new. When the table
 * is full (or out of memory), returns the overflow site (id 1, no frames) so totals stay exact,
 * and says once that the table is full; CUDA kinds go on in their own room, never truncated, and
 * take the overflow site only when that is full too.
 * The id stays valid while the caller holds its thread's record (mgp_thread_enter), or for CUDA
 * kinds (never evicted). */
uint32_t mgp_sites_intern(const uintptr_t *ips, unsigned n, unsigned kind);

/* The same, for a stack the capture made (mgp_capture_buf): stack_id, the identity of the native
 * frames it came from (mgp_unwind_stack_id; 0: none), and fixed, how many of its first frames are
 * those native frames. The same identity and `fixed` as the thread's last stack interned make those
 * frames the same, and they are not compared again. */
uint32_t mgp_sites_intern_known(const uintptr_t *ips, unsigned n, unsigned kind, uint64_t stack_id,
				unsigned fixed);

extern struct mgp_chunks mgp_site_ids, mgp_site_leaves, mgp_site_cnts, mgp_site_vars;

/* The site with this id (1 <= id < mgp_sites_count(), in use). */
static inline const struct mgp_site *mgp_site_get(uint32_t id)
{
	return (const struct mgp_site *)mgp_chunk_at(&mgp_site_ids, id);
}

/* The innermost node of the site's stack (mgp_stacks): 0 for a site without frames, or retired
 * (its stack given back; the trace has it). Changed under the sites lock, read by anyone. */
static inline uint32_t mgp_site_leaf(uint32_t id)
{
	return __atomic_load_n((const uint32_t *)mgp_chunk_at(&mgp_site_leaves, id), __ATOMIC_ACQUIRE);
}

static inline struct mgp_site_counts *mgp_site_counts(uint32_t id)
{
	return (struct mgp_site_counts *)mgp_chunk_at(&mgp_site_cnts, id);
}

/* Sampled runs (MGPROBE_SAMPLE): the variance of the site's live-bytes estimate, divided by R,
 * kept beside the counters and mapped only when a delta first carries one (exact runs: 0). */
static inline uint64_t mgp_site_var(uint32_t id)
{
	const uint64_t *v = (const uint64_t *)mgp_chunk_find(&mgp_site_vars, id);
	return v ? __atomic_load_n(v, __ATOMIC_RELAXED) : 0;
}

/* One past the highest id ever used, and the number in use now. */
uint32_t mgp_sites_count(void);
uint32_t mgp_sites_used(void);

/* The bytes of the lookup table in use now (not counting a replaced one waiting for its grace
 * period). Writer lock, or single-threaded. */
uint64_t mgp_sites_index_bytes(void);

/* The site's stack, innermost first, at most cap frames; returns how many. */
unsigned mgp_site_frames(uint32_t id, uint64_t *out, unsigned cap);

/* Applies a delta (key's site and bucket) to the site's counters, its cohort, the process totals,
 * the CUDA cells, and marks it changed. Any thread; lock-free but for a new cohort array. */
void mgp_site_apply(const struct mgp_delta *d);

/* Live bytes in bucket k of a site (for snapshots); reads may be transiently negative. */
uint64_t mgp_site_cohort(const struct mgp_site_counts *c, unsigned k);

/* CUDA callbacks (never through a thread's deltas): one allocation or free applied at once. */
void mgp_site_on_alloc(uint32_t site, uint64_t size, unsigned bucket);
void mgp_site_on_free(uint32_t site, uint64_t size, unsigned bucket);

/* Process totals kept at every apply: live bytes and count of heap, anonymous mmap and CUDA
 * memory, allocations and frees. */
struct mgp_totals {
	uint64_t live[3], count[3]; /* heap, mmap, CUDA */
	uint64_t allocs, frees;
};
void mgp_sites_totals(struct mgp_totals *out);

/* CUDA bytes and counts by kind (mgc_kind_make: memory kind and device), at most max cells:
 * returns how many; a cell that went back to zero stays. */
uint32_t mgp_sites_cuda_cells(struct mgc_devmem_cell *out, uint32_t max);

/* Takes the ids of the sites changed since the last call, ascending, clearing their marks, into
 * ids (room for mgp_sites_count() entries); returns how many. Writer lock held. */
uint32_t mgp_sites_take_dirty(uint32_t *ids);
/* Marks a site changed again (a change the writer took but left for later). */
void mgp_sites_mark(uint32_t id, unsigned bits);

/* A site that has made this many allocations is worth its place in the trace even if it never
 * holds memory at a snapshot (a busy temporary); below it, one that holds nothing is a transient
 * that may be evicted. */
#define MGP_SITES_KEEP_ALLOCS 16u

/* Eviction, by the writer, in two halves around a grace period (mgp_threads_drain: every thread
 * has left any lookup it was in). `unlink` takes from lookups the sites that hold nothing, are not
 * written (`written(id)` is 0), made fewer than MGP_SITES_KEEP_ALLOCS allocations and are done
 * with: one allocation, or (quiet_too) no change since the last call; CUDA sites never. `free`
 * then frees those that stayed empty and releases their stacks, and ends a retirement (below).
 * Writer lock held. */
void mgp_sites_evict_unlink(int (*written)(uint32_t id), int quiet_too);
void mgp_sites_evict_free(int (*written)(uint32_t id));

/* Retirement of quiet written sites (issue 16: PyTorch's import leaves 2 * 10^5 sites that hold a
 * little each and never change again). Once MGPROBE_MAX_SITES / 16 sites are in use, a site the
 * trace has written, holding under 64 KiB, that did not change between two scans (one per
 * maintenance pass of the writer) gives its stack back to the store (mgp_stacks, which is then
 * compacted: mgp_sites_compact) but keeps its id, its place in the lookup table, its identity
 * (hashes, depth, kind) and its counters: the trace has its stack, and the reader resolves it
 * when it reads it. Frees go on counting; a lookup that finds a retired site (leaf 0, frames > 0)
 * takes the sites lock and interns its stack again, so the same stack keeps its id and totals.
 * The live segment shows a retired site without frames (mgmon ranks sites that hold far more).
 * In two halves around a grace period (mgp_threads_drain), like eviction: `begin` takes the
 * stacks from lookups (a lookup then takes the locked path and interns the stack again); the end,
 * in mgp_sites_evict_free, gives back the stacks of the sites still quiet, and puts the others'
 * back. The same scan evicts unwritten sites that stayed empty (eviction's own pass sees only
 * sites that changed). Never the overflow site, CUDA sites or a forked child's inherited sites.
 * Writer lock held. Says what the scan did, so the writer knows when a pass soon would give
 * memory back (mgp_writer_maintain): */
struct mgp_retire_scan {
	uint32_t taken;  /* sites whose stacks it took (retiring) or that it evicted: the next pass
			    frees what they held */
	uint32_t marked; /* sites it found quiet for the first time: the next scan retires or evicts
			    those still quiet then */
};
struct mgp_retire_scan mgp_sites_retire_begin(int (*written)(uint32_t id));

/* Sites retired so far (a site retired twice counts twice). */
uint32_t mgp_sites_retired(void);

/* Compacts the frame tree (mgp_stacks_compact_*) once retired stacks left most of its ids free,
 * between the two halves of retirement (no stack is held outside a site then). Returns 1 when
 * the nodes were renumbered (the trace must define them again), else 0. Writer lock held. */
int mgp_sites_compact(void);

/* The sites that had been created since the writer last evicted: it runs early when this grows
 * (an import that makes 10^5 stacks a second). */
uint32_t mgp_sites_created(void);

/* In a forked child whose trace refers to its parent's (mgp_trace_forget): the counters start
 * afresh, counting from the fork (the parent's trace has the values then), in new pages, so the
 * pages the parent keeps writing are not copied into the child; the parent's sites are never
 * evicted here and new sites and nodes take fresh ids. 0, or -ENOMEM. Single-threaded. */
int mgp_sites_forked(void);

/* fork: the prepare handler takes the insert lock so no stack is half-published in the child. */
void mgp_sites_lock(void);
void mgp_sites_unlock(void);

/* In a forked child, before its first snapshot: zeroes the CUDA sites (the parent's device memory
 * is not the child's) and the CUDA totals. */
void mgp_sites_forget_cuda(void);

#endif /* MGP_SITES_H */
