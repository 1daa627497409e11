/* SPDX-License-Identifier: MIT */
/* mgp_cuda.h: what the probe's life cycle asks of CUDA tracing (mgp_cupti.c), through the glue in
 * mgp_cuda.c, which also exports InitializeInjection. In a build without CUPTI these are no-ops, so
 * callers carry no #if. None of them may be called from an allocation hook. */
#ifndef MGP_CUDA_H
#define MGP_CUDA_H

#include "mg_config.h"

#if MG_HAVE_CUPTI
/* Flushes CUPTI's activity records (final: everything, at exit). Never with the writer lock held:
 * CUPTI calls back into the probe. */
void mgp_cuda_flush(int final);

/* Writes the cross-check of the two CUDA sources as a notice in the trace. Writer lock held. */
void mgp_cuda_notice(void);

/* fork: in the parent, one line the first time a process that traces CUDA forks; in the child,
 * CUDA tracing ends (CUDA cannot be used after fork). Returns 1 when the parent traced CUDA. */
void mgp_cuda_fork_parent(void);
int mgp_cuda_fork_child(void);
#else
static inline void mgp_cuda_flush(int final)
{
	(void)final;
}

static inline void mgp_cuda_notice(void)
{
}

static inline void mgp_cuda_fork_parent(void)
{
}

static inline int mgp_cuda_fork_child(void)
{
	return 0;
}
#endif

#endif /* MGP_CUDA_H */
