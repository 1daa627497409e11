/* SPDX-License-Identifier: MIT */
/* test_cupti_handlers.c: drives the probe's CUPTI handlers (mgp_cupti.c, linked from the probe's
 * own objects) with fake CUpti_CallbackData holding real `*_params` structs, and with hand-built
 * activity buffers of real CUpti_ActivityMemory4 / CUpti_ActivityMemoryPool3 records walked by the
 * real libcupti (which loads without a driver): no GPU, no driver. mgp_cupti_start is only checked
 * to fail politely. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "mg_test.h"
#include "mgc_format.h"
#include "mgc_trace.h"
#include "mgp_cupti.h"
#include "mgp_live.h"
#include "mgp_os.h"
#include "mgp_sites.h"
#include "mgp_trace.h"


/* ---- a sink standing in for the probe: sites are fake two-frame stacks chosen by the test ---- */

static int sink_on = 1, guard_depth, guard_max, ooms;
static uintptr_t cur_frame = 0x1000;
static uint32_t cur_corr; /* correlation id the next fake callbacks carry */

static int t_active(void) { return sink_on; }
static uint32_t t_capture(unsigned kind)
{
	uintptr_t ips[2] = {cur_frame, 0x4242};
	return mgp_sites_intern(ips, 2, kind);
}
static uint32_t t_birth(void) { return mgc_cohort_bucket(3); } /* the bucket of step 3 */
static void t_guard(int on)
{
	guard_depth += on ? 1 : -1;
	if (guard_depth > guard_max)
		guard_max = guard_depth;
}
static void t_oom(void) { ooms++; }

static const struct mgp_cupti_sink sink = {t_active, t_capture, t_birth, t_guard, t_oom};

/* ---- feeding calls ---- */

static void feed(CUpti_CallbackDomain dom, CUpti_CallbackId id, CUpti_ApiCallbackSite site,
		 void *params, int ret)
{
	CUpti_CallbackData cb = {0};
	cb.callbackSite = site;
	cb.functionName = "fake";
	cb.functionParams = params;
	cb.functionReturnValue = site == CUPTI_API_EXIT ? &ret : NULL;
	cb.correlationId = cur_corr;
	mgp_cupti_handle(dom, id, &cb);
}

/* A whole call, ENTER then EXIT, returning ret. */
static void call(CUpti_CallbackDomain dom, CUpti_CallbackId id, void *params, int ret)
{
	feed(dom, id, CUPTI_API_ENTER, params, 0);
	feed(dom, id, CUPTI_API_EXIT, params, ret);
}

#define RT CUPTI_CB_DOMAIN_RUNTIME_API
#define DRV CUPTI_CB_DOMAIN_DRIVER_API

static struct mgp_cupti_stats stats(void)
{
	struct mgp_cupti_stats s;
	mgp_cupti_stats(&s);
	return s;
}

static uint32_t site_id(uintptr_t frame, unsigned kind)
{
	uintptr_t saved = cur_frame;
	cur_frame = frame;
	uint32_t id = t_capture(kind);
	cur_frame = saved;
	return id;
}

/* The counters of a frame's site of this kind (CUDA sites are applied directly: no deltas). */
static struct mgp_site_counts *site_kind(uintptr_t frame, unsigned kind)
{
	return mgp_site_counts(site_id(frame, kind));
}

/* The device-memory site of a frame (no context in fake callbacks: device unknown). */
static struct mgp_site_counts *site_for(uintptr_t frame)
{
	return site_kind(frame, MGC_KIND_DEVICE);
}

static void *rt_malloc(size_t n, void *result, int ret)
{
	void *p = NULL;
	cudaMalloc_v3020_params prm = {&p, n};
	feed(RT, CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020, CUPTI_API_ENTER, &prm, 0);
	p = result; /* the runtime writes *devPtr before EXIT */
	feed(RT, CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020, CUPTI_API_EXIT, &prm, ret);
	return p;
}

static void rt_free(void *p)
{
	cudaFree_v3020_params prm = {p};
	call(RT, CUPTI_RUNTIME_TRACE_CBID_cudaFree_v3020, &prm, 0);
}

/* ---- tests ---- */

static void test_malloc_free(void)
{
	cur_frame = 0x1100;
	struct mgp_cupti_stats s0 = stats();
	char *base = (char *)0x7f0000000000ull;
	for (int i = 0; i < 10; i++)
		rt_malloc(1000 + i, base + (i << 20), 0);
	struct mgp_cupti_stats s1 = stats();
	MG_EQ(s1.allocs - s0.allocs, 10);
	MG_EQ(s1.live_bytes - s0.live_bytes, 10 * 1000 + 45);
	struct mgp_site_counts *site = site_for(0x1100);
	MG_EQ(mgp_site_get(site_id(0x1100, MGC_KIND_DEVICE))->kind, MGC_KIND_DEVICE);
	MG_EQ(site->allocs, 10);
	MG_EQ(site->live_bytes, 10045);
	MG_EQ(mgp_site_cohort(site, mgc_cohort_bucket(3)), 10045);
	for (int i = 0; i < 7; i++)
		rt_free(base + (i << 20));
	struct mgp_cupti_stats s2 = stats();
	MG_EQ(s2.frees - s1.frees, 7);
	MG_EQ(s2.live_bytes - s0.live_bytes, 1007 + 1008 + 1009);
	MG_EQ(site->frees, 7);
	MG_EQ(site->live_bytes, 3024);
	/* A device pointer lives under its own key: a host free of the same address finds nothing. */
	struct mgp_entry en;
	MG_EQ(mgp_live_remove((uint64_t)(uintptr_t)(base + (7 << 20)), &en), 0);
	MG_EQ(mgp_live_remove((uint64_t)(uintptr_t)(base + (7 << 20)) | MGP_CUPTI_KEY_BIT, &en), 1);
	MG_EQ(en.size, 1007);
	mgp_live_insert(en.ptr, en.size, en.site, en.bucket);
	for (int i = 7; i < 10; i++)
		rt_free(base + (i << 20));
	MG_EQ(site->live_bytes, 0);
	MG_EQ(stats().live_bytes, s0.live_bytes);
	/* Freeing an unknown pointer, or NULL, changes nothing. */
	rt_free((void *)0x1234000);
	rt_free(NULL);
	MG_EQ(stats().frees, s2.frees + 3);
	/* cudaMalloc(&p, 0) succeeds with NULL: nothing recorded. */
	rt_malloc(0, NULL, 0);
	MG_EQ(stats().allocs, s1.allocs);
	MG_EQ(guard_depth, 0);
	MG_EQ(guard_max, 1);
}

static void test_nested_driver_counted_once(void)
{
	cur_frame = 0x1200;
	struct mgp_cupti_stats s0 = stats();
	void *p = NULL;
	CUdeviceptr d = 0;
	cudaMalloc_v3020_params rp = {&p, 4096};
	cuMemAlloc_v2_params dp = {&d, 4096};
	feed(RT, CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020, CUPTI_API_ENTER, &rp, 0);
	feed(DRV, CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2, CUPTI_API_ENTER, &dp, 0);
	d = 0x7e0000000000ull;
	feed(DRV, CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2, CUPTI_API_EXIT, &dp, 0);
	p = (void *)(uintptr_t)d;
	feed(RT, CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020, CUPTI_API_EXIT, &rp, 0);
	struct mgp_cupti_stats s1 = stats();
	MG_EQ(s1.allocs - s0.allocs, 1);
	MG_EQ(s1.live_bytes - s0.live_bytes, 4096);
	MG_EQ(s1.ignored_nested - s0.ignored_nested, 1);
	/* The free, nested the same way, also once. */
	cudaFree_v3020_params rf = {p};
	cuMemFree_v2_params df = {d};
	feed(RT, CUPTI_RUNTIME_TRACE_CBID_cudaFree_v3020, CUPTI_API_ENTER, &rf, 0);
	call(DRV, CUPTI_DRIVER_TRACE_CBID_cuMemFree_v2, &df, 0);
	feed(RT, CUPTI_RUNTIME_TRACE_CBID_cudaFree_v3020, CUPTI_API_EXIT, &rf, 0);
	struct mgp_cupti_stats s2 = stats();
	MG_EQ(s2.frees - s1.frees, 1);
	MG_EQ(s2.live_bytes, s0.live_bytes);
	/* A driver call on its own (not inside a runtime call) counts. */
	d = 0;
	feed(DRV, CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2, CUPTI_API_ENTER, &dp, 0);
	d = 0x7e0000100000ull;
	feed(DRV, CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2, CUPTI_API_EXIT, &dp, 0);
	MG_EQ(stats().allocs - s2.allocs, 1);
	call(DRV, CUPTI_DRIVER_TRACE_CBID_cuMemFree_v2, &(cuMemFree_v2_params){d}, 0);
	MG_EQ(stats().live_bytes, s0.live_bytes);
	MG_EQ(site_for(0x1200)->allocs, 2);
}

static void test_other_kinds(void)
{
	cur_frame = 0x1300;
	struct mgp_cupti_stats s0 = stats();
	void *h = (void *)0x7d0000000000ull, *m = (void *)0x7d0000200000ull, *a = (void *)0x7d0000400000ull;
	void *q = (void *)0x7d0000600000ull, *hp = (void *)0x7d0000800000ull;
	void *out;
	out = h;
	call(RT, CUPTI_RUNTIME_TRACE_CBID_cudaMallocHost_v3020, &(cudaMallocHost_v3020_params){&out, 100}, 0);
	out = hp;
	call(RT, CUPTI_RUNTIME_TRACE_CBID_cudaHostAlloc_v3020, &(cudaHostAlloc_v3020_params){&out, 50, 0}, 0);
	out = m;
	call(RT, CUPTI_RUNTIME_TRACE_CBID_cudaMallocManaged_v6000,
	     &(cudaMallocManaged_v6000_params){&out, 200, 1}, 0);
	out = a;
	call(RT, CUPTI_RUNTIME_TRACE_CBID_cudaMallocAsync_v11020, &(cudaMallocAsync_v11020_params){&out, 300, NULL}, 0);
	out = q;
	call(RT, CUPTI_RUNTIME_TRACE_CBID_cudaMallocFromPoolAsync_ptsz_v11020,
	     &(cudaMallocFromPoolAsync_ptsz_v11020_params){&out, 400, NULL, NULL}, 0);
	MG_EQ(stats().allocs - s0.allocs, 5);
	MG_EQ(stats().live_bytes - s0.live_bytes, 1050);
	call(RT, CUPTI_RUNTIME_TRACE_CBID_cudaFreeHost_v3020, &(cudaFreeHost_v3020_params){h}, 0);
	call(RT, CUPTI_RUNTIME_TRACE_CBID_cudaFreeHost_v3020, &(cudaFreeHost_v3020_params){hp}, 0);
	call(RT, CUPTI_RUNTIME_TRACE_CBID_cudaFree_v3020, &(cudaFree_v3020_params){m}, 0);
	call(RT, CUPTI_RUNTIME_TRACE_CBID_cudaFreeAsync_ptsz_v11020, &(cudaFreeAsync_ptsz_v11020_params){a, NULL}, 0);
	call(RT, CUPTI_RUNTIME_TRACE_CBID_cudaFreeAsync_v11020, &(cudaFreeAsync_v11020_params){q, NULL}, 0);
	MG_EQ(stats().live_bytes, s0.live_bytes);
	MG_EQ(stats().frees - s0.frees, 5);
	/* Driver flavours. */
	void *pp = (void *)0x7c0000000000ull;
	CUdeviceptr dm = 0x7c0000200000ull, da = 0x7c0000400000ull;
	call(DRV, CUPTI_DRIVER_TRACE_CBID_cuMemAllocHost_v2, &(cuMemAllocHost_v2_params){&pp, 10}, 0);
	call(DRV, CUPTI_DRIVER_TRACE_CBID_cuMemAllocManaged, &(cuMemAllocManaged_params){&dm, 20, 1}, 0);
	call(DRV, CUPTI_DRIVER_TRACE_CBID_cuMemAllocAsync_ptsz, &(cuMemAllocAsync_ptsz_params){&da, 30, NULL}, 0);
	MG_EQ(stats().live_bytes - s0.live_bytes, 60);
	/* Each kind is its own site: pinned host, managed, device (async and pool included). */
	struct mgp_site_counts *pin = site_kind(0x1300, MGC_KIND_PINNED), *man = site_kind(0x1300, MGC_KIND_MANAGED);
	struct mgp_site_counts *dev = site_kind(0x1300, MGC_KIND_DEVICE);
	MG_EQ(pin->allocs, 3);
	MG_EQ(pin->alloc_bytes, 160);
	MG_EQ(pin->live_bytes, 10);
	MG_EQ(man->allocs, 2);
	MG_EQ(man->live_bytes, 20);
	MG_EQ(dev->allocs, 3);
	MG_EQ(dev->alloc_bytes, 730);
	MG_EQ(dev->live_bytes, 30);
	call(DRV, CUPTI_DRIVER_TRACE_CBID_cuMemFreeHost, &(cuMemFreeHost_params){pp}, 0);
	call(DRV, CUPTI_DRIVER_TRACE_CBID_cuMemFree_v2, &(cuMemFree_v2_params){dm}, 0);
	call(DRV, CUPTI_DRIVER_TRACE_CBID_cuMemFreeAsync, &(cuMemFreeAsync_params){da, NULL}, 0);
	MG_EQ(stats().live_bytes, s0.live_bytes);
}

static void test_failed_calls(void)
{
	cur_frame = 0x1400;
	struct mgp_cupti_stats s0 = stats();
	rt_malloc(1 << 20, (void *)0x7b0000000000ull, 2 /* cudaErrorMemoryAllocation */);
	CUdeviceptr d = 0x7b0000200000ull;
	call(DRV, CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2, &(cuMemAlloc_v2_params){&d, 64}, 2);
	CUmemGenericAllocationHandle h = 0x77;
	call(DRV, CUPTI_DRIVER_TRACE_CBID_cuMemCreate, &(cuMemCreate_params){&h, 1 << 21, NULL, 0}, 2);
	struct mgp_cupti_stats s1 = stats();
	MG_EQ(s1.allocs, s0.allocs);
	MG_EQ(s1.live_bytes, s0.live_bytes);
	MG_EQ(s1.vmm_handles, s0.vmm_handles);
	MG_EQ(s1.failed_calls - s0.failed_calls, 3);
	/* A failed free leaves the allocation live. */
	rt_malloc(64, (void *)0x7b0000400000ull, 0);
	call(RT, CUPTI_RUNTIME_TRACE_CBID_cudaFree_v3020, &(cudaFree_v3020_params){(void *)0x7b0000400000ull}, 1);
	MG_EQ(stats().live_bytes - s0.live_bytes, 64);
	rt_free((void *)0x7b0000400000ull);
	MG_EQ(stats().live_bytes, s0.live_bytes);
	/* The probe not recording: nothing. */
	sink_on = 0;
	rt_malloc(64, (void *)0x7b0000600000ull, 0);
	sink_on = 1;
	MG_EQ(stats().allocs - s0.allocs, 1);
	MG_EQ(site_for(0x1400)->allocs, 1);
}

static void vmm_reserve(CUdeviceptr *va, size_t n)
{
	call(DRV, CUPTI_DRIVER_TRACE_CBID_cuMemAddressReserve, &(cuMemAddressReserve_params){va, n, 0, 0, 0}, 0);
}

static void vmm_create(CUmemGenericAllocationHandle h, size_t n)
{
	call(DRV, CUPTI_DRIVER_TRACE_CBID_cuMemCreate, &(cuMemCreate_params){&h, n, NULL, 0}, 0);
}

/* cuMemCreate with properties naming where the memory is. */
static void vmm_create_at(CUmemGenericAllocationHandle h, size_t n, CUmemLocationType type, int id)
{
	CUmemAllocationProp prop = {0};
	prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
	prop.location.type = type;
	prop.location.id = id;
	call(DRV, CUPTI_DRIVER_TRACE_CBID_cuMemCreate, &(cuMemCreate_params){&h, n, &prop, 0}, 0);
}

static void vmm_map(CUdeviceptr va, size_t n, CUmemGenericAllocationHandle h)
{
	call(DRV, CUPTI_DRIVER_TRACE_CBID_cuMemMap, &(cuMemMap_params){va, n, 0, h, 0}, 0);
}

static void vmm_unmap(CUdeviceptr va, size_t n)
{
	call(DRV, CUPTI_DRIVER_TRACE_CBID_cuMemUnmap, &(cuMemUnmap_params){va, n}, 0);
}

static void vmm_release(CUmemGenericAllocationHandle h)
{
	call(DRV, CUPTI_DRIVER_TRACE_CBID_cuMemRelease, &(cuMemRelease_params){h}, 0);
}

static void test_vmm(void)
{
	const size_t MB2 = 2u << 20;
	cur_frame = 0x1500;
	struct mgp_cupti_stats s0 = stats();
	/* PyTorch expandable segments: reserve 1 GiB, then grow in 2 MB handles. */
	CUdeviceptr va = 0x7a0000000000ull;
	vmm_reserve(&va, 1u << 30);
	MG_EQ(stats().vmm_reserved_bytes - s0.vmm_reserved_bytes, 1u << 30);
	MG_EQ(stats().live_bytes, s0.live_bytes); /* address space is not memory */
	MG_EQ(stats().allocs, s0.allocs);
	for (unsigned i = 0; i < 4; i++) {
		vmm_create(0x100 + i, MB2);
		vmm_map(va + i * MB2, MB2, 0x100 + i);
	}
	struct mgp_cupti_stats s1 = stats();
	MG_EQ(s1.vmm_handles - s0.vmm_handles, 4);
	MG_EQ(s1.live_bytes - s0.live_bytes, 4 * MB2);
	MG_EQ(s1.vmm_mapped_bytes - s0.vmm_mapped_bytes, 4 * MB2);
	MG_EQ(site_for(0x1500)->live_bytes, 4 * MB2);
	/* Shrink: unmap + release the last handle. */
	vmm_unmap(va + 3 * MB2, MB2);
	MG_EQ(stats().live_bytes - s0.live_bytes, 4 * MB2); /* still held by the handle */
	vmm_release(0x103);
	MG_EQ(stats().live_bytes - s0.live_bytes, 3 * MB2);
	MG_EQ(stats().vmm_handles - s0.vmm_handles, 3);
	/* The other order: release while mapped keeps the memory until the unmap. */
	vmm_release(0x102);
	MG_EQ(stats().live_bytes - s0.live_bytes, 3 * MB2);
	vmm_unmap(va + 2 * MB2, MB2);
	MG_EQ(stats().live_bytes - s0.live_bytes, 2 * MB2);
	/* One unmap covering two adjacent mappings. */
	vmm_release(0x100);
	vmm_release(0x101);
	MG_EQ(stats().live_bytes - s0.live_bytes, 2 * MB2);
	vmm_unmap(va, 2 * MB2);
	struct mgp_cupti_stats s2 = stats();
	MG_EQ(s2.live_bytes, s0.live_bytes);
	MG_EQ(s2.vmm_handles, s0.vmm_handles);
	MG_EQ(s2.vmm_mapped_bytes, s0.vmm_mapped_bytes);
	MG_EQ(s2.frees - s0.frees, 4);
	MG_EQ(site_for(0x1500)->live_bytes, 0);
	call(DRV, CUPTI_DRIVER_TRACE_CBID_cuMemAddressFree, &(cuMemAddressFree_params){va, 1u << 30}, 0);
	MG_EQ(stats().vmm_reserved_bytes, s0.vmm_reserved_bytes);
	/* A handle created and released without ever being mapped. */
	vmm_create(0x200, MB2);
	MG_EQ(stats().live_bytes - s0.live_bytes, MB2);
	vmm_release(0x200);
	MG_EQ(stats().live_bytes, s0.live_bytes);
	/* The VMM driver calls made inside a runtime call are its implementation: not counted. */
	void *p = NULL;
	cudaMalloc_v3020_params rp = {&p, MB2};
	feed(RT, CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020, CUPTI_API_ENTER, &rp, 0);
	vmm_create(0x300, MB2);
	p = (void *)0x790000000000ull;
	feed(RT, CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020, CUPTI_API_EXIT, &rp, 0);
	MG_EQ(stats().live_bytes - s0.live_bytes, MB2);
	MG_EQ(stats().vmm_handles, s0.vmm_handles);
	rt_free(p);
	MG_EQ(stats().live_bytes, s0.live_bytes);
	/* The properties name the device (its own site, device 1 in the kind) or host memory. */
	cur_frame = 0x1510;
	vmm_create_at(0x400, MB2, CU_MEM_LOCATION_TYPE_DEVICE, 1);
	vmm_create_at(0x401, MB2, CU_MEM_LOCATION_TYPE_HOST, 0);
	struct mgp_site_counts *d1 = site_kind(0x1510, mgc_kind_make(MGC_KIND_DEVICE, 1));
	struct mgp_site_counts *hm = site_kind(0x1510, MGC_KIND_PINNED);
	unsigned d1_kind = mgp_site_get(site_id(0x1510, mgc_kind_make(MGC_KIND_DEVICE, 1)))->kind;
	MG_EQ(d1_kind, 0x202);
	MG_EQ(mgc_kind_device(d1_kind), 1);
	MG_EQ(d1->live_bytes, MB2);
	MG_EQ(hm->live_bytes, MB2);
	MG_EQ(site_for(0x1510)->allocs, 0);
	vmm_release(0x400);
	vmm_release(0x401);
	MG_EQ(stats().live_bytes, s0.live_bytes);
}

/* ---- activity records ---- */

static _Alignas(8) uint8_t actbuf[64 * 1024];
static size_t actlen;

static void mem_record(uint32_t corr, int alloc, uint64_t addr, uint64_t bytes, uint32_t kind,
		       uint32_t stream, uint32_t device, uint64_t pool, uint64_t pool_size)
{
	CUpti_ActivityMemory4 r;
	memset(&r, 0, sizeof r);
	r.kind = CUPTI_ACTIVITY_KIND_MEMORY2;
	r.memoryOperationType = alloc ? CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION
				      : CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE;
	r.memoryKind = (CUpti_ActivityMemoryKind)kind;
	r.correlationId = corr;
	r.address = addr;
	r.bytes = bytes;
	r.deviceId = device;
	r.streamId = stream;
	r.isAsync = pool != 0;
	if (pool) {
		r.memoryPoolConfig.memoryPoolType = CUPTI_ACTIVITY_MEMORY_POOL_TYPE_LOCAL;
		r.memoryPoolConfig.address = pool;
		r.memoryPoolConfig.pool.size = pool_size;
	}
	memcpy(actbuf + actlen, &r, sizeof r);
	actlen += sizeof r;
}

static void pool_record(CUpti_ActivityMemoryPoolOperationType op, uint64_t pool, uint64_t size, uint32_t device)
{
	CUpti_ActivityMemoryPool3 r;
	memset(&r, 0, sizeof r);
	r.kind = CUPTI_ACTIVITY_KIND_MEMORY_POOL;
	r.memoryPoolOperationType = op;
	r.memoryPoolType = CUPTI_ACTIVITY_MEMORY_POOL_TYPE_LOCAL;
	r.address = pool;
	r.size = size;
	r.deviceId = device;
	memcpy(actbuf + actlen, &r, sizeof r);
	actlen += sizeof r;
}

/* Hands the buffer to the handler as CUPTI's completed-buffer callback would. */
static void deliver(void)
{
	mgp_cupti_activity_buffer(actbuf, actlen);
	actlen = 0;
}

/* A flush that delivers nothing: entries age by one. */
static void age(unsigned n)
{
	while (n--)
		mgp_cupti_flush(0);
}

static struct mgc_rec_devsite devsite_of(uint32_t site, int *found)
{
	struct mgc_rec_devsite ds[64], r = {0};
	uint32_t n = mgp_cupti_take_devsites(ds, 64);
	*found = 0;
	for (uint32_t i = 0; i < n; i++) {
		if (ds[i].site == site) {
			r = ds[i];
			(*found)++;
		}
	}
	return r;
}

/* The memory kind of most records below. */
static const uint32_t DEVICE = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;

/* The activity records of test_activity, after its first call and record joined. */
static void activity_joins(struct mgp_cupti_stats s0, uint32_t site)
{
	int found;
	struct mgc_rec_devsite d;
	/* The record first (delivered between the driver's work and the API exit), then the call. */
	cur_corr = 202;
	mem_record(202, 1, 0x770000100000ull, 8192, DEVICE, 9, 0, 0, 0);
	deliver();
	MG_EQ(stats().joined_allocs - s0.joined_allocs, 1);
	rt_malloc(8192, (void *)0x770000100000ull, 0);
	MG_EQ(stats().joined_allocs - s0.joined_allocs, 2);
	d = devsite_of(site, &found);
	MG_EQ(found, 1);
	MG_EQ(d.stream, 9);
	MG_EQ(d.flags, 0);
	MG_EQ(d.records, 2);
	/* A runtime call's record may carry its nested driver call's id: either joins, once. */
	cur_corr = 301;
	void *p = NULL;
	CUdeviceptr dp = 0;
	cudaMalloc_v3020_params rp = {&p, 1024};
	cuMemAlloc_v2_params dprm = {&dp, 1024};
	feed(RT, CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020, CUPTI_API_ENTER, &rp, 0);
	cur_corr = 302;
	feed(DRV, CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2, CUPTI_API_ENTER, &dprm, 0);
	dp = 0x770000200000ull;
	feed(DRV, CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2, CUPTI_API_EXIT, &dprm, 0);
	p = (void *)(uintptr_t)dp;
	cur_corr = 301;
	feed(RT, CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020, CUPTI_API_EXIT, &rp, 0);
	mem_record(302, 1, 0x770000200000ull, 1024, DEVICE, 3, 0, 0, 0);
	deliver();
	MG_EQ(stats().joined_allocs - s0.joined_allocs, 3);
	/* Releases join their frees. */
	cur_corr = 401;
	rt_free((void *)0x770000000000ull);
	mem_record(401, 0, 0x770000000000ull, 4096, DEVICE, 7, 0, 0, 0);
	deliver();
	MG_EQ(stats().free_records - s0.free_records, 1);
	MG_EQ(stats().joined_frees - s0.joined_frees, 1);
	/* A record that disagrees with its call is joined and flagged. */
	cur_corr = 501;
	rt_malloc(100, (void *)0x770000300000ull, 0);
	mem_record(501, 1, 0x770000300000ull, 512, DEVICE, 3, 0, 0, 0);
	deliver();
	MG_EQ(stats().join_mismatches - s0.join_mismatches, 1);
	d = devsite_of(site, &found);
	MG_EQ(d.flags & MGC_DEVSITE_MISMATCH, MGC_DEVSITE_MISMATCH);
	MG_EQ(d.records, 4);
	struct mgp_cupti_stats s1 = stats();
	MG_EQ(s1.callback_only, s0.callback_only);
	MG_EQ(s1.record_only, s0.record_only);
}

/* Records lost either way: a call whose record never comes, a record no call saw. */
static void activity_lost(struct mgp_cupti_stats s0)
{
	/* A dropped record: the call waits a few flushes, then is given up (it stays recorded). */
	cur_corr = 601;
	rt_malloc(64, (void *)0x770000400000ull, 0);
	age(2);
	MG_EQ(stats().callback_only, s0.callback_only);
	age(1);
	MG_EQ(stats().callback_only - s0.callback_only, 1);
	MG_EQ(site_for(0x1700)->live_bytes, 8192 + 1024 + 100 + 64);
	/* A record no callback saw (a call the callbacks missed): counted, never memory. */
	uint64_t live = stats().live_bytes;
	mem_record(701, 1, 0x770000500000ull, 1u << 20, DEVICE, 0, 0, 0, 0);
	/* __device__ variables: no call to join. */
	mem_record(0, 1, 0x770000600000ull, 4096, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE_STATIC, 0, 0, 0, 0);
	deliver();
	age(3);
	MG_EQ(stats().record_only - s0.record_only, 1);
	MG_EQ(stats().record_only_bytes - s0.record_only_bytes, 1u << 20);
	MG_EQ(stats().static_bytes - s0.static_bytes, 4096);
	MG_EQ(stats().live_bytes, live);
}

/* Pool records, then the final flush. */
static void activity_pools(struct mgp_cupti_stats s0)
{
	struct mgc_devmem_cell cells[8];
	/* Pools: created, grown (allocation records carry the pool's size), trimmed, destroyed. */
	pool_record(CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_CREATED, 0x76e000000000ull, 32u << 20, 1);
	deliver();
	MG_EQ(stats().pool_records - s0.pool_records, 1);
	MG_EQ(mgp_cupti_pool_cells(cells, 8), 2);
	MG_EQ(cells[1].kind, mgc_kind_make(MGC_KIND_POOL, 1));
	MG_EQ(cells[1].bytes, 32u << 20);
	pool_record(CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_TRIMMED, 0x76f000000000ull, 2u << 20, 0);
	deliver();
	mgp_cupti_pool_cells(cells, 8);
	MG_EQ(cells[0].bytes, 2u << 20);
	pool_record(CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_DESTROYED, 0x76f000000000ull, 0, 0);
	pool_record(CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_DESTROYED, 0x76e000000000ull, 0, 1);
	deliver();
	MG_EQ(mgp_cupti_pool_cells(cells, 8), 0);
	/* The final flush gives up whatever is left and ends joining. */
	cur_corr = 801;
	rt_free((void *)0x770000100000ull);
	mgp_cupti_flush(1);
	MG_EQ(stats().callback_only - s0.callback_only, 2);
	MG_EQ(mgp_cupti_activity_on(), 0);
	for (uint64_t a = 0x770000200000ull; a <= 0x770000400000ull; a += 0x100000)
		rt_free((void *)a);
	MG_EQ(site_for(0x1700)->live_bytes, 0);
	cur_corr = 0;
}

/* The activity records joined to their calls (CUPTI.md): the first call and record here, then
 * the other orders, lost records and pool records. */
static void test_activity(void)
{
	if (mgp_cupti_load() < 0) {
		MG_FAIL("test_activity: libcupti does not load");
		return;
	}
	mgp_cupti_set_joining(1);
	int found;
	struct mgp_cupti_stats s0 = stats();
	/* Callback first, then its record (the usual order): stream and pool go to the site. */
	cur_frame = 0x1700;
	cur_corr = 101;
	rt_malloc(4096, (void *)0x770000000000ull, 0);
	uint32_t site = site_id(0x1700, MGC_KIND_DEVICE);
	mem_record(101, 1, 0x770000000000ull, 4096, DEVICE, 7, 0, 0x76f000000000ull, 64u << 20);
	deliver();
	MG_EQ(stats().alloc_records - s0.alloc_records, 1);
	MG_EQ(stats().joined_allocs - s0.joined_allocs, 1);
	struct mgc_rec_devsite d = devsite_of(site, &found);
	MG_EQ(found, 1);
	MG_EQ(d.stream, 7);
	MG_EQ(d.device, 0);
	MG_EQ(d.mem_kind, DEVICE);
	MG_EQ(d.flags, MGC_DEVSITE_ASYNC | MGC_DEVSITE_POOL);
	MG_EQ(d.pool_type, CUPTI_ACTIVITY_MEMORY_POOL_TYPE_LOCAL);
	MG_EQ(d.pool_address, 0x76f000000000ull);
	MG_EQ(d.records, 1);
	devsite_of(site, &found);
	MG_EQ(found, 0); /* taken once, until it changes */
	struct mgc_devmem_cell cells[8];
	MG_EQ(mgp_cupti_pool_cells(cells, 8), 1);
	MG_EQ(cells[0].kind, mgc_kind_make(MGC_KIND_POOL, 0));
	MG_EQ(cells[0].bytes, 64u << 20);
	MG_EQ(cells[0].count, 1);
	activity_joins(s0, site);
	activity_lost(s0);
	activity_pools(s0);
}

/* Thousands of calls pending at once (a crowded join table: entries move when others are
 * deleted), each a runtime call with a nested driver call whose id the record carries, the
 * records delivered in a shuffled order: every one joins, and nothing is left over. */
static void test_join_crowded(void)
{
	enum { N = 5000 };
	static uint32_t order[N];
	mgp_cupti_set_joining(1);
	struct mgp_cupti_stats s0 = stats();
	cur_frame = 0x1800;
	for (uint32_t i = 0; i < N; i++) {
		void *p = NULL;
		CUdeviceptr dp = 0;
		cudaMalloc_v3020_params rp = {&p, 256};
		cuMemAlloc_v2_params dprm = {&dp, 256};
		cur_corr = 100000 + 2 * i;
		feed(RT, CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020, CUPTI_API_ENTER, &rp, 0);
		cur_corr = 100001 + 2 * i;
		feed(DRV, CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2, CUPTI_API_ENTER, &dprm, 0);
		dp = 0x760000000000ull + ((uint64_t)i << 12);
		feed(DRV, CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2, CUPTI_API_EXIT, &dprm, 0);
		p = (void *)(uintptr_t)dp;
		cur_corr = 100000 + 2 * i;
		feed(RT, CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020, CUPTI_API_EXIT, &rp, 0);
		order[i] = i;
	}
	uint64_t x = 88172645463325252ull; /* xorshift: a fixed shuffle */
	for (uint32_t i = N - 1; i > 0; i--) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		uint32_t j = (uint32_t)(x % (i + 1)), tmp = order[i];
		order[i] = order[j];
		order[j] = tmp;
	}
	for (uint32_t k = 0; k < N; k++) {
		uint32_t i = order[k];
		mem_record(100001 + 2 * i, 1, 0x760000000000ull + ((uint64_t)i << 12), 256,
			   CUPTI_ACTIVITY_MEMORY_KIND_DEVICE, 1, 0, 0, 0);
		if (actlen + sizeof(CUpti_ActivityMemory4) > sizeof actbuf)
			deliver();
	}
	deliver();
	struct mgp_cupti_stats s1 = stats();
	MG_EQ(s1.joined_allocs - s0.joined_allocs, N);
	MG_EQ(s1.join_mismatches, s0.join_mismatches);
	MG_EQ(s1.join_full, s0.join_full);
	mgp_cupti_flush(1); /* nothing may be left to give up */
	MG_EQ(stats().callback_only, s0.callback_only);
	MG_EQ(stats().record_only, s0.record_only);
	for (uint32_t i = 0; i < N; i++)
		rt_free((void *)(uintptr_t)(0x760000000000ull + ((uint64_t)i << 12)));
	MG_EQ(site_for(0x1800)->live_bytes, 0);
	cur_corr = 0;
}

/* A mebibyte, for the sizes below. */
static const uint64_t MB = 1 << 20;

/* test_trace_roundtrip's writer side: host, device, pinned and managed memory, a pool, a device
 * allocation between two snapshots, then two snapshots. */
static void roundtrip_write(const char *path)
{
	static const struct mgp_trace_cuda cuda = {mgp_cupti_pool_cells, mgp_cupti_take_devsites};
	struct mgp_process info = {.pid = getpid(), .ppid = getppid(), .start_mono_ns = mgp_now_ns(),
				   .interval_ms = 1000, .depth = 64, .rank = -1, .local_rank = -1};
	MG_EQ(mgp_trace_open(path, 0, &info), 0);
	mgp_trace_set_cuda(&cuda);
	mgp_cupti_set_joining(1);
	cur_frame = 0x1900;
	cur_corr = 900001;
	rt_malloc(3 * MB, (void *)0x750000000000ull, 0);
	mem_record(900001, 1, 0x750000000000ull, 3 * MB, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE, 5, 0,
		   0x74f000000000ull, 8 * MB);
	deliver();
	cur_corr = 0;
	vmm_create_at(0x900, 2 * MB, CU_MEM_LOCATION_TYPE_DEVICE, 1);
	void *out = (void *)0x750000400000ull;
	call(RT, CUPTI_RUNTIME_TRACE_CBID_cudaMallocHost_v3020, &(cudaMallocHost_v3020_params){&out, MB}, 0);
	out = (void *)0x750000800000ull;
	call(RT, CUPTI_RUNTIME_TRACE_CBID_cudaMallocManaged_v6000,
	     &(cudaMallocManaged_v6000_params){&out, 4 * MB, 1}, 0);
	mgp_trace_write_stacks();
	/* A device allocation made and freed between two snapshots (gpu-alloc's cudaMallocAsync
	 * four times over, on the H100), its stack new to the file: its site is in the file, though it
	 * never held memory at a snapshot. */
	cur_frame = 0x1a00;
	rt_malloc(MB, (void *)0x750000c00000ull, 0);
	rt_free((void *)0x750000c00000ull);
	cur_frame = 0x1900;
	mgp_trace_snapshot(&(struct mgc_rec_snapshot){.step = 1, .flags = MGC_SNAP_STEP | MGC_SNAP_FULL});
	call(RT, CUPTI_RUNTIME_TRACE_CBID_cudaFreeHost_v3020, &(cudaFreeHost_v3020_params){(void *)0x750000400000ull}, 0);
	mgp_trace_snapshot(&(struct mgc_rec_snapshot){.step = 2, .flags = MGC_SNAP_STEP});
	MG_EQ(mgp_trace_flush(), 0);
	mgp_trace_close();
}

/* ... its DEVMEM cells, by kind, at both snapshots. */
static void roundtrip_cells(const struct mgc_trace *t)
{
	MG_EQ(t->npoints, 2);
	MG_EQ(t->last.device, 3 * MB + 2 * MB + 4 * MB);
	MG_EQ(t->points[0].device, 3 * MB + 2 * MB + MB + 4 * MB);
	MG_EQ(t->ndevcells, 5);
	uint64_t want_kinds[5] = {mgc_kind_make(MGC_KIND_DEVICE, -1), mgc_kind_make(MGC_KIND_DEVICE, 1),
				  MGC_KIND_PINNED, MGC_KIND_MANAGED, mgc_kind_make(MGC_KIND_POOL, 0)};
	uint64_t first[5] = {3 * MB, 2 * MB, MB, 4 * MB, 8 * MB}, last[5] = {3 * MB, 2 * MB, 0, 4 * MB, 8 * MB};
	/* Cells come in the order the file first saw them with memory: found here by kind. */
	size_t at[5];
	for (size_t w = 0; w < 5; w++) {
		size_t k = 0;
		while (k < t->ndevcells && t->devcells[k].kind != want_kinds[w])
			k++;
		MG_EQ(k < t->ndevcells, 1);
		at[w] = k < t->ndevcells ? k : 0;
		MG_EQ(t->points[0].dev[at[w]], first[w]);
		MG_EQ(t->points[1].dev[at[w]], last[w]);
		MG_EQ(t->devcells[at[w]].peak, first[w]);
	}
	MG_EQ(t->devcells[at[2]].count, 0);
	MG_EQ(t->devcells[at[3]].count, 1);
	MG_EQ(t->devcells[at[4]].count, 1);
}

/* ... its sites: kind, device, the DEVSITE details of a joined one. */
static void roundtrip_sites(const struct mgc_trace *t)
{
	uint32_t dev_site = site_id(0x1900, MGC_KIND_DEVICE);
	uint32_t d1_site = site_id(0x1900, mgc_kind_make(MGC_KIND_DEVICE, 1));
	const struct mgc_site *ds = dev_site < t->nsites ? t->sites[dev_site] : NULL;
	MG_EQ(ds && ds->kind == MGC_KIND_DEVICE && ds->counters.live_bytes == 3 * MB, 1);
	MG_EQ(ds && ds->cuda && ds->cuda->stream == 5 && ds->cuda->pool_address == 0x74f000000000ull &&
			 ds->cuda->records == 1 && ds->cuda->flags == (MGC_DEVSITE_ASYNC | MGC_DEVSITE_POOL), 1);
	const struct mgc_site *d1 = d1_site < t->nsites ? t->sites[d1_site] : NULL;
	MG_EQ(d1 && mgc_kind_device(d1->kind) == 1 && d1->counters.live_bytes == 2 * MB && !d1->cuda, 1);
	uint32_t tr_site = site_id(0x1a00, MGC_KIND_DEVICE);
	const struct mgc_site *tr = tr_site < t->nsites ? t->sites[tr_site] : NULL;
	MG_EQ(tr && tr->nframes > 0 && tr->counters.allocs == 1 && tr->counters.frees == 1 &&
		      tr->counters.live_bytes == 0, 1);
}

/* The probe's trace writer and mgreport's reader: CUDA sites keep their kind and device, each
 * snapshot is followed by DEVMEM cells (a cell that went to zero stays, a pool's reserved bytes),
 * DEVSITE carries a joined site's details, and device_live_bytes is all CUDA kinds. */
static void test_trace_roundtrip(void)
{
	char path[] = "/tmp/mg-cupti-trace-XXXXXX";
	int fd = mkstemp(path);
	if (fd < 0 || mgp_trace_init(1) < 0) {
		MG_FAIL("test_trace_roundtrip: setup failed");
		return;
	}
	close(fd);
	roundtrip_write(path);

	struct mgc_trace *t = NULL;
	char err[256];
	if (mgc_trace_load(path, &t, err, sizeof err) < 0) {
		MG_FAIL("test_trace_roundtrip: %s", err);
		unlink(path);
		return;
	}
	roundtrip_cells(t);
	roundtrip_sites(t);
	mgc_trace_free(t);
	unlink(path);
	mgp_cupti_set_joining(0);
	rt_free((void *)0x750000000000ull);
	vmm_release(0x900);
	call(RT, CUPTI_RUNTIME_TRACE_CBID_cudaFree_v3020, &(cudaFree_v3020_params){(void *)0x750000800000ull}, 0);
}

static void test_fork(void)
{
	cur_frame = 0x1600;
	rt_malloc(5000, (void *)0x780000000000ull, 0);
	struct mgp_site_counts *site = site_for(0x1600);
	MG_EQ(site->live_bytes, 5000);
	fflush(stderr);
	pid_t pid = fork();
	if (pid == 0) {
		/* What the probe's atfork child handler does (never subscribed here: returns 0). */
		int bad = mgp_cupti_atfork_child() != 0;
		bad |= mgp_cupti_alive() != 0;
		bad |= site->live_bytes != 0;
		bad |= mgp_site_cohort(site, mgc_cohort_bucket(3)) != 0;
		rt_malloc(64, (void *)0x780000200000ull, 0);
		rt_free((void *)0x780000000000ull);
		struct mgp_cupti_stats s = stats();
		bad |= s.allocs != 0 || s.frees != 0 || s.live_bytes != 0;
		/* emptied, counts too: the child's trace lists no CUDA site (GPU run 1's gpu-alloc) */
		bad |= site->allocs != 0 || site->alloc_bytes != 0 || site->peak_bytes != 0;
		_exit(bad ? 1 : 0);
	}
	int st = 0;
	MG_EQ(waitpid(pid, &st, 0), pid);
	MG_EQ(WIFEXITED(st) && WEXITSTATUS(st) == 0, 1);
	/* The parent is untouched. */
	MG_EQ(mgp_cupti_alive(), 1);
	MG_EQ(site->live_bytes, 5000);
	rt_free((void *)0x780000000000ull);
	MG_EQ(site->live_bytes, 0);
}

/* Without a GPU, mgp_cupti_start must fail with one line and leave the handlers working. */
static void test_start_without_driver(void)
{
	if (access("/dev/nvidiactl", F_OK) == 0) {
		fprintf(stderr, "test_start_without_driver: a driver is present, not checked here\n");
		return;
	}
	int r = mgp_cupti_start(1);
	MG_TRUE(r == -EIO || r == -ENOENT, "mgp_cupti_start returned %d, expected -EIO or -ENOENT", r);
	MG_EQ(mgp_cupti_alive(), 1);
}

/* A full site table (PyTorch's start-up fills a million) still gives CUDA allocations their own
 * sites with whole stacks: host stacks go to the overflow site, CUDA ones to the CUDA room. */
static void test_cuda_room(void)
{
	uintptr_t ips[40];
	for (unsigned k = 0; k < 40; k++)
		ips[k] = 0x7000000 + k * 16;
	uint32_t id = 0;
	for (unsigned i = 0; i < 8192 && id != MGC_SITE_OVERFLOW; i++) {
		ips[0] = 0x9000000 + i * 16;
		id = mgp_sites_intern(ips, 40, MGC_KIND_HEAP);
	}
	MG_EQ(id, MGC_SITE_OVERFLOW, "host stacks past MGPROBE_MAX_SITES go to the overflow site");
	unsigned made = 0, whole = 0;
	for (unsigned i = 0; i < 100; i++) {
		ips[0] = 0xa000000 + i * 16;
		uint32_t c = mgp_sites_intern(ips, 40, mgc_kind_make(MGC_KIND_DEVICE, 0));
		const struct mgp_site *s = c != MGC_SITE_OVERFLOW ? mgp_site_get(c) : NULL;
		made += s != NULL;
		whole += s && s->nframes == 40 && mgc_kind_is_cuda(s->kind);
	}
	MG_EQ(made, 100, "CUDA sites made in a full table");
	uint32_t room = mgp_sites_intern(ips, 40, mgc_kind_make(MGC_KIND_DEVICE, 0));
	static uint32_t ids[1u << 16];
	mgp_sites_take_dirty(ids); /* what earlier tests left */
	mgp_sites_mark(room, MGP_SITE_LIVE);
	uint32_t nd = mgp_sites_take_dirty(ids);
	MG_TRUE(room >= 4096 && nd == 1 && ids[0] == room, "a changed site in the CUDA room reaches the "
		"snapshot (id %u, %u dirty, first %u)", room, nd, nd ? ids[0] : 0);
	MG_EQ(whole, 100, "with their whole stacks and kind");
	ips[0] = 0x9ffff00;
	MG_EQ(mgp_sites_intern(ips, 40, MGC_KIND_HEAP), MGC_SITE_OVERFLOW, "host stacks still overflow");
}

int main(void)
{
	if (mgp_sites_init(4096) < 0 || mgp_cupti_init(&sink) < 0) {
		fprintf(stderr, "init failed\n");
		return 1;
	}
	test_malloc_free();
	test_nested_driver_counted_once();
	test_other_kinds();
	test_failed_calls();
	test_vmm();
	test_activity();
	test_join_crowded();
	test_trace_roundtrip();
	test_start_without_driver();
	test_cuda_room(); /* fills the table: after every test that makes sites */
	test_fork(); /* last: it checks the parent stays alive */
	MG_EQ(ooms, 0);
	return mg_test_done("cupti handlers");
}
