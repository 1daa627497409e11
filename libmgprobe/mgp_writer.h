/* SPDX-License-Identifier: MIT */
/* mgp_writer.h: the writer lock, which serializes everything the probe writes (the trace file,
 * the live segment, the step label), and the snapshot it takes at each tick (sampler interval,
 * step marker, fork, exec, exit). Never used by the allocation hooks; a snapshot never calls
 * malloc or stdio. */
#ifndef MGP_WRITER_H
#define MGP_WRITER_H

#include <stdint.h>

#include "mgp_snapshot.h"

/* The process that owns the outputs, and its start: set at start-up and in a fork child once the
 * outputs are open. A vfork child or a raw clone shares our memory and files but has another pid:
 * it must not write. */
void mgp_writer_start(const struct mgp_process *p);
int mgp_writer_pid(void);

/* 1 when this process records and owns the outputs. */
int mgp_writer_owner(void);

/* Takes the writer lock, with the recursion guard entered, when this process records and owns the
 * outputs: 1, to be paired with mgp_writer_leave. 0 when there is nothing to write (not
 * recording, not the owner, or the trace file failed, which stops recording). */
int mgp_writer_enter(void);
void mgp_writer_leave(void);

/* The bare lock, for the fork handlers (held across fork) and CUDA set-up. */
void mgp_writer_lock(void);
void mgp_writer_unlock(void);

/* Brings the trace up to date with the module map (one scan, when the loader says it changed).
 * Lock held. */
void mgp_writer_modules(void);

/* Applies the threads' counter deltas to the sites and evicts sites that hold nothing and are
 * not in the trace (mgp_sites.h): at the sampler's ticks (not at step markers: a temporary made
 * once a step would be evicted and made again every step), and between them while a program
 * makes new stacks fast. quiet_too: also those that merely stayed unchanged since the last pass
 * (at ticks; between them only one-allocation transients go, and the stacks of the sites that
 * hold memory are written, so that they may retire before the next snapshot). Then retires the
 * written sites that went quiet and compacts the frame tree when that pays (mgp_sites.h). Lock
 * held. */
void mgp_writer_maintain(int quiet_too);

/* One snapshot per tick (flags: enum mgc_snapshot_flags), at the current step and label: the
 * threads' deltas applied, then built once (mgp_snapshot_take's reads, one module scan) and
 * handed to both outputs, the trace (which adds the site totals) and then the live segment. A
 * step marker's (flags MGC_SNAP_STEP alone) leaves the live segment's site scan to the sampler
 * thread when it runs: returns 1 then, and the caller kicks it (mgp_sampler_kick) once the lock
 * is released. Lock held (or single-threaded at start-up and in a fork child). */
int mgp_writer_snapshot(uint32_t flags);

#endif /* MGP_WRITER_H */
