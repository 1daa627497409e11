/* SPDX-License-Identifier: MIT */
/* mgc_trace.c: the trace reader. Every length and count read from the file is checked against
 * the record that holds it before use; a record that fails a check ends the readable part of
 * the file. Never aborts, never trusts the file. */
#define _GNU_SOURCE
#include "mgc_trace.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "mgc_grid.h"
#include "mgc_input.h"

#define ZIN_CAP (128u << 10)
#define ZWINDOW_LOG_MAX 24 /* refuse streams that would need more than 16 MiB of window */

struct mgc_reader {
	FILE *f;
	unsigned char *buf;
	size_t cap;
	uint64_t off;      /* stream offset of the next record (decompressed bytes, header included) */
	uint32_t version;  /* the file's, from its header */
	int done;
	ZSTD_DStream *z;   /* MGC_FILE_ZSTD: the records come out of this */
	unsigned char *zin;
	ZSTD_inBuffer in;
	int zend;          /* the file has no more input */
	uint64_t flags;    /* the file header's (mgc_file_flags); 0 before version 3 */
};

/* Up to n bytes of the record stream into p: the file's, or decompressed from it. A stream cut
 * anywhere gives what its whole blocks hold. Returns the bytes read (short at the end). */
static size_t stream_read(struct mgc_reader *r, void *p, size_t n)
{
	if (!r->z)
		return fread(p, 1, n, r->f);
	ZSTD_outBuffer out = {p, n, 0};
	while (out.pos < n) {
		if (r->in.pos == r->in.size && !r->zend) {
			r->in.size = fread(r->zin, 1, ZIN_CAP, r->f);
			r->in.pos = 0;
			r->zend = r->in.size == 0;
		}
		size_t before = out.pos, used = r->in.pos;
		size_t rc = ZSTD_decompressStream(r->z, &out, &r->in);
		if (ZSTD_isError(rc) || (out.pos == before && r->in.pos == used && r->zend))
			break; /* corrupt, or nothing more to come out */
	}
	return out.pos;
}

/* Sets up decompression for a version-3 file whose flags say zstd. 0 or -errno. */
static int stream_zstd(struct mgc_reader *r)
{
	r->z = ZSTD_createDStream();
	r->zin = malloc(ZIN_CAP);
	if (!r->z || !r->zin ||
	    ZSTD_isError(ZSTD_DCtx_setParameter(r->z, ZSTD_d_windowLogMax, ZWINDOW_LOG_MAX)))
		return -ENOMEM;
	r->in = (ZSTD_inBuffer){r->zin, 0, 0};
	return 0;
}

static void seterr(char *err, size_t errlen, const char *fmt, ...)
{
	if (!err || !errlen)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

int mgc_reader_open(const char *path, struct mgc_reader **out, char *err, size_t errlen)
{
	*out = NULL;
	FILE *f;
	int e = mgc_input_open(path, &f, err, errlen);
	if (e < 0)
		return e;
	struct mgc_file_header h;
	size_t n = fread(&h, 1, sizeof h, f);
	if (n == 0) {
		fclose(f);
		seterr(err, errlen, "%s: empty file, not a trace", path);
		return -ENODATA;
	}
	if (n < sizeof h || memcmp(h.magic, MGC_TRACE_MAGIC, 8) != 0) {
		fclose(f);
		if (n < sizeof h && memcmp(h.magic, MGC_TRACE_MAGIC, n < 8 ? n : 8) == 0)
			seterr(err, errlen, "%s: trace header cut short (%zu of 16 bytes)", path, n);
		else
			seterr(err, errlen, "%s: not an mg trace (bad magic)", path);
		return -EINVAL;
	}
	if (h.version > MGC_TRACE_VERSION || h.version == 0) {
		fclose(f);
		seterr(err, errlen,
		       "%s: trace format version %u is newer than this reader (reads up to %u): update mg",
		       path, h.version, MGC_TRACE_VERSION);
		return -EPROTO;
	}
	unsigned char rest[4096]; /* a newer writer's longer header: skipped (a stream cannot seek) */
	if (h.header_size < sizeof h || h.header_size > sizeof rest ||
	    fread(rest, 1, h.header_size - sizeof h, f) != h.header_size - sizeof h) {
		fclose(f);
		seterr(err, errlen, "%s: corrupt trace header", path);
		return -EINVAL;
	}
	struct mgc_file_header3 h3 = {.h = h};
	if (h.version >= 3) {
		if (h.header_size < sizeof h3) {
			fclose(f);
			seterr(err, errlen, "%s: corrupt trace header", path);
			return -EINVAL;
		}
		memcpy(&h3.flags, rest, sizeof h3.flags);
	}
	struct mgc_reader *r = calloc(1, sizeof *r);
	if (!r) {
		fclose(f);
		seterr(err, errlen, "out of memory");
		return -ENOMEM;
	}
	r->f = f;
	r->off = h.header_size;
	r->version = h.version;
	r->flags = h3.flags;
	if ((h3.flags & MGC_FILE_ZSTD) && stream_zstd(r) < 0) {
		mgc_reader_close(r);
		seterr(err, errlen, "out of memory");
		return -ENOMEM;
	}
	*out = r;
	return 0;
}

uint32_t mgc_reader_version(const struct mgc_reader *r)
{
	return r->version;
}

int mgc_reader_next(struct mgc_reader *r, uint32_t *type, const void **payload, uint32_t *len)
{
	struct mgc_rec h;
	if (r->done)
		return 0;
	size_t n = stream_read(r, &h, sizeof h);
	if (n == 0) {
		r->done = 1;
		return 0;
	}
	if (n < sizeof h || h.len > MGC_MAX_RECORD || h.type == 0) {
		r->done = 1;
		return -EBADMSG;
	}
	size_t padded = mgc_pad8(h.len);
	if (padded > r->cap) {
		size_t ncap = r->cap ? r->cap : 4096;
		while (ncap < padded)
			ncap *= 2;
		unsigned char *nb = realloc(r->buf, ncap);
		if (!nb) {
			r->done = 1;
			return -ENOMEM;
		}
		r->buf = nb;
		r->cap = ncap;
	}
	if (stream_read(r, r->buf, padded) != padded || mgc_fnv1a(r->buf, h.len) != h.check) {
		r->done = 1;
		return -EBADMSG;
	}
	r->off += sizeof h + padded;
	*type = h.type;
	*payload = r->buf ? (const void *)r->buf : (const void *)""; /* an empty first record */
	*len = h.len;
	return 1;
}

uint64_t mgc_reader_flags(const struct mgc_reader *r)
{
	return r->flags;
}

uint64_t mgc_reader_offset(const struct mgc_reader *r)
{
	return r->off;
}

void mgc_reader_close(struct mgc_reader *r)
{
	if (!r)
		return;
	fclose(r->f);
	free(r->buf);
	ZSTD_freeDStream(r->z);
	free(r->zin);
	free(r);
}

/* ---- the loaded model ---- */

static char *dupn(const void *p, size_t n)
{
	char *s = malloc(n + 1);
	if (s) {
		memcpy(s, p, n);
		s[n] = 0;
	}
	return s;
}

static int grow(void **arr, size_t *cap, size_t need, size_t elem)
{
	if (need <= *cap)
		return 0;
	size_t ncap = *cap ? *cap * 2 : 16;
	while (ncap < need)
		ncap *= 2;
	void *n = realloc(*arr, ncap * elem);
	if (!n)
		return -ENOMEM;
	memset((char *)n + *cap * elem, 0, (ncap - *cap) * elem);
	*arr = n;
	*cap = ncap;
	return 0;
}

/* A new zeroed element at the end of *arr (*n elements, room for *cap): its address, *n counting
 * it; NULL when out of memory. */
static void *push(void **arr, size_t *n, size_t *cap, size_t elem)
{
	if (grow(arr, cap, *n + 1, elem) < 0)
		return NULL;
	return (char *)*arr + (*n)++ * elem;
}

/* What a SNAPSHOT2 header counts from: the previous snapshot's values in the same file. */
struct snap_prev {
	uint64_t t, step;
	uint64_t v[12]; /* rss_anon (KiB) .. frees_total, as written (MGC_FILE_DELTAS) */
	char label[32];
	int deltas;     /* the file has MGC_FILE_DELTAS */
};

/* What loading one trace keeps besides the model itself. */
struct trace_loader {
	struct mgc_trace *t;
	struct mgc_grid grid;     /* which snapshots are points (t->npoints == grid.n) */
	int cur_on_grid;          /* the snapshot being read is a grid point */
	size_t mod_cap, site_cap, label_cap, child_cap, notice_cap;
	struct snap_prev prev;     /* what a SNAPSHOT2 is coded against */
	/* the frame tree of a version-2 or 3 trace: node k at index k (0 is the root) */
	uint64_t *node_ip;
	uint32_t *node_parent;
	size_t nnodes, node_cap;
	/* reading a forked child's base, the parent's file up to the fork (MGC_REC_FORKED) */
	int base;       /* depth of parents being read: 0 while reading the file itself */
	int base_missing; /* a parent's file could not be read: its nodes are unknown here */
	int relative;   /* a forked child's file: site entries are changes since the fork */
	int base_pid;   /* the parent whose PROCESS record must open its file */
	uint64_t base_start;
};

/* What a site held when a forked child started: its values read from the parent's file. */
struct mgc_site_base {
	struct mgc_site_counters c;
	uint64_t live_var;
	uint64_t cohorts[MGC_COHORTS];
};

/* Copies the fixed part of a record (the first `size` bytes) into dst: 0, or -EBADMSG when the
 * record is shorter. */
static int read_fixed(void *dst, size_t size, const unsigned char *p, uint32_t len)
{
	if (len < size)
		return -EBADMSG;
	memcpy(dst, p, size);
	return 0;
}

void mgc_point_from_snapshot(const struct mgc_rec_snapshot *sn, struct mgc_point *pt)
{
	memset(pt, 0, sizeof *pt);
	pt->t = (double)sn->t_ns / 1e9;
	pt->step = sn->step;
	pt->rss_anon = sn->rss_anon;
	pt->rss_file = sn->rss_file;
	pt->rss_shmem = sn->rss_shmem;
	pt->heap = sn->heap_live_bytes;
	pt->heap_count = sn->heap_live_count;
	pt->mmap = sn->mmap_live_bytes;
	pt->mmap_count = sn->mmap_live_count;
	pt->free_kept = sn->malloc_free_bytes;
	pt->arena = sn->malloc_arena_bytes;
	pt->device = sn->device_live_bytes;
	pt->flags = sn->flags;
	memcpy(pt->label, sn->label, sizeof pt->label);
	pt->label[sizeof pt->label - 1] = 0;
}

static struct mgc_site *site_get(struct trace_loader *ld, uint32_t id)
{
	struct mgc_trace *t = ld->t;
	if (id == 0 || id > (1u << 26))
		return NULL;
	if (grow((void **)&t->sites, &ld->site_cap, (size_t)id + 1, sizeof *t->sites) < 0)
		return NULL;
	if (t->nsites < (size_t)id + 1)
		t->nsites = (size_t)id + 1;
	if (!t->sites[id]) {
		t->sites[id] = calloc(1, sizeof(struct mgc_site));
		if (!t->sites[id])
			return NULL;
		t->sites[id]->id = id;
		t->sites[id]->cohorts = t->sites[id]->cohorts_step = mgc_no_cohorts;
	}
	return t->sites[id];
}

const uint64_t mgc_no_cohorts[MGC_COHORTS];

/* Site s's live bytes are `bytes` from grid point `at` on. */
static int series_set(struct mgc_site *s, uint32_t at, uint64_t bytes)
{
	size_t n = s->nseries;
	while (mgc_grid_change_set(s->series, &n, s->series_cap, at, (float)bytes) == -ENOSPC) {
		uint32_t ncap = s->series_cap ? 2 * s->series_cap : 2;
		struct mgc_grid_change *nc = realloc(s->series, ncap * sizeof *nc);
		if (!nc)
			return -ENOMEM;
		s->series = nc;
		s->series_cap = ncap;
	}
	s->nseries = (uint32_t)n;
	return 0;
}

/* Halves the full grid (mgc_grid.h), for the process and for every site. */
static void halve_grid(struct mgc_trace *t)
{
	for (size_t i = 0; i < t->nsites; i++) {
		struct mgc_site *s = t->sites[i];
		if (s && s->nseries)
			s->nseries = (uint32_t)mgc_grid_halve_changes(s->series, s->nseries);
	}
	t->npoints = mgc_grid_halve(t->points, t->npoints, sizeof *t->points);
}

/* Adds a point at the end of the grid (halving it first when the grid says so). */
static void grid_point(struct mgc_trace *t, enum mgc_grid_place place, const struct mgc_point *pt)
{
	if (place == MGC_GRID_HALVE)
		halve_grid(t);
	if (place != MGC_GRID_SKIP)
		t->points[t->npoints++] = *pt;
}

/* The process part of a snapshot: the last point, the grid, the step bookkeeping. Returns how
 * many grid points lie before this snapshot (its site values start at that index). */
static uint32_t begin_snapshot(struct trace_loader *ld, const struct mgc_point *pt)
{
	struct mgc_trace *t = ld->t;
	if (pt->step > t->max_step)
		t->max_step = pt->step;
	enum mgc_grid_place place = mgc_grid_offer(&ld->grid);
	ld->cur_on_grid = place != MGC_GRID_SKIP;
	t->snapshots++;
	if (pt->flags & MGC_SNAP_STEP) {
		t->last_step_snapshot = t->snapshots;
		if (t->first_marker_t < 0)
			t->first_marker_t = pt->t;
	}
	t->last = *pt;
	t->have_last = 1;
	grid_point(t, place, pt);
	return (uint32_t)t->npoints - (ld->cur_on_grid ? 1 : 0);
}

/* Cohorts are shared where they are equal: mgc_no_cohorts where all are 0, and cohorts_step is
 * cohorts itself until the site changes after a step marker. A site owns what is neither. */
static int owned(const uint64_t *c)
{
	return c != mgc_no_cohorts;
}

/* cohorts_step = cohorts (they are in force at the last step marker). */
static void cohorts_to_step(struct mgc_site *s)
{
	if (s->cohorts_step != s->cohorts && owned(s->cohorts_step))
		free((void *)s->cohorts_step);
	s->cohorts_step = s->cohorts;
}

/* cohorts_step = none, for a moment: set_cohorts then writes over cohorts in place instead of
 * keeping them for the marker (a step-marker snapshot makes both the new ones at once). */
static void cohorts_forget_step(struct mgc_site *s)
{
	if (s->cohorts_step != s->cohorts && owned(s->cohorts_step))
		free((void *)s->cohorts_step);
	s->cohorts_step = mgc_no_cohorts;
}

/* cohorts = c (MGC_COHORTS of them), in the site's own buffer unless all are 0. */
static int set_cohorts(struct mgc_site *s, const uint64_t *c)
{
	int any = 0;
	for (unsigned k = 0; k < MGC_COHORTS && !any; k++)
		any = c[k] != 0;
	uint64_t *own = owned(s->cohorts) && s->cohorts != s->cohorts_step ? (uint64_t *)s->cohorts : NULL;
	if (!any) {
		free(own);
		s->cohorts = mgc_no_cohorts;
		return 0;
	}
	if (!own && !(own = malloc(MGC_COHORTS * sizeof *own)))
		return -ENOMEM;
	memcpy(own, c, MGC_COHORTS * sizeof *own);
	s->cohorts = own;
	return 0;
}

static void free_cohorts(struct mgc_site *s)
{
	if (s->cohorts_step != s->cohorts && owned(s->cohorts_step))
		free((void *)s->cohorts_step);
	if (owned(s->cohorts))
		free((void *)s->cohorts);
}

/* One site entry of the snapshot being read: its counters and cohorts (all MGC_COHORTS of them,
 * zero where the entry has none) and its variance (sampled traces, else 0); `upto` is
 * begin_snapshot's answer: the first grid point that shows them. */
static int apply_site(struct trace_loader *ld, const struct mgc_rec_site *e, const uint64_t *cohorts,
		      uint64_t var, uint32_t flags, uint32_t upto)
{
	struct mgc_trace *t = ld->t;
	struct mgc_site *s = site_get(ld, e->site);
	if (!s)
		return e->site == 0 ? -EBADMSG : -ENOMEM;
	if (series_set(s, upto, e->live_bytes) < 0)
		return -ENOMEM;
	/* Keep the cohorts as they were at the last step marker too: what came after (a snapshot
	 * inside the last step, the exit's teardown) is not on the step axis. */
	if (s->updated_at && s->updated_at <= t->last_step_snapshot && !(flags & MGC_SNAP_STEP))
		cohorts_to_step(s); /* in force at that marker */
	s->seen = 1;
	s->counters = (struct mgc_site_counters){e->live_bytes, e->live_count, e->allocs,
						 e->alloc_bytes, e->frees, e->peak_bytes};
	s->live_var = var;
	if (flags & MGC_SNAP_STEP)
		cohorts_forget_step(s); /* the new cohorts are the marker's: written in place, not copied */
	if (set_cohorts(s, cohorts) < 0)
		return -ENOMEM;
	if (flags & MGC_SNAP_STEP)
		cohorts_to_step(s);
	s->updated_at = t->snapshots;
	return 0;
}

/* A parent's site entry, read for a forked child's base: only the site's values (its cohorts in
 * force at the step axis's end too), no series. */
static int base_values(struct trace_loader *ld, const struct mgc_rec_site *e, const uint64_t *cohorts,
		       uint64_t var)
{
	struct mgc_site *s = site_get(ld, e->site);
	if (!s)
		return e->site == 0 ? -EBADMSG : -ENOMEM;
	s->counters = (struct mgc_site_counters){e->live_bytes, e->live_count, e->allocs,
						 e->alloc_bytes, e->frees, e->peak_bytes};
	s->live_var = var;
	if (set_cohorts(s, cohorts) < 0)
		return -ENOMEM;
	cohorts_to_step(s);
	return 0;
}

/* A forked child's entry holds changes since the fork (mgc_format.h, MGC_REC_FORKED): live bytes,
 * count, variance and cohorts zigzagged. Turns e, coh and var into the site's values: the base
 * (its values when the child first names it, which are the parent's at the fork) plus the
 * changes. */
static int from_fork(struct trace_loader *ld, struct mgc_rec_site *e, uint64_t coh[MGC_COHORTS],
		     uint64_t *var)
{
	struct mgc_site *s = site_get(ld, e->site);
	if (!s)
		return e->site == 0 ? -EBADMSG : -ENOMEM;
	if (!s->base) {
		if (!(s->base = calloc(1, sizeof *s->base)))
			return -ENOMEM;
		if (!mgc_kind_is_cuda(s->kind)) { /* CUDA memory is never a forked child's: from 0 */
			s->base->c = s->counters;
			s->base->live_var = s->live_var;
			memcpy(s->base->cohorts, s->cohorts, sizeof s->base->cohorts);
		}
	}
	const struct mgc_site_base *b = s->base;
	e->live_bytes = b->c.live_bytes + (uint64_t)mgc_unzigzag(e->live_bytes);
	e->live_count = b->c.live_count + (uint64_t)mgc_unzigzag(e->live_count);
	e->allocs += b->c.allocs;
	*var = b->live_var + (uint64_t)mgc_unzigzag(*var);
	e->alloc_bytes += b->c.alloc_bytes;
	e->frees += b->c.frees;
	e->peak_bytes = b->c.live_bytes + e->peak_bytes > b->c.peak_bytes ? b->c.live_bytes + e->peak_bytes
									    : b->c.peak_bytes;
	for (unsigned c = 0; c < MGC_COHORTS; c++) {
		coh[c] = b->cohorts[c] + (uint64_t)mgc_unzigzag(coh[c]);
		if (coh[c] >= (1ull << 62)) /* a negative bucket: in flight, left out */
			coh[c] = 0;
	}
	return 0;
}

/* A site entry as the file holds it: a forked child's changes become values first; a parent's
 * entry read for a child's base sets only the site's values. */
static int take_entry(struct trace_loader *ld, struct mgc_rec_site *e, uint64_t *cohorts, uint64_t var,
		      uint32_t flags, uint32_t upto)
{
	if (ld->relative) {
		int rc = from_fork(ld, e, cohorts, &var);
		if (rc < 0)
			return rc;
	}
	if (ld->base)
		return base_values(ld, e, cohorts, var);
	return apply_site(ld, e, cohorts, var, flags, upto);
}

/* SNAPSHOT (version 1): the fixed record, then site entries each followed by its set cohorts (and
 * in a sampled trace its variance). */
static int on_snapshot(struct trace_loader *ld, const unsigned char *p, uint32_t len)
{
	struct mgc_rec_snapshot sn;
	struct mgc_point pt;
	if (read_fixed(&sn, sizeof sn, p, len) < 0)
		return -EBADMSG;
	mgc_point_from_snapshot(&sn, &pt);
	uint32_t upto = ld->base ? 0 : begin_snapshot(ld, &pt);
	size_t off = sizeof sn;
	int sampled = ld->t->sample_rate != 0;
	for (uint32_t i = 0; i < sn.nsites; i++) {
		struct mgc_rec_site e;
		uint64_t cohorts[MGC_COHORTS] = {0}, var = 0;
		if (off + sizeof e > len)
			return -EBADMSG;
		memcpy(&e, p + off, sizeof e);
		off += sizeof e;
		if (off + (size_t)(__builtin_popcount(e.cohort_mask) + sampled) * 8 > len)
			return -EBADMSG;
		for (unsigned k = 0; k < MGC_COHORTS; k++) {
			if (e.cohort_mask & (1u << k)) {
				memcpy(&cohorts[k], p + off, 8);
				off += 8;
			}
		}
		if (sampled) {
			memcpy(&var, p + off, 8);
			off += 8;
		}
		int rc = take_entry(ld, &e, cohorts, var, sn.flags, upto);
		if (rc < 0)
			return rc;
	}
	return 0;
}

/* A step marker: a STEP record, or a step snapshot of a MGC_FILE_DELTAS file. */
static void count_step(struct mgc_trace *t, uint64_t step)
{
	t->steps++;
	if (step > t->max_step)
		t->max_step = step;
}

/* The process part of a SNAPSHOT2 (mgc_format.h) into sn, and its number of site entries. */
static int decode_snapshot2(struct trace_loader *ld, const unsigned char **q, const unsigned char *end,
			    struct mgc_rec_snapshot *sn, uint64_t *nsites)
{
	uint64_t v[15], lab, t_ns;
	struct snap_prev *pv = &ld->prev;
	for (int i = 0; i < 15; i++)
		if (mgc_get_varint(q, end, &v[i]) < 0)
			return -EBADMSG;
	if (pv->deltas) { /* mgc_format.h: microseconds, and changes since the previous snapshot */
		t_ns = (pv->t / 1000 + v[0]) * 1000;
		for (int i = 0; i < 12; i++)
			v[2 + i] = pv->v[i] += (uint64_t)mgc_unzigzag(v[2 + i]);
	} else {
		t_ns = pv->t + v[0];
	}
	if (v[2] > (UINT64_MAX >> 10) || v[3] > (UINT64_MAX >> 10) || v[4] > (UINT64_MAX >> 10))
		return -EBADMSG;
	*sn = (struct mgc_rec_snapshot){
		.t_ns = t_ns, .step = pv->step + (uint64_t)mgc_unzigzag(v[1]),
		.rss_anon = v[2] << 10, .rss_file = v[3] << 10, .rss_shmem = v[4] << 10,
		.heap_live_bytes = v[5], .heap_live_count = v[6], .mmap_live_bytes = v[7],
		.mmap_live_count = v[8], .malloc_free_bytes = v[9], .malloc_arena_bytes = v[10],
		.device_live_bytes = v[11], .allocs_total = v[12], .frees_total = v[13], .flags = (uint32_t)v[14]};
	if (mgc_get_varint(q, end, &lab) < 0 || lab > sizeof sn->label || (uint64_t)(end - *q) < (lab ? lab - 1 : 0))
		return -EBADMSG;
	if (lab) { /* 0: the label is unchanged; else its length + 1, then its bytes */
		memset(pv->label, 0, sizeof pv->label);
		memcpy(pv->label, *q, lab - 1);
		*q += lab - 1;
	}
	memcpy(sn->label, pv->label, sizeof sn->label);
	sn->label[sizeof sn->label - 1] = 0;
	if (mgc_get_varint(q, end, nsites) < 0 || *nsites > (uint64_t)(end - *q) / 8)
		return -EBADMSG; /* every entry takes at least eight bytes */
	pv->t = sn->t_ns;
	pv->step = sn->step;
	if (pv->deltas && (sn->flags & MGC_SNAP_STEP))
		count_step(ld->t, sn->step); /* the step marker (no STEP records in such files) */
	return 0;
}

/* One SNAPSHOT2 site entry: id delta from *id, six counters, cohort mask, the set cohorts, and
 * in a sampled trace the variance (else *var is 0). */
static int decode_site2(const unsigned char **q, const unsigned char *end, int sampled, uint64_t *id,
			struct mgc_rec_site *e, uint64_t *cohorts, uint64_t *var)
{
	uint64_t f[8];
	for (int k = 0; k < 8; k++)
		if (mgc_get_varint(q, end, &f[k]) < 0)
			return -EBADMSG;
	if (f[0] == 0 && *id > 0)
		return -EBADMSG; /* ids increase */
	*id += f[0];
	if (*id == 0 || *id > UINT32_MAX || f[7] > UINT32_MAX)
		return -EBADMSG;
	*e = (struct mgc_rec_site){.site = (uint32_t)*id, .cohort_mask = (uint32_t)f[7], .live_bytes = f[1],
				   .live_count = f[2], .allocs = f[3], .alloc_bytes = f[4], .frees = f[5],
				   .peak_bytes = f[6]};
	for (unsigned c = 0; c < MGC_COHORTS; c++) {
		cohorts[c] = 0;
		if ((e->cohort_mask & (1u << c)) && mgc_get_varint(q, end, &cohorts[c]) < 0)
			return -EBADMSG;
	}
	*var = 0;
	return sampled && mgc_get_varint(q, end, var) < 0 ? -EBADMSG : 0;
}

/* SNAPSHOT2 (version 2): decoded straight into the point and the sites. */
static int on_snapshot2(struct trace_loader *ld, const unsigned char *p, uint32_t len)
{
	const unsigned char *q = p, *end = p + len;
	struct mgc_rec_snapshot sn;
	struct mgc_point pt;
	uint64_t nsites, id = 0;
	int rc = decode_snapshot2(ld, &q, end, &sn, &nsites);
	if (rc < 0)
		return rc;
	mgc_point_from_snapshot(&sn, &pt);
	uint32_t upto = ld->base ? 0 : begin_snapshot(ld, &pt);
	for (uint64_t i = 0; i < nsites; i++) {
		struct mgc_rec_site e;
		uint64_t cohorts[MGC_COHORTS], var;
		if ((rc = decode_site2(&q, end, ld->t->sample_rate != 0, &id, &e, cohorts, &var)) < 0 ||
		    (rc = take_entry(ld, &e, cohorts, var, sn.flags, upto)) < 0)
			return rc;
	}
	return 0;
}

/* Makes room for node ids up to `id` (version 3's are sparse); new ones read as undefined. */
static int nodes_room(struct trace_loader *ld, uint64_t id)
{
	if (id >= (1u << 31))
		return -EBADMSG;
	if (id < ld->node_cap)
		return 0;
	size_t ncap = ld->node_cap ? ld->node_cap : 4096;
	while (ncap <= id)
		ncap *= 2;
	uint64_t *ni = realloc(ld->node_ip, ncap * sizeof *ni);
	if (!ni)
		return -ENOMEM;
	ld->node_ip = ni;
	uint32_t *np = realloc(ld->node_parent, ncap * sizeof *np);
	if (!np)
		return -ENOMEM;
	ld->node_parent = np;
	for (size_t k = ld->node_cap; k < ncap; k++)
		np[k] = UINT32_MAX; /* undefined */
	ld->node_cap = ncap;
	return 0;
}

static int on_frames(struct trace_loader *ld, const unsigned char *p, uint32_t len)
{
	struct mgc_rec_frames fr;
	if (read_fixed(&fr, sizeof fr, p, len) < 0)
		return -EBADMSG;
	if (fr.first != ld->nnodes + 1 || (uint64_t)fr.count * MGC_FRAME_NODE_SIZE > len - sizeof fr ||
	    ld->nnodes + fr.count >= (1u << 31))
		return -EBADMSG;
	int err = nodes_room(ld, ld->nnodes + fr.count);
	if (err < 0)
		return err;
	const unsigned char *q = p + sizeof fr;
	for (uint32_t i = 0; i < fr.count; i++, q += MGC_FRAME_NODE_SIZE) {
		size_t id = ld->nnodes + 1;
		uint32_t parent;
		memcpy(&ld->node_ip[id], q, 8);
		memcpy(&parent, q + 8, 4);
		if (parent >= id) /* a parent is always written first */
			return -EBADMSG;
		ld->node_parent[id] = parent;
		ld->nnodes++;
	}
	return 0;
}

/* FRAMES3 (mgc_format.h): nodes with their ids, its parent before it; an id defined again holds
 * for the stacks read after it (STACK3 entries are resolved as they are read). */
static int on_frames3(struct trace_loader *ld, const unsigned char *p, uint32_t len)
{
	const unsigned char *q = p, *end = p + len;
	int64_t id = 0;
	uint64_t ip = 0;
	while (q < end) {
		uint64_t did, dpar, dip;
		if (mgc_get_varint(&q, end, &did) < 0 || mgc_get_varint(&q, end, &dpar) < 0 ||
		    mgc_get_varint(&q, end, &dip) < 0)
			return -EBADMSG;
		id += mgc_unzigzag(did);
		int64_t parent = id - mgc_unzigzag(dpar);
		ip += (uint64_t)mgc_unzigzag(dip);
		int err = id > 0 ? nodes_room(ld, (uint64_t)id) : -EBADMSG;
		if (err < 0)
			return err;
		if (parent < 0 || parent == id)
			return -EBADMSG;
		if (parent > 0 && ((uint64_t)parent >= ld->node_cap || ld->node_parent[parent] == UINT32_MAX)) {
			if (!ld->base_missing)
				return -EBADMSG; /* a parent is defined first */
			parent = 0; /* in the parent's file, which is missing: the stack ends here */
		}
		ld->node_ip[id] = ip;
		ld->node_parent[id] = (uint32_t)parent;
		if ((size_t)id > ld->nnodes)
			ld->nnodes = (size_t)id;
	}
	return 0;
}

/* Gives site `id` its stack (ips: nframes + 1 u64s, malloc'ed; taken over even on failure). */
static int set_stack(struct trace_loader *ld, uint32_t id, uint64_t *ips, uint16_t nframes,
		     uint16_t kind, uint32_t gen)
{
	struct mgc_site *s = site_get(ld, id);
	if (!s) {
		free(ips);
		return -ENOMEM;
	}
	free(s->ips);
	s->ips = ips;
	s->nframes = nframes;
	s->kind = kind;
	s->gen = gen;
	return 0;
}

/* STACK2 (version 2): each entry names its innermost node of the frame tree. */
static int on_stack2(struct trace_loader *ld, const unsigned char *p, uint32_t len)
{
	struct mgc_rec_stack2 st;
	if (len == 0 || len % sizeof st)
		return -EBADMSG;
	for (uint32_t off = 0; off < len; off += sizeof st) {
		memcpy(&st, p + off, sizeof st);
		if (st.id == 0 || st.leaf > ld->nnodes || st.nframes > MGC_MAX_FRAMES ||
		    (st.leaf == 0) != (st.nframes == 0))
			return -EBADMSG;
		uint64_t *ips = malloc((size_t)st.nframes * 8 + 8);
		if (!ips)
			return -ENOMEM;
		uint32_t cur = st.leaf;
		for (unsigned k = 0; k < st.nframes; k++) {
			ips[k] = ld->node_ip[cur];
			cur = ld->node_parent[cur];
			if ((cur == 0) != (k + 1 == st.nframes)) {
				free(ips);
				return -EBADMSG; /* the walk must end at the root after nframes nodes */
			}
		}
		int rc = set_stack(ld, st.id, ips, st.nframes, st.kind, st.gen);
		if (rc < 0)
			return rc;
	}
	return 0;
}

/* STACK3 (mgc_format.h): sites as leaves of the frame tree, in varints; each stack is nframes
 * nodes from its leaf up to the root (cut where a missing parent's file held the rest). */
static int on_stack3(struct trace_loader *ld, const unsigned char *p, uint32_t len)
{
	const unsigned char *q = p, *end = p + len;
	int64_t id = 0, leaf = 0;
	while (q < end) {
		uint64_t v[5];
		for (int k = 0; k < 5; k++)
			if (mgc_get_varint(&q, end, &v[k]) < 0)
				return -EBADMSG;
		id += mgc_unzigzag(v[0]);
		leaf += mgc_unzigzag(v[1]);
		if (id <= 0 || id > UINT32_MAX || leaf < 0 || leaf > UINT32_MAX || v[2] > MGC_MAX_FRAMES ||
		    v[3] > UINT16_MAX || v[4] > UINT32_MAX ||
		    ((leaf == 0) != (v[2] == 0) && !ld->base_missing))
			return -EBADMSG;
		uint32_t nframes = (uint32_t)v[2], cur = (uint32_t)leaf;
		uint64_t *ips = malloc((size_t)nframes * 8 + 8);
		if (!ips)
			return -ENOMEM;
		for (unsigned k = 0; k < nframes; k++) {
			if (cur == 0 && ld->base_missing) {
				nframes = k; /* its outer frames are in the missing parent's file */
				break;
			}
			if (cur == 0 || cur >= ld->node_cap || ld->node_parent[cur] == UINT32_MAX) {
				free(ips);
				return -EBADMSG;
			}
			ips[k] = ld->node_ip[cur];
			cur = ld->node_parent[cur];
		}
		int rc = cur == 0 ? set_stack(ld, (uint32_t)id, ips, (uint16_t)nframes, (uint16_t)v[3],
					      (uint32_t)v[4])
				  : (free(ips), -EBADMSG); /* the walk must end at the root */
		if (rc < 0)
			return rc;
	}
	return 0;
}

/* STACK (version 1): the return addresses follow the record. */
static int on_stack(struct trace_loader *ld, const unsigned char *p, uint32_t len)
{
	struct mgc_rec_stack st;
	if (read_fixed(&st, sizeof st, p, len) < 0)
		return -EBADMSG;
	if ((uint64_t)st.nframes * 8 > len - sizeof st || st.id == 0)
		return -EBADMSG;
	uint64_t *ips = malloc((size_t)st.nframes * 8 + 8);
	if (!ips)
		return -ENOMEM;
	memcpy(ips, p + sizeof st, (size_t)st.nframes * 8);
	return set_stack(ld, st.id, ips, st.nframes, st.kind, st.gen);
}

/* DEVMEM completes the snapshot before it: every cell's bytes at that snapshot (a cell it does
 * not name is 0 there). */
static int on_devmem(struct trace_loader *ld, const unsigned char *p, uint32_t len)
{
	struct mgc_trace *t = ld->t;
	struct mgc_rec_devmem h;
	if (read_fixed(&h, sizeof h, p, len) < 0)
		return -EBADMSG;
	if (h.ncells > (len - sizeof h) / sizeof(struct mgc_devmem_cell))
		return -EBADMSG;
	if (!t->have_last)
		return 0; /* no snapshot to complete */
	struct mgc_point *grid = ld->cur_on_grid && t->npoints ? &t->points[t->npoints - 1] : NULL;
	memset(t->last.dev, 0, sizeof t->last.dev);
	for (size_t k = 0; k < t->ndevcells; k++) {
		t->devcells[k].bytes = 0;
		t->devcells[k].count = 0;
	}
	for (uint32_t i = 0; i < h.ncells; i++) {
		struct mgc_devmem_cell c;
		memcpy(&c, p + sizeof h + (size_t)i * sizeof c, sizeof c);
		size_t k = 0;
		while (k < t->ndevcells && t->devcells[k].kind != c.kind)
			k++;
		if (k == t->ndevcells) {
			if (k == MGC_DEVCELLS) {
				t->devcells_dropped = 1;
				continue;
			}
			t->devcells[t->ndevcells++] = (struct mgc_devcell){.kind = c.kind};
		}
		struct mgc_devcell *d = &t->devcells[k];
		d->bytes = c.bytes;
		d->count = c.count;
		if (c.bytes > d->peak)
			d->peak = c.bytes;
		t->last.dev[k] = c.bytes;
	}
	if (grid && grid->t == t->last.t && grid->step == t->last.step)
		memcpy(grid->dev, t->last.dev, sizeof grid->dev);
	return 0;
}

static int on_process(struct trace_loader *ld, const unsigned char *p, uint32_t len)
{
	struct mgc_trace *t = ld->t;
	struct mgc_rec_process pr;
	if (read_fixed(&pr, sizeof pr, p, len) < 0)
		return -EBADMSG;
	if ((uint64_t)pr.host_len + pr.cmdline_len + pr.exe_len > len - sizeof pr)
		return -EBADMSG;
	t->proc = pr;
	const unsigned char *s = p + sizeof pr;
	free(t->host);
	free(t->cmdline);
	free(t->exe);
	t->host = dupn(s, pr.host_len);
	t->cmdline = dupn(s + pr.host_len, pr.cmdline_len);
	t->exe = dupn(s + pr.host_len + pr.cmdline_len, pr.exe_len);
	if (!t->host || !t->cmdline || !t->exe)
		return -ENOMEM;
	for (uint32_t i = 0; i < pr.cmdline_len; i++)
		if (t->cmdline[i] == 0)
			t->cmdline[i] = ' ';
	return 0;
}

static int on_module_load(struct trace_loader *ld, const unsigned char *p, uint32_t len)
{
	struct mgc_trace *t = ld->t;
	struct mgc_rec_module m;
	if (read_fixed(&m, sizeof m, p, len) < 0)
		return -EBADMSG;
	if (m.build_id_len > 40 || (uint64_t)m.build_id_len + m.path_len > len - sizeof m)
		return -EBADMSG;
	struct mgc_module *mod = push((void **)&t->modules, &t->nmodules, &ld->mod_cap, sizeof *mod);
	if (!mod)
		return -ENOMEM;
	*mod = (struct mgc_module){.id = m.id, .gen_loaded = m.gen, .gen_unloaded = UINT32_MAX,
				   .bias = m.bias, .start = m.start, .end = m.end,
				   .build_id_len = m.build_id_len};
	memcpy(mod->build_id, p + sizeof m, m.build_id_len);
	mod->path = dupn(p + sizeof m + m.build_id_len, m.path_len);
	return mod->path ? 0 : -ENOMEM;
}

static int on_module_unload(struct trace_loader *ld, const unsigned char *p, uint32_t len)
{
	struct mgc_trace *t = ld->t;
	struct mgc_rec_module_unload u;
	if (read_fixed(&u, sizeof u, p, len) < 0)
		return -EBADMSG;
	for (size_t i = 0; i < t->nmodules; i++)
		if (t->modules[i].id == u.id && t->modules[i].gen_unloaded == UINT32_MAX)
			t->modules[i].gen_unloaded = u.gen;
	return 0;
}

static int on_perfmap(struct trace_loader *ld, const unsigned char *p, uint32_t len)
{
	struct mgc_trace *t = ld->t;
	if (len == 0 || t->perfmap_len + len > (256u << 20))
		return 0; /* nothing to add, or past the first 256 MiB kept */
	char *n = realloc(t->perfmap, t->perfmap_len + len + 1);
	if (!n)
		return -ENOMEM;
	memcpy(n + t->perfmap_len, p, len);
	t->perfmap = n;
	t->perfmap_len += len;
	n[t->perfmap_len] = 0;
	return 0;
}

static int on_step(struct trace_loader *ld, const unsigned char *p, uint32_t len)
{
	struct mgc_rec_step s;
	if (read_fixed(&s, sizeof s, p, len) < 0)
		return -EBADMSG;
	count_step(ld->t, s.step);
	return 0;
}

static int on_label(struct trace_loader *ld, const unsigned char *p, uint32_t len)
{
	struct mgc_trace *t = ld->t;
	struct mgc_rec_label l;
	if (read_fixed(&l, sizeof l, p, len) < 0 || l.len > len - sizeof l)
		return -EBADMSG;
	if (t->nlabels >= 100000)
		return 0; /* keep the first 100,000 */
	struct mgc_label *x = push((void **)&t->labels, &t->nlabels, &ld->label_cap, sizeof *x);
	if (!x)
		return -ENOMEM;
	x->t = (double)l.t_ns / 1e9;
	x->step = l.step;
	size_t n = l.len < sizeof x->text - 1 ? l.len : sizeof x->text - 1;
	memcpy(x->text, p + sizeof l, n);
	x->text[n] = 0;
	return 0;
}

static int on_child(struct trace_loader *ld, const unsigned char *p, uint32_t len)
{
	struct mgc_trace *t = ld->t;
	struct mgc_rec_child c;
	if (read_fixed(&c, sizeof c, p, len) < 0)
		return -EBADMSG;
	struct mgc_child *x = push((void **)&t->children, &t->nchildren, &ld->child_cap, sizeof *x);
	if (!x)
		return -ENOMEM;
	*x = (struct mgc_child){.pid = c.pid, .t = (double)c.t_ns / 1e9};
	return 0;
}

static int on_end(struct trace_loader *ld, const unsigned char *p, uint32_t len)
{
	struct mgc_rec_end e;
	if (read_fixed(&e, sizeof e, p, len) < 0)
		return -EBADMSG;
	ld->t->ended = 1;
	ld->t->end_reason = e.reason;
	ld->t->end_status = e.status;
	return 0;
}

static int on_devsite(struct trace_loader *ld, const unsigned char *p, uint32_t len)
{
	if (len % sizeof(struct mgc_rec_devsite))
		return -EBADMSG;
	for (uint32_t off = 0; off < len; off += sizeof(struct mgc_rec_devsite)) {
		struct mgc_rec_devsite d;
		memcpy(&d, p + off, sizeof d);
		struct mgc_site *s = site_get(ld, d.site);
		if (!s)
			return d.site == 0 ? -EBADMSG : -ENOMEM;
		if (!s->cuda && !(s->cuda = malloc(sizeof *s->cuda)))
			return -ENOMEM;
		*s->cuda = d;
	}
	return 0;
}

/* A notice for the report (the first 1000 kept). */
static int add_notice(struct trace_loader *ld, const char *text, size_t n)
{
	struct mgc_trace *t = ld->t;
	if (t->nnotices >= 1000)
		return 0;
	char **x = push((void **)&t->notices, &t->nnotices, &ld->notice_cap, sizeof *x);
	if (!x || !(*x = dupn(text, n)))
		return -ENOMEM;
	return 0;
}

static int on_notice(struct trace_loader *ld, const unsigned char *p, uint32_t len)
{
	struct mgc_rec_notice nt;
	if (read_fixed(&nt, sizeof nt, p, len) < 0 || nt.len > len - sizeof nt)
		return -EBADMSG;
	return add_notice(ld, (const char *)p + sizeof nt, nt.len);
}

static int on_sampling(struct trace_loader *ld, const unsigned char *p, uint32_t len)
{
	struct mgc_rec_sampling sr;
	if (read_fixed(&sr, sizeof sr, p, len) < 0)
		return -EBADMSG;
	ld->t->sample_rate = sr.rate;
	return 0;
}

static int on_forked(struct trace_loader *ld, const unsigned char *p, uint32_t len);

static int on_pycode(struct trace_loader *ld, const unsigned char *p, uint32_t len)
{
	return mgc_pycodes_add(&ld->t->pycodes, p, len);
}

typedef int (*record_fn)(struct trace_loader *ld, const unsigned char *p, uint32_t len);

/* The reader of each record type (mgc_format.h); types not listed (newer ones) are skipped. */
static const record_fn record_readers[] = {
	[MGC_REC_PROCESS] = on_process,
	[MGC_REC_MODULE_LOAD] = on_module_load,
	[MGC_REC_MODULE_UNLOAD] = on_module_unload,
	[MGC_REC_STACK] = on_stack,
	[MGC_REC_SNAPSHOT] = on_snapshot,
	[MGC_REC_STEP] = on_step,
	[MGC_REC_LABEL] = on_label,
	[MGC_REC_CHILD] = on_child,
	[MGC_REC_END] = on_end,
	[MGC_REC_NOTICE] = on_notice,
	[MGC_REC_FRAMES] = on_frames,
	[MGC_REC_STACK2] = on_stack2,
	[MGC_REC_PERFMAP] = on_perfmap,
	[MGC_REC_SNAPSHOT2] = on_snapshot2,
	[MGC_REC_DEVMEM] = on_devmem,
	[MGC_REC_DEVSITE] = on_devsite,
	[MGC_REC_PYCODE] = on_pycode,
	[MGC_REC_FRAMES3] = on_frames3,
	[MGC_REC_STACK3] = on_stack3,
	[MGC_REC_FORKED] = on_forked,
	[MGC_REC_SAMPLING] = on_sampling,
};

/* What a parent's file gives a forked child's base: its stacks, modules, code objects, the sites'
 * values and its own parent's file; not its points, markers, children or end. */
static int base_wants(uint32_t type)
{
	switch (type) {
	case MGC_REC_MODULE_LOAD: case MGC_REC_MODULE_UNLOAD: case MGC_REC_STACK:
	case MGC_REC_FRAMES: case MGC_REC_STACK2: case MGC_REC_FRAMES3: case MGC_REC_STACK3:
	case MGC_REC_PYCODE: case MGC_REC_SNAPSHOT: case MGC_REC_SNAPSHOT2: case MGC_REC_FORKED:
	case MGC_REC_DEVSITE:
		return 1;
	default:
		return 0;
	}
}

/* One record into the model by its reader (a newer type is skipped). While a parent's file is
 * read for a child's base, only what base_wants, and its PROCESS record must be that parent's
 * (else -ESRCH). */
static int on_record(struct trace_loader *ld, uint32_t type, const unsigned char *p, uint32_t len)
{
	if (ld->base && type == MGC_REC_PROCESS) {
		struct mgc_rec_process pr;
		if (read_fixed(&pr, sizeof pr, p, len) < 0)
			return -EBADMSG;
		return pr.pid == ld->base_pid && pr.start_mono_ns == ld->base_start ? 0 : -ESRCH;
	}
	if (ld->base && !base_wants(type))
		return 0;
	if (type < sizeof record_readers / sizeof record_readers[0] && record_readers[type])
		return record_readers[type](ld, p, len);
	return 0;
}

/* The parent's file that a child's FORKED record names: its path, else the same name beside the
 * child's file (traces copied elsewhere together). NULL when neither opens. */
static struct mgc_reader *open_parent(const char *child, const char *path)
{
	struct mgc_reader *r = NULL;
	if (mgc_reader_open(path, &r, NULL, 0) == 0)
		return r;
	const char *slash = strrchr(child, '/'), *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	size_t dl = slash ? (size_t)(slash - child) + 1 : 0;
	char *near = malloc(dl + strlen(base) + 1);
	if (!near)
		return NULL;
	memcpy(near, child, dl);
	strcpy(near + dl, base);
	if (mgc_reader_open(near, &r, NULL, 0) < 0)
		r = NULL;
	free(near);
	return r;
}

/* Reads the parent's records up to the fork into the loader (base mode). 0, or -ESRCH when the
 * file there is another process's, or -errno. */
static int read_base(struct trace_loader *ld, struct mgc_reader *r, const struct mgc_rec_forked *f)
{
	struct snap_prev prev = ld->prev;
	int pid = ld->base_pid, relative = ld->relative;
	uint64_t start = ld->base_start;
	ld->prev = (struct snap_prev){.deltas = (mgc_reader_flags(r) & MGC_FILE_DELTAS) != 0};
	ld->base++;
	ld->relative = 0; /* unless the parent's own file has a FORKED record */
	ld->base_pid = f->parent_pid;
	ld->base_start = f->parent_start_mono_ns;
	int rc = 0;
	uint32_t type, len;
	const void *q;
	for (;;) {
		uint64_t at = mgc_reader_offset(r);
		if (at >= f->parent_offset || (rc = mgc_reader_next(r, &type, &q, &len)) <= 0)
			break;
		if (mgc_reader_offset(r) > f->parent_offset || (rc = on_record(ld, type, q, len)) < 0)
			break;
	}
	/* The bases of this level's entries were its own parent's values: the next level takes its. */
	for (size_t i = 0; i < ld->t->nsites; i++) {
		if (ld->t->sites[i]) {
			free(ld->t->sites[i]->base);
			ld->t->sites[i]->base = NULL;
		}
	}
	ld->base--;
	ld->relative = relative;
	ld->base_pid = pid;
	ld->base_start = start;
	ld->prev = prev;
	return rc < 0 ? rc : 0;
}

/* A parent's file that could not be read for a child's base (rc: why): a notice, not an error. */
static int base_lost(struct trace_loader *ld, const char *path, int rc)
{
	char text[600];
	ld->base_missing = 1;
	if (rc == -ENOMEM)
		return rc;
	int n = snprintf(text, sizeof text, "the parent's trace %s %s: sites and stacks from before the "
			 "fork are missing", path, rc == -ESRCH ? "is another process's" : "cannot be read");
	return add_notice(ld, text, n > 0 && (size_t)n < sizeof text ? (size_t)n : 0);
}

/* FORKED: the child's base is its parent's file up to the fork. Sites the parent had stay in the
 * child's view with the values they had then (the child's snapshots name only what changed). A
 * missing or foreign parent file leaves a notice, not an error: the child's own records read. */
static int on_forked(struct trace_loader *ld, const unsigned char *p, uint32_t len)
{
	struct mgc_rec_forked f;
	if (read_fixed(&f, sizeof f, p, len) < 0 || f.path_len > len - sizeof f)
		return -EBADMSG;
	char *path = dupn(p + sizeof f, f.path_len);
	if (!path)
		return -ENOMEM;
	ld->relative = 1; /* this file's entries (the child's, or a parent's being read) */
	struct mgc_reader *r = ld->base < 16 ? open_parent(ld->t->path, path) : NULL;
	int rc = r ? read_base(ld, r, &f) : -ENOENT;
	mgc_reader_close(r);
	if (rc < 0 && rc != -ENOMEM && rc != -ESRCH && rc != -ENOENT && rc != -EBADMSG) {
		free(path);
		return rc;
	}
	if (rc < 0)
		rc = base_lost(ld, path, rc);
	free(path);
	if (rc < 0 || ld->base)
		return rc;
	/* Every site the parent had is the child's from its start on, but its CUDA sites: CUDA is
	 * never used after a fork (the child's probe traces none), the parent's GPU memory is not the
	 * child's, and the child's trace lists none of them. */
	for (size_t i = 0; i < ld->t->nsites; i++) {
		struct mgc_site *s = ld->t->sites[i];
		if (s && mgc_kind_is_cuda(s->kind) && !s->seen)
			memset(&s->counters, 0, sizeof s->counters);
		else if (s && (s->counters.allocs || s->counters.live_bytes) && !s->seen) {
			if (series_set(s, 0, s->counters.live_bytes) < 0)
				return -ENOMEM;
			s->seen = 1;
		}
	}
	return 0;
}

static int cmp_perf_sym(const void *a, const void *b)
{
	const struct mgc_perf_sym *x = a, *y = b;
	return x->start < y->start ? -1 : x->start > y->start;
}

/* Parses "START SIZE name" lines (hex, no 0x needed) into a sorted table, names pointing into
 * t->perfmap (lines are cut at their newline). */
static void perfmap_index(struct mgc_trace *t)
{
	size_t cap = 0;
	for (char *line = t->perfmap; line && *line;) {
		char *nl = strchr(line, '\n');
		if (nl)
			*nl = 0;
		char *end, *end2 = NULL;
		unsigned long long start = strtoull(line, &end, 16), size = 0;
		if (end != line && *end == ' ')
			size = strtoull(end + 1, &end2, 16);
		if (size > 0 && end2 != end + 1 && *end2 == ' ') {
			if (t->nperf_syms == cap) {
				size_t ncap = cap ? cap * 2 : 256;
				struct mgc_perf_sym *ns = realloc(t->perf_syms, ncap * sizeof *ns);
				if (!ns)
					break;
				t->perf_syms = ns;
				cap = ncap;
			}
			t->perf_syms[t->nperf_syms++] = (struct mgc_perf_sym){start, size, end2 + 1};
		}
		line = nl ? nl + 1 : NULL;
	}
	if (t->nperf_syms > 1)
		qsort(t->perf_syms, t->nperf_syms, sizeof *t->perf_syms, cmp_perf_sym);
}

/* Reads every record into the model. 0 at the end of the readable part (t->truncated says
 * whether it was cut), or -errno. */
static int read_records(struct mgc_reader *r, struct trace_loader *ld, int *have_process)
{
	struct mgc_trace *t = ld->t;
	uint32_t type, len;
	const void *p;
	for (;;) {
		int rc = mgc_reader_next(r, &type, &p, &len);
		if (rc == 1)
			rc = on_record(ld, type, p, len);
		else if (rc == 0)
			return 0;
		if (rc == -EBADMSG) {
			t->truncated = 1;
			return 0;
		}
		if (rc < 0)
			return rc;
		*have_process |= type == MGC_REC_PROCESS;
		t->bytes_ok = mgc_reader_offset(r);
	}
}

/* After the last record: the perf map's index, the last snapshot as the last grid point, and
 * every site's cohorts at the last step marker. */
static void finish_load(struct trace_loader *ld)
{
	struct mgc_trace *t = ld->t;
	if (t->perfmap)
		perfmap_index(t);
	if (t->have_last && !mgc_grid_has_latest(&ld->grid))
		grid_point(t, mgc_grid_append(&ld->grid), &t->last);
	for (size_t i = 0; i < t->nsites; i++) {
		struct mgc_site *s = t->sites[i];
		/* unchanged since the last marker: its latest cohorts are the marker's */
		if (s && s->updated_at <= t->last_step_snapshot)
			cohorts_to_step(s);
	}
}

static void loader_free(struct trace_loader *ld)
{
	free(ld->node_ip);
	free(ld->node_parent);
	ld->node_ip = NULL;
	ld->node_parent = NULL;
}

int mgc_trace_load(const char *path, struct mgc_trace **out, char *err, size_t errlen)
{
	*out = NULL;
	struct mgc_reader *r;
	int rc = mgc_reader_open(path, &r, err, errlen);
	if (rc < 0)
		return rc;
	struct mgc_trace *t = calloc(1, sizeof *t);
	struct trace_loader ld = {.t = t, .grid = mgc_grid_make(MGC_GRID),
				  .prev = {.deltas = (mgc_reader_flags(r) & MGC_FILE_DELTAS) != 0}};
	if (!t || !(t->points = calloc(MGC_GRID, sizeof *t->points)) || !(t->path = strdup(path))) {
		mgc_reader_close(r);
		mgc_trace_free(t);
		seterr(err, errlen, "out of memory");
		return -ENOMEM;
	}
	t->version = mgc_reader_version(r);
	t->first_marker_t = -1;
	t->bytes_ok = mgc_reader_offset(r);
	int have_process = 0;
	rc = read_records(r, &ld, &have_process);
	mgc_reader_close(r);
	loader_free(&ld);
	if (rc < 0) {
		mgc_trace_free(t);
		seterr(err, errlen, "%s: %s", path, strerror(-rc));
		return rc;
	}
	if (!have_process) {
		seterr(err, errlen, "%s: %s", path,
		       t->truncated ? "trace is cut short or corrupt before its first record"
				    : "trace holds no records (the process wrote nothing)");
		mgc_trace_free(t);
		return -EBADMSG;
	}
	finish_load(&ld);
	*out = t;
	return 0;
}

void mgc_trace_free(struct mgc_trace *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->nmodules; i++)
		free(t->modules[i].path);
	free(t->modules);
	for (size_t i = 0; i < t->nsites; i++) {
		if (t->sites[i]) {
			free(t->sites[i]->ips);
			free(t->sites[i]->series);
			free_cohorts(t->sites[i]);
			free(t->sites[i]->cuda);
			free(t->sites[i]->base);
			free(t->sites[i]);
		}
	}
	free(t->sites);
	free(t->points);
	free(t->labels);
	free(t->children);
	for (size_t i = 0; i < t->nnotices; i++)
		free(t->notices[i]);
	free(t->notices);
	free(t->host);
	free(t->cmdline);
	free(t->exe);
	free(t->path);
	free(t->perfmap);
	free(t->perf_syms);
	mgc_pycodes_free(t->pycodes);
	free(t);
}

const struct mgc_module *mgc_trace_module_for(const struct mgc_trace *t, uint64_t ip, uint32_t gen)
{
	for (size_t i = 0; i < t->nmodules; i++) {
		const struct mgc_module *m = &t->modules[i];
		if (ip >= m->start && ip < m->end && m->gen_loaded <= gen && gen < m->gen_unloaded)
			return m;
	}
	return NULL;
}

const char *mgc_trace_perfmap_name(const struct mgc_trace *t, uint64_t ip)
{
	if (!t->nperf_syms)
		return NULL;
	size_t lo = 0, hi = t->nperf_syms;
	while (lo < hi) { /* the last entry starting at or below ip */
		size_t mid = (lo + hi) / 2;
		if (t->perf_syms[mid].start <= ip)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return NULL;
	const struct mgc_perf_sym *e = &t->perf_syms[lo - 1];
	return ip < e->start + e->size ? e->name : NULL;
}

double mgc_site_band(uint64_t sample_rate, const struct mgc_site *s, double value)
{
	if (!sample_rate || value <= 0 || s->kind != MGC_KIND_HEAP || s->live_var >= (1ull << 62))
		return 0; /* exact: not sampled, mappings and CUDA memory; or a sum in flight */
	double r = (double)sample_rate, var_over_r;
	const struct mgc_site_counters *c = &s->counters;
	if (c->live_bytes > 0) { /* the site's own mix of sizes, scaled (0: all always recorded) */
		var_over_r = (double)s->live_var * value / (double)c->live_bytes;
	} else { /* nothing live at the end: value/m blocks of the site's mean size m, each of
		  * variance m^2 (1-p)/p */
		double m = c->allocs ? (double)c->alloc_bytes / (double)c->allocs : 0;
		if (m <= 0 || m >= 4 * r)
			return 0; /* always recorded */
		double p = -expm1(-m / r);
		var_over_r = value * m * (1 - p) / (p * r);
	}
	return 2.0 * sqrt(var_over_r * r);
}

int mgc_trace_has_steps(const struct mgc_trace *t)
{
	return t->steps > 0;
}

const struct mgc_site *mgc_trace_unattributed(const struct mgc_trace *t)
{
	const struct mgc_site *s = t->nsites > MGC_SITE_OVERFLOW ? t->sites[MGC_SITE_OVERFLOW] : NULL;
	return s && s->seen && s->nframes == 0 && s->counters.allocs ? s : NULL;
}
