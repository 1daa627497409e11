/* SPDX-License-Identifier: MIT */
/* mgp_writer.h: the writer lock, which serializes everything the probe writes (the trace file,
 * the live segment, the step label), and the snapshot it takes at each tick (sampler interval,
 * step marker, fork, exec, exit). Never used by the allocation hooks; a snapshot never calls
 * malloc or stdio. */
#ifndef MGP_WRITER_H
#define MGP_WRITER_H

#include <stdint.h>

#include "mgp_sites.h"
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

/* Why a maintenance pass runs (mgp_writer_maintain). */
enum mgp_maintain {
	MGP_MAINTAIN_TICK,  /* a sampler tick */
	MGP_MAINTAIN_BURST, /* between ticks: the program makes new stacks fast */
	MGP_MAINTAIN_SOON,  /* between ticks: the last pass said that one soon gives memory back */
};

/* Applies the threads' counter deltas to the sites and evicts sites that hold nothing and are
 * not in the trace (mgp_sites.h): at the sampler's ticks (not at step markers: a temporary made
 * once a step would be evicted and made again every step), and between them while a program
 * makes new stacks fast. At a tick also those that merely stayed unchanged since the last pass;
 * between ticks only one-allocation transients go, and the stacks of the sites that hold memory
 * are written, so that they may retire before the next snapshot. Then retires the written sites
 * that went quiet and compacts the frame tree when that pays (mgp_sites.h).
 * Returns 1 when a pass soon (MGP_MAINTAIN_SOON, at the sampler's next 100 ms slice rather than
 * the next tick) would give memory back: mgp_writer_soon. Lock held. */
int mgp_writer_maintain(enum mgp_maintain why);

/* Whether the pass just made (why, its retirement scan, and `run`: how many passes in a row,
 * this one included, ran because the last said soon) calls for another soon: it took the stacks
 * of MGP_WRITER_SOON_SITES sites that retire (the next pass gives them back and compacts the
 * frame tree), or, between ticks, found that many quiet (an import's last thousands, which retire
 * at the next scan; never at a tick, where a training loop's sites that went quiet and busy again
 * since the last tick are found quiet by the thousand every second). At most
 * MGP_WRITER_SOON_PASSES in a row: fast scans must not keep retiring and reviving the sites of a
 * loop that pauses for a few hundred milliseconds. Without it the import's last sites, and the
 * frame tree's nodes, stayed for two or three ticks into the training loop (issue 16: the torch
 * sample's peak RSS falls there). */
#define MGP_WRITER_SOON_SITES 1024u
#define MGP_WRITER_SOON_PASSES 5u
static inline int mgp_writer_soon(enum mgp_maintain why, struct mgp_retire_scan scan, uint32_t run)
{
	return run < MGP_WRITER_SOON_PASSES &&
	       (scan.taken >= MGP_WRITER_SOON_SITES ||
		(why != MGP_MAINTAIN_TICK && scan.marked >= MGP_WRITER_SOON_SITES));
}

/* One snapshot per tick (flags: enum mgc_snapshot_flags), at the current step and label: the
 * threads' deltas applied, then built once (mgp_snapshot_take's reads, one module scan) and
 * handed to both outputs, the trace (which adds the site totals) and then the live segment. A
 * step marker's (flags MGC_SNAP_STEP alone) leaves the live segment's site scan to the sampler
 * thread when it runs: returns 1 then, and the caller kicks it (mgp_sampler_kick) once the lock
 * is released. Lock held (or single-threaded at start-up and in a fork child). */
int mgp_writer_snapshot(uint32_t flags);

#endif /* MGP_WRITER_H */
