/* SPDX-License-Identifier: MIT */
/* prog_altstack.c: allocations where the stack has little room left (issue 13, point 2).
 * "altstack": the repro: a SIGSEGV handler on a SIGSTKSZ alternate stack calls
 * backtrace() (which allocates) and backtrace_symbols(), then exits 42. "thread": a thread on a
 * 64 KiB stack of its own (a guard page below it) calls malloc with about 5 KiB of it left. "measure": the handler on a
 * 256 KiB painted alternate stack prints how much of it was used (the hook's need is the
 * difference under the probe). Built -O0 -rdynamic, as the issue's. */
#include <execinfo.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define PAINT 0xa5
#define THREAD_STACK (64 << 10)
#define LEFT (5 << 10)

static char *alt;
static size_t altsz;
static int measure;

static void on_segv(int sig)
{
	void *f[32];
	int n = backtrace(f, 32);
	char **s = backtrace_symbols(f, n);
	size_t used = 0;
	for (size_t i = 0; measure && i < altsz; i++)
		if ((unsigned char)alt[i] != PAINT) {
			used = altsz - i;
			break;
		}
	if (measure)
		printf("alternate stack used: %zu bytes\n", used);
	else
		printf("caught signal %d, %d frames, symbols %s\n", sig, n > 0 ? 1 : 0, s ? "ok" : "NULL");
	free(s);
	fflush(stdout);
	_exit(42);
}

static int crash_on_altstack(size_t size)
{
	static char small[SIGSTKSZ];
	altsz = size ? size : sizeof small;
	alt = size ? malloc(size) : small;
	memset(alt, PAINT, altsz);
	stack_t ss = {.ss_sp = alt, .ss_size = altsz};
	sigaltstack(&ss, NULL);
	struct sigaction sa = {0};
	sa.sa_handler = on_segv;
	sa.sa_flags = SA_ONSTACK;
	sigaction(SIGSEGV, &sa, NULL);
	volatile int *p = NULL;
	return *p;
}

static char *stack_lo;
void *kept, *note;

/* Goes down the thread's stack until about LEFT bytes remain, then allocates. */
static void descend(void)
{
	volatile char pad[512];
	pad[0] = 1;
	if ((char *)__builtin_frame_address(0) - stack_lo > LEFT + 1024)
		descend();
	else
		kept = malloc(100);
	pad[1] = pad[0];
}

static void *thread_main(void *arg)
{
	(void)arg;
	descend();
	return NULL;
}

static int small_thread(void)
{
	pthread_attr_t a;
	pthread_t t;
	char *m = mmap(NULL, THREAD_STACK + 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED || mprotect(m, 4096, PROT_NONE) != 0 || !(note = malloc(4096)))
		return 1;
	stack_lo = m + 4096;
	pthread_attr_init(&a);
	pthread_attr_setstack(&a, stack_lo, THREAD_STACK);
	if (pthread_create(&t, &a, thread_main, NULL) != 0)
		return 1;
	pthread_join(t, NULL);
	printf("thread allocated %s\n", kept ? "ok" : "NULL");
	return 0;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "altstack";
	if (!strcmp(mode, "thread"))
		return small_thread();
	measure = !strcmp(mode, "measure");
	return crash_on_altstack(measure ? 256 << 10 : 0);
}
