/* SPDX-License-Identifier: MIT */
/* prog_dlopen.c: dlopens the library named by argv[1], has it allocate a block that stays live,
 * dlcloses it; then does the same again (a second load, a second module generation). The blocks
 * outlive the library: the trace must still say lib_alloc_block in prog_dllib.c made them. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

#define NOINLINE __attribute__((noinline))

void *blocks[2];

NOINLINE static int round_trip(const char *lib, int i, size_t n)
{
	void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		fprintf(stderr, "dlopen: %s\n", dlerror());
		return -1;
	}
	void *(*make)(size_t) = (void *(*)(size_t))dlsym(h, "lib_make");
	if (!make) {
		fprintf(stderr, "dlsym: %s\n", dlerror());
		return -1;
	}
	blocks[i] = make(n);
	if (dlclose(h) != 0) {
		fprintf(stderr, "dlclose: %s\n", dlerror());
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return 2;
	if (round_trip(argv[1], 0, 4321) < 0 || round_trip(argv[1], 1, 999) < 0)
		return 1;
	printf("blocks still live: %02x %02x\n", ((unsigned char *)blocks[0])[4320],
	       ((unsigned char *)blocks[1])[998]);
	return 0;
}
