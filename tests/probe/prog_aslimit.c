/* SPDX-License-Identifier: MIT */
/* prog_aslimit.c: what a program can still get under an address-space limit (ulimit -v) with the
 * probe loaded (issue 13, point 3). "4mib": malloc(4 MiB) (failed under a limit of 800,000 KiB when
 * the probe reserved ~1 GB up front); "largest": the largest malloc that succeeds, in MiB, found
 * by bisection; "vmsize": VmSize after one small malloc (what the probe itself maps). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static long vmsize_kib(void)
{
	char line[256];
	long kib = -1;
	FILE *f = fopen("/proc/self/status", "r");
	while (f && fgets(line, sizeof line, f))
		if (!strncmp(line, "VmSize:", 7))
			kib = strtol(line + 7, NULL, 10);
	if (f)
		fclose(f);
	return kib;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "4mib";
	void *kept = malloc(100);
	if (!strcmp(mode, "vmsize")) {
		printf("vmsize %ld KiB\n", vmsize_kib());
	} else if (!strcmp(mode, "largest")) {
		size_t lo = 0, hi = (size_t)4096 << 20;
		while (hi - lo > (1u << 20)) {
			size_t mid = lo + (hi - lo) / 2;
			void *p = malloc(mid);
			if (p)
				lo = mid;
			else
				hi = mid;
			free(p);
		}
		printf("largest %zu MiB\n", lo >> 20);
	} else {
		void *p = malloc((size_t)4 << 20);
		printf("4 MiB: %s\n", p ? "ok" : "NULL");
		free(p);
	}
	free(kept);
	return 0;
}
