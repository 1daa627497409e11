/* SPDX-License-Identifier: MIT */
/* mgp_cupti.c: CUDA memory through CUPTI. The callback handlers turn allocation calls into
 * device sites (pointers in mgp_live under MGP_CUPTI_KEY_BIT, VMM handles and mappings in two
 * small tables here); activity records (MEMORY2, MEMORY_POOL) arrive later on CUPTI's thread and
 * are joined to their calls by correlation id for the details the callbacks lack (stream, pool,
 * the record's own kind and device), and give the stream-ordered pools' reserved sizes. It never
 * links libcupti (dlopen only), never calls CUPTI after a fork, and never calls malloc or stdio
 * inside a callback. */
#define _GNU_SOURCE
#include "mgp_cupti.h"

#include <dlfcn.h>
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "mgc_format.h"
#include "mgc_hash.h"
#include "mgp_live.h"
#include "mgp_os.h"
#include "mgp_sites.h"
#include "mgp_spin.h"

#ifndef MGP_CUPTI_PATH
#define MGP_CUPTI_PATH "/usr/local/cuda/lib64/libcupti.so.13"
#endif

/* ---- VMM tables: handle -> (bytes, site, mappings, released) and mapped va -> (handle, bytes) ----
 * VMM calls are rare (PyTorch maps 2 MiB / 20 MiB steps), so one spinlock covers both tables. Open
 * addressing with linear probing and backward-shift deletion; key 0 marks an empty slot. */

#define VMM_CAP (1u << 16) /* per table: 64k handles = 128 GiB in 2 MiB steps */

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

/* ---- joining activity records to their calls ----
 * One entry per correlation id holding whichever half came first: the callback's (site, pointer,
 * size) or the record's details. The other half completes it and the entry goes. A runtime call's
 * nested driver call has its own correlation id; both ids are entered (partners), so a record
 * carrying either joins. Entries left half-done for JOIN_AGE flushes are given up: a record never
 * came (dropped, or a call MEMORY2 does not report) or no callback saw the call. */

#define JOIN_CAP (1u << 14)
#define JOIN_AGE 3u

enum { HALF_CB = 1, HALF_REC = 2 };

struct join_entry {
	uint32_t corr;     /* key; 0 = empty */
	uint32_t partner;  /* the same call's other correlation id, 0 none */
	uint8_t half;      /* HALF_CB or HALF_REC */
	uint8_t alloc;     /* 1 allocation, 0 release */
	uint8_t alias;     /* the partner entry holds the data */
	uint8_t pad;
	uint32_t epoch;    /* flush count when entered */
	uint32_t site;     /* HALF_CB */
	uint64_t addr, bytes;
	struct mgc_rec_devsite rec; /* HALF_REC: the record's details (site unset) */
};

/* ---- device-site details and stream-ordered pools (from activity records) ---- */

#define DETAIL_CAP 4096u
#define POOL_CAP 64u

struct detail {
	struct mgc_rec_devsite d; /* d.site == 0: empty */
	int dirty;
};

struct pool {
	uint64_t address; /* 0 = empty */
	uint64_t size;
	uint32_t device;
};

/* A few contexts per process: context -> device ordinal, filled on first use. */
#define CTX_CAP 32u

typedef CUptiResult (*subscribe_fn)(CUpti_SubscriberHandle *, CUpti_CallbackFunc, void *);
typedef CUptiResult (*enable_fn)(uint32_t, CUpti_SubscriberHandle, CUpti_CallbackDomain, CUpti_CallbackId);
typedef CUptiResult (*unsubscribe_fn)(CUpti_SubscriberHandle);
typedef CUptiResult (*result_string_fn)(CUptiResult, const char **);
typedef CUptiResult (*device_id_fn)(CUcontext, uint32_t *);
typedef CUptiResult (*register_fn)(CUpti_BuffersCallbackRequestFunc, CUpti_BuffersCallbackCompleteFunc);
typedef CUptiResult (*activity_enable_fn)(CUpti_ActivityKind);
typedef CUptiResult (*flush_fn)(uint32_t);
typedef CUptiResult (*next_record_fn)(uint8_t *, size_t, CUpti_Activity **);
typedef CUptiResult (*dropped_fn)(CUcontext, uint32_t, size_t *);
typedef CUptiResult (*timestamp_fn)(CUpti_TimestampCallbackFunc);

/* The CUDA tracer's whole state. alive, activity and started are this part's own health (CUPTI
 * usable in this process, records joined, subscribed); whether to record at all is the probe's
 * state, asked through sink->active. */
static struct {
	const struct mgp_cupti_sink *sink;
	int alive;                 /* handlers run (init done, no fork since) */
	int activity;              /* activity records are enabled: calls are entered for joining */
	int started;               /* subscribed: CUDA allocations are being traced */
	int vmm_lock, join_lock, ctx_lock;
	struct vmm_table handles, maps;
	struct join_entry *join;
	uint32_t join_count, epoch;
	struct detail *details;
	uint32_t ndetails;
	struct pool pools[POOL_CAP];
	struct {
		CUcontext ctx;
		int device;
	} ctx[CTX_CAP];
	uint32_t nctx;
	CUpti_SubscriberHandle sub;
	struct {
		subscribe_fn subscribe;
		enable_fn enable;
		unsubscribe_fn unsubscribe;
		result_string_fn result_string;
		device_id_fn device_id;
		register_fn register_buffers;
		activity_enable_fn activity_enable;
		flush_fn flush;
		next_record_fn next_record;
		dropped_fn dropped;
		timestamp_fn timestamp;
	} api;
	void *free_bufs[8];        /* activity buffers handed back, for reuse */
	int buf_lock;
	struct mgp_cupti_stats st; /* relaxed atomics */
} cuda;

#define ACT_BUF_SIZE (1u << 20)

/* Depth of runtime allocation calls on this thread: driver callbacks inside one are its own
 * implementation and must not count again. tls_nested_corr: the correlation id of the last
 * such driver allocation or release call, the runtime call's partner for joining. */
static __thread int tls_rt_depth __attribute__((tls_model("initial-exec")));
static __thread uint32_t tls_nested_corr __attribute__((tls_model("initial-exec")));

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
	mgp_spin_lock(&cuda.vmm_lock);
}

static inline void vmm_unlock(void)
{
	mgp_spin_unlock(&cuda.vmm_lock);
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

static uint64_t vmm_home(const void *e)
{
	return vmm_slot(((const struct vmm_entry *)e)->key);
}

static int vmm_empty(const void *e)
{
	return ((const struct vmm_entry *)e)->key == 0;
}

static void vmm_del(struct vmm_table *t, struct vmm_entry *e)
{
	uint64_t i = (uint64_t)(e - t->tab);
	t->tab[mgc_oa_delete(t->tab, sizeof *t->tab, VMM_CAP - 1, i, vmm_home, vmm_empty)].key = 0;
	t->count--;
}

/* ---- recording ---- */

static inline int recording(void)
{
	return __atomic_load_n(&cuda.alive, __ATOMIC_RELAXED) && cuda.sink->active();
}

static void site_alloc(uint32_t site, uint64_t bytes, uint32_t birth)
{
	mgp_site_on_alloc(site, bytes, birth);
	stat_add(&cuda.st.allocs, 1);
	stat_add(&cuda.st.live_bytes, bytes);
}

static void site_free(uint32_t site, uint64_t bytes, uint32_t birth)
{
	mgp_site_on_free(site, bytes, birth);
	stat_add(&cuda.st.frees, 1);
	stat_sub(&cuda.st.live_bytes, bytes);
}

static void dev_free(uint64_t ptr)
{
	struct mgp_entry en;
	if (ptr && mgp_live_remove(ptr | MGP_CUPTI_KEY_BIT, &en))
		site_free(en.site, en.size, en.bucket);
}

/* The site of the calling stack for this kind code; 0 when the allocation is not recorded. */
static uint32_t dev_alloc(uint64_t ptr, uint64_t bytes, unsigned kind)
{
	if (!ptr)
		return 0; /* cudaMalloc(&p, 0) succeeds with NULL */
	cuda.sink->guard(1);
	dev_free(ptr); /* a free we missed: the address is new memory now */
	uint32_t site = cuda.sink->capture(kind);
	uint32_t birth = cuda.sink->birth();
	if (mgp_live_insert(ptr | MGP_CUPTI_KEY_BIT, bytes, site, birth) == 0) {
		site_alloc(site, bytes, birth);
	} else {
		cuda.sink->oom();
		site = 0;
	}
	cuda.sink->guard(0);
	return site;
}

/* A handle's physical memory goes when it is released and no mapping still uses it. */
static void handle_settle(struct vmm_entry *h)
{
	if (!h->released || h->maps)
		return;
	site_free(h->site, h->bytes, h->birth);
	stat_sub(&cuda.st.vmm_handles, 1);
	vmm_del(&cuda.handles, h);
}

static void vmm_create(uint64_t handle, uint64_t bytes, unsigned kind)
{
	if (!handle)
		return;
	cuda.sink->guard(1);
	uint32_t site = cuda.sink->capture(kind);
	uint32_t birth = cuda.sink->birth();
	struct vmm_entry e = {.key = handle, .bytes = bytes, .site = site, .birth = birth};
	vmm_lock();
	struct vmm_entry *old = vmm_find(&cuda.handles, handle);
	if (old) { /* a release we missed */
		site_free(old->site, old->bytes, old->birth);
		stat_sub(&cuda.st.vmm_handles, 1);
		vmm_del(&cuda.handles, old);
	}
	if (vmm_put(&cuda.handles, &e) == 0) {
		site_alloc(site, bytes, birth);
		stat_add(&cuda.st.vmm_handles, 1);
	} else {
		cuda.sink->oom();
	}
	vmm_unlock();
	cuda.sink->guard(0);
}

static void vmm_release(uint64_t handle)
{
	vmm_lock();
	struct vmm_entry *h = vmm_find(&cuda.handles, handle);
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
	if (vmm_put(&cuda.maps, &m) == 0) {
		stat_add(&cuda.st.vmm_mapped_bytes, bytes);
		struct vmm_entry *h = vmm_find(&cuda.handles, handle);
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
		struct vmm_entry *m = vmm_find(&cuda.maps, va);
		if (!m)
			break;
		uint64_t n = m->bytes, handle = m->handle;
		vmm_del(&cuda.maps, m);
		stat_sub(&cuda.st.vmm_mapped_bytes, n);
		struct vmm_entry *h = vmm_find(&cuda.handles, handle);
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

/* ---- the device a call ran on ---- */

/* The device of a callback's context: cuptiGetDeviceId once per context, then a table. -1 when
 * unknown (no context, CUPTI not loaded, or CUPTI refused). */
static int context_device(CUcontext ctx)
{
	if (!ctx)
		return -1;
	uint32_t n = __atomic_load_n(&cuda.nctx, __ATOMIC_ACQUIRE);
	for (uint32_t i = 0; i < n; i++)
		if (cuda.ctx[i].ctx == ctx)
			return cuda.ctx[i].device;
	uint32_t dev;
	if (!cuda.api.device_id || cuda.api.device_id(ctx, &dev) != CUPTI_SUCCESS || dev > 254)
		return -1;
	mgp_spin_lock(&cuda.ctx_lock);
	n = cuda.nctx;
	if (n < CTX_CAP) {
		cuda.ctx[n].ctx = ctx;
		cuda.ctx[n].device = (int)dev;
		__atomic_store_n(&cuda.nctx, n + 1, __ATOMIC_RELEASE);
	}
	mgp_spin_unlock(&cuda.ctx_lock);
	return (int)dev;
}

/* ---- site details and pools (join lock held) ---- */

static struct detail *detail_for(uint32_t site)
{
	uint32_t i = (site * 2654435761u) & (DETAIL_CAP - 1);
	for (uint32_t k = 0; k < DETAIL_CAP; k++, i = (i + 1) & (DETAIL_CAP - 1)) {
		if (cuda.details[i].d.site == site)
			return &cuda.details[i];
		if (cuda.details[i].d.site == 0) {
			if (cuda.ndetails >= DETAIL_CAP - DETAIL_CAP / 8)
				return NULL;
			cuda.ndetails++;
			cuda.details[i].d.site = site;
			return &cuda.details[i];
		}
	}
	return NULL;
}

static void pool_set(uint64_t address, uint64_t size, uint32_t device)
{
	if (!address)
		return;
	struct pool *free_slot = NULL;
	for (unsigned i = 0; i < POOL_CAP; i++) {
		if (cuda.pools[i].address == address) {
			cuda.pools[i].size = size;
			cuda.pools[i].device = device;
			return;
		}
		if (!cuda.pools[i].address && !free_slot)
			free_slot = &cuda.pools[i];
	}
	if (free_slot)
		*free_slot = (struct pool){address, size, device};
	else
		stat_add(&cuda.st.pools_untracked, 1);
}

static void pool_drop(uint64_t address)
{
	for (unsigned i = 0; i < POOL_CAP; i++)
		if (cuda.pools[i].address == address && address)
			cuda.pools[i] = (struct pool){0};
}

/* ---- the join table (join lock held) ---- */

static uint32_t join_slot(uint32_t corr)
{
	return (corr * 2654435761u) >> 18; /* JOIN_CAP = 2^14 */
}

static struct join_entry *join_find(uint32_t corr)
{
	for (uint32_t i = join_slot(corr);; i = (i + 1) & (JOIN_CAP - 1)) {
		if (cuda.join[i].corr == corr)
			return &cuda.join[i];
		if (cuda.join[i].corr == 0)
			return NULL;
	}
}

static struct join_entry *join_add(uint32_t corr)
{
	if (cuda.join_count >= JOIN_CAP - JOIN_CAP / 8)
		return NULL;
	uint32_t i = join_slot(corr);
	while (cuda.join[i].corr)
		i = (i + 1) & (JOIN_CAP - 1);
	memset(&cuda.join[i], 0, sizeof cuda.join[i]);
	cuda.join[i].corr = corr;
	cuda.join[i].epoch = cuda.epoch;
	cuda.join_count++;
	return &cuda.join[i];
}

static uint64_t join_home(const void *e)
{
	return join_slot(((const struct join_entry *)e)->corr);
}

static int join_empty(const void *e)
{
	return ((const struct join_entry *)e)->corr == 0;
}

static void join_del(struct join_entry *e)
{
	uint64_t i = (uint64_t)(e - cuda.join);
	cuda.join[mgc_oa_delete(cuda.join, sizeof *cuda.join, JOIN_CAP - 1, i, join_home, join_empty)].corr = 0;
	cuda.join_count--;
}

/* Deletes e and its partner entry. */
static void join_del_pair(struct join_entry *e)
{
	uint32_t partner = e->partner;
	join_del(e);
	struct join_entry *p = partner ? join_find(partner) : NULL;
	if (p)
		join_del(p);
}

/* Both halves are here: the record's details go to the call's site. */
static void join_complete(uint32_t site, uint64_t addr, uint64_t bytes, int alloc,
			  const struct mgc_rec_devsite *rec, uint64_t rec_addr, uint64_t rec_bytes)
{
	int mismatch = rec_addr != addr || (alloc && rec_bytes != bytes);
	if (mismatch)
		stat_add(&cuda.st.join_mismatches, 1);
	if (!alloc) {
		stat_add(&cuda.st.joined_frees, 1);
		return;
	}
	stat_add(&cuda.st.joined_allocs, 1);
	struct detail *d = site ? detail_for(site) : NULL;
	if (!d) {
		if (site)
			stat_add(&cuda.st.details_untracked, 1);
		return;
	}
	uint32_t flags = (d->d.flags & MGC_DEVSITE_MISMATCH) | rec->flags |
			 (mismatch ? MGC_DEVSITE_MISMATCH : 0);
	if (d->d.stream != rec->stream || d->d.mem_kind != rec->mem_kind || d->d.device != rec->device ||
	    d->d.pool_type != rec->pool_type || d->d.pool_address != rec->pool_address ||
	    d->d.flags != flags || d->d.records == 0)
		d->dirty = 1;
	d->d.stream = rec->stream;
	d->d.mem_kind = rec->mem_kind;
	d->d.device = rec->device;
	d->d.pool_type = rec->pool_type;
	d->d.pool_address = rec->pool_address;
	d->d.flags = flags;
	d->d.records++;
}

/* The callback half of a call with correlation id corr (and partner, the nested driver call's). */
static void join_callback(uint32_t corr, uint32_t partner, int alloc, uint32_t site, uint64_t addr,
			  uint64_t bytes)
{
	if (!__atomic_load_n(&cuda.activity, __ATOMIC_ACQUIRE) || !corr)
		return;
	mgp_spin_lock(&cuda.join_lock);
	uint32_t ids[2] = {corr, partner};
	for (unsigned i = 0; i < 2; i++) {
		struct join_entry *e = ids[i] ? join_find(ids[i]) : NULL;
		if (e && e->half == HALF_REC) { /* the record came first */
			struct join_entry r = *e;
			join_del(e);
			join_complete(site, addr, bytes, alloc, &r.rec, r.addr, r.bytes);
			mgp_spin_unlock(&cuda.join_lock);
			return;
		}
	}
	struct join_entry *e = join_add(corr);
	if (e) {
		e->half = HALF_CB;
		e->alloc = (uint8_t)alloc;
		e->site = site;
		e->addr = addr;
		e->bytes = bytes;
		e->partner = partner;
		struct join_entry *a = partner && !join_find(partner) ? join_add(partner) : NULL;
		if (a) {
			a->half = HALF_CB;
			a->alias = 1;
			a->partner = corr;
		} else {
			e->partner = 0;
		}
	} else {
		stat_add(&cuda.st.join_full, 1);
	}
	mgp_spin_unlock(&cuda.join_lock);
}

static uint32_t devsite_mem_flags(const CUpti_ActivityMemory4 *m)
{
	uint32_t f = m->isAsync ? MGC_DEVSITE_ASYNC : 0;
	if (m->memoryPoolConfig.memoryPoolType != CUPTI_ACTIVITY_MEMORY_POOL_TYPE_INVALID)
		f |= MGC_DEVSITE_POOL;
	return f;
}

static void on_memory_record(const CUpti_ActivityMemory4 *m)
{
	int alloc = m->memoryOperationType == CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION;
	if (!alloc && m->memoryOperationType != CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE)
		return;
	stat_add(alloc ? &cuda.st.alloc_records : &cuda.st.free_records, 1);
	struct mgc_rec_devsite rec = {
		.stream = m->streamId,
		.mem_kind = (uint32_t)m->memoryKind,
		.device = m->deviceId,
		.pool_type = (uint32_t)m->memoryPoolConfig.memoryPoolType,
		.flags = devsite_mem_flags(m),
		.pool_address = m->memoryPoolConfig.address,
	};
	mgp_spin_lock(&cuda.join_lock);
	if (m->memoryPoolConfig.memoryPoolType == CUPTI_ACTIVITY_MEMORY_POOL_TYPE_LOCAL)
		pool_set(m->memoryPoolConfig.address, m->memoryPoolConfig.pool.size, m->deviceId);
	if (m->memoryKind == CUPTI_ACTIVITY_MEMORY_KIND_DEVICE_STATIC ||
	    m->memoryKind == CUPTI_ACTIVITY_MEMORY_KIND_MANAGED_STATIC || m->correlationId == 0) {
		/* a module's __device__ / __managed__ variables: no API call to join */
		if (alloc)
			stat_add(&cuda.st.static_bytes, m->bytes);
		mgp_spin_unlock(&cuda.join_lock);
		return;
	}
	struct join_entry *e = join_find(m->correlationId);
	if (e && e->half == HALF_CB) {
		if (e->alias) { /* the data is with the partner (the runtime call's id) */
			uint32_t partner = e->partner;
			join_del(e); /* may move entries: look the partner up after */
			e = join_find(partner);
		}
		if (e) {
			struct join_entry c = *e;
			join_del_pair(e);
			join_complete(c.site, c.addr, c.bytes, c.alloc, &rec, m->address, m->bytes);
		}
	} else if (!e) {
		e = join_add(m->correlationId);
		if (e) {
			e->half = HALF_REC;
			e->alloc = (uint8_t)alloc;
			e->addr = m->address;
			e->bytes = m->bytes;
			e->rec = rec;
		} else {
			stat_add(&cuda.st.join_full, 1);
		}
	} else {
		stat_add(&cuda.st.duplicate_records, 1); /* a second record for one call */
	}
	mgp_spin_unlock(&cuda.join_lock);
}

static void on_pool_record(const CUpti_ActivityMemoryPool3 *m)
{
	stat_add(&cuda.st.pool_records, 1);
	mgp_spin_lock(&cuda.join_lock);
	switch (m->memoryPoolOperationType) {
	case CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_CREATED:
	case CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_TRIMMED:
		if (m->memoryPoolType == CUPTI_ACTIVITY_MEMORY_POOL_TYPE_LOCAL)
			pool_set(m->address, m->size, m->deviceId);
		break;
	case CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_DESTROYED:
		pool_drop(m->address);
		break;
	default:
		break;
	}
	mgp_spin_unlock(&cuda.join_lock);
}

void mgp_cupti_activity_buffer(uint8_t *buf, size_t valid)
{
	if (!buf || !cuda.api.next_record || !cuda.join)
		return;
	CUpti_Activity *rec = NULL;
	for (;;) {
		CUptiResult r = cuda.api.next_record(buf, valid, &rec);
		if (r != CUPTI_SUCCESS)
			break; /* CUPTI_ERROR_MAX_LIMIT_REACHED: the end; anything else: stop too */
		if (rec->kind == CUPTI_ACTIVITY_KIND_MEMORY2)
			on_memory_record((const CUpti_ActivityMemory4 *)rec);
		else if (rec->kind == CUPTI_ACTIVITY_KIND_MEMORY_POOL)
			on_pool_record((const CUpti_ActivityMemoryPool3 *)rec);
	}
}

/* ---- the handler ----
 * One row per traced call: what it does, the memory it gives, and where its pointer and size sit
 * in its `*_params` struct (offsets taken from the CUPTI headers' own structs). */

enum op { OP_ALLOC, OP_FREE, OP_CREATE, OP_RELEASE, OP_MAP, OP_UNMAP, OP_RESERVE, OP_ADDRESS_FREE };

struct call {
	CUpti_CallbackId id;
	uint8_t op;
	uint8_t mem;  /* enum mgc_kind of OP_ALLOC (OP_CREATE: from the call's properties) */
	uint8_t ptr;  /* offset: OP_ALLOC, OP_CREATE, OP_RESERVE: the output pointer's address;
			 otherwise the pointer / handle / va itself */
	uint8_t size; /* offset of the size_t size (unused for frees and releases); OP_CREATE: of
			 the properties pointer in `handle` */
	uint8_t handle; /* OP_MAP: offset of the handle; OP_CREATE: of the properties pointer */
};

#define ROW(prefix, name, op, mem, ptrf, sizef, handlef)                                          \
	{prefix##name, op, mem, offsetof(name##_params, ptrf), offsetof(name##_params, sizef),    \
	 offsetof(name##_params, handlef)}
#define RT(name, op, mem, ptrf, sizef) ROW(CUPTI_RUNTIME_TRACE_CBID_, name, op, mem, ptrf, sizef, ptrf)
#define DRV(name, op, mem, ptrf, sizef) ROW(CUPTI_DRIVER_TRACE_CBID_, name, op, mem, ptrf, sizef, ptrf)

enum { DEV = MGC_KIND_DEVICE, PIN = MGC_KIND_PINNED, MAN = MGC_KIND_MANAGED };

static const struct call runtime_calls[] = {
	RT(cudaMalloc_v3020, OP_ALLOC, DEV, devPtr, size),
	RT(cudaMallocHost_v3020, OP_ALLOC, PIN, ptr, size),
	RT(cudaHostAlloc_v3020, OP_ALLOC, PIN, pHost, size),
	RT(cudaMallocManaged_v6000, OP_ALLOC, MAN, devPtr, size),
	RT(cudaMallocAsync_v11020, OP_ALLOC, DEV, devPtr, size),
	RT(cudaMallocAsync_ptsz_v11020, OP_ALLOC, DEV, devPtr, size),
	RT(cudaMallocFromPoolAsync_v11020, OP_ALLOC, DEV, ptr, size),
	RT(cudaMallocFromPoolAsync_ptsz_v11020, OP_ALLOC, DEV, ptr, size),
	RT(cudaFree_v3020, OP_FREE, DEV, devPtr, devPtr),
	RT(cudaFreeHost_v3020, OP_FREE, PIN, ptr, ptr),
	RT(cudaFreeAsync_v11020, OP_FREE, DEV, devPtr, devPtr),
	RT(cudaFreeAsync_ptsz_v11020, OP_FREE, DEV, devPtr, devPtr),
};

static const struct call driver_calls[] = {
	DRV(cuMemAlloc_v2, OP_ALLOC, DEV, dptr, bytesize),
	DRV(cuMemAllocHost_v2, OP_ALLOC, PIN, pp, bytesize),
	DRV(cuMemHostAlloc, OP_ALLOC, PIN, pp, bytesize),
	DRV(cuMemAllocManaged, OP_ALLOC, MAN, dptr, bytesize),
	DRV(cuMemAllocAsync, OP_ALLOC, DEV, dptr, bytesize),
	DRV(cuMemAllocAsync_ptsz, OP_ALLOC, DEV, dptr, bytesize),
	DRV(cuMemFree_v2, OP_FREE, DEV, dptr, dptr),
	DRV(cuMemFreeHost, OP_FREE, PIN, p, p),
	DRV(cuMemFreeAsync, OP_FREE, DEV, dptr, dptr),
	DRV(cuMemFreeAsync_ptsz, OP_FREE, DEV, dptr, dptr),
	ROW(CUPTI_DRIVER_TRACE_CBID_, cuMemCreate, OP_CREATE, DEV, handle, size, prop),
	DRV(cuMemRelease, OP_RELEASE, DEV, handle, handle),
	ROW(CUPTI_DRIVER_TRACE_CBID_, cuMemMap, OP_MAP, DEV, ptr, size, handle),
	DRV(cuMemUnmap, OP_UNMAP, DEV, ptr, size),
	DRV(cuMemAddressReserve, OP_RESERVE, DEV, ptr, size),
	DRV(cuMemAddressFree, OP_ADDRESS_FREE, DEV, ptr, size),
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

/* cuMemCreate's memory: the device its properties name, or pinned host memory. */
static unsigned create_kind(const void *prm, unsigned off)
{
	const CUmemAllocationProp *prop = (const CUmemAllocationProp *)(uintptr_t)field(prm, off);
	if (!prop)
		return mgc_kind_make(MGC_KIND_DEVICE, -1);
	if (prop->location.type == CU_MEM_LOCATION_TYPE_DEVICE)
		return mgc_kind_make(MGC_KIND_DEVICE, prop->location.id);
	if (prop->location.type == CU_MEM_LOCATION_TYPE_INVALID)
		return mgc_kind_make(MGC_KIND_DEVICE, -1);
	return mgc_kind_make(MGC_KIND_PINNED, -1); /* host, host NUMA node */
}

static void on_exit_call(const struct call *c, const CUpti_CallbackData *cb, uint32_t partner)
{
	const void *prm = cb->functionParams;
	switch (c->op) {
	case OP_ALLOC: {
		uint64_t p = out_field(prm, c->ptr), n = field(prm, c->size);
		int dev = c->mem == MGC_KIND_PINNED ? -1 : context_device(cb->context);
		uint32_t site = dev_alloc(p, n, mgc_kind_make(c->mem, dev));
		if (site)
			join_callback(cb->correlationId, partner, 1, site, p, n);
		break;
	}
	case OP_FREE:
		dev_free(field(prm, c->ptr));
		join_callback(cb->correlationId, partner, 0, 0, field(prm, c->ptr), 0);
		break;
	case OP_CREATE:
		vmm_create(out_field(prm, c->ptr), field(prm, c->size), create_kind(prm, c->handle));
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
			stat_add(&cuda.st.vmm_reserved_bytes, field(prm, c->size));
		break;
	case OP_ADDRESS_FREE:
		stat_sub(&cuda.st.vmm_reserved_bytes, field(prm, c->size));
		break;
	}
}

void mgp_cupti_handle(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const CUpti_CallbackData *cb)
{
	if (!cb || !__atomic_load_n(&cuda.alive, __ATOMIC_RELAXED))
		return;
	const struct call *c;
	uint32_t partner = 0;
	if (domain == CUPTI_CB_DOMAIN_RUNTIME_API) {
		if (!(c = find_call(runtime_calls, NCALLS(runtime_calls), cbid)))
			return;
		if (cb->callbackSite == CUPTI_API_ENTER) {
			if (tls_rt_depth++ == 0)
				tls_nested_corr = 0;
			return;
		}
		if (tls_rt_depth > 0)
			tls_rt_depth--;
		partner = tls_nested_corr;
		tls_nested_corr = 0;
	} else if (domain == CUPTI_CB_DOMAIN_DRIVER_API) {
		if (!(c = find_call(driver_calls, NCALLS(driver_calls), cbid)))
			return;
		if (tls_rt_depth > 0) {
			if (cb->callbackSite == CUPTI_API_EXIT) {
				stat_add(&cuda.st.ignored_nested, 1);
				if (c->op == OP_ALLOC || c->op == OP_FREE)
					tls_nested_corr = cb->correlationId;
			}
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
		stat_add(&cuda.st.failed_calls, 1);
		return;
	}
	if (cb->functionParams && recording())
		on_exit_call(c, cb, partner);
}

/* ---- what the trace writer takes at each snapshot ---- */

uint32_t mgp_cupti_take_devsites(struct mgc_rec_devsite *out, uint32_t max)
{
	uint32_t n = 0;
	if (!cuda.details || !__atomic_load_n(&cuda.alive, __ATOMIC_RELAXED))
		return 0;
	mgp_spin_lock(&cuda.join_lock);
	for (uint32_t i = 0; i < DETAIL_CAP && n < max; i++) {
		if (cuda.details[i].d.site && cuda.details[i].dirty) {
			out[n++] = cuda.details[i].d;
			cuda.details[i].dirty = 0;
		}
	}
	mgp_spin_unlock(&cuda.join_lock);
	return n;
}

uint32_t mgp_cupti_pool_cells(struct mgc_devmem_cell *out, uint32_t max)
{
	uint32_t n = 0;
	if (!cuda.join || !__atomic_load_n(&cuda.alive, __ATOMIC_RELAXED))
		return 0;
	mgp_spin_lock(&cuda.join_lock);
	for (unsigned i = 0; i < POOL_CAP; i++) {
		const struct pool *p = &cuda.pools[i];
		if (!p->address)
			continue;
		uint16_t kind = (uint16_t)mgc_kind_make(MGC_KIND_POOL, p->device < 255 ? (int)p->device : -1);
		uint32_t k = 0;
		while (k < n && out[k].kind != kind)
			k++;
		if (k == n) {
			if (n == max)
				continue;
			out[n++] = (struct mgc_devmem_cell){.kind = kind};
		}
		out[k].count++;
		out[k].bytes += p->size;
	}
	mgp_spin_unlock(&cuda.join_lock);
	return n;
}

/* Gives up entries older than JOIN_AGE flushes (all of them when final). */
static void join_age(int final)
{
	mgp_spin_lock(&cuda.join_lock);
	cuda.epoch++;
	for (uint32_t i = 0; i < JOIN_CAP;) {
		struct join_entry *e = &cuda.join[i];
		if (!e->corr || (!final && cuda.epoch - e->epoch < JOIN_AGE)) {
			i++;
			continue;
		}
		if (!e->alias)
			stat_add(e->half == HALF_CB ? &cuda.st.callback_only : &cuda.st.record_only, 1);
		if (e->half == HALF_REC && e->alloc)
			stat_add(&cuda.st.record_only_bytes, e->bytes);
		join_del(e); /* slot i now holds the next entry, or is empty */
	}
	mgp_spin_unlock(&cuda.join_lock);
}

void mgp_cupti_flush(int final)
{
	if (!__atomic_load_n(&cuda.activity, __ATOMIC_ACQUIRE) || !__atomic_load_n(&cuda.alive, __ATOMIC_RELAXED))
		return;
	if (cuda.api.flush)
		cuda.api.flush(final ? CUPTI_ACTIVITY_FLAG_FLUSH_FORCED : 0);
	join_age(final);
	if (final) /* nothing more is joined: later calls would only wait for records */
		__atomic_store_n(&cuda.activity, 0, __ATOMIC_RELEASE);
}

/* ---- life cycle ---- */

int mgp_cupti_init(const struct mgp_cupti_sink *sink)
{
	if (cuda.sink)
		return 0;
	size_t n = VMM_CAP * sizeof(struct vmm_entry);
	cuda.handles.tab = mgp_os_alloc(n);
	cuda.maps.tab = mgp_os_alloc(n);
	cuda.join = mgp_os_alloc(JOIN_CAP * sizeof *cuda.join);
	cuda.details = mgp_os_alloc(DETAIL_CAP * sizeof *cuda.details);
	if (!cuda.handles.tab || !cuda.maps.tab || !cuda.join || !cuda.details)
		return -ENOMEM;
	cuda.sink = sink;
	__atomic_store_n(&cuda.alive, 1, __ATOMIC_RELEASE);
	return 0;
}

static void CUPTIAPI on_callback(void *ud, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
				 const void *data)
{
	(void)ud;
	mgp_cupti_handle(domain, cbid, data);
}

static void CUPTIAPI on_buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
	void *b = NULL;
	mgp_spin_lock(&cuda.buf_lock);
	for (unsigned i = 0; i < 8 && !b; i++) {
		b = cuda.free_bufs[i];
		cuda.free_bufs[i] = NULL;
	}
	mgp_spin_unlock(&cuda.buf_lock);
	if (!b)
		b = mgp_os_alloc(ACT_BUF_SIZE); /* page-aligned, never malloc */
	*buffer = b;
	*size = b ? ACT_BUF_SIZE : 0;
	*max_records = 0;
}

static void CUPTIAPI on_buffer_completed(CUcontext ctx, uint32_t stream, uint8_t *buffer, size_t size,
					 size_t valid)
{
	(void)ctx;
	(void)stream;
	(void)size;
	if (__atomic_load_n(&cuda.alive, __ATOMIC_RELAXED)) {
		mgp_cupti_activity_buffer(buffer, valid);
		size_t dropped = 0;
		if (cuda.api.dropped && cuda.api.dropped(NULL, 0, &dropped) == CUPTI_SUCCESS && dropped)
			stat_add(&cuda.st.dropped_records, dropped);
	}
	if (!buffer)
		return;
	mgp_spin_lock(&cuda.buf_lock);
	for (unsigned i = 0; i < 8 && buffer; i++) {
		if (!cuda.free_bufs[i]) {
			cuda.free_bufs[i] = buffer;
			buffer = NULL;
		}
	}
	mgp_spin_unlock(&cuda.buf_lock);
	if (buffer)
		mgp_os_free(buffer, ACT_BUF_SIZE);
}

static uint64_t CUPTIAPI timestamp_now(void)
{
	return mgp_now_ns();
}

static const char *result_name(CUptiResult r)
{
	const char *s = NULL;
	if (!cuda.api.result_string || cuda.api.result_string(r, &s) != CUPTI_SUCCESS || !s)
		s = "unknown CUPTI error";
	return s;
}

int mgp_cupti_load(void)
{
	if (cuda.api.subscribe)
		return 0;
	const char *names[] = {"libcupti.so.13", "libcupti.so", MGP_CUPTI_PATH};
	void *lib = NULL;
	for (unsigned i = 0; i < 3 && !lib; i++)
		lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
	if (!lib) {
		mgp_log("CUDA memory is not traced: cannot load libcupti.so.13 (%s); host profiling goes on",
			dlerror());
		return -ENOENT;
	}
#define SYM(field, name) cuda.api.field = (__typeof__(cuda.api.field))dlsym(lib, name)
	SYM(enable, "cuptiEnableCallback");
	SYM(unsubscribe, "cuptiUnsubscribe");
	SYM(result_string, "cuptiGetResultString");
	SYM(device_id, "cuptiGetDeviceId");
	SYM(register_buffers, "cuptiActivityRegisterCallbacks");
	SYM(activity_enable, "cuptiActivityEnable");
	SYM(flush, "cuptiActivityFlushAll");
	SYM(next_record, "cuptiActivityGetNextRecord");
	SYM(dropped, "cuptiActivityGetNumDroppedRecords");
	SYM(timestamp, "cuptiActivityRegisterTimestampCallback");
	if (!cuda.api.enable || !cuda.api.unsubscribe || !dlsym(lib, "cuptiSubscribe")) {
		mgp_log("CUDA memory is not traced: libcupti lacks cuptiSubscribe/cuptiEnableCallback; "
			"host profiling goes on");
		return -ENOENT;
	}
	SYM(subscribe, "cuptiSubscribe");
#undef SYM
	return 0;
}

/* Activity records are enrichment: when they cannot be had, one line, and the callbacks go on. */
static void start_activity(void)
{
	CUptiResult r = CUPTI_ERROR_NOT_INITIALIZED;
	const char *what = "cuptiActivityRegisterCallbacks";
	if (!cuda.api.register_buffers || !cuda.api.activity_enable || !cuda.api.flush || !cuda.api.next_record)
		goto fail;
	if (cuda.api.timestamp)
		cuda.api.timestamp(timestamp_now); /* before any kind is enabled; our clock, if allowed */
	if ((r = cuda.api.register_buffers(on_buffer_requested, on_buffer_completed)) != CUPTI_SUCCESS)
		goto fail;
	what = "cuptiActivityEnable(MEMORY2)";
	__atomic_store_n(&cuda.activity, 1, __ATOMIC_RELEASE);
	if ((r = cuda.api.activity_enable(CUPTI_ACTIVITY_KIND_MEMORY2)) != CUPTI_SUCCESS) {
		__atomic_store_n(&cuda.activity, 0, __ATOMIC_RELEASE);
		goto fail;
	}
	if (cuda.api.activity_enable(CUPTI_ACTIVITY_KIND_MEMORY_POOL) != CUPTI_SUCCESS)
		mgp_log("CUDA memory pools are not traced (cuptiActivityEnable(MEMORY_POOL) failed)");
	return;
fail:
	mgp_log("CUDA activity records are not available (%s: %s, %d): allocations are traced "
		"through callbacks only, without stream and pool details", what, result_name(r), (int)r);
}

int mgp_cupti_start(int activity)
{
	if (!__atomic_load_n(&cuda.alive, __ATOMIC_RELAXED))
		return -ENODEV;
	int rc = mgp_cupti_load();
	if (rc < 0)
		return rc;
	CUptiResult r = cuda.api.subscribe(&cuda.sub, on_callback, NULL);
	if (r != CUPTI_SUCCESS) {
		if (r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED)
			mgp_log("CUDA memory is not traced: another CUPTI client (Nsight, torch.profiler) "
				"holds the subscription; host profiling goes on");
		else
			mgp_log("CUDA memory is not traced: cuptiSubscribe failed (%s, %d); host profiling "
				"goes on", result_name(r), (int)r);
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
			r = cuda.api.enable(1, cuda.sub, sets[s].dom, id);
			if (r != CUPTI_SUCCESS) {
				mgp_log("CUDA memory is not traced: cuptiEnableCallback(%u) failed (%s, %d); "
					"host profiling goes on", (unsigned)id, result_name(r), (int)r);
				cuda.api.unsubscribe(cuda.sub);
				return -EIO;
			}
		}
	}
	if (activity)
		start_activity();
	__atomic_store_n(&cuda.started, 1, __ATOMIC_RELEASE);
	return 0;
}

int mgp_cupti_atfork_child(void)
{
	int was_tracing = cuda.started;
	cuda.started = 0;
	if (!__atomic_exchange_n(&cuda.alive, 0, __ATOMIC_RELAXED))
		return 0;
	/* The parent's device memory stays the parent's: zero the device sites in the child. */
	tls_rt_depth = 0;
	tls_nested_corr = 0;
	cuda.activity = 0; /* CUPTI's thread is not in the child: never flush there */
	mgp_sites_forget_cuda();
	/* a parent thread may have held a lock; the tables are unused from now on */
	cuda.vmm_lock = cuda.join_lock = cuda.ctx_lock = cuda.buf_lock = 0;
	memset(cuda.pools, 0, sizeof cuda.pools);
	memset(&cuda.st, 0, sizeof cuda.st);
	return was_tracing;
}

int mgp_cupti_tracing(void)
{
	return __atomic_load_n(&cuda.started, __ATOMIC_ACQUIRE) && mgp_cupti_alive();
}

int mgp_cupti_alive(void)
{
	return __atomic_load_n(&cuda.alive, __ATOMIC_RELAXED);
}

int mgp_cupti_activity_on(void)
{
	return __atomic_load_n(&cuda.activity, __ATOMIC_ACQUIRE) && mgp_cupti_alive();
}

void mgp_cupti_stats(struct mgp_cupti_stats *out)
{
	uint64_t *src = (uint64_t *)&cuda.st, *dst = (uint64_t *)out;
	for (size_t i = 0; i < sizeof cuda.st / sizeof(uint64_t); i++)
		dst[i] = __atomic_load_n(&src[i], __ATOMIC_RELAXED);
}

void mgp_cupti_set_joining(int on)
{
	__atomic_store_n(&cuda.activity, on, __ATOMIC_RELEASE);
}
