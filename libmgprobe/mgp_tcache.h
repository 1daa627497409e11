/* SPDX-License-Identifier: MIT */
/* mgp_tcache.h: each thread's block of lookup caches (the unwinder's last rules, the site
 * table's last sites found and last stack interned, the last Python code objects seen), mapped on
 * the thread's first use and not in TLS: static TLS is carved from every thread's stack, and a
 * thread of PTHREAD_STACK_MIN (16 KiB) must keep its room (tests/reliability small-stack). A
 * block is given back when its thread exits and handed, zeroed, to the next new thread. Hook-safe:
 * no malloc, no blocking lock (a spin lock around the list of blocks given back, held for a few
 * instructions). Never a cause of failure: no block, no cache. */
#ifndef MGP_TCACHE_H
#define MGP_TCACHE_H

#include <stddef.h>

/* The block: each user's part at the offsets below. The rules and the sites are the fast path's
 * two caches of a shared table's slot (a cache miss each in PyTorch's steps): 2048 entries each,
 * 32 KiB: the torch sample's steps hit 78% and 96% of their lookups in them, where 256 sites and
 * 512 rules hit 41% and 90%. */
#define MGP_TCACHE_PART (8u << 10)
#define MGP_TCACHE_BIG (32u << 10)
#define MGP_TCACHE_RULES 0u                       /* mgp_unwind.c */
#define MGP_TCACHE_SITES MGP_TCACHE_BIG           /* mgp_sites.c: the last sites found */
#define MGP_TCACHE_PYCODE (2u * MGP_TCACHE_BIG)   /* mgp_python.c, MGP_TCACHE_PART bytes */
#define MGP_TCACHE_MEMO (MGP_TCACHE_PYCODE + MGP_TCACHE_PART) /* mgp_sites.c: the last stack */
#define MGP_TCACHE_MEMO_BYTES 1024u
#define MGP_TCACHE_BYTES (MGP_TCACHE_MEMO + MGP_TCACHE_MEMO_BYTES)

/* Creates the key whose destructor gives a thread's block back. Call once at start-up; without
 * it (or after it failed) threads get no block. */
void mgp_tcache_init(void);

/* This thread's block (zeroed when it was handed out), mapped on the first call; NULL when there
 * is none (no memory, no key, or the thread is exiting). The first call on a thread maps 73 KiB
 * (the caller holds the recursion guard). */
void *mgp_tcache_block(void);

/* A user's part of this thread's block, or NULL. */
static inline void *mgp_tcache_part(size_t off)
{
	char *b = mgp_tcache_block();
	return b ? b + off : NULL;
}

#endif /* MGP_TCACHE_H */
