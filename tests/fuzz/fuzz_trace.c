/* SPDX-License-Identifier: MIT */
/* fuzz_trace.c: libFuzzer target for the trace reader: any bytes as a *.mgt file, loaded
 * (mgc_trace_load) and, when they load, analysed as mgreport analyses a trace (mgc_analyze_trace),
 * with its Python frames decoded through their code objects' line tables and a perf-map lookup.
 * Passes when nothing crashes and no sanitizer speaks. */
#define _GNU_SOURCE
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#include "mgc_analysis.h"
#include "mgc_python.h"
#include "mgc_trace.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int fd = -1;
	static char path[64];
	if (fd < 0) {
		fd = memfd_create("mg-fuzz-trace", 0);
		if (fd < 0)
			return 0;
		snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
	}
	if (ftruncate(fd, 0) < 0 || pwrite(fd, data, size, 0) != (ssize_t)size)
		return 0;
	struct mgc_trace *t = NULL;
	char err[256];
	if (mgc_trace_load(path, &t, err, sizeof err) < 0)
		return 0;
	struct mgc_analysis a;
	struct mgc_analysis_opts o = {.top = 5};
	if (mgc_analyze_trace(t, &o, &a) == 0)
		mgc_analysis_free(&a);
	for (size_t i = 0; i < t->nsites; i++) {
		const struct mgc_site *s = t->sites[i];
		for (unsigned k = 0; s && s->ips && k < s->nframes; k++) {
			struct mgc_pyframe pf;
			if (mgc_pyframe_is(s->ips[k]))
				mgc_pycodes_frame(t->pycodes, s->ips[k], &pf);
		}
		if (s)
			(void)mgc_pyarena_site(t, s);
	}
	(void)mgc_trace_perfmap_name(t, 0x7f0000000150);
	if (t->npoints)
		(void)mgc_trace_module_for(t, (uint64_t)t->points[0].step, 1);
	mgc_trace_free(t);
	return 0;
}
