/* SPDX-License-Identifier: MIT */
/* prog_noisy.c: a program whose whole observable behaviour is fixed: it allocates, writes known
 * lines to stdout and stderr (interleaved, some unbuffered), and exits with status 3 (or with
 * argv[1]). Used to show the probe never changes a program, even when the probe cannot run. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
	char *buf = NULL;
	size_t total = 0;
	for (int i = 0; i < 200; i++) {
		char *p = malloc(64 + (size_t)i);
		snprintf(p, 64, "line %d", i);
		total += strlen(p);
		if (i % 50 == 0) {
			printf("stdout %s\n", p);
			fprintf(stderr, "stderr %s\n", p);
		}
		free(buf);
		buf = p;
	}
	printf("total %zu last '%s'\n", total, buf);
	fprintf(stderr, "done\n");
	return argc > 1 ? atoi(argv[1]) : 3;
}
