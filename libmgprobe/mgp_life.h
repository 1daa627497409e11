/* SPDX-License-Identifier: MIT */
/* mgp_life.h: the probe's life cycle in one process: start-up from the MGPROBE_* settings (the
 * constructor), the trace file's name, a forked child's fresh start, and the end (exit, _exit,
 * _Exit: a final snapshot). mgp_life.c also holds the dlclose hook, which writes stacks while the
 * library is still mapped. Nothing here runs on the allocation fast path. */
#ifndef MGP_LIFE_H
#define MGP_LIFE_H

/* From the fork child handler, after the locks are released: the child forgets the parent's
 * outputs and, unless children are not traced, starts its own trace and segment. had_cuda: the
 * parent traced CUDA (the child's trace says why it has none). */
void mgp_life_forked(int had_cuda);

/* 1 unless MGPROBE_CUDA_ACTIVITY=0: whether CUDA tracing asks CUPTI for activity records. */
int mgp_life_cuda_activity(void);
/* From the fork prepare handler, writer lock held: a snapshot in the parent's trace and the point
 * a child's trace refers to (mgp_trace_fork_point). */
void mgp_life_fork_prepare(void);

#endif /* MGP_LIFE_H */
