/* SPDX-License-Identifier: MIT */
/* mgp_trace.h: the probe's trace writer: records of libmgformat/mgc_format.h into one file,
 * flushed with write(2) after every snapshot so a killed process leaves a readable file. Every
 * function here must be called with the probe's writer lock held; none may be called from the
 * malloc fast path. Never calls malloc. */
#ifndef MGP_TRACE_H
#define MGP_TRACE_H

#include <stdint.h>

#include "mgc_format.h"
#include "mgp_snapshot.h"

/* Reserves the output buffer (the rest grows as needed); compress: files are zstd streams
 * (MGC_FILE_ZSTD). 0 or -ENOMEM. */
int mgp_trace_init(int compress);

/* Opens path for writing (O_EXCL when excl, else truncating a regular file; never through a
 * symlink: -ELOOP, nor a FIFO, device or directory: -ENXIO, -EINVAL, -EISDIR), mode 0600, and
 * writes the file header and the process record. 0 or -errno, silently (the file is then not
 * created, or removed again). */
int mgp_trace_open(const char *path, int excl, const struct mgp_process *p);

/* Writes load and unload records for the module map's generations since the last call
 * (mgp_modules_sync reads the map). */
void mgp_trace_modules(void);

/* Writes the stacks of every site in use that is not in the file yet (before a dlclose, while
 * their modules are still mapped). Snapshots write the others' as the sites enter the file. */
void mgp_trace_write_stacks(void);

/* The same for the sites that hold memory now: between snapshots, while a program makes new stacks
 * fast (an import), so that they may retire (mgp_sites.h) before the next snapshot. */
void mgp_trace_write_held_stacks(void);

/* 1 when site id's stack is in this file (it is then never evicted, only retired). */
int mgp_trace_site_written(uint32_t id);

/* Completes and writes a snapshot whose process-level fields are filled (mgp_snapshot_take): visits
 * the sites that changed since the last one (all with MGC_SNAP_FULL), fills sn's site totals
 * (the sites' running totals) and nsites even when the file has failed, writes the stacks of the
 * sites that enter the file and the sites' entries, then, in a process with CUDA memory, its
 * DEVMEM record and any new DEVSITE details. */
void mgp_trace_snapshot(struct mgc_rec_snapshot *sn);

/* What the CUDA tracer (mgp_cupti.c, built only with CUPTI) lends the writer. */
#define MGP_TRACE_MAX_CELLS 32u
struct mgp_trace_cuda {
	uint32_t (*pool_cells)(struct mgc_devmem_cell *out, uint32_t max);
	uint32_t (*take_devsites)(struct mgc_rec_devsite *out, uint32_t max);
};
void mgp_trace_set_cuda(const struct mgp_trace_cuda *cuda);

void mgp_trace_label(uint64_t step, const char *label);
void mgp_trace_child(int pid, uint32_t how); /* how: enum mgc_child_how */
void mgp_trace_end(uint32_t reason, int status);

/* The probe's own memory (MGC_REC_OVERHEAD), before END. */
void mgp_trace_overhead(void);

/* Copies /tmp/perf-PID.map, where interpreters and JITs name their generated code (Python 3.12+
 * with -X perf, the JVM, V8), into the trace, so its frames symbolize wherever the report runs:
 * only a regular file of the process's own user with one link (never through a symlink, never
 * waiting on a FIFO), and at most MGP_PERFMAP_MAX bytes of it; what it refuses or cuts, a notice
 * in the trace says. */
#define MGP_PERFMAP_MAX ((size_t)64 << 20)
void mgp_trace_perfmap(int pid);
void mgp_trace_notice(const char *text);

/* Writes buffered records to the file. A write error (full disk, I/O error) closes the trace with
 * one message; the return is then -errno and every later call is a no-op. */
int mgp_trace_flush(void);

/* Just before a fork (the fork snapshot written): flushes the file and remembers where it stands,
 * so a child's file can refer to it (MGC_REC_FORKED) for everything written so far. A NULL path
 * (no fork snapshot this time) forgets the last fork point: that child writes its own file. */
void mgp_trace_fork_point(const char *path, int pid);

/* In a forked child: forget the parent's file, compressor and buffers. After a fork point the
 * next mgp_trace_open writes a file that refers to the parent's (returns 1: what the parent wrote,
 * its modules included, stays written); else a self-contained one (returns 0). */
int mgp_trace_forget(void);

/* 1 while a trace file is open and healthy. */
int mgp_trace_ok(void);

/* Closes the file (after a final flush). */
void mgp_trace_close(void);

#endif /* MGP_TRACE_H */
