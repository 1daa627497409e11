/* SPDX-License-Identifier: MIT */
/* test_reader.c: the trace reader on files built here record by record: the version it reports
 * is the file's, an empty record first and a perf map without one usable line load cleanly (the
 * UBSan reports of issue 13: memcpy from NULL, qsort of NULL; the `asan` test setup runs this
 * under UBSan), the bounded grid keeps the first and the last snapshot of a long run, and a
 * site's series and cohorts, kept only as their changes, read as the dense grid of every point
 * would (the model below). It writes only its own temporary files and removes them. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mg_test.h"
#include "mgc_format.h"
#include "mgc_grid.h"
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
	/* version 3's header adds the flags (none here: records plain, not compressed) */
	struct mgc_file_header3 h = {.h = {.magic = MGC_TRACE_MAGIC, .version = version}};
	h.h.header_size = version >= 3 ? sizeof h : sizeof h.h;
	fwrite(&h, h.h.header_size, 1, w->f);
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

/* ---- a site's series and cohorts against a dense model ---- */

#define MODEL_SITES 6u

/* What the reader promises, kept the plain way: every site's live bytes at every grid point (as
 * floats), carried forward from its last entry, halved with the grid; its cohorts as of the last
 * snapshot and as of the last step-marker snapshot. */
struct model {
	struct mgc_grid grid;
	float series[MODEL_SITES][MGC_GRID];
	uint64_t live[MODEL_SITES];
	uint64_t cohorts[MODEL_SITES][MGC_COHORTS], cohorts_step[MODEL_SITES][MGC_COHORTS];
};

static uint64_t lcg(uint64_t *x)
{
	*x = *x * 6364136223846793005ull + 1442695040888963407ull;
	return *x >> 33;
}

/* Snapshot i of n is taken inside a step (not at its marker): one in three, and the last (the
 * exit's). */
static int inside_step(uint64_t i, uint64_t n)
{
	return i % 3 == 2 || i == n - 1;
}

/* Site k changes at snapshot i of n: never (0), once (1), at every snapshot (2), at one in ten
 * (3), only inside steps (4: its cohorts at the last marker are those of a snapshot before it,
 * and it changes at the exit), at one in a hundred (5). */
static int site_changes(unsigned k, uint64_t i, uint64_t n, uint64_t *rng)
{
	switch (k) {
	case 0: return i == 3;  /* mentioned, live 0 */
	case 1: return i == 40;
	case 2: return 1;
	case 3: return lcg(rng) % 10 == 0;
	case 4: return i == n - 1 || (inside_step(i, n) && lcg(rng) % 4 == 0);
	default: return lcg(rng) % 100 == 0;
	}
}

/* One snapshot of the model, after its entries: the values as of this snapshot on its grid point. */
static void model_snapshot(struct model *m, uint32_t flags)
{
	size_t n = m->grid.n;
	enum mgc_grid_place place = mgc_grid_offer(&m->grid);
	for (unsigned k = 0; k < MODEL_SITES; k++) {
		if (place == MGC_GRID_HALVE)
			mgc_grid_halve(m->series[k], n, sizeof(float));
		if (place != MGC_GRID_SKIP)
			m->series[k][m->grid.n - 1] = (float)m->live[k];
		if (flags & MGC_SNAP_STEP)
			memcpy(m->cohorts_step[k], m->cohorts[k], sizeof m->cohorts[k]);
	}
}

static void test_sparse_series(void)
{
	struct file w;
	static struct model m;
	memset(&m, 0, sizeof m);
	m.grid = mgc_grid_make(MGC_GRID);
	if (!MG_EQ(file_open(&w, 1), 0, "a temporary file"))
		return;
	process(&w);
	uint64_t rng = 7, n = 3 * MGC_GRID + 5;
	for (uint64_t i = 0; i < n; i++) {
		uint32_t flags = inside_step(i, n) ? 0 : MGC_SNAP_STEP;
		unsigned char buf[sizeof(struct mgc_rec_snapshot) + MODEL_SITES * (sizeof(struct mgc_rec_site) + 16)];
		struct mgc_rec_snapshot sn = {.t_ns = (i + 1) * 1000000, .step = i, .rss_anon = 1u << 20, .flags = flags};
		size_t off = sizeof sn;
		for (unsigned k = 0; k < MODEL_SITES; k++) {
			if (!site_changes(k, i, n, &rng))
				continue;
			/* odd values past 2^24 too: the grid keeps floats */
			m.live[k] = k == 0 ? 0 : (lcg(&rng) % 3 == 0 ? 0 : (lcg(&rng) << (k * 4)) | 1);
			memset(m.cohorts[k], 0, sizeof m.cohorts[k]);
			unsigned b = (unsigned)(i % MGC_COHORTS);
			m.cohorts[k][b] = m.live[k];
			struct mgc_rec_site e = {.site = k + 1, .cohort_mask = m.live[k] ? 1u << b : 0,
						 .live_bytes = m.live[k], .allocs = i};
			memcpy(buf + off, &e, sizeof e);
			off += sizeof e;
			if (m.live[k]) {
				memcpy(buf + off, &m.live[k], 8);
				off += 8;
			}
			sn.nsites++;
		}
		memcpy(buf, &sn, sizeof sn);
		record(&w, MGC_REC_SNAPSHOT, buf, (uint32_t)off);
		model_snapshot(&m, flags);
	}
	struct mgc_trace *t = file_load(&w, "sites over a long run");
	if (!t || !MG_EQ(t->npoints, m.grid.n + !mgc_grid_has_latest(&m.grid), "grid points"))
		goto out;
	if (!mgc_grid_has_latest(&m.grid)) { /* the last snapshot, appended at the end */
		size_t before = m.grid.n;
		enum mgc_grid_place place = mgc_grid_append(&m.grid);
		for (unsigned k = 0; k < MODEL_SITES; k++) {
			if (place == MGC_GRID_HALVE)
				mgc_grid_halve(m.series[k], before, sizeof(float));
			m.series[k][m.grid.n - 1] = (float)m.live[k];
		}
	}
	for (unsigned k = 0; k < MODEL_SITES; k++) {
		const struct mgc_site *s = t->sites[k + 1];
		int bad = 0;
		for (size_t i = 0; s && i < t->npoints && !bad; i++)
			bad = !MG_NEAR(mgc_site_live_at(s, i), (double)m.series[k][i], 0, "site %u at point %zu", k + 1, i);
		if (!MG_TRUE(s != NULL, "site %u", k + 1))
			continue;
		MG_TRUE(memcmp(s->cohorts, m.cohorts[k], sizeof m.cohorts[k]) == 0, "site %u's cohorts", k + 1);
		MG_TRUE(memcmp(s->cohorts_step, m.cohorts_step[k], sizeof m.cohorts_step[k]) == 0,
			"site %u's cohorts at the last marker", k + 1);
	}
	/* only changes are kept: none for a site that held nothing, one for a site that changed once */
	MG_EQ(t->sites[1]->nseries, 0, "a site that never held memory");
	MG_TRUE(t->sites[1]->cohorts == mgc_no_cohorts, "its cohorts are the shared zeros");
	MG_EQ(t->sites[2]->nseries, t->sites[2]->counters.live_bytes ? 1 : 0, "a site that changed once");
out:
	mgc_trace_free(t);
}

int main(void)
{
	test_version();
	test_empty_records();
	test_long_run();
	test_sparse_series();
	return mg_test_done("trace-reader");
}
