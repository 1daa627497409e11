/* SPDX-License-Identifier: MIT */
/* prog_weak.c: calls the step API as mgprobe.h documents it, built several ways (tests/probe/
 * meson.build: PIE, non-PIE, static, and as a library loaded with dlopen) for test_weak.py. Each
 * prints whether the probe is active, marks steps 1..3 keeping a 1000-byte block in each (from
 * keep_block), labels "validation" and takes a snapshot. `prog dlsym` finds the functions with
 * dlsym(RTLD_DEFAULT) instead (the remedy for non-PIE); `prog dlopen LIB` runs the library's. */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifndef WEAK_STATIC
#include <dlfcn.h>
#endif

#include "mgprobe.h"

void *weak_kept[3]; /* not static: the compiler may not drop the blocks */

__attribute__((noinline)) static void keep_block(unsigned i)
{
	weak_kept[i] = malloc(1000);
}

static int mark_steps(void)
{
	int active = mgprobe_active();
	for (unsigned s = 1; s <= 3; s++) {
		mgprobe_step(s);
		keep_block(s - 1);
	}
	mgprobe_label("validation");
	mgprobe_snapshot();
	return active;
}

#ifdef WEAK_LIBRARY
int weak_lib_steps(void);
int weak_lib_steps(void)
{
	return mark_steps();
}
#else
#ifndef WEAK_STATIC
/* The non-PIE remedy: the functions looked up when the program runs, not when it is linked. */
static int mark_steps_dlsym(void)
{
	int (*active)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "mgprobe_active");
	void (*step)(uint64_t) = (void (*)(uint64_t))dlsym(RTLD_DEFAULT, "mgprobe_step");
	for (unsigned s = 1; s <= 3; s++) {
		if (step)
			step(s);
		keep_block(s - 1);
	}
	return active ? active() : 0;
}

static int run_library(const char *path)
{
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	int (*f)(void) = h ? (int (*)(void))dlsym(h, "weak_lib_steps") : NULL;
	if (!f) {
		printf("cannot load %s\n", path);
		return 1;
	}
	printf("library: active %d\n", f());
	return 0;
}
#endif

int main(int argc, char **argv)
{
#ifndef WEAK_STATIC
	if (argc > 2 && strcmp(argv[1], "dlopen") == 0)
		return run_library(argv[2]);
	if (argc > 1 && strcmp(argv[1], "dlsym") == 0) {
		printf("dlsym: active %d\n", mark_steps_dlsym());
		return 0;
	}
#endif
	(void)argc;
	(void)argv;
	printf("active %d\n", mark_steps());
	return 0;
}
#endif
