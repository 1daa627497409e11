/* SPDX-License-Identifier: MIT */
/* mgp_step.c: the step API of mgprobe.h (mgprobe_step, mgprobe_label, mgprobe_snapshot,
 * mgprobe_active), exported by libmgprobe.so. Each call writes the trace synchronously on the
 * caller's thread under the writer lock (a step marker leaves only the live segment's site scan to
 * the sampler thread); none may call malloc or stdio, and none does anything in a process that
 * does not record. */
#define MGPROBE_BUILDING_PROBE
#include "mgprobe.h"

#include <string.h>

#include "mgc_format.h"
#include "mgp_hooks.h"
#include "mgp_sampler.h"
#include "mgp_state.h"
#include "mgp_step.h"
#include "mgp_trace.h"
#include "mgp_writer.h"

uint64_t mgp_step_value;

/* Written and read under the writer lock. */
static struct {
	char label[32]; /* the phase label in force, NUL-terminated: 31 bytes kept */
} steps;

const char *mgp_step_label(void)
{
	return steps.label;
}

MGP_EXPORT void mgprobe_step(uint64_t step)
{
	__atomic_store_n(&mgp_step_value, step, __ATOMIC_RELAXED);
	if (!mgp_writer_enter())
		return;
	int left = mgp_writer_snapshot(MGC_SNAP_STEP); /* the trace's step marker */
	mgp_trace_flush(); /* here, not later: an OOM kill loses nothing up to this step */
	mgp_writer_leave();
	if (left)
		mgp_sampler_kick(); /* the live segment's site scan, off this thread */
}

MGP_EXPORT void mgprobe_label(const char *label)
{
	if (!label || !mgp_writer_enter())
		return;
	size_t n = strnlen(label, sizeof steps.label - 1);
	memcpy(steps.label, label, n);
	steps.label[n] = 0;
	mgp_trace_label(mgp_step_now(), steps.label);
	mgp_trace_flush();
	mgp_writer_leave();
}

MGP_EXPORT void mgprobe_snapshot(void)
{
	if (!mgp_writer_enter())
		return;
	mgp_writer_snapshot(0);
	mgp_trace_flush();
	mgp_writer_leave();
}

MGP_EXPORT int mgprobe_active(void)
{
	return mgp_recording();
}
