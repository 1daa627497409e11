/* SPDX-License-Identifier: MIT */
/* prog_steprss.c: touches 8 MiB of new anonymous memory before each of steps 1 to 6 and marks
 * them; between steps 3 and 4 it closes descriptors 3 to 63 and copies a file of its own
 * (argv[1], statm-like numbers) onto each, as daemons do; then a forked child touches 16 MiB
 * before each of its steps 7 to 9. test_steprss.py reads each marker's RSS from the traces.
 * With a second argument "kept": before each of steps 1 to 4 it holds 32 MiB in 4 KiB blocks, asks
 * for a snapshot (mallinfo2 read then sees them in use), frees them behind a block that pins the
 * heap's top, and marks the step 20 ms later: the marker's free bytes must be the freed 32 MiB. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "mgprobe.h"

static void touch(size_t mib)
{
	char *p = mmap(NULL, mib << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p != MAP_FAILED)
		memset(p, 1, mib << 20); /* kept: the RSS grows by mib each step */
}

static void close_and_dup(const char *path)
{
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (fd < 0 || write(fd, "1 2 3 4 5 6 7\n", 14) != 14)
		return;
	for (int i = 3; i < 64; i++) /* the probe's trace stays: it sits above 63 */
		if (i != fd)
			dup2(fd, i);
}

#define KEPT_BLOCKS 8192 /* x 4 KiB: 32 MiB, below glibc's mmap threshold, so in the heap */

static int kept(void)
{
	static void *b[KEPT_BLOCKS];
	static void *pins[4];
	for (uint64_t s = 1; s <= 4; s++) {
		for (int i = 0; i < KEPT_BLOCKS; i++) {
			b[i] = malloc(4096);
			if (!b[i])
				return 1;
			memset(b[i], 1, 4096);
		}
		pins[s - 1] = malloc(96 << 10); /* above them (no older hole fits it): no trim */
		mgprobe_snapshot();
		for (int i = 0; i < KEPT_BLOCKS; i++)
			free(b[i]);
		usleep(20000); /* the rest of a step: well past 200 times mallinfo2's few microseconds */
		mgprobe_step(s);
	}
	for (int i = 0; i < 4; i++)
		free(pins[i]); /* used: the compiler may not drop them */
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return 2;
	if (argc > 2 && strcmp(argv[2], "kept") == 0)
		return kept();
	for (uint64_t s = 1; s <= 6; s++) {
		if (s == 4)
			close_and_dup(argv[1]);
		touch(8);
		mgprobe_step(s);
	}
	pid_t pid = fork();
	if (pid == 0) {
		for (uint64_t s = 7; s <= 9; s++) {
			touch(16);
			mgprobe_step(s);
		}
		_exit(0);
	}
	int st = 1;
	waitpid(pid, &st, 0);
	printf("child %d status %d\n", (int)pid, st);
	return 0;
}
