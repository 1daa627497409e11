/* SPDX-License-Identifier: MIT */
/* mgp_tcache.c: the threads' blocks of lookup caches (mgp_tcache.h): a thread-local pointer, a
 * pthread key whose destructor puts an exiting thread's block on a list, and that list, under a
 * lock only ever tried (never waited for: a lock a forked child inherits held costs it a fresh
 * block, or a block not given back, never a hang). Must never call malloc, nor hand one block to
 * two threads. */
#define _GNU_SOURCE
#include "mgp_tcache.h"

#include <pthread.h>
#include <string.h>

#include "mgp_os.h"

/* GONE: the thread gave its block back (it is exiting) and takes no other. */
#define GONE ((void *)1)
static __thread void *mine __attribute__((tls_model("initial-exec")));

static struct {
	int have_key;
	pthread_key_t key;
	int lock;
	void *free; /* blocks given back, linked through their first word */
} tc;

static int try_lock(void)
{
	return !__atomic_exchange_n(&tc.lock, 1, __ATOMIC_ACQUIRE);
}

static void unlock(void)
{
	__atomic_store_n(&tc.lock, 0, __ATOMIC_RELEASE);
}

/* The key's destructor: the exiting thread's block on the list (or, the lock busy, left mapped). */
static void give_back(void *block)
{
	mine = GONE;
	if (!try_lock())
		return;
	*(void **)block = tc.free;
	tc.free = block;
	unlock();
}

void mgp_tcache_init(void)
{
	tc.have_key = pthread_key_create(&tc.key, give_back) == 0;
}

static __attribute__((noinline, cold)) void *first_use(void)
{
	if (mine == GONE || !tc.have_key)
		return NULL;
	void *b = NULL;
	if (try_lock()) {
		if ((b = tc.free))
			tc.free = *(void **)b;
		unlock();
	}
	if (b)
		memset(b, 0, MGP_TCACHE_BYTES);
	else if (!(b = mgp_os_alloc(MGP_TCACHE_BYTES)))
		return NULL;
	if (pthread_setspecific(tc.key, b) != 0) {
		give_back(b); /* and no block for this thread */
		return NULL;
	}
	mine = b;
	return b;
}

void *mgp_tcache_block(void)
{
	void *b = mine;
	if (__builtin_expect(b != NULL && b != GONE, 1))
		return b;
	return first_use();
}
