/* SPDX-License-Identifier: MIT */
/* mgp_cupti.h: CUDA memory through CUPTI: every runtime and driver allocation call becomes a
 * CUDA-kind site (device, pinned or managed memory, and the device) with the host stack of its
 * caller; activity records (MEMORY2, MEMORY_POOL) joined by correlation id add stream and pool
 * details and the stream-ordered pools' sizes. CUPTI is loaded with dlopen only from
 * InitializeInjection; this module must never link libcupti, call CUPTI in a forked child, or stop
 * host profiling when CUPTI fails. */
#ifndef MGP_CUPTI_H
#define MGP_CUPTI_H

#include <stdint.h>

#include <cupti.h>

#include "mgc_format.h"

/* What the probe lends this module. Every function is called on the application thread inside a
 * CUPTI callback and must be safe there (no stdio, no blocking locks). */
struct mgp_cupti_sink {
	int (*active)(void);              /* 1 while the probe records (tracking, not closed) */
	uint32_t (*capture)(unsigned kind); /* site id of the calling stack for this kind code
					       (mgc_kind_make: memory kind and device) */
	uint32_t (*birth)(void);          /* the current step's cohort bucket */
	void (*guard)(int on);            /* 1: the probe's own work starts (nested malloc is not recorded), 0: ends */
	void (*oom)(void);                /* the probe's tables are full: stop recording */
};

/* Device pointers live in mgp_live beside host pointers, under this bit: user-space addresses
 * never have it, so a host free() can never remove a device allocation or the reverse. */
#define MGP_CUPTI_KEY_BIT (1ull << 63)

/* Counters for tests and notices; relaxed atomics, read with mgp_cupti_stats. */
struct mgp_cupti_stats {
	uint64_t allocs, frees;       /* device-kind allocations recorded / released */
	uint64_t live_bytes;          /* device-kind bytes live (handles count as physical memory) */
	uint64_t vmm_handles;         /* cuMemCreate handles whose memory is still held */
	uint64_t vmm_mapped_bytes;    /* bytes mapped with cuMemMap and not yet unmapped */
	uint64_t vmm_reserved_bytes;  /* cuMemAddressReserve address space: never counted as memory */
	uint64_t ignored_nested;      /* driver callbacks inside a runtime call, not counted again */
	uint64_t failed_calls;        /* calls that returned an error: nothing recorded */
	/* activity records and their join with the callbacks */
	uint64_t alloc_records, free_records, pool_records; /* MEMORY2 allocations / releases, MEMORY_POOL */
	uint64_t joined_allocs, joined_frees; /* records matched to their call's callback */
	uint64_t join_mismatches;     /* a record's address or size differed from its callback's */
	uint64_t callback_only;       /* calls whose record never came (dropped, or not reported) */
	uint64_t record_only;         /* records no callback matched: calls the callbacks missed */
	uint64_t record_only_bytes;   /* their allocation bytes */
	uint64_t duplicate_records;   /* a second record for one correlation id */
	uint64_t dropped_records;     /* CUPTI's own count of records it dropped */
	uint64_t static_bytes;        /* __device__ / __managed__ variables (no call to join) */
	uint64_t join_full, details_untracked, pools_untracked; /* tables full: details lost */
};

/* Sets the sink and makes the handlers usable (no CUPTI needed). Call once, before any callback;
 * the sink must outlive the process. 0 or -ENOMEM. */
int mgp_cupti_init(const struct mgp_cupti_sink *sink);

/* Loads CUPTI (libcupti.so.13, then libcupti.so) and subscribes the handler to the allocation
 * callbacks. Call from InitializeInjection only. On any failure prints one line with mgp_log and
 * returns -errno (-ENOENT: no library, -EIO: CUPTI refused, -EBUSY: another subscriber); the
 * handlers then never run and host profiling goes on. `activity` 0 (MGPROBE_CUDA_ACTIVITY=0) asks
 * for no activity records: callbacks only, no stream or pool details. */
int mgp_cupti_start(int activity);

/* The handler the CUPTI subscriber calls, exposed so tests can drive it with fake callback data
 * holding real `*_params` structs. domain is CUPTI_CB_DOMAIN_RUNTIME_API or _DRIVER_API; anything
 * else is ignored. Async-signal-unsafe; safe on any thread. */
void mgp_cupti_handle(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const CUpti_CallbackData *cb);

/* From the probe's atfork child handler, before the child's first snapshot: CUPTI is dead in the
 * child (it must never be called there), and the parent's device memory is not the child's, so
 * CUDA sites drop to zero live bytes. Returns 1 when the parent was tracing CUDA (subscribed). */
int mgp_cupti_atfork_child(void);

/* 1 while CUDA allocations are traced in this process (mgp_cupti_start succeeded, no fork since). */
int mgp_cupti_tracing(void);

/* 1 after mgp_cupti_init until a fork kills CUPTI in this process. */
int mgp_cupti_alive(void);

void mgp_cupti_stats(struct mgp_cupti_stats *out);

/* dlopens libcupti and resolves what the module uses (mgp_cupti_start does it too). 0, or -ENOENT
 * with one line printed. Loading needs no driver. */
int mgp_cupti_load(void);

/* Reads one completed activity buffer (valid bytes of records): MEMORY2 records are joined to
 * their calls, MEMORY_POOL records keep the pool sizes. CUPTI calls it on its own thread; tests
 * call it with hand-built buffers (needs mgp_cupti_load for cuptiActivityGetNextRecord). */
void mgp_cupti_activity_buffer(uint8_t *buf, size_t valid);

/* Flushes CUPTI's activity buffers (final: forced, at exit) and gives up join entries whose other
 * half has not come after a few flushes (all of them when final). From the sampler thread and at
 * exit, never inside a callback and never with the probe's writer lock held. */
void mgp_cupti_flush(int final);

/* 1 while activity records are enabled (joining is on). */
int mgp_cupti_activity_on(void);

/* Turns joining on or off without CUPTI, so tests can feed records to the handlers. */
void mgp_cupti_set_joining(int on);

/* For the trace writer at each snapshot: device-site details that changed since the last call (up
 * to max; how many), and the stream-ordered pools' reserved bytes as MGC_KIND_POOL cells, one per
 * device (up to max; how many). */
uint32_t mgp_cupti_take_devsites(struct mgc_rec_devsite *out, uint32_t max);
uint32_t mgp_cupti_pool_cells(struct mgc_devmem_cell *out, uint32_t max);

/* Defined and exported by the probe (mgp_cuda.c): the CUDA driver calls it once at cuInit when
 * CUDA_INJECTION64_PATH names libmgprobe.so. Sets up this module unless the probe is off; returns 1
 * (success) even when CUPTI fails, so cuInit never fails because of the probe. */
int InitializeInjection(void);

#endif /* MGP_CUPTI_H */
