/* SPDX-License-Identifier: MIT */
/* mgp_shm.h: the probe's live publisher: the segment /dev/shm/mgprobe.<pid> (layout:
 * libmgformat/mgc_shm_format.h) that mgmon reads. Every function here runs with the probe's writer
 * lock held (or single-threaded at start-up and in the fork child), never on the allocation fast
 * path. Never calls malloc; any failure turns publishing off with one line on stderr, and the
 * program runs on. */
#ifndef MGP_SHM_H
#define MGP_SHM_H

#include <stdint.h>

#include "mgc_format.h"
#include "mgp_snapshot.h"

/* Creates (replacing a stale one of the same name) and fills this process's segment. In a forked
 * child, call mgp_shm_forget first. Publishing is off after a failure; no return value to check. */
void mgp_shm_open(const struct mgp_process *p);

/* Publishes the snapshot the trace was given (its site totals filled): header, a ring entry, the
 * grid, every site's history, the top sites and, when it changed, the module map (mgp_modules).
 * A step marker within a few milliseconds of the previous publish only updates the step (bounded
 * cost for fast loops). With defer, only the header and the ring entry are written now, and the
 * rest (the site scan: milliseconds with 10^5 sites) is left for mgp_shm_publish_pending, which
 * the sampler thread calls soon after, and the next snapshot before it writes the trace. Sites'
 * live bytes, histories and rankings are the snapshot's (mgp_shm_keep) however late the scan
 * runs; the published sites' other figures (counts, peak, cohorts) are read when it runs.
 * Returns 1 when something was left. */
int mgp_shm_publish(const struct mgc_rec_snapshot *sn, int defer);

/* The site part a deferred publish left, if any; every full publish does it first. */
void mgp_shm_publish_pending(void);

/* A snapshot writes site id's live bytes into the trace: what the site scans read until the next
 * snapshot writes the site again (a site not written holds what it held at its last write). */
void mgp_shm_keep(uint32_t id, uint64_t live_bytes);

/* The parent records a forked child's pid. */
void mgp_shm_child(int pid);

/* In a forked child: drop the parent's mapping (never written to by the child) and history. */
void mgp_shm_forget(void);

/* The process exits (state EXITED, with its status) or execs (state EXECED): marks the state,
 * removes the name from /dev/shm (readers that have it mapped keep the final state) and stops
 * publishing. After a failed exec the process runs on unpublished. */
void mgp_shm_exit(int status);
void mgp_shm_exec(void);

#endif /* MGP_SHM_H */
