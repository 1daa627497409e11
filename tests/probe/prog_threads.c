/* SPDX-License-Identifier: MIT */
/* prog_threads.c: 8 threads x 100k malloc/free pairs of varied sizes, each thread keeping every
 * 1000th block; main frees the kept blocks of the even threads (frees from another thread). The
 * driver checks the exact totals and that the run ends (no deadlock). With "fork", main forks 20
 * children while the threads run; each child allocates and exits. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))
#define THREADS 8
#define PAIRS 100000
#define KEEP_EVERY 1000
#define KEPT (PAIRS / KEEP_EVERY)

void *kept[THREADS][KEPT];

/* One short-lived block: 16..79 bytes by i. */
NOINLINE static void churn(unsigned i)
{
	char *p = malloc(16 + i % 64);
	p[0] = (char)i;
	__asm__ volatile("" : : "r"(p) : "memory");
	free(p);
}

NOINLINE static void *keep_one(void)
{
	return malloc(48);
}

static void *worker(void *arg)
{
	long t = (long)arg;
	int k = 0;
	for (unsigned i = 0; i < PAIRS; i++) {
		churn(i);
		if (i % KEEP_EVERY == 0)
			kept[t][k++] = keep_one();
	}
	return NULL;
}

void *child_block;

NOINLINE static void in_child(void)
{
	child_block = malloc(4242);
}

/* Forks while the workers allocate: the probe's fork handlers must not deadlock or corrupt. */
static int fork_under_load(int n)
{
	int ok = 0;
	for (int i = 0; i < n; i++) {
		pid_t c = fork();
		if (c == 0) {
			in_child();
			for (unsigned k = 0; k < 1000; k++)
				churn(k);
			exit(0);
		}
		int st;
		if (c > 0 && waitpid(c, &st, 0) == c && WIFEXITED(st) && WEXITSTATUS(st) == 0)
			ok++;
	}
	return ok;
}

int main(int argc, char **argv)
{
	pthread_t th[THREADS];
	for (long t = 0; t < THREADS; t++)
		if (pthread_create(&th[t], NULL, worker, (void *)t) != 0)
			return 1;
	if (argc > 1 && strcmp(argv[1], "fork") == 0)
		printf("%d children ok\n", fork_under_load(20));
	for (int t = 0; t < THREADS; t++)
		pthread_join(th[t], NULL);
	for (int t = 0; t < THREADS; t += 2)
		for (int k = 0; k < KEPT; k++)
			free(kept[t][k]);
	printf("%d threads x %d pairs done\n", THREADS, PAIRS);
	return 0;
}
