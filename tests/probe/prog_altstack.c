/* SPDX-License-Identifier: MIT */
/* prog_altstack.c: allocations where the stack has little room left (issue 13, point 2).
 * "altstack": the repro: a SIGSEGV handler on a SIGSTKSZ alternate stack calls
 * backtrace() (which allocates) and backtrace_symbols(), then exits 42. SIGSTKSZ is the larger of
 * the legacy 8 KiB and sysconf(_SC_SIGSTKSZ), glibc's size for this CPU: with AVX-512 signal frames
 * the handler alone used 7,848 of the legacy 8,192 bytes, which no interposer's call fits in
 * (14,528 bytes there). "measure": the handler on
 * a 256 KiB painted alternate stack prints how much of it was used (the hook's need is the
 * difference under the probe). Built -O0 -rdynamic, as the issue's. */
#include <execinfo.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
	long dyn = sysconf(_SC_SIGSTKSZ); /* what glibc says this CPU's signal frames need */
	altsz = size ? size : dyn > SIGSTKSZ ? (size_t)dyn : SIGSTKSZ;
	alt = malloc(altsz);
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
