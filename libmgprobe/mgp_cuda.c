/* SPDX-License-Identifier: MIT */
/* mgp_cuda.c: the glue between the probe and its CUDA tracer (mgp_cupti.c): InitializeInjection,
 * which the CUDA driver calls at cuInit through CUDA_INJECTION64_PATH, the sink that lends the
 * tracer the probe's stack capture, step and recording state, and the exit and fork duties of
 * mgp_cuda.h. Built only with CUPTI. CUPTI failing must never fail cuInit or host profiling. */
#include "mgp_cuda.h"

#include <pthread.h>
#include <stdlib.h>

#include "mgp_cupti.h"
#include "mgp_hooks.h"
#include "mgp_life.h"
#include "mgp_os.h"
#include "mgp_record.h"
#include "mgp_state.h"
#include "mgp_step.h"
#include "mgp_trace.h"
#include "mgp_writer.h"

static void sink_guard(int on)
{
	if (on)
		mgp_guard_enter();
	else
		mgp_guard_leave();
}

static uint32_t sink_capture(unsigned kind)
{
	return mgp_record_site(kind);
}

static uint32_t sink_birth(void)
{
	return mgp_step_bucket();
}

static const struct mgp_cupti_sink sink = {mgp_writer_owner, sink_capture, sink_birth, sink_guard,
					   mgp_record_oom};

void mgp_cuda_flush(int final)
{
	mgp_cupti_flush(final);
}

void mgp_cuda_notice(void)
{
	struct mgp_cupti_stats st;
	char text[400];
	mgp_cupti_stats(&st);
	if (!st.alloc_records && !st.free_records && !st.callback_only)
		return;
	mgp_fmt(text, sizeof text,
		"CUDA activity records: %llu allocations and %llu releases joined to their calls, %llu calls "
		"without a record, %llu records without a call (%llu bytes), %llu mismatched, %llu dropped "
		"by CUPTI, %llu bytes of static device variables",
		(unsigned long long)st.joined_allocs, (unsigned long long)st.joined_frees,
		(unsigned long long)st.callback_only, (unsigned long long)st.record_only,
		(unsigned long long)st.record_only_bytes, (unsigned long long)st.join_mismatches,
		(unsigned long long)st.dropped_records, (unsigned long long)st.static_bytes);
	mgp_trace_notice(text);
}

void mgp_cuda_fork_parent(void)
{
	static int told;
	if (mgp_cupti_tracing() && !__atomic_exchange_n(&told, 1, __ATOMIC_RELAXED))
		mgp_log("children forked after CUDA started trace host memory only (CUDA cannot be used "
			"after fork); this process's CUDA tracing goes on");
}

int mgp_cuda_fork_child(void)
{
	return mgp_cupti_atfork_child();
}

/* Registered at cuInit, so it runs before the library destructors (libcupti's among them) and
 * before the probe's own: the last activity records reach the final snapshot. */
static void flush_at_exit(void)
{
	if (mgp_writer_owner()) {
		mgp_guard_enter();
		mgp_cupti_flush(1);
		mgp_guard_leave();
	}
}

MGP_EXPORT int InitializeInjection(void)
{
	static int done;
	if (__atomic_exchange_n(&done, 1, __ATOMIC_ACQ_REL) || !mgp_recording())
		return 1;
	mgp_guard_enter();
	static const struct mgp_trace_cuda cuda = {mgp_cupti_pool_cells, mgp_cupti_take_devsites};
	if (mgp_cupti_init(&sink) == 0 && mgp_cupti_start(mgp_life_cuda_activity()) == 0) {
		mgp_writer_lock();
		mgp_trace_set_cuda(&cuda);
		mgp_writer_unlock();
		atexit(flush_at_exit);
	}
	mgp_guard_leave();
	return 1; /* CUPTI failing must never fail cuInit */
}
