/* SPDX-License-Identifier: MIT */
/* mgp_thread.h: each recording thread's record: a small table of counter deltas (site and cohort
 * bucket -> allocations, frees, bytes) that the thread changes with plain stores under its own
 * lock, which nobody else takes but the writer once per tick (mgp_threads_drain) to apply them
 * to the sites. So the allocation path writes only its own thread's memory (no shared cache line,
 * and no page of the site tables copied into a forked child by a busy parent), and the writer's
 * pass over every lock is the grace period after which an evicted site may be freed. A thread
 * holds its record from the site lookup to the delta (mgp_thread_enter/leave). Never calls malloc
 * (records come from the kernel; a thread's first one may make pthread_setspecific allocate,
 * inside the recursion guard). */
#ifndef MGP_THREAD_H
#define MGP_THREAD_H

#include <stdint.h>

#include "mgp_sites.h"

/* 2047 deltas, 128 KiB a thread, mapped as the thread touches them: the torch sample's steps
 * touch ~2,000 (site, bucket) keys between two drains, and with 127 slots 29% of its allocations
 * and frees found their probes crowded and applied a delta to the shared sites on the spot (3,900
 * a step; 1,300 with 1023 slots, 390 with 2047). */
#define MGP_THREAD_DELTAS 2047u

struct mgp_thread {
	int lock;          /* the owner while recording; the writer while draining */
	uint32_t state;    /* enum: free, owned */
	uint32_t used;     /* deltas in use */
	uint32_t pad[13];
	struct mgp_delta d[MGP_THREAD_DELTAS];
};
_Static_assert(sizeof(struct mgp_thread) == 131072, "a record is 32 pages");

/* Sets the registry up (a pthread key whose destructor gives a thread's record back). Once, at
 * start-up. 0 or -errno. */
int mgp_threads_init(void);

/* The calling thread's record, locked: registered on first use; a shared one when the thread has
 * none (out of memory, or exiting). Pair with mgp_thread_leave. */
struct mgp_thread *mgp_thread_enter(void);

static inline void mgp_thread_leave(struct mgp_thread *t)
{
	__atomic_store_n(&t->lock, 0, __ATOMIC_RELEASE);
}

/* The delta of (site, bucket) in t, made (or taken over from another key, which is applied to
 * the sites first) if absent. */
struct mgp_delta *mgp_thread_delta(struct mgp_thread *t, uint32_t site, unsigned bucket);

/* An allocation, a free, and bytes of a live allocation going away without it (a partial
 * munmap). A sampled run counts a recorded allocation as `count` allocations of `bytes` in all,
 * with the variance term var (mgp_sample_weigh); exact mode: 1 and the size, var 0. */
static inline void mgp_thread_alloc(struct mgp_thread *t, uint32_t site, unsigned bucket,
				    uint64_t bytes, uint64_t count, int64_t var)
{
	struct mgp_delta *d = mgp_thread_delta(t, site, bucket);
	d->allocs += count;
	d->alloc_bytes += bytes;
	d->live += (int64_t)bytes;
	d->var += var;
	if (d->live > d->peak)
		d->peak = d->live;
}

static inline struct mgp_delta *mgp_thread_shrink(struct mgp_thread *t, uint32_t site,
						  unsigned bucket, uint64_t bytes, int64_t var)
{
	struct mgp_delta *d = mgp_thread_delta(t, site, bucket);
	d->live -= (int64_t)bytes;
	d->var -= var;
	return d;
}

static inline void mgp_thread_free(struct mgp_thread *t, uint32_t site, unsigned bucket,
				   uint64_t bytes, uint64_t count, int64_t var)
{
	mgp_thread_shrink(t, site, bucket, bytes, var)->frees += count;
}

/* The writer, once per tick and before freeing evicted sites: applies every record's deltas to the
 * sites, taking each record's lock once. */
void mgp_threads_drain(void);

/* fork: the prepare handler locks every record (before the sites lock: a recording thread holds
 * its record while it takes that one); the child, once unlocked, applies the other threads'
 * deltas (their allocations are the child's too) and frees their records. */
void mgp_threads_lock_all(void);
void mgp_threads_unlock_all(void);
void mgp_threads_forked(void);

/* Records made so far (threads that recorded, less those that reused an exited one's). */
uint32_t mgp_threads_count(void);

#endif /* MGP_THREAD_H */
