/* SPDX-License-Identifier: MIT */
/* prog_dllib.c: the shared module prog_dlopen loads with dlopen: its allocation must be attributed
 * to lib_alloc_block in this file, even after the program has dlclosed the library. */
#include <stdlib.h>
#include <string.h>

#define NOINLINE __attribute__((noinline))

void *lib_make(size_t n);

NOINLINE static void *lib_alloc_block(size_t n)
{
	void *p = malloc(n); /* SITE:lib_alloc_block */
	memset(p, 0x5a, n);
	return p;
}

__attribute__((visibility("default"))) void *lib_make(size_t n)
{
	return lib_alloc_block(n);
}
