/* SPDX-License-Identifier: MIT */
/* prog_spawn.c: children made by posix_spawn and an execl'd child, for test_spawn.py: the parent's
 * trace lists the spawned children, and a child that calls execl ends its pre-exec trace cleanly. */
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

int main(int argc, char **argv)
{
	if (argc > 1) { /* the exec'd image: print and go */
		printf("exec'd %s\n", argv[1]);
		return 0;
	}
	char *args[] = {"true", NULL};
	pid_t a, b;
	if (posix_spawn(&a, "/bin/true", NULL, NULL, args, environ) != 0 ||
	    posix_spawnp(&b, "true", NULL, NULL, args, environ) != 0)
		return 2;
	printf("spawned %d %d\n", (int)a, (int)b);
	fflush(stdout);
	pid_t c = fork();
	if (c == 0) {
		char *keep = malloc(4096); /* born in the child before it execs */
		(void)keep;
		execl("/proc/self/exe", argv[0], "child", (char *)NULL);
		_exit(127);
	}
	printf("forked %d\n", (int)c);
	fflush(stdout);
	int st;
	while (wait(&st) > 0)
		;
	return 0;
}
