/* SPDX-License-Identifier: MIT */
/* mgp_cupti.h: CUDA memory through the CUPTI callback API: every runtime and driver allocation
 * call becomes a device-kind site with the host stack of its caller. CUPTI is loaded with dlopen
 * only from InitializeInjection; this module must never link libcupti, call CUPTI in a forked
 * child, or stop host profiling when CUPTI fails. */
#ifndef MGP_CUPTI_H
#define MGP_CUPTI_H

#include <stdint.h>

#include <cupti.h>

/* What the probe lends this module. Every function is called on the application thread inside a
 * CUPTI callback and must be safe there (no stdio, no blocking locks). */
struct mgp_cupti_sink {
	int (*active)(void);              /* 1 while the probe records (tracking, not closed) */
	uint32_t (*capture)(void);        /* site id of the calling stack, kind MGC_KIND_DEVICE */
	uint32_t (*birth)(void);          /* the current step, saturated */
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
};

/* Sets the sink and makes the handlers usable (no CUPTI needed). Call once, before any callback;
 * the sink must outlive the process. 0 or -ENOMEM. */
int mgp_cupti_init(const struct mgp_cupti_sink *sink);

/* Loads CUPTI (libcupti.so.13, then libcupti.so) and subscribes the handler to the allocation
 * callbacks. Call from InitializeInjection only. On any failure prints one line with mgp_log and
 * returns -errno (-ENOENT: no library, -EIO: CUPTI refused, -EBUSY: another subscriber); the
 * handlers then never run and host profiling goes on. */
int mgp_cupti_start(void);

/* The handler the CUPTI subscriber calls, exposed so tests can drive it with fake callback data
 * holding real `*_params` structs. domain is CUPTI_CB_DOMAIN_RUNTIME_API or _DRIVER_API; anything
 * else is ignored. Async-signal-unsafe; safe on any thread. */
void mgp_cupti_handle(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const CUpti_CallbackData *cb);

/* From the probe's atfork child handler, before the child's first snapshot: CUPTI is dead in the
 * child (it must never be called there), and the parent's device memory is not the child's, so
 * device-kind sites drop to zero live bytes. */
void mgp_cupti_atfork_child(void);

/* 1 after mgp_cupti_init until a fork kills CUPTI in this process. */
int mgp_cupti_alive(void);

void mgp_cupti_stats(struct mgp_cupti_stats *out);

/* Defined and exported by the probe (mgp_probe.c): the CUDA driver calls it once at cuInit when
 * CUDA_INJECTION64_PATH names libmgprobe.so. Sets up this module unless the probe is off; returns 1
 * (success) even when CUPTI fails, so cuInit never fails because of the probe. */
int InitializeInjection(void);

#endif /* MGP_CUPTI_H */
