/* SPDX-License-Identifier: MIT */
/* prog_smallstack.c: allocations from threads with small stacks (issue 13, point 2). The probe
 * must not overflow a thread's own stack with its stack capture.
 * "deep": one thread of PTHREAD_STACK_MIN (16 KiB) uses all of its stack but LEFT bytes, then
 *   allocates DEEP_BLOCKS blocks of DEEP_SIZE bytes, kept to the end.
 * "many": 64 threads of PTHREAD_STACK_MIN each use their stack down to MANY_LEFT bytes and
 *   allocate MANY_BLOCKS blocks of MANY_SIZE bytes, kept to the end.
 * "roomy": one thread of 64 KiB allocates ROOMY_BLOCKS blocks of ROOMY_SIZE bytes near the top of
 *   its stack, where a capture fits: the probe records them with their stack.
 * "layout": checks what the probe assumes of glibc's thread stacks (mgp_tstack.c): the stack
 *   block ends at least 2 KiB above pthread_self(), and the size asked for is the size given,
 *   within a page.
 * Prints one line per mode and exits 0; natively and under the probe alike. */
#define _GNU_SOURCE
#include <alloca.h>
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LEFT 5000
#define DEEP_SIZE 12345
#define DEEP_BLOCKS 3
#define MANY_LEFT 7000
#define MANY_SIZE 777
#define MANY_BLOCKS 4
#define ROOMY_SIZE 4321
#define ROOMY_BLOCKS 2
#define THREADS 64

static void *blocks[THREADS][MANY_BLOCKS > DEEP_BLOCKS ? MANY_BLOCKS : DEEP_BLOCKS];

/* This thread's stack: its lowest usable address and its size. */
static void own_stack(uintptr_t *lo, size_t *size)
{
	pthread_attr_t a;
	void *addr = NULL;
	*size = 0;
	if (pthread_getattr_np(pthread_self(), &a) == 0) {
		pthread_attr_getstack(&a, &addr, size);
		pthread_attr_destroy(&a);
	}
	*lo = (uintptr_t)addr;
}

static __attribute__((noinline)) void allocate(void **out, int n, size_t size)
{
	for (int i = 0; i < n; i++) {
		out[i] = malloc(size);
		memset(out[i], i, size);
	}
}

/* Uses the stack down to `left` bytes above its end, then allocates there. */
static __attribute__((noinline)) void allocate_low(uintptr_t lo, size_t left, void **out, int n,
						   size_t size)
{
	uintptr_t sp = (uintptr_t)__builtin_frame_address(0);
	size_t use = sp - lo > left + 512 ? sp - lo - left - 512 : 0;
	volatile char *pad = alloca(use);
	if (use)
		pad[0] = 1;
	allocate(out, n, size);
	if (use)
		pad[use - 1] = 2;
}

/* What each thread of the mode leaves of its stack and allocates there. */
static size_t low_left, low_size;
static int low_blocks;

static void *low(void *p)
{
	uintptr_t lo;
	size_t size;
	own_stack(&lo, &size);
	allocate_low(lo, low_left, blocks[(intptr_t)p], low_blocks, low_size);
	return NULL;
}

static void *roomy(void *p)
{
	allocate(blocks[(intptr_t)p], ROOMY_BLOCKS, ROOMY_SIZE);
	return NULL;
}

static void *layout(void *p)
{
	uintptr_t lo;
	size_t size;
	own_stack(&lo, &size);
	uintptr_t self = (uintptr_t)pthread_self();
	size_t asked = (size_t)(uintptr_t)p;
	int ok = lo + size >= self + 2048 && size + 4096 > asked && size <= asked;
	printf("layout %zu: %s (stack %zu bytes, ends %zu bytes above pthread_self)\n", asked,
	       ok ? "as assumed" : "NOT as assumed", size, (size_t)(lo + size - self));
	return NULL;
}

static int start(int n, void *(*fn)(void *), size_t stack)
{
	pthread_t t[THREADS];
	pthread_attr_t a;
	pthread_attr_init(&a);
	if (pthread_attr_setstacksize(&a, stack) != 0)
		return 1;
	for (int i = 0; i < n; i++)
		if (pthread_create(&t[i], &a, fn, fn == layout ? (void *)(uintptr_t)stack : (void *)(intptr_t)i))
			return 1;
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	pthread_attr_destroy(&a);
	return 0;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "deep";
	if (!strcmp(mode, "deep")) {
		low_left = LEFT, low_size = DEEP_SIZE, low_blocks = DEEP_BLOCKS;
		if (start(1, low, PTHREAD_STACK_MIN))
			return 1;
		printf("deep: %d blocks of %d bytes with %d bytes of stack left\n", DEEP_BLOCKS, DEEP_SIZE, LEFT);
	} else if (!strcmp(mode, "many")) {
		low_left = MANY_LEFT, low_size = MANY_SIZE, low_blocks = MANY_BLOCKS;
		if (start(THREADS, low, PTHREAD_STACK_MIN))
			return 1;
		printf("many: %d threads, %d blocks of %d bytes each\n", THREADS, MANY_BLOCKS, MANY_SIZE);
	} else if (!strcmp(mode, "roomy")) {
		if (start(1, roomy, 65536))
			return 1;
		printf("roomy: %d blocks of %d bytes\n", ROOMY_BLOCKS, ROOMY_SIZE);
	} else {
		const size_t sizes[] = {PTHREAD_STACK_MIN, 20000, 65536, 1 << 20};
		for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
			if (start(1, layout, sizes[i]))
				return 1;
	}
	return 0;
}
