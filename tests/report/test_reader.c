/* SPDX-License-Identifier: MIT */
/* test_reader.c: the trace reader on files built here record by record: the version it reports
 * is the file's, an empty record first and a perf map without one usable line load cleanly (the
 * UBSan reports of issue 13: memcpy from NULL, qsort of NULL; the `asan` test setup runs this
 * under UBSan), and the bounded grid keeps the first and the last snapshot of a long run. It
 * writes only its own temporary files and removes them. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mg_test.h"
#include "mgc_format.h"
#include "mgc_trace.h"

struct file {
	char path[64];
	FILE *f;
};

static int file_open(struct file *w, uint32_t version)
{
	snprintf(w->path, sizeof w->path, "/tmp/mg-test-reader-XXXXXX");
	int fd = mkstemp(w->path);
	if (fd < 0 || !(w->f = fdopen(fd, "wb")))
		return -1;
	struct mgc_file_header h = {.magic = MGC_TRACE_MAGIC, .version = version, .header_size = sizeof h};
	fwrite(&h, sizeof h, 1, w->f);
	return 0;
}

static void record(struct file *w, uint32_t type, const void *payload, uint32_t len)
{
	static const unsigned char zeros[8];
	struct mgc_rec r = {.type = type, .len = len, .check = mgc_fnv1a(payload, len)};
	fwrite(&r, sizeof r, 1, w->f);
	fwrite(payload, 1, len, w->f);
	fwrite(zeros, 1, mgc_pad8(len) - len, w->f);
}

static void process(struct file *w)
{
	struct mgc_rec_process pr = {.pid = 42, .ppid = 1, .mem_total = 1u << 30, .host_len = 1};
	unsigned char buf[sizeof pr + 1];
	memcpy(buf, &pr, sizeof pr);
	buf[sizeof pr] = 'h';
	record(w, MGC_REC_PROCESS, buf, sizeof buf);
}

static void snapshot(struct file *w, uint64_t t_ns, uint64_t step, uint32_t flags)
{
	struct mgc_rec_snapshot sn = {.t_ns = t_ns, .step = step, .rss_anon = 1u << 20, .flags = flags};
	record(w, MGC_REC_SNAPSHOT, &sn, sizeof sn);
}

static struct mgc_trace *file_load(struct file *w, const char *what)
{
	struct mgc_trace *t = NULL;
	char err[256] = "";
	fclose(w->f);
	int rc = mgc_trace_load(w->path, &t, err, sizeof err);
	MG_EQ(rc, 0, "%s loads (%s)", what, err);
	unlink(w->path);
	return t;
}

static void test_version(void)
{
	for (uint32_t v = 1; v <= MGC_TRACE_READER_VERSION; v++) {
		struct file w;
		if (!MG_EQ(file_open(&w, v), 0, "a temporary file"))
			return;
		process(&w);
		snapshot(&w, 1000, 0, MGC_SNAP_FULL);
		struct mgc_trace *t = file_load(&w, "a small trace");
		if (t)
			MG_EQ(t->version, v, "the version is the file's");
		mgc_trace_free(t);
	}
}

static void test_empty_records(void)
{
	struct file w;
	if (!MG_EQ(file_open(&w, 2), 0, "a temporary file"))
		return;
	record(&w, MGC_REC_PERFMAP, "", 0); /* the first record, empty: no payload buffer yet */
	process(&w);
	record(&w, MGC_REC_PERFMAP, "", 0);
	record(&w, MGC_REC_PERFMAP, "no map line here\n", 17); /* text, but no entry */
	snapshot(&w, 1000, 0, MGC_SNAP_FULL);
	struct mgc_trace *t = file_load(&w, "empty PERFMAP records");
	if (t) {
		MG_EQ(t->truncated, 0);
		MG_EQ(t->perfmap_len, 17);
		MG_EQ(t->nperf_syms, 0);
		MG_TRUE(mgc_trace_perfmap_name(t, 0x1000) == NULL, "no name from an empty index");
		MG_EQ(t->snapshots, 1);
	}
	mgc_trace_free(t);
}

/* A run three times longer than the grid: the first point is the first snapshot, the last
 * point the last one, and the points in between are evenly strided. */
static void test_long_run(void)
{
	struct file w;
	if (!MG_EQ(file_open(&w, 1), 0, "a temporary file"))
		return;
	process(&w);
	uint64_t n = 3 * MGC_GRID + 7;
	for (uint64_t i = 0; i < n; i++)
		snapshot(&w, (i + 1) * 1000000, i, MGC_SNAP_STEP);
	struct mgc_trace *t = file_load(&w, "a long run");
	if (t && MG_TRUE(t->npoints > 2 && t->npoints <= MGC_GRID, "%zu points", t->npoints)) {
		MG_EQ(t->snapshots, n);
		MG_EQ(t->points[0].step, 0);
		MG_EQ(t->points[1].step, 4, "stride 4 once the run is 3 grids long");
		MG_EQ(t->points[t->npoints - 2].step, 4 * ((n - 1) / 4));
		MG_EQ(t->points[t->npoints - 1].step, n - 1, "the last snapshot is the last point");
		MG_NEAR(t->first_marker_t, 0.001, 1e-12);
	}
	mgc_trace_free(t);
}

int main(void)
{
	test_version();
	test_empty_records();
	test_long_run();
	return mg_test_done("trace-reader");
}
