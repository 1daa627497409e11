/* SPDX-License-Identifier: MIT */
/* prog_crash.c: allocates, takes a step marker (a synchronous snapshot), allocates more, then
 * dies the way argv[1] says: "kill" (SIGKILL to itself), "abort", "_exit" (status 3), or "sampler"
 * (waits for the sampler to snapshot, then SIGKILL). The driver checks what the trace kept. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "mgprobe.h"

#define NOINLINE __attribute__((noinline))

void *blocks[8]; /* not static: the compiler must keep the stores, and so the mallocs */

NOINLINE static void before_marker(void)
{
	for (int i = 0; i < 5; i++)
		blocks[i] = malloc(1111);
}

NOINLINE static void after_marker(void)
{
	for (int i = 5; i < 8; i++)
		blocks[i] = malloc(2222);
}

int main(int argc, char **argv)
{
	const char *how = argc > 1 ? argv[1] : "kill";
	before_marker();
	mgprobe_step(1);
	after_marker();
	printf("dying by %s\n", how);
	fflush(stdout);
	if (strcmp(how, "sampler") == 0) {
		struct timespec ts = {0, 400 * 1000000L}; /* several 20 ms sampler intervals */
		nanosleep(&ts, NULL);
		raise(SIGKILL);
	} else if (strcmp(how, "kill") == 0) {
		raise(SIGKILL);
	} else if (strcmp(how, "abort") == 0) {
		abort();
	} else if (strcmp(how, "_exit") == 0) {
		_exit(3);
	}
	return 0;
}
