/* SPDX-License-Identifier: MIT */
/* prog_altstack.c: allocations where the stack has little room left (issue 13, point 2).
 * "altstack": the repro: a SIGSEGV handler on a SIGSTKSZ alternate stack calls
 * backtrace() (which allocates) and backtrace_symbols(), then exits 42; a guard page under the
 * stack makes any overflow a crash wherever the buffer lies (one on the heap took an overflow
 * silently; with AVX-512 signal frames the handler alone uses 7,848 of its 8,192 bytes).
 * "measure": the handler on
 * a 256 KiB painted alternate stack prints how much of it was used (the hook's need is the
 * difference under the probe). Built -O0 -rdynamic, as the issue's. */
#include <execinfo.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define PAINT 0xa5

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
	altsz = size ? size : SIGSTKSZ;
	if (size) {
		alt = malloc(size);
	} else { /* SIGSTKSZ is a multiple of the page */
		long pg = sysconf(_SC_PAGESIZE);
		alt = mmap(NULL, altsz + pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (alt == MAP_FAILED || mprotect(alt, pg, PROT_NONE))
			return 2;
		alt += pg;
	}
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

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "altstack";
	measure = !strcmp(mode, "measure");
	return crash_on_altstack(measure ? 256 << 10 : 0);
}
