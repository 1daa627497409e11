/* SPDX-License-Identifier: MIT */
/* prog_forks.c: a parent that allocates, forks a child that allocates on its own (and frees one
 * inherited block) without exec, then forks a child that execs this program again in "exec-child"
 * mode, then allocates more. Each process has known numbers; the driver checks every file. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

void *parent_blocks[3];

NOINLINE static void parent_work(void)
{
	for (int i = 0; i < 3; i++)
		parent_blocks[i] = malloc(1000);
}

NOINLINE static void *child_work(void)
{
	void *p[5];
	for (int i = 0; i < 5; i++)
		p[i] = malloc(2000);
	free(p[4]);
	return p[0];
}

NOINLINE static void *exec_child_work(void)
{
	void *p = NULL;
	for (int i = 0; i < 4; i++)
		p = calloc(1, 3000);
	return p;
}

void *after_blocks[2]; /* not static: the compiler must keep the stores, and so the mallocs */

NOINLINE static void parent_after(void)
{
	for (int i = 0; i < 2; i++)
		after_blocks[i] = malloc(500);
}

static int wait_ok(pid_t pid)
{
	int st;
	if (waitpid(pid, &st, 0) != pid)
		return 0;
	return WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "exec-child") == 0) {
		exec_child_work();
		printf("exec child %d done\n", (int)getpid());
		return 0;
	}
	int quick_exit = argc > 1 && strcmp(argv[1], "_exit") == 0;
	parent_work();
	fflush(stdout);

	pid_t a = fork();
	if (a == 0) {
		child_work();
		free(parent_blocks[0]); /* the child's copy only */
		printf("fork child %d done\n", (int)getpid());
		fflush(stdout);
		if (quick_exit)
			_exit(0);
		exit(0);
	}
	int a_ok = wait_ok(a);

	pid_t b = fork();
	if (b == 0) {
		char *args[] = {argv[0], "exec-child", NULL};
		execv(argv[0], args);
		_exit(127);
	}
	int b_ok = wait_ok(b);
	parent_after();
	printf("parent %d children %d %d status %d %d\n", (int)getpid(), (int)a, (int)b, a_ok, b_ok);
	return a_ok && b_ok ? 0 : 1;
}
