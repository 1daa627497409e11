/* SPDX-License-Identifier: MIT */
/* prog_fds.c: a program that closes descriptors above stderr, as daemons and spawners do (argv[2]:
 * "low" 3..63, "all" 3..1023, "dup" all and then its own file copied onto every number up to
 * 1023), opens its own file, allocates and writes to it. The probe must never write its trace
 * into the program's files. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mgprobe.h"

#define NOINLINE __attribute__((noinline))

void *blocks[100];

NOINLINE static void after_close(void)
{
	for (int i = 0; i < 100; i++)
		blocks[i] = malloc(64);
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return 2;
	if (argc < 3)
		return 2;
	int dup_all = strcmp(argv[2], "dup") == 0;
	int last = strcmp(argv[2], "low") == 0 ? 63 : 1023;
	for (int fd = 3; fd <= last; fd++)
		close(fd);
	int fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		return 1;
	if (dup_all)
		for (int k = fd + 1; k < 1024; k++)
			dup2(fd, k);
	after_close();
	mgprobe_step(1); /* a snapshot now, with the file open */
	if (write(fd, "hello\n", 6) != 6)
		return 1;
	printf("fd %d\n", fd);
	return 0; /* the file stays open: the probe's exit snapshot must not land in it */
}
