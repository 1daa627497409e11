/* SPDX-License-Identifier: MIT */
/* prog_retire.c: sites that go quiet, retire (their stacks given back) and are seen again (issue
 * 16). 4,096 blocks of 100 bytes from 4,096 distinct stacks (a binary tree of calls 12 deep) and
 * one of 100 bytes from site_a, all written by a snapshot; site_a's block is freed; then it sleeps
 * argv[1] ms, long enough for the writer's passes to retire them all and compact the frame tree.
 * Then site_a allocates twice more from the same stack (one kept), a new stack (site_c)
 * allocates, half the tree's blocks are freed, and a forked child allocates from site_a's stack
 * and from a new one (site_b). */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "mgprobe.h"

#define DEPTH 12
#define N (1 << DEPTH)

#include "prog_tree.h"

static void *blocks[N];
static int n;

NOINLINE static void leaf(void)
{
	blocks[n++] = malloc(100);
}

NOINLINE static void *site_a(void)
{
	void *p = malloc(100);
	__asm__ volatile("" : : "r"(p) : "memory");
	return p;
}

NOINLINE static void *site_b(void)
{
	void *p = malloc(200);
	__asm__ volatile("" : : "r"(p) : "memory");
	return p;
}

NOINLINE static void *site_c(void)
{
	void *p = malloc(300);
	__asm__ volatile("" : : "r"(p) : "memory");
	return p;
}

int main(int argc, char **argv)
{
	unsigned ms = argc > 1 ? (unsigned)atoi(argv[1]) : 1000;
	void *a[4], *c = NULL;
	pid_t pid = 1;
	node(DEPTH);
	for (int i = 0; i < 4; i++) { /* one call site: site_a's stack is the same each time */
		if (i == 3) {
			fflush(stdout);
			if ((pid = fork()) != 0)
				break;
		}
		a[i] = site_a();
		if (i == 0) {
			if (mgprobe_snapshot)
				mgprobe_snapshot(); /* every site holds memory: all written */
			free(a[0]);
			usleep(ms * 1000u);
		} else if (i == 2) {
			free(a[2]);
			c = site_c();
			for (int k = 0; k < N; k += 2)
				free(blocks[k]);
		}
	}
	if (pid == 0) {
		void *b = site_b();
		__asm__ volatile("" : : "r"(a[3]), "r"(b) : "memory");
		exit(0);
	}
	int status = 0;
	waitpid(pid, &status, 0);
	printf("blocks %d child %d status %d\n", n, (int)pid, WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	__asm__ volatile("" : : "r"(a[1]), "r"(c) : "memory");
	return 0;
}
