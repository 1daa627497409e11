/* SPDX-License-Identifier: MIT */
/* mgp_shm.h: the probe's live publisher: the segment /dev/shm/mgprobe.<pid> of libmgcore/mgc_shm.h
 * that mgmon reads. Every function here runs with the probe's writer lock held (or single-threaded
 * at start-up and in the fork child), never on the allocation fast path. Never calls malloc; any
 * failure turns publishing off with one line on stderr, and the program runs on. */
#ifndef MGP_SHM_H
#define MGP_SHM_H

#include <stdint.h>

struct mgp_shm_info {
	uint64_t start_realtime_ns, start_mono_ns;
	uint32_t interval_ms, depth;
	uint32_t max_sites;
};

/* Creates (replacing a stale one of the same name) and fills this process's segment. In a forked
 * child, call mgp_shm_forget first. Publishing is off after a failure; no return value to check. */
void mgp_shm_open(const struct mgp_shm_info *info);

/* Publishes the current state: header, a ring snapshot, the grid, the top sites and, when it
 * changed, the module map. `flags` are enum mgc_snapshot_flags; a step marker within a few
 * milliseconds of the previous publish only updates the step (bounded cost for fast loops). */
void mgp_shm_publish(uint64_t step, uint32_t flags, const char *label);

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
