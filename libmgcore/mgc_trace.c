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

#define ZIN_CAP (128u << 10)
#define ZWINDOW_LOG_MAX 24 /* refuse streams that would need more than 16 MiB of window */

struct mgc_reader {
	FILE *f;
	unsigned char *buf;
	size_t cap;
	uint64_t off;      /* stream offset of the next record (decompressed bytes, header included) */
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
	FILE *f = fopen(path, "rb");
	if (!f) {
		int e = errno;
		seterr(err, errlen, "%s: %s", path, strerror(e));
		return -e;
	}
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
	if (h.header_size < sizeof h || h.header_size > 4096 ||
	    fseek(f, (long)h.header_size, SEEK_SET) != 0) {
		fclose(f);
		seterr(err, errlen, "%s: corrupt trace header", path);
		return -EINVAL;
	}
	struct mgc_file_header3 h3 = {.h = h};
	if (h.version >= 3 && (h.header_size < sizeof h3 || fseek(f, (long)sizeof h, SEEK_SET) != 0 ||
			       fread(&h3.flags, 1, 8, f) != 8 || fseek(f, (long)h.header_size, SEEK_SET) != 0)) {
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
	r->flags = h3.flags;
	if ((h3.flags & MGC_FILE_ZSTD) && stream_zstd(r) < 0) {
		mgc_reader_close(r);
		seterr(err, errlen, "out of memory");
		return -ENOMEM;
	}
	*out = r;
	return 0;
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
	*payload = r->buf;
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

/* What a SNAPSHOT2 header counts from: the previous snapshot's values in the same file. */
struct snap_prev {
	uint64_t t, step;
	uint64_t v[12]; /* rss_anon (KiB) .. frees_total, as written (MGC_FILE_DELTAS) */
	char label[32];
	int deltas;     /* the file has MGC_FILE_DELTAS */
};

struct loader {
	struct mgc_trace *t;
	size_t mod_cap, site_cap, label_cap, child_cap, notice_cap;
	int cur_is_grid;
	/* SNAPSHOT2 decoding: the previous snapshot's values, and a buffer in SNAPSHOT's layout */
	struct snap_prev prev;
	unsigned char *dec;
	size_t dec_cap;
	/* the frame tree of a version-2 trace: node k at index k (0 is the root) */
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

static struct mgc_site *site_get(struct loader *L, uint32_t id);
static int on_snapshot(struct loader *L, const unsigned char *p, uint32_t len);
static int on_record(struct loader *L, uint32_t type, const unsigned char *p, uint32_t len);
static int add_notice(struct loader *L, const char *text, size_t n);

/* What a site held when a forked child started: its values read from the parent's file. */
struct mgc_site_base {
	uint64_t live_bytes, live_count, allocs, alloc_bytes, frees, peak_bytes, live_var;
	uint64_t cohorts[MGC_COHORTS];
};

/* A forked child's entry holds changes since the fork (mgc_format.h, MGC_REC_FORKED): live bytes,
 * count and cohorts zigzagged. Turns e and coh into the site's values: the base (its values when
 * the child first names it, which are the parent's at the fork) plus the changes. */
static int from_fork(struct loader *L, struct mgc_rec_site *e, uint64_t coh[MGC_COHORTS],
		     uint64_t *var)
{
	struct mgc_site *s = site_get(L, e->site);
	if (!s)
		return -ENOMEM;
	if (!s->base) {
		if (!(s->base = malloc(sizeof *s->base)))
			return -ENOMEM;
		*s->base = (struct mgc_site_base){s->live_bytes, s->live_count, s->allocs, s->alloc_bytes,
						  s->frees, s->peak_bytes, s->live_var, {0}};
		memcpy(s->base->cohorts, s->cohorts, sizeof s->cohorts);
	}
	const struct mgc_site_base *b = s->base;
	e->live_bytes = b->live_bytes + (uint64_t)mgc_unzigzag(e->live_bytes);
	e->live_count = b->live_count + (uint64_t)mgc_unzigzag(e->live_count);
	e->allocs += b->allocs;
	*var = b->live_var + (uint64_t)mgc_unzigzag(*var);
	e->alloc_bytes += b->alloc_bytes;
	e->frees += b->frees;
	e->peak_bytes = b->live_bytes + e->peak_bytes > b->peak_bytes ? b->live_bytes + e->peak_bytes
									  : b->peak_bytes;
	e->cohort_mask = 0;
	for (unsigned c = 0; c < MGC_COHORTS; c++) {
		coh[c] = b->cohorts[c] + (uint64_t)mgc_unzigzag(coh[c]);
		if (coh[c] && coh[c] < (1ull << 62)) /* a negative bucket: in flight, left out */
			e->cohort_mask |= 1u << c;
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

/* Decodes a SNAPSHOT2 (varints, mgc_format.h) into SNAPSHOT's fixed layout and reads that. */
static int on_snapshot2(struct loader *L, const unsigned char *p, uint32_t len)
{
	const unsigned char *q = p, *end = p + len;
	uint64_t v[16];
	for (int i = 0; i < 15; i++)
		if (mgc_get_varint(&q, end, &v[i]) < 0)
			return -EBADMSG;
	struct snap_prev *pv = &L->prev;
	struct mgc_rec_snapshot sn = {0};
	if (pv->deltas) { /* mgc_format.h: microseconds, and changes since the previous snapshot */
		sn.t_ns = (pv->t / 1000 + v[0]) * 1000;
		for (int i = 0; i < 12; i++)
			v[2 + i] = pv->v[i] += (uint64_t)mgc_unzigzag(v[2 + i]);
	} else {
		sn.t_ns = pv->t + v[0];
	}
	sn.step = pv->step + (uint64_t)mgc_unzigzag(v[1]);
	if (v[2] > (UINT64_MAX >> 10) || v[3] > (UINT64_MAX >> 10) || v[4] > (UINT64_MAX >> 10))
		return -EBADMSG;
	sn.rss_anon = v[2] << 10;
	sn.rss_file = v[3] << 10;
	sn.rss_shmem = v[4] << 10;
	sn.heap_live_bytes = v[5];
	sn.heap_live_count = v[6];
	sn.mmap_live_bytes = v[7];
	sn.mmap_live_count = v[8];
	sn.malloc_free_bytes = v[9];
	sn.malloc_arena_bytes = v[10];
	sn.device_live_bytes = v[11];
	sn.allocs_total = v[12];
	sn.frees_total = v[13];
	sn.flags = (uint32_t)v[14];
	uint64_t lab, nsites;
	if (mgc_get_varint(&q, end, &lab) < 0 || lab > sizeof sn.label || (uint64_t)(end - q) < (lab ? lab - 1 : 0))
		return -EBADMSG;
	if (lab) {
		memset(pv->label, 0, sizeof pv->label);
		memcpy(pv->label, q, lab - 1);
		q += lab - 1;
	}
	memcpy(sn.label, pv->label, sizeof sn.label);
	sn.label[sizeof sn.label - 1] = 0;
	if (mgc_get_varint(&q, end, &nsites) < 0 || nsites > (uint64_t)(end - q) / 8)
		return -EBADMSG; /* every entry takes at least eight bytes */
	sn.nsites = (uint32_t)nsites;
	size_t off = sizeof sn;
	uint64_t id = 0;
	for (uint64_t i = 0; i < nsites; i++) {
		size_t need = off + sizeof(struct mgc_rec_site) + 8 * MGC_COHORTS + 8;
		if (need > L->dec_cap) {
			size_t ncap = L->dec_cap ? L->dec_cap : 4096;
			while (ncap < need)
				ncap *= 2;
			unsigned char *nb = realloc(L->dec, ncap);
			if (!nb)
				return -ENOMEM;
			L->dec = nb;
			L->dec_cap = ncap;
		}
		uint64_t f[8];
		for (int k = 0; k < 8; k++)
			if (mgc_get_varint(&q, end, &f[k]) < 0)
				return -EBADMSG;
		id += f[0];
		if (f[0] == 0 && i > 0)
			return -EBADMSG; /* ids increase */
		if (id == 0 || id > UINT32_MAX || f[7] > UINT32_MAX)
			return -EBADMSG;
		struct mgc_rec_site e = {.site = (uint32_t)id, .cohort_mask = (uint32_t)f[7],
					 .live_bytes = f[1], .live_count = f[2], .allocs = f[3],
					 .alloc_bytes = f[4], .frees = f[5], .peak_bytes = f[6]};
		uint64_t coh[MGC_COHORTS], var = 0;
		for (unsigned c = 0; c < MGC_COHORTS; c++) {
			coh[c] = 0;
			if ((e.cohort_mask & (1u << c)) && mgc_get_varint(&q, end, &coh[c]) < 0)
				return -EBADMSG;
		}
		if (L->t->sample_rate && mgc_get_varint(&q, end, &var) < 0)
			return -EBADMSG;
		if (L->relative) {
			int rc = from_fork(L, &e, coh, &var);
			if (rc < 0)
				return rc;
		}
		memcpy(L->dec + off, &e, sizeof e);
		off += sizeof e;
		for (unsigned c = 0; c < MGC_COHORTS; c++) {
			if (e.cohort_mask & (1u << c)) {
				memcpy(L->dec + off, &coh[c], 8);
				off += 8;
			}
		}
		if (L->t->sample_rate) { /* after the cohorts, in the decoded entry too */
			memcpy(L->dec + off, &var, 8);
			off += 8;
		}
	}
	if (L->dec_cap < sizeof sn) {
		unsigned char *nb = realloc(L->dec, 4096);
		if (!nb)
			return -ENOMEM;
		L->dec = nb;
		L->dec_cap = 4096;
	}
	pv->t = sn.t_ns;
	pv->step = sn.step;
	if (pv->deltas && (sn.flags & MGC_SNAP_STEP))
		count_step(L->t, sn.step); /* the step marker (no STEP records in such files) */
	memcpy(L->dec, &sn, sizeof sn);
	return on_snapshot(L, L->dec, (uint32_t)off);
}

/* Makes room for node ids up to `id` (version 3's are sparse); new ones read as undefined. */
static int nodes_room(struct loader *L, uint64_t id)
{
	if (id >= (1u << 31))
		return -EBADMSG;
	if (id < L->node_cap)
		return 0;
	size_t ncap = L->node_cap ? L->node_cap : 4096;
	while (ncap <= id)
		ncap *= 2;
	uint64_t *ni = realloc(L->node_ip, ncap * sizeof *ni);
	if (!ni)
		return -ENOMEM;
	L->node_ip = ni;
	uint32_t *np = realloc(L->node_parent, ncap * sizeof *np);
	if (!np)
		return -ENOMEM;
	L->node_parent = np;
	for (size_t k = L->node_cap; k < ncap; k++)
		np[k] = UINT32_MAX; /* undefined */
	L->node_cap = ncap;
	return 0;
}

static int set_stack(struct loader *L, uint32_t id, uint32_t leaf, uint32_t nframes, uint32_t kind,
		     uint32_t gen);

static int on_frames(struct loader *L, const unsigned char *p, uint32_t len)
{
	struct mgc_rec_frames fr;
	if (len < sizeof fr)
		return -EBADMSG;
	memcpy(&fr, p, sizeof fr);
	if (fr.first != L->nnodes + 1 || (uint64_t)fr.count * MGC_FRAME_NODE_SIZE > len - sizeof fr ||
	    L->nnodes + fr.count >= (1u << 31))
		return -EBADMSG;
	int err = nodes_room(L, L->nnodes + fr.count);
	if (err < 0)
		return err;
	const unsigned char *q = p + sizeof fr;
	for (uint32_t i = 0; i < fr.count; i++, q += MGC_FRAME_NODE_SIZE) {
		size_t id = L->nnodes + 1;
		uint32_t parent;
		memcpy(&L->node_ip[id], q, 8);
		memcpy(&parent, q + 8, 4);
		if (parent >= id) /* a parent is always written first */
			return -EBADMSG;
		L->node_parent[id] = parent;
		L->nnodes++;
	}
	return 0;
}

static int on_stack2(struct loader *L, const unsigned char *p, uint32_t len)
{
	struct mgc_rec_stack2 st;
	if (len == 0 || len % sizeof st)
		return -EBADMSG;
	for (uint32_t off = 0; off < len; off += sizeof st) {
		memcpy(&st, p + off, sizeof st);
		int err = set_stack(L, st.id, st.leaf, st.nframes, st.kind, st.gen);
		if (err < 0)
			return err;
	}
	return 0;
}

/* FRAMES3 (mgc_format.h): nodes with their ids, each defined once, its parent before it. */
static int on_frames3(struct loader *L, const unsigned char *p, uint32_t len)
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
		int err = id > 0 ? nodes_room(L, (uint64_t)id) : -EBADMSG;
		if (err < 0)
			return err;
		if (parent < 0 || parent == id || L->node_parent[id] != UINT32_MAX)
			return -EBADMSG; /* a node is defined once */
		if (parent > 0 && ((uint64_t)parent >= L->node_cap || L->node_parent[parent] == UINT32_MAX)) {
			if (!L->base_missing)
				return -EBADMSG; /* a parent is defined first */
			parent = 0; /* in the parent's file, which is missing: the stack ends here */
		}
		L->node_ip[id] = ip;
		L->node_parent[id] = (uint32_t)parent;
		if ((size_t)id > L->nnodes)
			L->nnodes = (size_t)id;
	}
	return 0;
}

/* A site's stack: nframes frames from its leaf node up to the root. */
static int set_stack(struct loader *L, uint32_t id, uint32_t leaf, uint32_t nframes, uint32_t kind,
		     uint32_t gen)
{
	if (id == 0 || nframes > MGC_MAX_FRAMES || kind > UINT16_MAX ||
	    ((leaf == 0) != (nframes == 0) && !L->base_missing))
		return -EBADMSG;
	uint64_t *ips = malloc((size_t)nframes * 8 + 8);
	if (!ips)
		return -ENOMEM;
	uint32_t cur = leaf;
	for (unsigned k = 0; k < nframes; k++) {
		if (cur == 0 && L->base_missing) {
			nframes = k; /* its outer frames are in the missing parent's file */
			break;
		}
		if (cur == 0 || cur >= L->node_cap || L->node_parent[cur] == UINT32_MAX) {
			free(ips);
			return -EBADMSG;
		}
		ips[k] = L->node_ip[cur];
		cur = L->node_parent[cur];
	}
	struct mgc_site *s = cur == 0 ? site_get(L, id) : NULL;
	if (!s) {
		free(ips);
		return cur == 0 ? -ENOMEM : -EBADMSG;
	}
	free(s->ips);
	s->ips = ips;
	s->nframes = (uint16_t)nframes;
	s->kind = (uint16_t)kind;
	s->gen = gen;
	return 0;
}

/* STACK3 (mgc_format.h): sites as leaves of the frame tree, in varints. */
static int on_stack3(struct loader *L, const unsigned char *p, uint32_t len)
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
		    v[3] > UINT16_MAX || v[4] > UINT32_MAX)
			return -EBADMSG;
		int err = set_stack(L, (uint32_t)id, (uint32_t)leaf, (uint32_t)v[2], (uint32_t)v[3],
				    (uint32_t)v[4]);
		if (err < 0)
			return err;
	}
	return 0;
}

static struct mgc_site *site_get(struct loader *L, uint32_t id)
{
	struct mgc_trace *t = L->t;
	if (id == 0 || id > (1u << 26))
		return NULL;
	if (grow((void **)&t->sites, &L->site_cap, (size_t)id + 1, sizeof *t->sites) < 0)
		return NULL;
	if (t->nsites < (size_t)id + 1)
		t->nsites = (size_t)id + 1;
	if (!t->sites[id]) {
		t->sites[id] = calloc(1, sizeof(struct mgc_site));
		if (!t->sites[id])
			return NULL;
		t->sites[id]->id = id;
	}
	return t->sites[id];
}

static void fill_site(struct mgc_site *s, uint32_t upto, float v)
{
	for (uint32_t i = s->filled; i < upto; i++)
		s->series[i] = v;
	if (upto > s->filled)
		s->filled = upto;
}

/* Halves the grid: keeps every other point, for the process and for every site. */
static void thin(struct mgc_trace *t)
{
	uint32_t n = (uint32_t)t->npoints;
	for (size_t i = 0; i < t->nsites; i++) {
		struct mgc_site *s = t->sites[i];
		if (!s || !s->series)
			continue;
		fill_site(s, n, (float)s->live_bytes);
		for (uint32_t k = 0; 2 * k < n; k++)
			s->series[k] = s->series[2 * k];
		s->filled = (n + 1) / 2;
	}
	for (uint32_t k = 0; 2 * k < n; k++)
		t->points[k] = t->points[2 * k];
	t->npoints = (n + 1) / 2;
	t->stride *= 2;
}

static void append_point(struct mgc_trace *t, const struct mgc_point *p)
{
	if (t->npoints == MGC_GRID)
		thin(t);
	t->points[t->npoints++] = *p;
}

/* A site entry's values, its cohorts read from p at off (checked by the caller); returns the
 * offset after them. */
static size_t set_values(const struct loader *L, struct mgc_site *s, const struct mgc_rec_site *e,
			 const unsigned char *p, size_t off)
{
	s->live_bytes = e->live_bytes;
	s->live_count = e->live_count;
	s->allocs = e->allocs;
	s->alloc_bytes = e->alloc_bytes;
	s->frees = e->frees;
	s->peak_bytes = e->peak_bytes;
	memset(s->cohorts, 0, sizeof s->cohorts);
	for (unsigned k = 0; k < MGC_COHORTS; k++) {
		if (e->cohort_mask & (1u << k)) {
			memcpy(&s->cohorts[k], p + off, 8);
			off += 8;
		}
	}
	if (L->t->sample_rate) {
		memcpy(&s->live_var, p + off, 8);
		off += 8;
	}
	return off;
}

/* A parent's snapshot, read for a forked child's base: only the sites' values. */
static int base_sites(struct loader *L, const unsigned char *p, uint32_t len, uint32_t nsites)
{
	size_t off = sizeof(struct mgc_rec_snapshot);
	for (uint32_t i = 0; i < nsites; i++) {
		struct mgc_rec_site e;
		if (off + sizeof e > len)
			return -EBADMSG;
		memcpy(&e, p + off, sizeof e);
		off += sizeof e;
		if (off + (size_t)__builtin_popcount(e.cohort_mask) * 8 + (L->t->sample_rate ? 8 : 0) > len)
			return -EBADMSG;
		struct mgc_site *s = site_get(L, e.site);
		if (!s)
			return e.site == 0 ? -EBADMSG : -ENOMEM;
		off = set_values(L, s, &e, p, off);
		memcpy(s->cohorts_step, s->cohorts, sizeof s->cohorts);
	}
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
static int read_base(struct loader *L, struct mgc_reader *r, const struct mgc_rec_forked *f)
{
	struct snap_prev prev = L->prev;
	int pid = L->base_pid, relative = L->relative;
	uint64_t start = L->base_start;
	L->prev = (struct snap_prev){.deltas = (mgc_reader_flags(r) & MGC_FILE_DELTAS) != 0};
	L->base++;
	L->relative = 0; /* unless the parent's own file has a FORKED record */
	L->base_pid = f->parent_pid;
	L->base_start = f->parent_start_mono_ns;
	int rc = 0;
	uint32_t type, len;
	const void *q;
	for (;;) {
		uint64_t at = mgc_reader_offset(r);
		if (at >= f->parent_offset || (rc = mgc_reader_next(r, &type, &q, &len)) <= 0)
			break;
		if (mgc_reader_offset(r) > f->parent_offset || (rc = on_record(L, type, q, len)) < 0)
			break;
	}
	/* The bases of this level's entries were its own parent's values: the next level takes its. */
	for (size_t i = 0; i < L->t->nsites; i++) {
		if (L->t->sites[i]) {
			free(L->t->sites[i]->base);
			L->t->sites[i]->base = NULL;
		}
	}
	L->base--;
	L->relative = relative;
	L->base_pid = pid;
	L->base_start = start;
	L->prev = prev;
	return rc < 0 ? rc : 0;
}

/* FORKED: the child's base is its parent's file up to the fork. Sites the parent had stay in the
 * child's view with the values they had then (the child's snapshots name only what changed). A
 * missing or foreign parent file leaves a notice, not an error: the child's own records read. */
static int on_forked(struct loader *L, const unsigned char *p, uint32_t len)
{
	struct mgc_rec_forked f;
	if (len < sizeof f || (memcpy(&f, p, sizeof f), f.path_len > len - sizeof f))
		return -EBADMSG;
	char *path = dupn(p + sizeof f, f.path_len);
	if (!path)
		return -ENOMEM;
	L->relative = 1; /* this file's entries (the child's, or a parent's being read) */
	struct mgc_reader *r = L->base < 16 ? open_parent(L->t->path, path) : NULL;
	int rc = r ? read_base(L, r, &f) : -ENOENT;
	mgc_reader_close(r);
	if (rc < 0 && rc != -ENOMEM && rc != -ESRCH && rc != -ENOENT && rc != -EBADMSG) {
		free(path);
		return rc;
	}
	if (rc < 0) {
		char text[600];
		L->base_missing = 1;
		int n = snprintf(text, sizeof text, "the parent's trace %s %s: sites and stacks from before the "
				 "fork are missing", path, rc == -ESRCH ? "is another process's" : "cannot be read");
		free(path);
		return rc == -ENOMEM ? rc : add_notice(L, text, n > 0 && (size_t)n < sizeof text ? (size_t)n : 0);
	}
	free(path);
	if (L->base)
		return 0;
	/* Every site the parent had is the child's from its start on. */
	for (size_t i = 0; i < L->t->nsites; i++) {
		struct mgc_site *s = L->t->sites[i];
		if (s && (s->allocs || s->live_bytes) && !s->series) {
			if (!(s->series = calloc(MGC_GRID, sizeof(float))))
				return -ENOMEM;
			s->seen = 1;
		}
	}
	return 0;
}

static int on_snapshot(struct loader *L, const unsigned char *p, uint32_t len)
{
	struct mgc_trace *t = L->t;
	struct mgc_rec_snapshot sn;
	if (len < sizeof sn)
		return -EBADMSG;
	memcpy(&sn, p, sizeof sn);
	if (L->base)
		return base_sites(L, p, len, sn.nsites);
	struct mgc_point pt = {0};
	pt.t = (double)sn.t_ns / 1e9;
	pt.step = sn.step;
	pt.rss_anon = sn.rss_anon;
	pt.rss_file = sn.rss_file;
	pt.rss_shmem = sn.rss_shmem;
	pt.heap = sn.heap_live_bytes;
	pt.heap_count = sn.heap_live_count;
	pt.mmap = sn.mmap_live_bytes;
	pt.mmap_count = sn.mmap_live_count;
	pt.free_kept = sn.malloc_free_bytes;
	pt.arena = sn.malloc_arena_bytes;
	pt.device = sn.device_live_bytes;
	pt.flags = sn.flags;
	memcpy(pt.label, sn.label, sizeof pt.label);
	pt.label[sizeof pt.label - 1] = 0;
	if (sn.step > t->max_step)
		t->max_step = sn.step;

	L->cur_is_grid = (t->snapshots % t->stride) == 0;
	t->snapshots++;
	if (sn.flags & MGC_SNAP_STEP)
		t->last_step_snapshot = t->snapshots;
	t->last = pt;
	t->have_last = 1;
	if (L->cur_is_grid)
		append_point(t, &pt);
	uint32_t n = (uint32_t)t->npoints;
	uint32_t upto = L->cur_is_grid ? n - 1 : n;

	size_t off = sizeof sn;
	for (uint32_t i = 0; i < sn.nsites; i++) {
		struct mgc_rec_site e;
		if (off + sizeof e > len)
			return -EBADMSG;
		memcpy(&e, p + off, sizeof e);
		off += sizeof e;
		unsigned nc = (unsigned)__builtin_popcount(e.cohort_mask) + (t->sample_rate ? 1 : 0);
		if (off + (size_t)nc * 8 > len)
			return -EBADMSG;
		struct mgc_site *s = site_get(L, e.site);
		if (!s)
			return e.site == 0 ? -EBADMSG : -ENOMEM;
		if (!s->series) {
			s->series = calloc(MGC_GRID, sizeof(float));
			if (!s->series)
				return -ENOMEM;
			s->first_step_seen = sn.step;
		}
		fill_site(s, upto, (float)s->live_bytes);
		if (s->updated_at && s->updated_at <= t->last_step_snapshot && !(sn.flags & MGC_SNAP_STEP))
			memcpy(s->cohorts_step, s->cohorts, sizeof s->cohorts); /* in force at that marker */
		s->seen = 1;
		off = set_values(L, s, &e, p, off);
		/* Keep the cohorts as they were at the last step marker too: what came after (a
		 * snapshot inside the last step, the exit's teardown) is not on the step axis. */
		if (sn.flags & MGC_SNAP_STEP)
			memcpy(s->cohorts_step, s->cohorts, sizeof s->cohorts);
		s->updated_at = t->snapshots;
	}
	return 0;
}

/* DEVMEM completes the snapshot before it: every cell's bytes at that snapshot (a cell it does
 * not name is 0 there). */
static int on_devmem(struct loader *L, const unsigned char *p, uint32_t len)
{
	struct mgc_trace *t = L->t;
	struct mgc_rec_devmem h;
	if (len < sizeof h)
		return -EBADMSG;
	memcpy(&h, p, sizeof h);
	if (h.ncells > (len - sizeof h) / sizeof(struct mgc_devmem_cell))
		return -EBADMSG;
	if (!t->have_last)
		return 0; /* no snapshot to complete */
	struct mgc_point *grid = L->cur_is_grid && t->npoints ? &t->points[t->npoints - 1] : NULL;
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

/* A notice for the report (at most 1000 kept). */
static int add_notice(struct loader *L, const char *text, size_t n)
{
	struct mgc_trace *t = L->t;
	if (t->nnotices >= 1000)
		return 0;
	if (grow((void **)&t->notices, &L->notice_cap, t->nnotices + 1, sizeof *t->notices) < 0)
		return -ENOMEM;
	if (!(t->notices[t->nnotices] = dupn(text, n)))
		return -ENOMEM;
	t->nnotices++;
	return 0;
}

static int on_forked(struct loader *L, const unsigned char *p, uint32_t len);

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

static int on_record(struct loader *L, uint32_t type, const unsigned char *p, uint32_t len)
{
	struct mgc_trace *t = L->t;
	if (L->base && type == MGC_REC_PROCESS) {
		struct mgc_rec_process pr;
		if (len < sizeof pr)
			return -EBADMSG;
		memcpy(&pr, p, sizeof pr);
		return pr.pid == L->base_pid && pr.start_mono_ns == L->base_start ? 0 : -ESRCH;
	}
	if (L->base && !base_wants(type))
		return 0;
	switch (type) {
	case MGC_REC_FORKED:
		return on_forked(L, p, len);
	case MGC_REC_SAMPLING: {
		struct mgc_rec_sampling sr;
		if (len < sizeof sr)
			return -EBADMSG;
		memcpy(&sr, p, sizeof sr);
		t->sample_rate = sr.rate;
		return 0;
	}
	case MGC_REC_PROCESS: {
		struct mgc_rec_process pr;
		if (len < sizeof pr)
			return -EBADMSG;
		memcpy(&pr, p, sizeof pr);
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
	case MGC_REC_MODULE_LOAD: {
		struct mgc_rec_module m;
		if (len < sizeof m)
			return -EBADMSG;
		memcpy(&m, p, sizeof m);
		if (m.build_id_len > 40 || (uint64_t)m.build_id_len + m.path_len > len - sizeof m)
			return -EBADMSG;
		if (grow((void **)&t->modules, &L->mod_cap, t->nmodules + 1, sizeof *t->modules) < 0)
			return -ENOMEM;
		struct mgc_module *mod = &t->modules[t->nmodules];
		memset(mod, 0, sizeof *mod);
		mod->id = m.id;
		mod->gen_loaded = m.gen;
		mod->gen_unloaded = UINT32_MAX;
		mod->bias = m.bias;
		mod->start = m.start;
		mod->end = m.end;
		mod->build_id_len = m.build_id_len;
		memcpy(mod->build_id, p + sizeof m, m.build_id_len);
		mod->path = dupn(p + sizeof m + m.build_id_len, m.path_len);
		if (!mod->path)
			return -ENOMEM;
		t->nmodules++;
		return 0;
	}
	case MGC_REC_MODULE_UNLOAD: {
		struct mgc_rec_module_unload u;
		if (len < sizeof u)
			return -EBADMSG;
		memcpy(&u, p, sizeof u);
		for (size_t i = 0; i < t->nmodules; i++)
			if (t->modules[i].id == u.id && t->modules[i].gen_unloaded == UINT32_MAX)
				t->modules[i].gen_unloaded = u.gen;
		return 0;
	}
	case MGC_REC_STACK: {
		struct mgc_rec_stack st;
		if (len < sizeof st)
			return -EBADMSG;
		memcpy(&st, p, sizeof st);
		if ((uint64_t)st.nframes * 8 > len - sizeof st || st.id == 0)
			return -EBADMSG;
		struct mgc_site *s = site_get(L, st.id);
		if (!s)
			return -ENOMEM;
		free(s->ips);
		s->ips = malloc((size_t)st.nframes * 8 + 8);
		if (!s->ips)
			return -ENOMEM;
		memcpy(s->ips, p + sizeof st, (size_t)st.nframes * 8);
		s->nframes = st.nframes;
		s->kind = st.kind;
		s->gen = st.gen;
		return 0;
	}
	case MGC_REC_PERFMAP: {
		if (t->perfmap_len + len > (256u << 20))
			return 0; /* keep the first 256 MiB */
		char *n = realloc(t->perfmap, t->perfmap_len + len + 1);
		if (!n)
			return -ENOMEM;
		memcpy(n + t->perfmap_len, p, len);
		t->perfmap = n;
		t->perfmap_len += len;
		n[t->perfmap_len] = 0;
		return 0;
	}
	case MGC_REC_SNAPSHOT:
		return on_snapshot(L, p, len);
	case MGC_REC_SNAPSHOT2:
		return on_snapshot2(L, p, len);
	case MGC_REC_FRAMES:
		return on_frames(L, p, len);
	case MGC_REC_STACK2:
		return on_stack2(L, p, len);
	case MGC_REC_FRAMES3:
		return on_frames3(L, p, len);
	case MGC_REC_STACK3:
		return on_stack3(L, p, len);
	case MGC_REC_STEP: {
		struct mgc_rec_step s;
		if (len < sizeof s)
			return -EBADMSG;
		memcpy(&s, p, sizeof s);
		count_step(t, s.step);
		return 0;
	}
	case MGC_REC_LABEL: {
		struct mgc_rec_label l;
		if (len < sizeof l)
			return -EBADMSG;
		memcpy(&l, p, sizeof l);
		if (l.len > len - sizeof l)
			return -EBADMSG;
		if (t->nlabels < 100000) {
			if (grow((void **)&t->labels, &L->label_cap, t->nlabels + 1, sizeof *t->labels) < 0)
				return -ENOMEM;
			struct mgc_label *x = &t->labels[t->nlabels++];
			x->t = (double)l.t_ns / 1e9;
			x->step = l.step;
			size_t n = l.len < sizeof x->text - 1 ? l.len : sizeof x->text - 1;
			memcpy(x->text, p + sizeof l, n);
			x->text[n] = 0;
		}
		return 0;
	}
	case MGC_REC_CHILD: {
		struct mgc_rec_child c;
		if (len < sizeof c)
			return -EBADMSG;
		memcpy(&c, p, sizeof c);
		if (grow((void **)&t->children, &L->child_cap, t->nchildren + 1, sizeof *t->children) < 0)
			return -ENOMEM;
		t->children[t->nchildren].pid = c.pid;
		t->children[t->nchildren].t = (double)c.t_ns / 1e9;
		t->nchildren++;
		return 0;
	}
	case MGC_REC_END: {
		struct mgc_rec_end e;
		if (len < sizeof e)
			return -EBADMSG;
		memcpy(&e, p, sizeof e);
		t->ended = 1;
		t->end_reason = e.reason;
		t->end_status = e.status;
		return 0;
	}
	case MGC_REC_DEVMEM:
		return on_devmem(L, p, len);
	case MGC_REC_PYCODE:
		return mgc_pycodes_add(&t->pycodes, p, len);
	case MGC_REC_DEVSITE: {
		if (len % sizeof(struct mgc_rec_devsite))
			return -EBADMSG;
		for (uint32_t off = 0; off < len; off += sizeof(struct mgc_rec_devsite)) {
			struct mgc_rec_devsite d;
			memcpy(&d, p + off, sizeof d);
			struct mgc_site *s = site_get(L, d.site);
			if (!s)
				return d.site == 0 ? -EBADMSG : -ENOMEM;
			if (!s->cuda && !(s->cuda = malloc(sizeof *s->cuda)))
				return -ENOMEM;
			*s->cuda = d;
		}
		return 0;
	}
	case MGC_REC_NOTICE: {
		struct mgc_rec_notice nt;
		if (len < sizeof nt)
			return -EBADMSG;
		memcpy(&nt, p, sizeof nt);
		if (nt.len > len - sizeof nt)
			return -EBADMSG;
		return add_notice(L, (const char *)p + sizeof nt, nt.len);
	}
	default:
		return 0; /* a newer record type: skip */
	}
}

static void perfmap_index(struct mgc_trace *t);

int mgc_trace_load(const char *path, struct mgc_trace **out, char *err, size_t errlen)
{
	*out = NULL;
	struct mgc_reader *r;
	int rc = mgc_reader_open(path, &r, err, errlen);
	if (rc < 0)
		return rc;
	struct mgc_trace *t = calloc(1, sizeof *t);
	struct loader L = {.t = t, .prev = {.deltas = (mgc_reader_flags(r) & MGC_FILE_DELTAS) != 0}};
	if (!t || !(t->points = calloc(MGC_GRID, sizeof *t->points)) || !(t->path = strdup(path))) {
		mgc_reader_close(r);
		mgc_trace_free(t);
		seterr(err, errlen, "out of memory");
		return -ENOMEM;
	}
	t->version = MGC_TRACE_VERSION;
	t->stride = 1;
	t->bytes_ok = mgc_reader_offset(r);
	uint32_t type, len;
	const void *p;
	int have_process = 0;
	for (;;) {
		rc = mgc_reader_next(r, &type, &p, &len);
		if (rc == 0)
			break;
		if (rc == -EBADMSG) {
			t->truncated = 1;
			break;
		}
		if (rc < 0)
			goto fail;
		rc = on_record(&L, type, p, len);
		if (rc == -EBADMSG) {
			t->truncated = 1;
			break;
		}
		if (rc < 0)
			goto fail;
		if (type == MGC_REC_PROCESS)
			have_process = 1;
		t->bytes_ok = mgc_reader_offset(r);
	}
	mgc_reader_close(r);
	r = NULL;
	free(L.node_ip);
	free(L.node_parent);
	free(L.dec);
	L.node_ip = NULL;
	L.node_parent = NULL;
	L.dec = NULL;
	if (!have_process) {
		seterr(err, errlen, "%s: %s", path,
		       t->truncated ? "trace is cut short or corrupt before its first record"
				    : "trace holds no records (the process wrote nothing)");
		mgc_trace_free(t);
		return -EBADMSG;
	}
	if (t->perfmap)
		perfmap_index(t);
	/* The last snapshot is always the last grid point. */
	if (t->have_last && (t->npoints == 0 || (t->snapshots - 1) % t->stride != 0)) {
		if (t->npoints == MGC_GRID)
			thin(t);
		t->points[t->npoints++] = t->last;
	}
	for (size_t i = 0; i < t->nsites; i++) {
		struct mgc_site *s = t->sites[i];
		if (s && s->series)
			fill_site(s, (uint32_t)t->npoints, (float)s->live_bytes);
		/* unchanged since the last marker: its latest cohorts are the marker's */
		if (s && s->updated_at <= t->last_step_snapshot)
			memcpy(s->cohorts_step, s->cohorts, sizeof s->cohorts);
	}
	*out = t;
	return 0;
fail:
	mgc_reader_close(r);
	free(L.node_ip);
	free(L.node_parent);
	free(L.dec);
	mgc_trace_free(t);
	seterr(err, errlen, "%s: %s", path, strerror(-rc));
	return rc;
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
		char *end;
		unsigned long long start = strtoull(line, &end, 16);
		if (end != line && *end == ' ') {
			char *end2;
			unsigned long long size = strtoull(end + 1, &end2, 16);
			if (end2 != end + 1 && *end2 == ' ' && size > 0) {
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
		}
		line = nl ? nl + 1 : NULL;
	}
	qsort(t->perf_syms, t->nperf_syms, sizeof *t->perf_syms, cmp_perf_sym);
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

double mgc_trace_band(const struct mgc_trace *t, const struct mgc_site *s, double value)
{
	if (!t->sample_rate || value <= 0 || s->kind != MGC_KIND_HEAP || s->live_var >= (1ull << 62))
		return 0; /* exact: not sampled, mappings and CUDA memory; or a sum in flight */
	double r = (double)t->sample_rate, var_over_r;
	if (s->live_bytes > 0) { /* the site's own mix of sizes, scaled (0: all always recorded) */
		var_over_r = (double)s->live_var * value / (double)s->live_bytes;
	} else { /* nothing live at the end: value/m blocks of the site's mean size m, each of
		  * variance m^2 (1-p)/p */
		double m = s->allocs ? (double)s->alloc_bytes / (double)s->allocs : 0;
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
