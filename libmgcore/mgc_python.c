/* SPDX-License-Identifier: MIT */
/* mgc_python.c: the reader's side of Python frames (contract in mgc_python.h): a table of the
 * trace's code objects by id and the line-table decoder. Every length comes from the record and is
 * checked against it; the decoder never reads past the table it is given. */
#include "mgc_python.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "mgc_format.h"
#include "mgc_trace.h"

struct pycode {
	char *qualname, *file; /* NUL-terminated */
	uint8_t *table;
	uint32_t table_len;
	int32_t firstlineno;
};

struct mgc_pycodes {
	struct pycode *codes; /* by id; an entry with qualname NULL is absent */
	size_t cap;
};

static char *dup_bytes(const unsigned char *p, size_t n)
{
	char *s = malloc(n + 1);
	if (s) {
		memcpy(s, p, n);
		s[n] = 0;
	}
	return s;
}

static void pycode_clear(struct pycode *c)
{
	free(c->qualname);
	free(c->file);
	free(c->table);
	memset(c, 0, sizeof *c);
}

static int ensure(struct mgc_pycodes *pc, uint32_t id)
{
	if (id < pc->cap)
		return 0;
	size_t ncap = pc->cap ? pc->cap : 256;
	while (ncap <= id)
		ncap *= 2;
	struct pycode *n = realloc(pc->codes, ncap * sizeof *n);
	if (!n)
		return -ENOMEM;
	memset(n + pc->cap, 0, (ncap - pc->cap) * sizeof *n);
	pc->codes = n;
	pc->cap = ncap;
	return 0;
}

int mgc_pycodes_add(struct mgc_pycodes **codes, const void *payload, uint32_t len)
{
	struct mgc_rec_pycode r;
	if (len < sizeof r)
		return -EBADMSG;
	memcpy(&r, payload, sizeof r);
	if (r.id == 0 || r.id > (1u << 30) ||
	    (uint64_t)r.qualname_len + r.file_len + r.linetable_len > len - sizeof r)
		return -EBADMSG;
	const unsigned char *p = (const unsigned char *)payload + sizeof r;
	return mgc_pycodes_put(codes, r.id, r.firstlineno, p, r.qualname_len, p + r.qualname_len, r.file_len,
			       p + r.qualname_len + r.file_len, r.linetable_len);
}

int mgc_pycodes_put(struct mgc_pycodes **codes, uint32_t id, int32_t firstlineno, const void *qualname,
		    size_t qualname_len, const void *file, size_t file_len, const void *table, size_t table_len)
{
	if (id == 0 || id > (1u << 30))
		return -EBADMSG;
	if (!*codes && !(*codes = calloc(1, sizeof **codes)))
		return -ENOMEM;
	struct mgc_pycodes *pc = *codes;
	if (ensure(pc, id) < 0)
		return -ENOMEM;
	struct pycode *c = &pc->codes[id];
	pycode_clear(c);
	c->qualname = dup_bytes(qualname, qualname_len);
	c->file = dup_bytes(file, file_len);
	c->table = malloc(table_len ? table_len : 1);
	if (!c->qualname || !c->file || !c->table) {
		pycode_clear(c);
		return -ENOMEM;
	}
	memcpy(c->table, table, table_len);
	c->table_len = (uint32_t)table_len;
	c->firstlineno = firstlineno;
	return 0;
}

int mgc_pycodes_has(const struct mgc_pycodes *codes, uint32_t id)
{
	return codes && id < codes->cap && codes->codes[id].qualname;
}

void mgc_pycodes_free(struct mgc_pycodes *codes)
{
	if (!codes)
		return;
	for (size_t i = 0; i < codes->cap; i++)
		pycode_clear(&codes->codes[i]);
	free(codes->codes);
	free(codes);
}

int mgc_pycodes_frame(const struct mgc_pycodes *codes, uint64_t frame, struct mgc_pyframe *out)
{
	uint32_t id = mgc_pyframe_code(frame);
	*out = (struct mgc_pyframe){"??", "??", 0};
	if (!codes || id >= codes->cap || !codes->codes[id].qualname)
		return -ENOENT;
	const struct pycode *c = &codes->codes[id];
	out->function = c->qualname[0] ? c->qualname : "??";
	out->file = c->file[0] ? c->file : "??";
	out->line = mgc_pyline(c->table, c->table_len, c->firstlineno, mgc_pyframe_offset(frame));
	return 0;
}

/* ---- the line table (CPython 3.11+, Objects/locations.md) ---- */

/* An unsigned varint of 6-bit chunks, least significant first, bit 6 = more follows. */
static int read_varint(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
	uint64_t r = 0;
	for (unsigned shift = 0; shift < 64 && *p < end; shift += 6) {
		uint8_t b = *(*p)++;
		r |= (uint64_t)(b & 63u) << shift;
		if (!(b & 64u)) {
			*v = r;
			return 0;
		}
	}
	return -1;
}

/* The line delta an entry starting at p carries (codes 13 and 14 as a signed varint, 10..12 as
 * 0..2, the short forms and "no location" none). -1 in *bad on a cut entry. */
static int64_t line_delta(const uint8_t *p, const uint8_t *end, int *bad)
{
	unsigned code = (p[0] >> 3) & 15u;
	if (code == 13 || code == 14) {
		const uint8_t *q = p + 1;
		uint64_t u;
		if (read_varint(&q, end, &u) < 0) {
			*bad = 1;
			return 0;
		}
		return (u & 1) ? -(int64_t)(u >> 1) : (int64_t)(u >> 1);
	}
	return code >= 10 && code <= 12 ? (int64_t)code - 10 : 0;
}

int mgc_pyline(const uint8_t *table, size_t len, int firstlineno, uint32_t offset)
{
	const uint8_t *p = table, *end = table + len;
	int64_t line = firstlineno;
	uint64_t addr = 0;
	int bad = 0;
	while (p < end) {
		if (!(p[0] & 128u))
			return 0; /* every entry starts with its top bit set */
		unsigned code = (p[0] >> 3) & 15u;
		uint64_t next = addr + 2u * ((p[0] & 7u) + 1u);
		line += line_delta(p, end, &bad);
		if (bad)
			return 0;
		if (offset >= addr && offset < next)
			return code == 15 || line < 0 || line > INT32_MAX ? 0 : (int)line;
		addr = next;
		do
			p++;
		while (p < end && !(p[0] & 128u));
	}
	return 0;
}

/* ---- whose code ---- */

const char *mgc_pyfile_short(const char *file)
{
	static const char *const roots[] = {"/site-packages/", "/dist-packages/", NULL};
	const char *best = NULL;
	for (int i = 0; file && roots[i]; i++) {
		const char *p = strstr(file, roots[i]);
		if (p)
			best = p + strlen(roots[i]);
	}
	const char *lib = file ? strstr(file, "/lib/python3") : NULL;
	if (!best && lib && (lib = strchr(lib + 12, '/')))
		best = lib + 1;
	return best && *best ? best : file;
}

int mgc_pyfile_is_library(const char *file)
{
	static const char *const parts[] = {"/site-packages/", "/dist-packages/", "/lib/python3", "/lib64/python3",
					    "/lib/pypy", NULL};
	if (!file || !file[0] || file[0] == '<')
		return 1;
	for (int i = 0; parts[i]; i++)
		if (strstr(file, parts[i]))
			return 1;
	return 0;
}

int mgc_pyarena_is(unsigned kind, const struct mgc_site_counters *c, const char *module)
{
	if (kind != MGC_KIND_MMAP || !c->allocs || c->alloc_bytes != c->allocs * (1ull << 20) || !module)
		return 0;
	const char *base = strrchr(module, '/');
	base = base ? base + 1 : module;
	return strncmp(base, "python3", 7) == 0 || strncmp(base, "libpython3", 10) == 0;
}

int mgc_pyarena_site(const struct mgc_trace *t, const struct mgc_site *s)
{
	if (!s->nframes || !s->ips || mgc_pyframe_is(s->ips[0]))
		return 0;
	const struct mgc_module *m = mgc_trace_module_for(t, s->ips[0] - 1, s->gen);
	return mgc_pyarena_is(s->kind, &s->counters, m ? m->path : NULL);
}
