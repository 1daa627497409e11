/* SPDX-License-Identifier: MIT */
/* cupti_facts.c: what the CUPTI tracer's design assumes about a real driver, observed on one (the
 * questions of docs/GPU.md, "On a GPU"), and what CUPTI's own dispatch and MEMORY2 collection cost
 * per cudaMalloc + cudaFree. It subscribes to CUPTI itself, so it must run without the probe's
 * CUPTI (alone, or under `mgprobe run --no-cuda`); `--pairs N` skips CUPTI and only times N pairs,
 * for runs under the probe. Needs a GPU: exits 77 without one. Never used by the probe. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <execinfo.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include <cuda_runtime_api.h>
#include <cupti.h>
#define UNW_LOCAL_ONLY
#include <libunwind.h>

#define NOINLINE __attribute__((noinline))
#define MAXSEEN 64

/* What the callbacks saw during the observed calls. */
static struct {
	int watching;                /* 1 while the observed calls run */
	uint32_t runtime_corr[MAXSEEN], driver_corr[MAXSEEN], nested_cbid[MAXSEEN];
	int nruntime, ndriver, nnested;
	int devid_rc, devid;         /* cuptiGetDeviceId in the runtime EXIT callback */
	int unw_depth, bt_depth, unw_reached, bt_reached; /* frames; whether `observe` was reached */
	char unw_chain[1024];
	uint32_t record_corr[MAXSEEN];
	int nrecords;
} seen;

static __thread int tls_depth;
static long mmap_calls, mmap_bytes;  /* libc mmap calls while cudaMallocHost runs */
static int in_host_alloc;

/* Interposed (the program is linked with --export-dynamic): counts what the driver maps through
 * libc's mmap during cudaMallocHost, which is what the probe's mmap hook would see. */
void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	static void *(*real)(void *, size_t, int, int, int, off_t);
	if (!real)
		real = (void *(*)(void *, size_t, int, int, int, off_t))dlsym(RTLD_NEXT, "mmap");
	if (in_host_alloc) {
		mmap_calls++;
		mmap_bytes += (long)len;
	}
	return real(addr, len, prot, flags, fd, off);
}

static void NOINLINE observe(void);

static int reached(void *ip)
{
	Dl_info di;
	return dladdr(ip, &di) && di.dli_sname && !strcmp(di.dli_sname, "observe");
}

/* Unwinds from inside a callback, with libunwind (the probe's unwinder) and glibc's backtrace. */
static void unwind_here(void)
{
	void *ips[128];
	int n = unw_backtrace(ips, 128);
	seen.unw_depth = n;
	size_t at = 0;
	for (int i = 0; i < n; i++) {
		Dl_info di;
		const char *name = dladdr(ips[i], &di) && di.dli_sname ? di.dli_sname : "?";
		const char *obj = dladdr(ips[i], &di) && di.dli_fname ? strrchr(di.dli_fname, '/') : NULL;
		if (at < sizeof seen.unw_chain - 80)
			at += (size_t)snprintf(seen.unw_chain + at, sizeof seen.unw_chain - at, "%s%s(%s)",
					       i ? " < " : "", name, obj ? obj + 1 : "?");
		seen.unw_reached |= reached(ips[i]);
	}
	n = backtrace(ips, 128);
	seen.bt_depth = n;
	for (int i = 0; i < n; i++)
		seen.bt_reached |= reached(ips[i]);
}

static void CUPTIAPI on_callback(void *ud, CUpti_CallbackDomain dom, CUpti_CallbackId cbid,
				 const void *data)
{
	const CUpti_CallbackData *cb = data;
	if (!seen.watching)
		return;
	if (dom == CUPTI_CB_DOMAIN_RUNTIME_API) {
		if (cb->callbackSite == CUPTI_API_ENTER) {
			tls_depth++;
			if (seen.nruntime < MAXSEEN)
				seen.runtime_corr[seen.nruntime++] = cb->correlationId;
			return;
		}
		tls_depth--;
		if (cbid == CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020 && !seen.unw_depth) {
			uint32_t dev = 0;
			seen.devid_rc = (int)cuptiGetDeviceId(cb->context, &dev);
			seen.devid = (int)dev;
			unwind_here();
		}
		return;
	}
	if (cb->callbackSite != CUPTI_API_ENTER)
		return;
	if (seen.ndriver < MAXSEEN)
		seen.driver_corr[seen.ndriver++] = cb->correlationId;
	if (tls_depth > 0 && seen.nnested < MAXSEEN)
		seen.nested_cbid[seen.nnested++] = cbid;
}

static void CUPTIAPI on_request(uint8_t **buf, size_t *size, size_t *max)
{
	*size = 1 << 20;
	*buf = aligned_alloc(8, *size);
	*max = 0;
}

static void CUPTIAPI on_complete(CUcontext ctx, uint32_t stream, uint8_t *buf, size_t size, size_t valid)
{
	CUpti_Activity *rec = NULL;
	while (cuptiActivityGetNextRecord(buf, valid, &rec) == CUPTI_SUCCESS) {
		if (rec->kind == CUPTI_ACTIVITY_KIND_MEMORY2 && seen.nrecords < MAXSEEN) {
			const CUpti_ActivityMemory4 *m = (const CUpti_ActivityMemory4 *)rec;
			if (m->memoryOperationType == CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION)
				seen.record_corr[seen.nrecords++] = m->correlationId;
		}
	}
	free(buf);
}

static int check(const char *what, int rc)
{
	if (rc)
		fprintf(stderr, "cupti_facts: %s failed (%d)\n", what, rc);
	return rc;
}

static void NOINLINE observe(void)
{
	void *p = NULL;
	seen.watching = 1;
	check("cudaMalloc", cudaMalloc(&p, 1 << 20));
	check("cudaFree", cudaFree(p));
	seen.watching = 0;
}

static int has(const uint32_t *v, int n, uint32_t x)
{
	for (int i = 0; i < n; i++)
		if (v[i] == x)
			return 1;
	return 0;
}

static void print_facts(void)
{
	printf("nested driver callbacks inside the runtime calls: %d (cbids:", seen.nnested);
	for (int i = 0; i < seen.nnested; i++)
		printf(" %u", seen.nested_cbid[i]);
	printf(")\nruntime correlation ids:");
	for (int i = 0; i < seen.nruntime; i++)
		printf(" %u", seen.runtime_corr[i]);
	printf("\ndriver correlation ids:");
	for (int i = 0; i < seen.ndriver; i++)
		printf(" %u", seen.driver_corr[i]);
	printf("\nMEMORY2 allocation records' correlation ids:");
	for (int i = 0; i < seen.nrecords; i++)
		printf(" %u (%s)", seen.record_corr[i],
		       has(seen.runtime_corr, seen.nruntime, seen.record_corr[i])  ? "runtime's"
		       : has(seen.driver_corr, seen.ndriver, seen.record_corr[i]) ? "driver's"
										   : "neither");
	printf("\ncuptiGetDeviceId in the cudaMalloc EXIT callback: rc %d device %d\n", seen.devid_rc,
	       seen.devid);
	printf("unwinding in the callback: libunwind %d frames, reached observe(): %s; "
	       "backtrace() %d frames, reached: %s\n", seen.unw_depth, seen.unw_reached ? "yes" : "no",
	       seen.bt_depth, seen.bt_reached ? "yes" : "no");
	printf("libunwind chain: %s\n", seen.unw_chain);
}

static void NOINLINE pinned(void)
{
	void *h = NULL;
	in_host_alloc = 1;
	check("cudaMallocHost", cudaMallocHost(&h, 64 << 20));
	in_host_alloc = 0;
	printf("cudaMallocHost(64 MiB): libc mmap calls during it %ld, %.1f MiB mapped through them\n",
	       mmap_calls, mmap_bytes / 1048576.0);
	cudaFreeHost(h);
}

/* The driver's large anonymous mappings (after a stream-ordered allocation, which reserves the
 * pool's address space) with their permissions: reservations are ---p (PROT_NONE). */
static void NOINLINE big_mappings(void)
{
	void *p = NULL;
	cudaStream_t s = 0;
	if (!check("cudaMallocAsync", cudaMallocAsync(&p, 1 << 20, s)))
		cudaFreeAsync(p, s);
	cudaStreamSynchronize(s);
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];
	while (f && fgets(line, sizeof line, f)) {
		unsigned long lo, hi;
		char perms[8];
		if (sscanf(line, "%lx-%lx %7s", &lo, &hi, perms) == 3 && hi - lo >= (1ul << 30))
			printf("mapping of %.1f GiB: %s", (hi - lo) / 1073741824.0, line);
	}
	if (f)
		fclose(f);
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* n cudaMalloc(1 MiB) + cudaFree pairs; ns per pair. */
static double NOINLINE pairs(unsigned n)
{
	double t0 = now();
	for (unsigned i = 0; i < n; i++) {
		void *p = NULL;
		if (cudaMalloc(&p, 1 << 20) || cudaFree(p))
			return -1;
	}
	return (now() - t0) * 1e9 / n;
}

static CUpti_SubscriberHandle sub;

static void set_mode(int mode)
{
	CUpti_CallbackId rt[] = {CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020, CUPTI_RUNTIME_TRACE_CBID_cudaFree_v3020};
	CUpti_CallbackId drv[] = {CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2, CUPTI_DRIVER_TRACE_CBID_cuMemFree_v2};
	for (int i = 0; i < 2; i++) {
		cuptiEnableCallback(mode >= 1, sub, CUPTI_CB_DOMAIN_RUNTIME_API, rt[i]);
		cuptiEnableCallback(mode >= 1, sub, CUPTI_CB_DOMAIN_DRIVER_API, drv[i]);
	}
	if (mode == 2)
		cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMORY2);
	else
		cuptiActivityDisable(CUPTI_ACTIVITY_KIND_MEMORY2);
}

static void bench_modes(unsigned n)
{
	const char *names[] = {"subscribed, nothing enabled", "callbacks (runtime + driver)",
			       "callbacks + MEMORY2 records"};
	double best[3] = {1e18, 1e18, 1e18};
	for (int round = 0; round < 5; round++)
		for (int mode = 0; mode < 3; mode++) {
			set_mode(mode);
			double ns = pairs(n);
			cuptiActivityFlushAll(1);
			if (ns > 0 && ns < best[mode])
				best[mode] = ns;
		}
	printf("cudaMalloc(1 MiB)+cudaFree, %u pairs, best of 5 interleaved rounds:\n", n);
	for (int mode = 0; mode < 3; mode++)
		printf("  %-30s %9.1f ns per pair (%.2fx)\n", names[mode], best[mode], best[mode] / best[0]);
}

int main(int argc, char **argv)
{
	int count = 0;
	if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
		printf("cupti_facts: no GPU\n");
		return 77;
	}
	if (argc == 3 && !strcmp(argv[1], "--pairs")) {
		unsigned n = (unsigned)strtoul(argv[2], NULL, 10);
		pairs(n / 10 + 1); /* warm */
		printf("pairs %u ns_per_pair %.1f\n", n, pairs(n));
		return 0;
	}
	if (argc != 1) {
		fprintf(stderr, "usage: cupti_facts [--pairs N]\n");
		return 2;
	}
	cudaFree(NULL); /* the context, before watching */
	if (check("cuptiSubscribe", (int)cuptiSubscribe(&sub, on_callback, NULL)) ||
	    check("cuptiEnableDomain(runtime)", (int)cuptiEnableDomain(1, sub, CUPTI_CB_DOMAIN_RUNTIME_API)) ||
	    check("cuptiEnableDomain(driver)", (int)cuptiEnableDomain(1, sub, CUPTI_CB_DOMAIN_DRIVER_API)) ||
	    check("cuptiActivityRegisterCallbacks", (int)cuptiActivityRegisterCallbacks(on_request, on_complete)) ||
	    check("cuptiActivityEnable(MEMORY2)", (int)cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMORY2)))
		return 1;
	observe();
	cuptiActivityFlushAll(1);
	print_facts();
	pinned();
	big_mappings();
	cuptiEnableDomain(0, sub, CUPTI_CB_DOMAIN_RUNTIME_API);
	cuptiEnableDomain(0, sub, CUPTI_CB_DOMAIN_DRIVER_API);
	bench_modes(20000);
	cuptiActivityFlushAll(1);
	cuptiUnsubscribe(sub);
	return 0;
}
