/* SPDX-License-Identifier: MIT */
/* mgc_trace.c: the trace reader. Every length and count read from the file is checked against
 * the record that holds it before use; a record that fails a check ends the readable part of
 * the file. Never aborts, never trusts the file. */
#define _GNU_SOURCE
#include "mgc_trace.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "mgc_grid.h"
#include "mgc_input.h"

struct mgc_reader {
	FILE *f;
	unsigned char *buf;
	size_t cap;
	uint64_t off;
	uint32_t version; /* the file's, from its header */
	int done;
};

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
	struct mgc_reader *r = calloc(1, sizeof *r);
	if (!r) {
		fclose(f);
		seterr(err, errlen, "out of memory");
		return -ENOMEM;
	}
	r->f = f;
	r->off = h.header_size;
	r->version = h.version;
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
	size_t n = fread(&h, 1, sizeof h, r->f);
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
	if (fread(r->buf, 1, padded, r->f) != padded || mgc_fnv1a(r->buf, h.len) != h.check) {
		r->done = 1;
		return -EBADMSG;
	}
	r->off += sizeof h + padded;
	*type = h.type;
	*payload = r->buf ? (const void *)r->buf : (const void *)""; /* an empty first record */
	*len = h.len;
	return 1;
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

/* What loading one trace keeps besides the model itself. */
struct trace_loader {
	struct mgc_trace *t;
	struct mgc_grid grid;     /* which snapshots are points (t->npoints == grid.n) */
	int cur_on_grid;          /* the snapshot being read is a grid point */
	size_t mod_cap, site_cap, label_cap, child_cap, notice_cap;
	/* SNAPSHOT2 is coded against the previous snapshot: its time, step and label */
	uint64_t prev_t, prev_step;
	char prev_label[32];
	/* the frame tree of a version-2 trace: node k at index k (0 is the root) */
	uint64_t *node_ip;
	uint32_t *node_parent;
	size_t nnodes, node_cap;
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
 * zero where the entry has none); `upto` is begin_snapshot's answer: the first grid point that
 * shows them. */
static int apply_site(struct trace_loader *ld, const struct mgc_rec_site *e, const uint64_t *cohorts,
		      uint32_t flags, uint32_t upto)
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
	if (flags & MGC_SNAP_STEP)
		cohorts_forget_step(s); /* the new cohorts are the marker's: written in place, not copied */
	if (set_cohorts(s, cohorts) < 0)
		return -ENOMEM;
	if (flags & MGC_SNAP_STEP)
		cohorts_to_step(s);
	s->updated_at = t->snapshots;
	return 0;
}

/* SNAPSHOT (version 1): the fixed record, then site entries each followed by its set cohorts. */
static int on_snapshot(struct trace_loader *ld, const unsigned char *p, uint32_t len)
{
	struct mgc_rec_snapshot sn;
	struct mgc_point pt;
	if (read_fixed(&sn, sizeof sn, p, len) < 0)
		return -EBADMSG;
	mgc_point_from_snapshot(&sn, &pt);
	uint32_t upto = begin_snapshot(ld, &pt);
	size_t off = sizeof sn;
	for (uint32_t i = 0; i < sn.nsites; i++) {
		struct mgc_rec_site e;
		uint64_t cohorts[MGC_COHORTS] = {0};
		if (off + sizeof e > len)
			return -EBADMSG;
		memcpy(&e, p + off, sizeof e);
		off += sizeof e;
		if (off + (size_t)__builtin_popcount(e.cohort_mask) * 8 > len)
			return -EBADMSG;
		for (unsigned k = 0; k < MGC_COHORTS; k++) {
			if (e.cohort_mask & (1u << k)) {
				memcpy(&cohorts[k], p + off, 8);
				off += 8;
			}
		}
		int rc = apply_site(ld, &e, cohorts, sn.flags, upto);
		if (rc < 0)
			return rc;
	}
	return 0;
}

/* The process part of a SNAPSHOT2 (mgc_format.h) into sn, and its number of site entries. */
static int decode_snapshot2(struct trace_loader *ld, const unsigned char **q, const unsigned char *end,
			    struct mgc_rec_snapshot *sn, uint64_t *nsites)
{
	uint64_t v[15], lab;
	for (int i = 0; i < 15; i++)
		if (mgc_get_varint(q, end, &v[i]) < 0)
			return -EBADMSG;
	if (v[2] > (UINT64_MAX >> 10) || v[3] > (UINT64_MAX >> 10) || v[4] > (UINT64_MAX >> 10))
		return -EBADMSG;
	*sn = (struct mgc_rec_snapshot){
		.t_ns = ld->prev_t + v[0], .step = ld->prev_step + (uint64_t)mgc_unzigzag(v[1]),
		.rss_anon = v[2] << 10, .rss_file = v[3] << 10, .rss_shmem = v[4] << 10,
		.heap_live_bytes = v[5], .heap_live_count = v[6], .mmap_live_bytes = v[7],
		.mmap_live_count = v[8], .malloc_free_bytes = v[9], .malloc_arena_bytes = v[10],
		.device_live_bytes = v[11], .allocs_total = v[12], .frees_total = v[13], .flags = (uint32_t)v[14]};
	if (mgc_get_varint(q, end, &lab) < 0 || lab > sizeof sn->label || (uint64_t)(end - *q) < (lab ? lab - 1 : 0))
		return -EBADMSG;
	if (lab) { /* 0: the label is unchanged; else its length + 1, then its bytes */
		memset(ld->prev_label, 0, sizeof ld->prev_label);
		memcpy(ld->prev_label, *q, lab - 1);
		*q += lab - 1;
	}
	memcpy(sn->label, ld->prev_label, sizeof sn->label);
	sn->label[sizeof sn->label - 1] = 0;
	if (mgc_get_varint(q, end, nsites) < 0 || *nsites > (uint64_t)(end - *q) / 8)
		return -EBADMSG; /* every entry takes at least eight bytes */
	ld->prev_t = sn->t_ns;
	ld->prev_step = sn->step;
	return 0;
}

/* One SNAPSHOT2 site entry: id delta from *id, six counters, cohort mask, the set cohorts. */
static int decode_site2(const unsigned char **q, const unsigned char *end, uint64_t *id,
			struct mgc_rec_site *e, uint64_t *cohorts)
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
	return 0;
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
	uint32_t upto = begin_snapshot(ld, &pt);
	for (uint64_t i = 0; i < nsites; i++) {
		struct mgc_rec_site e;
		uint64_t cohorts[MGC_COHORTS];
		if ((rc = decode_site2(&q, end, &id, &e, cohorts)) < 0 ||
		    (rc = apply_site(ld, &e, cohorts, sn.flags, upto)) < 0)
			return rc;
	}
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
	size_t need = ld->nnodes + 1 + fr.count;
	if (need > ld->node_cap) {
		size_t ncap = ld->node_cap ? ld->node_cap : 4096;
		while (ncap < need)
			ncap *= 2;
		uint64_t *ni = realloc(ld->node_ip, ncap * sizeof *ni);
		if (!ni)
			return -ENOMEM;
		ld->node_ip = ni;
		uint32_t *np = realloc(ld->node_parent, ncap * sizeof *np);
		if (!np)
			return -ENOMEM;
		ld->node_parent = np;
		ld->node_cap = ncap;
	}
	const unsigned char *q = p + sizeof fr;
	for (uint32_t i = 0; i < fr.count; i++, q += MGC_FRAME_NODE_SIZE) {
		size_t id = ld->nnodes + 1;
		memcpy(&ld->node_ip[id], q, 8);
		memcpy(&ld->node_parent[id], q + 8, 4);
		if (ld->node_parent[id] >= id) /* a parent is always written first */
			return -EBADMSG;
		ld->nnodes++;
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
	ld->t->steps++;
	if (s.step > ld->t->max_step)
		ld->t->max_step = s.step;
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

static int on_notice(struct trace_loader *ld, const unsigned char *p, uint32_t len)
{
	struct mgc_trace *t = ld->t;
	struct mgc_rec_notice nt;
	if (read_fixed(&nt, sizeof nt, p, len) < 0 || nt.len > len - sizeof nt)
		return -EBADMSG;
	if (t->nnotices >= 1000)
		return 0; /* keep the first 1000 */
	char **x = push((void **)&t->notices, &t->nnotices, &ld->notice_cap, sizeof *x);
	if (!x || !(*x = dupn(p + sizeof nt, nt.len)))
		return -ENOMEM;
	return 0;
}

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
};

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
		if (rc == 1 && type < sizeof record_readers / sizeof record_readers[0] && record_readers[type])
			rc = record_readers[type](ld, p, len);
		else if (rc == 1)
			rc = 0; /* a newer record type: skip */
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
	struct trace_loader ld = {.t = t, .grid = mgc_grid_make(MGC_GRID)};
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

int mgc_trace_has_steps(const struct mgc_trace *t)
{
	return t->steps > 0;
}

const struct mgc_site *mgc_trace_unattributed(const struct mgc_trace *t)
{
	const struct mgc_site *s = t->nsites > MGC_SITE_OVERFLOW ? t->sites[MGC_SITE_OVERFLOW] : NULL;
	return s && s->seen && s->nframes == 0 && s->counters.allocs ? s : NULL;
}
