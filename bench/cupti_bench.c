/* SPDX-License-Identifier: MIT */
/* cupti_bench.c: what the probe's CUPTI handlers cost per cudaMalloc + cudaFree, measured without
 * a GPU by feeding the real handlers (mgp_cupti.c, linked from the probe's objects) the callbacks
 * CUPTI would make: ENTER and EXIT of each call, with real `*_params` structs. Three ways side by
 * side, interleaved in rounds: callbacks only, callbacks entered for joining (activity on, the
 * records never come: entries age out), and callbacks plus their MEMORY2 records in hand-built
 * buffers walked by the real libcupti. The sink's stack capture is a fixed two-frame stack, so
 * this is the handlers' bookkeeping, not unwinding (the probe's unwind cost is alloc_bench's). */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mgc_format.h"
#include "mgp_cupti.h"
#include "mgp_sites.h"

static int t_active(void) { return 1; }
static uint32_t t_capture(unsigned kind)
{
	uintptr_t ips[2] = {0x1000, 0x2000};
	return mgp_sites_intern(ips, 2, kind);
}
static uint32_t t_birth(void) { return 1; }
static void t_guard(int on) { (void)on; }
static void t_oom(void) {}
static const struct mgp_cupti_sink sink = {t_active, t_capture, t_birth, t_guard, t_oom};

static uint32_t corr = 1;

static void feed(CUpti_CallbackId id, CUpti_ApiCallbackSite site, void *params)
{
	static int ok = 0;
	CUpti_CallbackData cb = {0};
	cb.callbackSite = site;
	cb.functionParams = params;
	cb.functionReturnValue = &ok;
	cb.correlationId = corr;
	mgp_cupti_handle(CUPTI_CB_DOMAIN_RUNTIME_API, id, &cb);
}

#define BATCH 1024
static _Alignas(8) uint8_t buf[BATCH * 2 * sizeof(CUpti_ActivityMemory4)];

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* ns per cudaMalloc + cudaFree pair for n pairs in batches of BATCH live allocations. */
static double run(int mode, unsigned n)
{
	double t0 = now();
	for (unsigned done = 0; done < n; done += BATCH) {
		size_t len = 0;
		uint32_t first = corr;
		for (unsigned i = 0; i < BATCH; i++) {
			void *p = NULL;
			cudaMalloc_v3020_params prm = {&p, 4096};
			feed(CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020, CUPTI_API_ENTER, &prm);
			p = (void *)(uintptr_t)(0x700000000000ull + ((uint64_t)i << 16));
			feed(CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020, CUPTI_API_EXIT, &prm);
			corr++;
		}
		for (unsigned i = 0; i < BATCH; i++) {
			cudaFree_v3020_params prm = {(void *)(uintptr_t)(0x700000000000ull + ((uint64_t)i << 16))};
			feed(CUPTI_RUNTIME_TRACE_CBID_cudaFree_v3020, CUPTI_API_ENTER, &prm);
			feed(CUPTI_RUNTIME_TRACE_CBID_cudaFree_v3020, CUPTI_API_EXIT, &prm);
			corr++;
		}
		if (mode == 2) { /* the records of this batch, as CUPTI's buffer would hold them */
			for (unsigned i = 0; i < 2 * BATCH; i++) {
				CUpti_ActivityMemory4 r;
				memset(&r, 0, sizeof r);
				r.kind = CUPTI_ACTIVITY_KIND_MEMORY2;
				r.memoryOperationType = i < BATCH ? CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION
								  : CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE;
				r.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
				r.correlationId = first + i;
				r.address = 0x700000000000ull + ((uint64_t)(i % BATCH) << 16);
				r.bytes = 4096;
				memcpy(buf + len, &r, sizeof r);
				len += sizeof r;
			}
			mgp_cupti_activity_buffer(buf, len);
		}
		if (mode >= 1)
			mgp_cupti_flush(0); /* ages what never joined (mode 1); flushAll fails without a driver */
	}
	return (now() - t0) * 1e9 / n;
}

int main(int argc, char **argv)
{
	unsigned n = argc > 1 ? (unsigned)atoi(argv[1]) : 1u << 20;
	if (mgp_sites_init(4096) < 0 || mgp_cupti_init(&sink) < 0 || mgp_cupti_load() < 0) {
		fprintf(stderr, "cupti_bench: init failed (libcupti needed)\n");
		return 1;
	}
	const char *names[] = {"callbacks only", "callbacks, joining on (no records)",
			       "callbacks + MEMORY2 records joined"};
	double best[3] = {1e18, 1e18, 1e18};
	for (int round = 0; round < 5; round++) {
		for (int mode = 0; mode < 3; mode++) {
			mgp_cupti_set_joining(mode >= 1);
			double ns = run(mode, n);
			if (ns < best[mode])
				best[mode] = ns;
		}
	}
	mgp_cupti_set_joining(0);
	struct mgp_cupti_stats st;
	mgp_cupti_stats(&st);
	printf("cudaMalloc+cudaFree pairs: %u per run, best of 5 rounds\n", n);
	for (int mode = 0; mode < 3; mode++)
		printf("  %-38s %7.1f ns per pair  (%.2fx)\n", names[mode], best[mode], best[mode] / best[0]);
	printf("  joined allocations %llu, frees %llu, calls without a record %llu\n",
	       (unsigned long long)st.joined_allocs, (unsigned long long)st.joined_frees,
	       (unsigned long long)st.callback_only);
	return 0;
}
