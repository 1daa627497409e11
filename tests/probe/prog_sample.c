/* SPDX-License-Identifier: MIT */
/* prog_sample.c: what sampled mode (mgprobe run --sample 64K) must get right, run in exact mode
 * too: 100,000 small blocks kept (an estimate within its band); 200 blocks of 100 bytes grown by
 * realloc to 300 KiB (over 4R: always recorded), then half shrunk back to 64 bytes and half freed
 * (realloc across recorded and unrecorded); 8 anonymous mappings of 64 KiB (never sampled).
 * `prog_sample twins`: allocates and frees, forks, and parent and child each keep the 100,000
 * small blocks (the child's draws must not repeat its parent's). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))
#define NSMALL 100000
#define NGROW 200
#define NMAP 8

static void *small[NSMALL], *grown[NGROW], *maps[NMAP];

NOINLINE static void *keep_small(void)
{
	return malloc(256);
}

NOINLINE static void *start_small(void)
{
	return malloc(100);
}

NOINLINE static void *grow_big(void *p)
{
	return realloc(p, 300 << 10);
}

NOINLINE static void *shrink_back(void *p)
{
	return realloc(p, 64);
}

NOINLINE static void *map_some(void)
{
	return mmap(NULL, 64 << 10, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
}

/* Parent and child keep the same blocks; 0 when both did. */
static int twins(void)
{
	for (int i = 0; i < 10000; i++) /* the parent has drawn before it forks */
		free(start_small());
	pid_t pid = fork();
	int status = 0;
	if (pid < 0)
		return 1;
	for (int i = 0; i < NSMALL; i++)
		if (!(small[i] = keep_small()))
			return 1;
	if (pid == 0)
		return 0;
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
		return 1;
	printf("twins: %d small each\n", NSMALL);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "twins") == 0)
		return twins();
	for (int i = 0; i < NSMALL; i++)
		if (!(small[i] = keep_small()))
			return 1;
	for (int i = 0; i < NGROW; i++)
		if (!(grown[i] = start_small()) || !(grown[i] = grow_big(grown[i])))
			return 1;
	for (int i = 0; i < NGROW; i++) {
		if (i % 2 == 0) {
			free(grown[i]);
			grown[i] = NULL;
		} else if (!(grown[i] = shrink_back(grown[i]))) {
			return 1;
		}
	}
	for (int i = 0; i < NMAP; i++)
		if ((maps[i] = map_some()) == MAP_FAILED)
			return 1;
	printf("%d small, %d grown, %d mappings\n", NSMALL, NGROW, NMAP);
	return 0;
}
