/* SPDX-License-Identifier: MIT */
/* mgp_cupti.c: the CUPTI callback handlers for CUDA allocation calls and their bookkeeping:
 * device pointers in mgp_live (under MGP_CUPTI_KEY_BIT), VMM handles and mappings in two small
 * tables here. It never links libcupti (dlopen from mgp_cupti_start only), never calls CUPTI after
 * a fork, and never calls malloc or stdio inside a callback. */
#define _GNU_SOURCE
#include "mgp_cupti.h"

#include <dlfcn.h>
#include <errno.h>
#include <sched.h>
#include <stddef.h>
#include <string.h>

#include "mgc_format.h"
#include "mgp_live.h"
#include "mgp_os.h"
#include "mgp_sites.h"

#ifndef MGP_CUPTI_PATH
#define MGP_CUPTI_PATH "/usr/local/cuda/lib64/libcupti.so.13"
#endif

/* ---- VMM tables: handle -> (bytes, site, mappings, released) and mapped va -> (handle, bytes) ----
 * VMM calls are rare (PyTorch maps 2 MB / 20 MB steps), so one spinlock covers both tables. Open
 * addressing with linear probing and backward-shift deletion; key 0 marks an empty slot. */

#define VMM_CAP (1u << 16) /* per table: 64k handles = 128 GiB in 2 MB steps */

struct vmm_entry {
	uint64_t key;
	uint64_t bytes;
	uint64_t handle;   /* mappings: the handle mapped */
	uint32_t site;     /* handles: the cuMemCreate site */
	uint32_t birth;
	uint32_t maps;     /* handles: live mappings */
	uint32_t released; /* handles: cuMemRelease seen */
};

struct vmm_table {
	struct vmm_entry *tab;
	uint32_t count;
};

/* The module's whole state. */
static struct {
	const struct mgp_cupti_sink *sink;
	int alive;                 /* handlers run (init done, no fork since) */
	int vmm_lock;
	struct vmm_table handles, maps;
	CUpti_SubscriberHandle sub;
	struct mgp_cupti_stats st; /* relaxed atomics */
} C;

/* Depth of runtime allocation calls on this thread: driver callbacks inside one are its own
 * implementation and must not count again. */
static __thread int tls_rt_depth __attribute__((tls_model("initial-exec")));

static inline void stat_add(uint64_t *c, uint64_t v)
{
	__atomic_fetch_add(c, v, __ATOMIC_RELAXED);
}

static inline void stat_sub(uint64_t *c, uint64_t v)
{
	__atomic_fetch_sub(c, v, __ATOMIC_RELAXED);
}

static inline void vmm_lock(void)
{
	while (__atomic_exchange_n(&C.vmm_lock, 1, __ATOMIC_ACQUIRE))
		while (__atomic_load_n(&C.vmm_lock, __ATOMIC_RELAXED))
			sched_yield();
}

static inline void vmm_unlock(void)
{
	__atomic_store_n(&C.vmm_lock, 0, __ATOMIC_RELEASE);
}

static inline uint32_t vmm_slot(uint64_t key)
{
	key *= 0x9e3779b97f4a7c15ull;
	return (uint32_t)(key >> 48) & (VMM_CAP - 1);
}

static struct vmm_entry *vmm_find(struct vmm_table *t, uint64_t key)
{
	for (uint32_t i = vmm_slot(key);; i = (i + 1) & (VMM_CAP - 1)) {
		if (t->tab[i].key == key)
			return &t->tab[i];
		if (t->tab[i].key == 0)
			return NULL;
	}
}

/* Inserts (or replaces) e. 0, or -ENOMEM when the table is full. */
static int vmm_put(struct vmm_table *t, const struct vmm_entry *e)
{
	struct vmm_entry *old = vmm_find(t, e->key);
	if (old) {
		*old = *e;
		return 0;
	}
	if (t->count >= VMM_CAP - VMM_CAP / 8)
		return -ENOMEM;
	uint32_t i = vmm_slot(e->key);
	while (t->tab[i].key)
		i = (i + 1) & (VMM_CAP - 1);
	t->tab[i] = *e;
	t->count++;
	return 0;
}

static void vmm_del(struct vmm_table *t, struct vmm_entry *e)
{
	uint32_t i = (uint32_t)(e - t->tab), j = i;
	for (;;) {
		j = (j + 1) & (VMM_CAP - 1);
		if (t->tab[j].key == 0)
			break;
		uint32_t k = vmm_slot(t->tab[j].key);
		/* Move j back to i unless its home slot k lies cyclically in (i, j]. */
		int stays = i <= j ? (i < k && k <= j) : (i < k || k <= j);
		if (!stays) {
			t->tab[i] = t->tab[j];
			i = j;
		}
	}
	t->tab[i].key = 0;
	t->count--;
}

/* ---- recording ---- */

static inline int recording(void)
{
	return __atomic_load_n(&C.alive, __ATOMIC_RELAXED) && C.sink->active();
}

static void site_alloc(uint32_t site, uint64_t bytes, uint32_t birth)
{
	mgp_site_on_alloc(mgp_site_get(site), bytes, birth);
	stat_add(&C.st.allocs, 1);
	stat_add(&C.st.live_bytes, bytes);
}

static void site_free(uint32_t site, uint64_t bytes, uint32_t birth)
{
	mgp_site_on_free(mgp_site_get(site), bytes, birth);
	stat_add(&C.st.frees, 1);
	stat_sub(&C.st.live_bytes, bytes);
}

static void dev_free(uint64_t ptr)
{
	struct mgp_entry en;
	if (ptr && mgp_live_remove(ptr | MGP_CUPTI_KEY_BIT, &en))
		site_free(en.site, en.size, en.birth);
}

static void dev_alloc(uint64_t ptr, uint64_t bytes)
{
	if (!ptr)
		return; /* cudaMalloc(&p, 0) succeeds with NULL */
	C.sink->guard(1);
	dev_free(ptr); /* a free we missed: the address is new memory now */
	uint32_t site = C.sink->capture();
	uint32_t birth = C.sink->birth();
	if (mgp_live_insert(ptr | MGP_CUPTI_KEY_BIT, bytes, site, birth) == 0)
		site_alloc(site, bytes, birth);
	else
		C.sink->oom();
	C.sink->guard(0);
}

/* A handle's physical memory goes when it is released and no mapping still uses it. */
static void handle_settle(struct vmm_entry *h)
{
	if (!h->released || h->maps)
		return;
	site_free(h->site, h->bytes, h->birth);
	stat_sub(&C.st.vmm_handles, 1);
	vmm_del(&C.handles, h);
}

static void vmm_create(uint64_t handle, uint64_t bytes)
{
	if (!handle)
		return;
	C.sink->guard(1);
	uint32_t site = C.sink->capture();
	uint32_t birth = C.sink->birth();
	struct vmm_entry e = {.key = handle, .bytes = bytes, .site = site, .birth = birth};
	vmm_lock();
	struct vmm_entry *old = vmm_find(&C.handles, handle);
	if (old) { /* a release we missed */
		site_free(old->site, old->bytes, old->birth);
		stat_sub(&C.st.vmm_handles, 1);
		vmm_del(&C.handles, old);
	}
	if (vmm_put(&C.handles, &e) == 0) {
		site_alloc(site, bytes, birth);
		stat_add(&C.st.vmm_handles, 1);
	} else {
		C.sink->oom();
	}
	vmm_unlock();
	C.sink->guard(0);
}

static void vmm_release(uint64_t handle)
{
	vmm_lock();
	struct vmm_entry *h = vmm_find(&C.handles, handle);
	if (h && handle) {
		h->released = 1;
		handle_settle(h);
	}
	vmm_unlock();
}

static void vmm_map(uint64_t va, uint64_t bytes, uint64_t handle)
{
	if (!va)
		return;
	vmm_lock();
	struct vmm_entry m = {.key = va, .bytes = bytes, .handle = handle};
	if (vmm_put(&C.maps, &m) == 0) {
		stat_add(&C.st.vmm_mapped_bytes, bytes);
		struct vmm_entry *h = vmm_find(&C.handles, handle);
		if (h)
			h->maps++;
	}
	vmm_unlock();
}

/* cuMemUnmap takes whole mappings; a range may cover several adjacent ones. */
static void vmm_unmap(uint64_t va, uint64_t bytes)
{
	vmm_lock();
	uint64_t end = va + bytes;
	while (va && va < end) {
		struct vmm_entry *m = vmm_find(&C.maps, va);
		if (!m)
			break;
		uint64_t n = m->bytes, handle = m->handle;
		vmm_del(&C.maps, m);
		stat_sub(&C.st.vmm_mapped_bytes, n);
		struct vmm_entry *h = vmm_find(&C.handles, handle);
		if (h && h->maps) {
			h->maps--;
			handle_settle(h);
		}
		if (n == 0)
			break;
		va += n;
	}
	vmm_unlock();
}

/* ---- the handler ----
 * One row per traced call: what it does and where its pointer and size sit in its `*_params`
 * struct (offsets taken from the CUPTI headers' own structs). */

enum op { OP_ALLOC, OP_FREE, OP_CREATE, OP_RELEASE, OP_MAP, OP_UNMAP, OP_RESERVE, OP_ADDRESS_FREE };

struct call {
	CUpti_CallbackId id;
	uint8_t op;
	uint8_t ptr;  /* offset: OP_ALLOC, OP_CREATE, OP_RESERVE: the output pointer's address;
			 otherwise the pointer / handle / va itself */
	uint8_t size; /* offset of the size_t size (unused for frees and releases) */
	uint8_t handle; /* OP_MAP: offset of the handle */
};

#define ROW(prefix, name, op, ptrf, sizef, handlef)                                              \
	{prefix##name, op, offsetof(name##_params, ptrf), offsetof(name##_params, sizef),        \
	 offsetof(name##_params, handlef)}
#define RT(name, op, ptrf, sizef) ROW(CUPTI_RUNTIME_TRACE_CBID_, name, op, ptrf, sizef, ptrf)
#define DRV(name, op, ptrf, sizef) ROW(CUPTI_DRIVER_TRACE_CBID_, name, op, ptrf, sizef, ptrf)

static const struct call runtime_calls[] = {
	RT(cudaMalloc_v3020, OP_ALLOC, devPtr, size),
	RT(cudaMallocHost_v3020, OP_ALLOC, ptr, size),
	RT(cudaHostAlloc_v3020, OP_ALLOC, pHost, size),
	RT(cudaMallocManaged_v6000, OP_ALLOC, devPtr, size),
	RT(cudaMallocAsync_v11020, OP_ALLOC, devPtr, size),
	RT(cudaMallocAsync_ptsz_v11020, OP_ALLOC, devPtr, size),
	RT(cudaMallocFromPoolAsync_v11020, OP_ALLOC, ptr, size),
	RT(cudaMallocFromPoolAsync_ptsz_v11020, OP_ALLOC, ptr, size),
	RT(cudaFree_v3020, OP_FREE, devPtr, devPtr),
	RT(cudaFreeHost_v3020, OP_FREE, ptr, ptr),
	RT(cudaFreeAsync_v11020, OP_FREE, devPtr, devPtr),
	RT(cudaFreeAsync_ptsz_v11020, OP_FREE, devPtr, devPtr),
};

static const struct call driver_calls[] = {
	DRV(cuMemAlloc_v2, OP_ALLOC, dptr, bytesize),
	DRV(cuMemAllocHost_v2, OP_ALLOC, pp, bytesize),
	DRV(cuMemHostAlloc, OP_ALLOC, pp, bytesize),
	DRV(cuMemAllocManaged, OP_ALLOC, dptr, bytesize),
	DRV(cuMemAllocAsync, OP_ALLOC, dptr, bytesize),
	DRV(cuMemAllocAsync_ptsz, OP_ALLOC, dptr, bytesize),
	DRV(cuMemFree_v2, OP_FREE, dptr, dptr),
	DRV(cuMemFreeHost, OP_FREE, p, p),
	DRV(cuMemFreeAsync, OP_FREE, dptr, dptr),
	DRV(cuMemFreeAsync_ptsz, OP_FREE, dptr, dptr),
	DRV(cuMemCreate, OP_CREATE, handle, size),
	DRV(cuMemRelease, OP_RELEASE, handle, handle),
	ROW(CUPTI_DRIVER_TRACE_CBID_, cuMemMap, OP_MAP, ptr, size, handle),
	DRV(cuMemUnmap, OP_UNMAP, ptr, size),
	DRV(cuMemAddressReserve, OP_RESERVE, ptr, size),
	DRV(cuMemAddressFree, OP_ADDRESS_FREE, ptr, size),
};

/* Every pointer, handle, CUdeviceptr and size these rows read is 8 bytes wide. */
_Static_assert(sizeof(void *) == 8 && sizeof(CUdeviceptr) == 8 && sizeof(size_t) == 8 &&
		       sizeof(CUmemGenericAllocationHandle) == 8,
	       "mgp_cupti reads 64-bit fields");

static const struct call *find_call(const struct call *t, unsigned n, CUpti_CallbackId id)
{
	for (unsigned i = 0; i < n; i++)
		if (t[i].id == id)
			return &t[i];
	return NULL;
}

#define NCALLS(t) (sizeof t / sizeof t[0])

static inline uint64_t field(const void *params, unsigned off)
{
	uint64_t v;
	memcpy(&v, (const char *)params + off, sizeof v);
	return v;
}

/* The value an output-pointer field points to (0 when the pointer is NULL). */
static inline uint64_t out_field(const void *params, unsigned off)
{
	uint64_t at = field(params, off), v = 0;
	if (at)
		memcpy(&v, (const void *)(uintptr_t)at, sizeof v);
	return v;
}

static void on_exit_call(const struct call *c, const void *prm)
{
	switch (c->op) {
	case OP_ALLOC:
		dev_alloc(out_field(prm, c->ptr), field(prm, c->size));
		break;
	case OP_FREE:
		dev_free(field(prm, c->ptr));
		break;
	case OP_CREATE:
		vmm_create(out_field(prm, c->ptr), field(prm, c->size));
		break;
	case OP_RELEASE:
		vmm_release(field(prm, c->ptr));
		break;
	case OP_MAP:
		vmm_map(field(prm, c->ptr), field(prm, c->size), field(prm, c->handle));
		break;
	case OP_UNMAP:
		vmm_unmap(field(prm, c->ptr), field(prm, c->size));
		break;
	case OP_RESERVE: /* address space only: a statistic, never memory */
		if (out_field(prm, c->ptr))
			stat_add(&C.st.vmm_reserved_bytes, field(prm, c->size));
		break;
	case OP_ADDRESS_FREE:
		stat_sub(&C.st.vmm_reserved_bytes, field(prm, c->size));
		break;
	}
}

void mgp_cupti_handle(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const CUpti_CallbackData *cb)
{
	if (!cb || !__atomic_load_n(&C.alive, __ATOMIC_RELAXED))
		return;
	const struct call *c;
	if (domain == CUPTI_CB_DOMAIN_RUNTIME_API) {
		if (!(c = find_call(runtime_calls, NCALLS(runtime_calls), cbid)))
			return;
		if (cb->callbackSite == CUPTI_API_ENTER) {
			tls_rt_depth++;
			return;
		}
		if (tls_rt_depth > 0)
			tls_rt_depth--;
	} else if (domain == CUPTI_CB_DOMAIN_DRIVER_API) {
		if (!(c = find_call(driver_calls, NCALLS(driver_calls), cbid)))
			return;
		if (tls_rt_depth > 0) {
			if (cb->callbackSite == CUPTI_API_EXIT)
				stat_add(&C.st.ignored_nested, 1);
			return;
		}
		if (cb->callbackSite != CUPTI_API_EXIT)
			return;
	} else {
		return;
	}
	/* Both cudaError_t and CUresult: 0 is success. */
	const int *ret = (const int *)cb->functionReturnValue;
	if (!ret || *ret != 0) {
		stat_add(&C.st.failed_calls, 1);
		return;
	}
	if (cb->functionParams && recording())
		on_exit_call(c, cb->functionParams);
}

/* ---- life cycle ---- */

int mgp_cupti_init(const struct mgp_cupti_sink *sink)
{
	if (C.sink)
		return 0;
	size_t n = VMM_CAP * sizeof(struct vmm_entry);
	C.handles.tab = mgp_os_alloc(n);
	C.maps.tab = mgp_os_alloc(n);
	if (!C.handles.tab || !C.maps.tab)
		return -ENOMEM;
	C.sink = sink;
	__atomic_store_n(&C.alive, 1, __ATOMIC_RELEASE);
	return 0;
}

static void CUPTIAPI on_callback(void *ud, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
				 const void *data)
{
	(void)ud;
	mgp_cupti_handle(domain, cbid, data);
}

typedef CUptiResult (*subscribe_fn)(CUpti_SubscriberHandle *, CUpti_CallbackFunc, void *);
typedef CUptiResult (*enable_fn)(uint32_t, CUpti_SubscriberHandle, CUpti_CallbackDomain, CUpti_CallbackId);
typedef CUptiResult (*unsubscribe_fn)(CUpti_SubscriberHandle);
typedef CUptiResult (*result_string_fn)(CUptiResult, const char **);

static const char *result_name(result_string_fn str, CUptiResult r)
{
	const char *s = NULL;
	if (!str || str(r, &s) != CUPTI_SUCCESS || !s)
		s = "unknown CUPTI error";
	return s;
}

int mgp_cupti_start(void)
{
	if (!__atomic_load_n(&C.alive, __ATOMIC_RELAXED))
		return -ENODEV;
	const char *names[] = {"libcupti.so.13", "libcupti.so", MGP_CUPTI_PATH};
	void *lib = NULL;
	for (unsigned i = 0; i < 3 && !lib; i++)
		lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
	if (!lib) {
		mgp_log("CUDA memory is not traced: cannot load libcupti.so.13 (%s); host profiling goes on",
			dlerror());
		return -ENOENT;
	}
	subscribe_fn subscribe = (subscribe_fn)dlsym(lib, "cuptiSubscribe");
	enable_fn enable = (enable_fn)dlsym(lib, "cuptiEnableCallback");
	unsubscribe_fn unsubscribe = (unsubscribe_fn)dlsym(lib, "cuptiUnsubscribe");
	result_string_fn str = (result_string_fn)dlsym(lib, "cuptiGetResultString");
	if (!subscribe || !enable || !unsubscribe) {
		mgp_log("CUDA memory is not traced: libcupti lacks cuptiSubscribe/cuptiEnableCallback; "
			"host profiling goes on");
		return -ENOENT;
	}
	CUptiResult r = subscribe(&C.sub, on_callback, NULL);
	if (r != CUPTI_SUCCESS) {
		if (r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED)
			mgp_log("CUDA memory is not traced: another CUPTI client (Nsight, torch.profiler) "
				"holds the subscription; host profiling goes on");
		else
			mgp_log("CUDA memory is not traced: cuptiSubscribe failed (%s, %d); host profiling "
				"goes on", result_name(str, r), (int)r);
		return r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED ? -EBUSY : -EIO;
	}
	struct {
		CUpti_CallbackDomain dom;
		const struct call *calls;
		unsigned n;
	} sets[] = {
		{CUPTI_CB_DOMAIN_RUNTIME_API, runtime_calls, NCALLS(runtime_calls)},
		{CUPTI_CB_DOMAIN_DRIVER_API, driver_calls, NCALLS(driver_calls)},
	};
	for (unsigned s = 0; s < 2; s++) {
		for (unsigned i = 0; i < sets[s].n; i++) {
			CUpti_CallbackId id = sets[s].calls[i].id;
			r = enable(1, C.sub, sets[s].dom, id);
			if (r != CUPTI_SUCCESS) {
				mgp_log("CUDA memory is not traced: cuptiEnableCallback(%u) failed (%s, %d); "
					"host profiling goes on", (unsigned)id, result_name(str, r), (int)r);
				unsubscribe(C.sub);
				return -EIO;
			}
		}
	}
	return 0;
}

void mgp_cupti_atfork_child(void)
{
	if (!__atomic_exchange_n(&C.alive, 0, __ATOMIC_RELAXED))
		return;
	/* The parent's device memory stays the parent's: zero the device sites in the child. */
	tls_rt_depth = 0;
	uint32_t n = mgp_sites_count();
	for (uint32_t id = 1; id < n; id++) {
		struct mgp_site *s = mgp_site_get(id);
		if (s->kind != MGC_KIND_DEVICE || !__atomic_load_n(&s->live_bytes, __ATOMIC_RELAXED))
			continue;
		for (unsigned k = 0; k < MGC_COHORTS; k++)
			s->cohorts[k] = 0;
		s->live_bytes = 0;
		mgp_site_mark(s);
	}
	C.vmm_lock = 0; /* a parent thread may have held it; the tables are unused from now on */
	memset(&C.st, 0, sizeof C.st);
}

int mgp_cupti_alive(void)
{
	return __atomic_load_n(&C.alive, __ATOMIC_RELAXED);
}

void mgp_cupti_stats(struct mgp_cupti_stats *out)
{
	uint64_t *src = (uint64_t *)&C.st, *dst = (uint64_t *)out;
	for (size_t i = 0; i < sizeof C.st / sizeof(uint64_t); i++)
		dst[i] = __atomic_load_n(&src[i], __ATOMIC_RELAXED);
}
