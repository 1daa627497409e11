/* SPDX-License-Identifier: MIT */
/* mge_memstat.c: reads VmRSS and mallinfo2 for the trainer's log lines.
 * It must never be called from the loader threads' hot path: fopen allocates. */
#include "mge_memstat.h"

#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

double mge_memstat_rss_mb(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	double mb = -1.0;

	if (!f)
		return -1.0;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "VmRSS:", 6)) {
			mb = strtod(line + 6, NULL) / 1024.0;
			break;
		}
	fclose(f);
	return mb;
}

void mge_memstat_heap_mb(double *live, double *free_kept)
{
	struct mallinfo2 mi = mallinfo2();

	*live = (double)(mi.uordblks + mi.hblkhd) / (1024.0 * 1024.0);
	*free_kept = (double)mi.fordblks / (1024.0 * 1024.0);
}
