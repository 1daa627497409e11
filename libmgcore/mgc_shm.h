/* SPDX-License-Identifier: MIT */
/* mgc_shm.h: the reader of the live shared-memory segment /dev/shm/mgprobe.<pid> (mgc_shm.c), for
 * mgmon and tests; the layout itself is libmgformat/mgc_shm_format.h. Readers never trust the
 * segment and never abort on it. */
#ifndef MGC_SHM_H
#define MGC_SHM_H

#include <stddef.h>
#include <stdint.h>

#include "mgc_proc.h"
#include "mgc_shm_format.h"

/* One process's segment, open read-only (read with pread, never mapped: see mgc_shm_read). */
struct mgc_shm_map;

/* Opens /dev/shm/mgprobe.<pid> read-only and checks it. Anyone may plant that name, so it is opened
 * without following a symlink or waiting on a FIFO, and only a regular file of the target
 * process's own user with mode 0600 (what the probe makes) is used. 0, or -errno with a one-line
 * reason in err: -ENOENT (no segment: the process runs without the probe), -EPERM (something
 * else is at that name: not the probe's segment), -EACCES (another user's segment, for a reader
 * that is not root), -EAGAIN (being created: retry), -EINVAL (not an mgprobe segment, or too
 * small), -EPROTO (a segment of another format version: err names both versions). */
int mgc_shm_open(int pid, struct mgc_shm_map **out, char *err, size_t errlen);

/* Copies a consistent state into *dst (caller-owned, sizeof(struct mgc_shm), may live on the heap):
 * header, ring, the valid grid points, sites and modules. Retries while the writer is busy, at
 * most `tries` times (0 = a default of 1000) with sched_yield between. Counts in the copy are
 * checked: 0, -EAGAIN (the writer never paused long enough), -EBADMSG (impossible counts) or
 * -ESTALE (the segment changed: its file was cut, before or during this copy, or zeroed; the
 * segment is of no more use). The copy is read from the file with pread, never through a
 * mapping, so a file cut at any moment is a short read and never raises SIGBUS. Never returns a
 * torn copy. */
int mgc_shm_read(struct mgc_shm_map *m, struct mgc_shm *dst, unsigned tries);

/* 1 when the process that wrote the segment is gone (the pid no longer exists, or was reused by
 * another process), 0 when it runs. Works on a copy from mgc_shm_read. */
int mgc_shm_is_stale(const struct mgc_shm *s);

/* The module of the copy holding `ip`, or NULL. */
const struct mgc_shm_module *mgc_shm_module_for(const struct mgc_shm *s, uint64_t ip);

/* The module's path in the copy, NUL-terminated into buf. */
const char *mgc_shm_module_path(const struct mgc_shm *s, const struct mgc_shm_module *m, char *buf,
				size_t cap);

/* "/dev/shm/mgprobe.<pid>" into buf. */
void mgc_shm_path(int pid, char *buf, size_t cap);

struct mgc_pycodes; /* mgc_python.h */

/* Adds to *codes the copy's Python code objects it does not hold yet (a code id keeps its meaning
 * for the life of the process). 0, or -ENOMEM. */
int mgc_shm_pycodes(const struct mgc_shm *s, struct mgc_pycodes **codes);

void mgc_shm_close(struct mgc_shm_map *m);

#endif /* MGC_SHM_H */
