/* SPDX-License-Identifier: MIT */
/* mgp_tstack.c: the pthread_create hook that notes a small thread stack's floor (mgp_tstack.h).
 * The new thread's start routine and argument travel to it in a slot of a small static table (no
 * malloc); when every slot is taken, or the stack is big, the thread starts unwrapped, exactly as
 * without the probe. It must never change what pthread_create returns or how the thread runs. */
#define _GNU_SOURCE
#include "mgp_tstack.h"

#include <pthread.h>

#include "mgp_capture.h"
#include "mgp_hooks.h"

#define SLOTS 256u

__thread uintptr_t mgp_tstack_floor __attribute__((tls_model("initial-exec")));

/* A thread on its way to its start routine. `busy` is taken with a compare-and-swap by the
 * creating thread and given back by the new thread once it has copied the rest. */
static struct start {
	int busy;
	void *(*fn)(void *);
	void *arg;
	size_t size; /* the stack's size, as the attribute says */
} slots[SLOTS];

/* The stack size a thread created with attr gets (the default attribute's when NULL); 0 when
 * unknown. Neither call allocates (the default attribute has no CPU set to copy). */
static size_t stack_size(const pthread_attr_t *attr)
{
	size_t size = 0;
	pthread_attr_t def;
	if (attr)
		return pthread_attr_getstacksize(attr, &size) == 0 ? size : 0;
	if (pthread_getattr_default_np(&def) != 0)
		return 0;
	if (pthread_attr_getstacksize(&def, &size) != 0)
		size = 0;
	pthread_attr_destroy(&def);
	return size;
}

/* The end of this thread's stack block: glibc puts the thread descriptor (struct pthread, 2368
 * bytes in 2.36) at the top of the block, on x86 at the thread pointer, with the static TLS
 * below it, so the block ends at least 2 KiB above pthread_self(). Elsewhere the descriptor and
 * TLS sit differently: the stack pointer at the start is taken instead, which overstates the
 * room by the TLS's size. */
static uintptr_t stack_top(void)
{
#if defined(__x86_64__) || defined(__i386__)
	return (uintptr_t)pthread_self() + 2048;
#else
	return (uintptr_t)__builtin_frame_address(0);
#endif
}

static void *start_small(void *p)
{
	struct start *s = p;
	void *(*fn)(void *) = s->fn;
	void *arg = s->arg;
	/* Rounded down to a page: glibc may trim the size to its alignment, never by a page. */
	uintptr_t lo = stack_top() - (s->size & ~(size_t)4095);
	__atomic_store_n(&s->busy, 0, __ATOMIC_RELEASE);
	mgp_tstack_floor = lo + MGP_CAPTURE_STACK;
	return fn(arg); /* optimized, a jump: the thread's stack looks as without the probe */
}

static struct start *take_slot(void)
{
	for (unsigned i = 0; i < SLOTS; i++) {
		int free_ = 0;
		if (!__atomic_load_n(&slots[i].busy, __ATOMIC_RELAXED) &&
		    __atomic_compare_exchange_n(&slots[i].busy, &free_, 1, 0, __ATOMIC_ACQUIRE,
						__ATOMIC_RELAXED))
			return &slots[i];
	}
	return NULL;
}

MGP_EXPORT int pthread_create(pthread_t *t, const pthread_attr_t *attr, void *(*fn)(void *),
			      void *arg)
{
	size_t size = stack_size(attr);
	struct start *s = size && size < MGP_TSTACK_SMALL ? take_slot() : NULL;
	if (!s)
		return MGP_REAL(pthread_create)(t, attr, fn, arg);
	s->fn = fn;
	s->arg = arg;
	s->size = size;
	int r = MGP_REAL(pthread_create)(t, attr, start_small, s);
	if (r != 0)
		__atomic_store_n(&s->busy, 0, __ATOMIC_RELEASE);
	return r;
}
