/* SPDX-License-Identifier: MIT */
/* mgp_unwind.c: the probe's caching x86-64 unwinder (mgp_unwind.h). A frame rule is read once per
 * return address from the module's .eh_frame_hdr search table, FDE and CIE (the DWARF CFA subset
 * that compilers emit for ordinary functions) into an open-addressing table that readers probe
 * without a lock; filling takes a try-lock, so a hook never waits. Each thread keeps its last
 * stack, whose outer frames a walk follows without lookups while their slots are unchanged. It
 * must never read outside the thread's stack above its stack pointer, nor outside the loaded
 * segment that holds a module's unwind tables; on any doubt the stack goes to libunwind. */
#define _GNU_SOURCE
#include "mgp_unwind.h"

#include <link.h>
#include <pthread.h>
#include <fcntl.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define UNW_LOCAL_ONLY
#include <libunwind.h>

#include "mgc_format.h"
#include "mgp_capture.h"
#include "mgp_os.h"
#include "mgp_spin.h"
#include "mgp_tcache.h"

int mgp_unwind_mode = MGP_UNWIND_LIBUNWIND;

struct slot {
	uint64_t key;  /* a return address, published last (release); 0 is empty */
	uint64_t rule;
};

/* One open-addressing table of return addresses, in a mapping of its own: 2^bits slots, at most
 * `max` used, growing to 2^top. A replaced one is discarded, not unmapped: a reader still in it
 * reads empty slots (bits 0: none) and takes the miss path. */
struct table {
	uint32_t bits, max, used, top;
	struct slot slots[];
};

static struct {
	struct table *main; /* filled by the process that started the probe */
	struct table *own;  /* a forked child's: it fills only this one, so the inherited table's
			     * pages stay shared with the parent (each insert would copy one) */
	int lock; /* held while filling or flushing; taken only with a try */
	uint32_t gen; /* one more at every flush: the threads' kept stacks are stale */
	uintptr_t stop_lo, stop_len; /* MGP_UNWIND_TO_STOP: return addresses in [lo, lo + len) */
	unsigned long long checked, mismatched, fell_back; /* check mode */
	unsigned long long frames, followed;               /* check mode: of them, from kept ones */
} tab;

#if defined(__x86_64__)

/* ---- the rule table ---- */

/* A rule, packed in 64 bits so a reader loads it in one go. 0 is no rule. */
#define R_VALID 1u     /* a rule (possibly "unsupported") */
#define R_UNSUP 2u     /* this frame goes to libunwind */
#define R_RBP_BASE 4u  /* CFA = RBP + off, else RSP + off */
#define R_END 8u       /* the return address is undefined: the outermost frame */
#define R_RBP_SAVED 16u /* the caller's RBP is at CFA + rbp_off, else unchanged */
#define R_RBP_SHIFT 8  /* bits 8..31: rbp_off, signed */
#define R_CFA_SHIFT 32 /* bits 32..63: CFA offset, signed */

/* 2^12 slots of 16 bytes (64 KiB) at first, doubled when 3/4 used, up to 2^18 (4 MiB; 196,608
 * return addresses; the PyTorch sample's parent process has 78,665, in 2^17 slots, 2 MiB). Past
 * that, a miss is read from the module's tables every time. */
#define TABLE_FIRST 12u
#define TABLE_BITS 18u
#define PROBES 32u

/* A forked child's own table: 2^10 slots at first, 2^14 (256 KiB) at most. */
#define OWN_FIRST 10u
#define OWN_BITS 14u

static inline uint32_t slot_of(uintptr_t ip, uint32_t bits)
{
	return (uint32_t)((ip * 0x9e3779b97f4a7c15ull) >> (64u - bits));
}

static inline uint64_t table_lookup(const struct table *t, uintptr_t ip)
{
	uint32_t bits = t->bits;
	if (__builtin_expect(!bits, 0))
		return 0; /* replaced, or being flushed */
	uint32_t h = slot_of(ip, bits), mask = (1u << bits) - 1u;
	for (uint32_t i = 0; i < PROBES; i++) {
		const struct slot *s = &t->slots[(h + i) & mask];
		uint64_t k = __atomic_load_n(&s->key, __ATOMIC_ACQUIRE);
		if (k == ip)
			return __atomic_load_n(&s->rule, __ATOMIC_RELAXED);
		if (k == 0)
			return 0;
	}
	return 0;
}

static inline uint64_t lookup(uintptr_t ip)
{
	uint64_t r = table_lookup(__atomic_load_n(&tab.main, __ATOMIC_ACQUIRE), ip);
	const struct table *own = __atomic_load_n(&tab.own, __ATOMIC_ACQUIRE);
	if (__builtin_expect(!r, 0) && own)
		r = table_lookup(own, ip);
	return r;
}

static size_t table_bytes(uint32_t bits)
{
	return sizeof(struct table) + ((size_t)1 << bits) * sizeof(struct slot);
}

/* An empty table of 2^bits slots that may grow to 2^top, or NULL. */
static struct table *table_new(uint32_t bits, uint32_t top)
{
	struct table *t = mgp_os_alloc(table_bytes(bits));
	if (t)
		*t = (struct table){bits, (1u << bits) / 4u * 3u, 0, top};
	return t;
}

/* The table *at, 3/4 full, replaced by one twice its size holding the same rules (the filler's
 * lock held); 0, or -1 when it is as big as it may be or there is no memory. */
static int table_grow(struct table **at)
{
	struct table *t = *at, *n;
	if (t->bits >= t->top || !(n = table_new(t->bits + 1, t->top)))
		return -1;
	uint32_t mask = (1u << n->bits) - 1u;
	for (size_t i = 0; i < ((size_t)1 << t->bits); i++) {
		uint64_t k = t->slots[i].key;
		if (!k)
			continue;
		uint32_t h = slot_of((uintptr_t)k, n->bits);
		while (n->slots[h].key) /* the new table is at most 3/8 full: no probe limit here */
			h = (h + 1) & mask;
		n->slots[h] = t->slots[i];
		n->used++;
	}
	__atomic_store_n(at, n, __ATOMIC_RELEASE);
	mgp_os_discard(t, table_bytes(t->bits)); /* its bits read 0 from now on */
	return 0;
}

static void table_insert(struct table **at, uintptr_t ip, uint64_t rule)
{
	if ((*at)->used >= (*at)->max && table_grow(at) < 0)
		return;
	struct table *t = *at;
	uint32_t h = slot_of(ip, t->bits), mask = (1u << t->bits) - 1u;
	for (uint32_t i = 0; i < PROBES; i++) {
		struct slot *s = &t->slots[(h + i) & mask];
		if (s->key == 0) {
			__atomic_store_n(&s->rule, rule, __ATOMIC_RELAXED);
			__atomic_store_n(&s->key, (uint64_t)ip, __ATOMIC_RELEASE);
			t->used++;
			return;
		}
	}
}

static void insert(uintptr_t ip, uint64_t rule)
{
	table_insert(tab.own ? &tab.own : &tab.main, ip, rule);
}

/* ---- reading the unwind tables ---- */

/* Bytes that may be parsed: a copy of one CIE, FDE or header, with its runtime address. */
struct span {
	const uint8_t *lo, *hi;
	intptr_t delta; /* a byte's runtime address minus its address here (a copy's) */
};

static inline int in_span(const struct span *m, const uint8_t *p, size_t n)
{
	return p >= m->lo && p <= m->hi && (size_t)(m->hi - p) >= n;
}

static int uleb(const struct span *m, const uint8_t **pp, const uint8_t *end, uint64_t *out)
{
	uint64_t v = 0;
	unsigned shift = 0;
	const uint8_t *p = *pp;
	for (;;) {
		if (p >= end || !in_span(m, p, 1) || shift > 63)
			return -1;
		uint8_t b = *p++;
		v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
		if (!(b & 0x80))
			break;
	}
	*pp = p;
	*out = v;
	return 0;
}

static int sleb(const struct span *m, const uint8_t **pp, const uint8_t *end, int64_t *out)
{
	const uint8_t *p = *pp;
	uint64_t v;
	if (uleb(m, pp, end, &v) < 0)
		return -1;
	unsigned bits = (unsigned)(*pp - p) * 7u;
	if (bits < 64 && (v >> (bits - 1)) & 1u)
		v |= ~0ull << bits;
	*out = (int64_t)v;
	return 0;
}

/* Reads a pointer in DWARF EH encoding enc (absolute, pc-relative or relative to data, which is
 * the .eh_frame_hdr's start); indirect and text- or function-relative ones are not supported. */
static int read_enc(const struct span *m, const uint8_t **pp, const uint8_t *end, uint8_t enc,
		    uintptr_t data, uint64_t *out)
{
	const uint8_t *p = *pp;
	uint64_t v;
	unsigned n = 0;
	if (enc == 0xff || (enc & 0x80))
		return -1;
	switch (enc & 0x0f) {
	case 0x01: if (uleb(m, pp, end, &v) < 0) return -1; break;
	case 0x09: if (sleb(m, pp, end, (int64_t *)&v) < 0) return -1; break;
	case 0x00: case 0x04: case 0x0c: n = 8; break;
	case 0x03: case 0x0b: n = 4; break;
	case 0x02: case 0x0a: n = 2; break;
	default: return -1;
	}
	if (n) {
		if (p + n > end || !in_span(m, p, n))
			return -1;
		if (n == 8) {
			memcpy(&v, p, 8);
		} else if (n == 4) {
			uint32_t u;
			memcpy(&u, p, 4);
			v = (enc & 0x08) ? (uint64_t)(int64_t)(int32_t)u : u;
		} else {
			uint16_t u;
			memcpy(&u, p, 2);
			v = (enc & 0x08) ? (uint64_t)(int64_t)(int16_t)u : u;
		}
		*pp = p + n;
	}
	switch (enc & 0x70) {
	case 0x00: break;
	case 0x10: v += (uintptr_t)p + (uintptr_t)m->delta; break;
	case 0x30: v += data; break;
	default: return -1;
	}
	*out = v;
	return 0;
}

static inline uint32_t rd32(const uint8_t *p)
{
	uint32_t v;
	memcpy(&v, p, 4);
	return v;
}

/* ---- the CFA program ---- */

enum { HOW_SAME, HOW_OFFSET, HOW_UNDEF };
enum { DW_RBP = 6, DW_RSP = 7, DW_RA = 16 };

struct row {
	uint8_t cfa_reg, rbp_how, ra_how;
	int64_t cfa_off, rbp_off, ra_off;
};

struct cfa_run {
	struct row cur, init, saved[8];
	unsigned depth;
	uint64_t code_align;
	int64_t data_align;
	uint8_t fde_enc, has_z;
	uintptr_t loc, pc, data;
};

static int set_reg(struct cfa_run *r, uint64_t reg, uint8_t how, int64_t off)
{
	if (reg == DW_RBP) {
		r->cur.rbp_how = how;
		r->cur.rbp_off = off;
	} else if (reg == DW_RA) {
		r->cur.ra_how = how;
		r->cur.ra_off = off;
	}
	return 0;
}

static int restore_reg(struct cfa_run *r, uint64_t reg)
{
	if (reg == DW_RBP) {
		r->cur.rbp_how = r->init.rbp_how;
		r->cur.rbp_off = r->init.rbp_off;
	} else if (reg == DW_RA) {
		r->cur.ra_how = r->init.ra_how;
		r->cur.ra_off = r->init.ra_off;
	}
	return 0;
}

/* Moves the location by delta; 1 when it passed the pc (the row at the pc is the current one). */
static inline int advance(struct cfa_run *r, uint64_t delta)
{
	r->loc += delta * r->code_align;
	return r->loc > r->pc;
}

/* One instruction with an operand register or offset; -1 unsupported, 1 stop, 0 go on. */
static int step_ext(const struct span *m, struct cfa_run *r, uint8_t op, const uint8_t **pp,
		    const uint8_t *end)
{
	uint64_t reg = 0, u = 0;
	int64_t s = 0;
	switch (op) {
	case 0x05: /* offset_extended */
		if (uleb(m, pp, end, &reg) < 0 || uleb(m, pp, end, &u) < 0) return -1;
		return set_reg(r, reg, HOW_OFFSET, (int64_t)u * r->data_align);
	case 0x2f: /* GNU_negative_offset_extended */
		if (uleb(m, pp, end, &reg) < 0 || uleb(m, pp, end, &u) < 0) return -1;
		return set_reg(r, reg, HOW_OFFSET, -(int64_t)u * r->data_align);
	case 0x11: /* offset_extended_sf */
		if (uleb(m, pp, end, &reg) < 0 || sleb(m, pp, end, &s) < 0) return -1;
		return set_reg(r, reg, HOW_OFFSET, s * r->data_align);
	case 0x06: /* restore_extended */
		if (uleb(m, pp, end, &reg) < 0) return -1;
		return restore_reg(r, reg);
	case 0x07: /* undefined */
		if (uleb(m, pp, end, &reg) < 0) return -1;
		return set_reg(r, reg, HOW_UNDEF, 0);
	case 0x08: /* same_value */
		if (uleb(m, pp, end, &reg) < 0) return -1;
		return set_reg(r, reg, HOW_SAME, 0);
	case 0x09: /* register: fine for registers this unwinder does not follow */
		if (uleb(m, pp, end, &reg) < 0 || uleb(m, pp, end, &u) < 0) return -1;
		return reg == DW_RBP || reg == DW_RA ? -1 : 0;
	case 0x14: /* val_offset */
	case 0x15: /* val_offset_sf */
		if (uleb(m, pp, end, &reg) < 0 || uleb(m, pp, end, &u) < 0) return -1;
		return reg == DW_RBP || reg == DW_RA ? -1 : 0;
	case 0x10: /* expression */
	case 0x16: /* val_expression */
		if (uleb(m, pp, end, &reg) < 0 || uleb(m, pp, end, &u) < 0 || u > (uint64_t)(end - *pp))
			return -1;
		*pp += u;
		return reg == DW_RBP || reg == DW_RA ? -1 : 0;
	case 0x2e: /* GNU_args_size */
		return uleb(m, pp, end, &u);
	}
	return -1;
}

/* The CFA's definition and the state stack; -1 unsupported, 1 stop, 0 go on. */
static int step_cfa(const struct span *m, struct cfa_run *r, uint8_t op, const uint8_t **pp,
		    const uint8_t *end)
{
	uint64_t reg = 0, u = 0;
	int64_t s = 0;
	switch (op) {
	case 0x0c: /* def_cfa */
		if (uleb(m, pp, end, &reg) < 0 || uleb(m, pp, end, &u) < 0) return -1;
		r->cur.cfa_reg = (uint8_t)(reg < 255 ? reg : 255);
		r->cur.cfa_off = (int64_t)u;
		return 0;
	case 0x12: /* def_cfa_sf */
		if (uleb(m, pp, end, &reg) < 0 || sleb(m, pp, end, &s) < 0) return -1;
		r->cur.cfa_reg = (uint8_t)(reg < 255 ? reg : 255);
		r->cur.cfa_off = s * r->data_align;
		return 0;
	case 0x0d: /* def_cfa_register */
		if (uleb(m, pp, end, &reg) < 0) return -1;
		r->cur.cfa_reg = (uint8_t)(reg < 255 ? reg : 255);
		return 0;
	case 0x0e: /* def_cfa_offset */
		if (uleb(m, pp, end, &u) < 0) return -1;
		r->cur.cfa_off = (int64_t)u;
		return 0;
	case 0x13: /* def_cfa_offset_sf */
		if (sleb(m, pp, end, &s) < 0) return -1;
		r->cur.cfa_off = s * r->data_align;
		return 0;
	case 0x0a: /* remember_state */
		if (r->depth >= sizeof r->saved / sizeof r->saved[0]) return -1;
		r->saved[r->depth++] = r->cur;
		return 0;
	case 0x0b: /* restore_state */
		if (!r->depth) return -1;
		r->cur = r->saved[--r->depth];
		return 0;
	}
	return step_ext(m, r, op, pp, end);
}

/* Runs the CFA program [p, end) up to the pc: 0 when the row at the pc was reached (or the program
 * ended before it), -1 on anything unsupported. */
static int run_cfa(const struct span *m, struct cfa_run *r, const uint8_t *p, const uint8_t *end)
{
	while (p < end) {
		if (!in_span(m, p, 1))
			return -1;
		uint8_t op = *p++, low = op & 0x3f;
		uint64_t u = 0;
		int rc = 0;
		switch (op >> 6) {
		case 1: /* advance_loc */
			if (advance(r, low)) return 0;
			continue;
		case 2: /* offset */
			if (uleb(m, &p, end, &u) < 0) return -1;
			set_reg(r, low, HOW_OFFSET, (int64_t)u * r->data_align);
			continue;
		case 3: /* restore */
			restore_reg(r, low);
			continue;
		}
		switch (op) {
		case 0x00: /* nop */
			continue;
		case 0x01: /* set_loc */
			if (read_enc(m, &p, end, r->fde_enc, r->data, &u) < 0) return -1;
			r->loc = u;
			if (u > r->pc) return 0;
			continue;
		case 0x02: case 0x03: case 0x04: { /* advance_loc1, 2, 4 */
			unsigned n = op == 0x02 ? 1 : op == 0x03 ? 2 : 4;
			if ((size_t)(end - p) < n || !in_span(m, p, n)) return -1;
			u = n == 1 ? p[0] : n == 2 ? (uint64_t)(p[0] | p[1] << 8) : rd32(p);
			p += n;
			if (advance(r, u)) return 0;
			continue;
		}
		}
		rc = step_cfa(m, r, op, &p, end);
		if (rc)
			return rc;
	}
	return 0;
}

/* ---- CIE and FDE ---- */

/* Parses the CIE at cie: its alignment factors, FDE pointer encoding and initial instructions.
 * -1 when unsupported (not version 1 or 3, a signal frame, an augmentation it does not know). */
static int parse_cie(const struct span *m, const uint8_t *cie, struct cfa_run *r,
		     const uint8_t **ins, const uint8_t **ins_end)
{
	if (!in_span(m, cie, 9))
		return -1;
	uint32_t len = rd32(cie);
	if (len == 0 || len == 0xffffffffu || !in_span(m, cie + 4, len) || rd32(cie + 4) != 0)
		return -1;
	const uint8_t *p = cie + 8, *end = cie + 4 + len;
	uint8_t version = *p++;
	const uint8_t *aug = p;
	if (version != 1 && version != 3)
		return -1;
	while (p < end && *p)
		p++;
	if (p >= end)
		return -1;
	p++;
	uint64_t u, ra_reg;
	if (uleb(m, &p, end, &r->code_align) < 0 || sleb(m, &p, end, &r->data_align) < 0)
		return -1;
	if (version == 1) {
		if (p >= end) return -1;
		ra_reg = *p++;
	} else if (uleb(m, &p, end, &ra_reg) < 0) {
		return -1;
	}
	if (ra_reg != DW_RA)
		return -1;
	r->fde_enc = 0;
	r->has_z = *aug == 'z';
	if (r->has_z) {
		if (uleb(m, &p, end, &u) < 0 || u > (uint64_t)(end - p))
			return -1;
		const uint8_t *q = p, *qend = p + u;
		for (const uint8_t *a = aug + 1; *a; a++) {
			if (*a == 'R' && q < qend) {
				r->fde_enc = *q++;
			} else if (*a == 'L' && q < qend) {
				q++;
			} else if (*a == 'P' && q < qend) {
				uint8_t enc = *q++;
				if (read_enc(m, &q, qend, enc & 0x7f, r->data, &u) < 0)
					return -1;
			} else {
				return -1; /* 'S' (a signal frame), 'B', 'G' or an unknown one */
			}
		}
		p = qend;
	} else if (*aug) {
		return -1;
	}
	*ins = p;
	*ins_end = end;
	return 0;
}

static uint64_t row_rule(const struct row *w)
{
	if (w->ra_how == HOW_UNDEF)
		return R_VALID | R_END;
	if ((w->cfa_reg != DW_RSP && w->cfa_reg != DW_RBP) || w->ra_how != HOW_OFFSET ||
	    w->ra_off != -8 || w->rbp_how == HOW_UNDEF || w->cfa_off < 8 || w->cfa_off > INT32_MAX ||
	    w->rbp_off < -(1 << 23) || w->rbp_off >= (1 << 23))
		return R_VALID | R_UNSUP;
	uint64_t rule = R_VALID | ((uint64_t)(uint32_t)(int32_t)w->cfa_off << R_CFA_SHIFT);
	if (w->cfa_reg == DW_RBP)
		rule |= R_RBP_BASE;
	if (w->rbp_how == HOW_OFFSET)
		rule |= R_RBP_SAVED | ((uint64_t)((uint32_t)w->rbp_off & 0xffffffu) << R_RBP_SHIFT);
	return rule;
}

/* ---- reading a module's tables: from its file, or where that fails from its mapping ---- */

/* The loaded segment that holds .eh_frame_hdr (and .eh_frame): its runtime range and, when the
 * module's file is open, that file and the segment's offset in it. CIEs and FDEs are read with
 * pread, so .eh_frame's pages never become the process's (12 MiB less RSS in the PyTorch sample,
 * docs/BENCHMARKS.md); the search table in .eh_frame_hdr (~17 reads a search) is read in place. */
struct src {
	const uint8_t *lo, *hi;
	int fd;
	uint64_t off;
};

/* Copies n bytes at runtime address at into buf: 0, or -1 when they are not all in the segment
 * or the file is short. */
static int src_read(const struct src *s, const uint8_t *at, void *buf, size_t n)
{
	if (at < s->lo || at > s->hi || (size_t)(s->hi - at) < n)
		return -1;
	if (s->fd < 0) {
		memcpy(buf, at, n);
		return 0;
	}
	long got = syscall(SYS_pread64, s->fd, buf, n, (long)(s->off + (uint64_t)(at - s->lo)));
	return got == (long)n ? 0 : -1;
}

/* Copies the length-prefixed record (a CIE or an FDE) at at into buf (cap bytes) and makes *m
 * its span; -1 when it does not fit or cannot be read. */
static int src_record(const struct src *s, const uint8_t *at, uint8_t *buf, size_t cap,
		      struct span *m)
{
	size_t n = at >= s->lo && at < s->hi && (size_t)(s->hi - at) < cap ? (size_t)(s->hi - at) : cap;
	uint32_t len;
	if (n < 8 || src_read(s, at, buf, n) < 0) /* one read, as much as may be the record */
		return -1;
	memcpy(&len, buf, 4);
	if (len == 0 || len == 0xffffffffu || len > n - 4)
		return -1;
	m->lo = buf;
	m->hi = buf + 4 + len;
	m->delta = (intptr_t)at - (intptr_t)buf;
	return 0;
}

#define FDE_MAX 2048u
#define CIE_MAX 256u

/* The rule at pc from the FDE at fde, which the search table says starts at start;
 * R_VALID | R_UNSUP when it cannot be followed, 0 when the FDE read does not start there (a file
 * that is no longer the one loaded). */
static uint64_t fde_rule(const struct src *s, const uint8_t *fde, uintptr_t start, uintptr_t pc,
			 uintptr_t data)
{
	const uint64_t unsup = R_VALID | R_UNSUP;
	uint8_t fb[FDE_MAX], cb[CIE_MAX];
	struct span fm, cm;
	struct cfa_run r;
	const uint8_t *ins, *ins_end;
	if (src_record(s, fde, fb, sizeof fb, &fm) < 0)
		return unsup;
	uint32_t len = rd32(fb), cie_off = rd32(fb + 4);
	if (len < 8 || cie_off == 0 || cie_off > (uintptr_t)(fde + 4 - s->lo) ||
	    src_record(s, fde + 4 - cie_off, cb, sizeof cb, &cm) < 0)
		return unsup;
	memset(&r, 0, sizeof r);
	r.pc = pc;
	r.data = data;
	if (parse_cie(&cm, cb, &r, &ins, &ins_end) < 0)
		return unsup;
	const uint8_t *p = fb + 8, *end = fb + 4 + len;
	uint64_t begin, range, u;
	if (read_enc(&fm, &p, end, r.fde_enc, data, &begin) < 0 ||
	    read_enc(&fm, &p, end, r.fde_enc & 0x0f, data, &range) < 0)
		return unsup;
	if (begin != start)
		return 0;
	if (pc - begin >= range)
		return unsup; /* no FDE covers the pc */
	if (r.has_z) { /* the FDE's augmentation data */
		if (uleb(&fm, &p, end, &u) < 0 || u > (uint64_t)(end - p))
			return unsup;
		p += u;
	}
	r.loc = begin;
	r.cur.ra_how = HOW_SAME;
	if (run_cfa(&cm, &r, ins, ins_end) != 0)
		return unsup;
	r.init = r.cur;
	r.loc = begin;
	if (run_cfa(&fm, &r, p, end) != 0)
		return unsup;
	return row_rule(&r.cur);
}

/* ---- finding the module and its FDE ---- */

struct module_find {
	uintptr_t pc;
	const uint8_t *hdr;
	struct src src;
	int found;
};

/* The module whose executable segment holds f->pc: its .eh_frame_hdr, the segment holding it,
 * and its file opened (under the loader's lock, while its name is sure to be valid). */
static int find_module(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct module_find *f = arg;
	const ElfW(Phdr) *eh = NULL;
	int text = 0;
	(void)size;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t s = info->dlpi_addr + ph->p_vaddr;
		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X) && f->pc - s < ph->p_memsz)
			text = 1;
		else if (ph->p_type == PT_GNU_EH_FRAME)
			eh = ph;
	}
	if (!text)
		return 0;
	f->found = 1;
	if (!eh)
		return 1;
	f->hdr = (const uint8_t *)(info->dlpi_addr + eh->p_vaddr);
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		const uint8_t *s = (const uint8_t *)(info->dlpi_addr + ph->p_vaddr);
		if (ph->p_type == PT_LOAD && f->hdr >= s && f->hdr < s + ph->p_filesz) {
			f->src.lo = s;
			f->src.hi = s + ph->p_filesz;
			f->src.off = ph->p_offset;
		}
	}
	const char *path = info->dlpi_name && *info->dlpi_name ? info->dlpi_name : "/proc/self/exe";
	if (f->src.lo)
		f->src.fd = (int)syscall(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC);
	return 1;
}

/* The FDE for pc from the .eh_frame_hdr at h: its runtime address (and in *start the address
 * the table says it starts at), or NULL. */
static const uint8_t *find_fde(const struct src *s, const uint8_t *h, uintptr_t pc,
			       uintptr_t *start)
{
	uint8_t hb[12];
	struct span hm = {hb, hb + sizeof hb, (intptr_t)h - (intptr_t)hb};
	const uint8_t *p = hb + 4;
	uint64_t u, count;
	int32_t e[2];
	if (src_read(s, h, hb, sizeof hb) < 0 || hb[0] != 1 || hb[3] != 0x3b ||
	    read_enc(&hm, &p, hm.hi, hb[1], (uintptr_t)h, &u) < 0 ||
	    read_enc(&hm, &p, hm.hi, hb[2], (uintptr_t)h, &count) < 0 || !count)
		return NULL;
	/* The search table: (start, FDE) pairs of 32-bit offsets from h, sorted by start. */
	const uint8_t *t = h + (p - hb);
	if (count > (uint64_t)(s->hi - t) / 8u)
		return NULL;
	uint64_t lo = 0, hi = count;
	while (hi - lo > 1) {
		uint64_t mid = lo + (hi - lo) / 2;
		if (src_read(s, t + mid * 8, e, 4) < 0)
			return NULL;
		if ((uintptr_t)h + (intptr_t)e[0] <= pc)
			lo = mid;
		else
			hi = mid;
	}
	if (src_read(s, t + lo * 8, e, 8) < 0 || (uintptr_t)h + (intptr_t)e[0] > pc)
		return NULL;
	*start = (uintptr_t)h + (intptr_t)e[0];
	return h + (intptr_t)e[1];
}

/* The rule for the return address ip, from its module's tables; 0 when no module holds it. */
static uint64_t rule_for(uintptr_t ip)
{
	struct module_find f = {ip - 1, NULL, {NULL, NULL, -1, 0}, 0};
	dl_iterate_phdr(find_module, &f);
	if (!f.found)
		return 0;
	uint64_t rule = R_VALID | R_UNSUP;
	struct src mapped = f.src; /* the search table through the mapping: ~17 reads per search */
	mapped.fd = -1;
	uintptr_t start = 0;
	const uint8_t *fde = f.hdr && f.src.lo ? find_fde(&mapped, f.hdr, ip - 1, &start) : NULL;
	if (fde) {
		rule = fde_rule(&f.src, fde, start, ip - 1, (uintptr_t)f.hdr);
		if (!rule) /* the file on disk changed since it was loaded: read the mapping */
			rule = fde_rule(&mapped, fde, start, ip - 1, (uintptr_t)f.hdr);
		if (!rule)
			rule = R_VALID | R_UNSUP;
	}
	if (f.src.fd >= 0)
		syscall(SYS_close, f.src.fd);
	return rule;
}

/* The rule of a missed return address, read from its module's tables (no lock: reading is
 * reentrant) and kept when the table's try-lock is free (else the next miss reads it again); 0
 * when no module holds it: that stack goes to libunwind. */
static __attribute__((noinline, cold)) uint64_t fill(uintptr_t ip)
{
	uint64_t rule = rule_for(ip);
	if (rule && !__atomic_exchange_n(&tab.lock, 1, __ATOMIC_ACQUIRE)) {
		if (!lookup(ip))
			insert(ip, rule);
		__atomic_store_n(&tab.lock, 0, __ATOMIC_RELEASE);
	}
	return rule;
}

/* ---- the thread's last stack ---- */

/* Each thread keeps the frames of its last walk: a frame's return address, its stack pointer
 * (the CFA of the frame below), its RBP and how its step read the caller's RBP. A walk that comes
 * to a frame in the same state (ip, sp, rbp) as a kept one knows that frame's step without a
 * lookup: the kept caller's state follows whenever the two stack slots that step read (the return
 * address at the caller's sp - 8, and the saved RBP) still hold what they held, one load and
 * compare each (RBP, and its slot, only where the kept frames read RBP before loading it again).
 * The rules cannot differ (a flush, which may change them, starts a new generation and empties
 * every thread's frames), so the walk is exactly the one the table would give: a caller that
 * returned and a new one at the same place changes the return-address slot. 64 frames, each
 * frame's fields together (what a follow reads of one frame is one cache line at most): 2.1 KiB of
 * initial-exec TLS a thread. */
#define KEPT_FRAMES 64u
#define META_END INT32_MIN         /* the frame's rule ended the stack */
#define META_SLOW (INT32_MIN + 1)  /* its caller's RBP was read below its sp: the table steps it */
#define META_KEEP (INT32_MIN + 2)  /* its caller's RBP is its own; else it was read at CFA + meta
				    * (at or above the frame's sp, so above the walk's start) */

/* One frame: its return address, stack pointer and RBP, and how its step read the caller's RBP. */
struct frame {
	uintptr_t ip, sp, rbp;
	int32_t meta;
	uint8_t base; /* the frame's CFA is RBP + offset */
};
static const uintptr_t stop_word = 1;

/* Each thread's last rules looked up, direct-mapped by return address, in its block of caches
 * (mgp_tcache.h: not in TLS, which small thread stacks pay for): the shared table is 2 MiB for
 * PyTorch, and its slot's cache miss was half of the walk's time in the torch sample's steps;
 * these 32 KiB stay in the core's own caches (its L2 at least). Emptied with the kept frames at a
 * flush. */
#define RULE_MEMO_BITS 11u
struct rule_memo {
	uintptr_t ip;
	uint64_t rule;
};
_Static_assert(sizeof(struct rule_memo) << RULE_MEMO_BITS <= MGP_TCACHE_BIG, "the rules' part of the block");

struct kept {
	uint32_t n;   /* frames held */
	int whole;    /* they are all the last walk put out (not cut at KEPT_FRAMES or the stop range) */
	uint64_t id;  /* the last walk's identity (mgp_unwind_stack_id) */
	uint32_t gen; /* tab.gen at the start of the walks that made them (and the rules memo) */
	int busy;     /* a walk is using them (a handler's walk on this thread leaves them alone) */
	/* One more than kept: past the last frame, a caller whose slot can never match (stop_word). */
	struct frame f[KEPT_FRAMES + 1];
};
static __thread struct kept kept __attribute__((tls_model("initial-exec")));
__thread uint64_t mgp_unwind_stack_id __attribute__((tls_model("initial-exec")));

/* The rule of ip: from the thread's memo, else the shared table (filled from the module on a
 * miss) and noted in the memo; rules NULL: the table only. 0 when none. */
static inline uint64_t rule_of(struct rule_memo *rules, uintptr_t ip)
{
	struct rule_memo *m = rules ? &rules[slot_of(ip, RULE_MEMO_BITS)] : NULL;
	if (m && m->ip == ip)
		return m->rule;
	uint64_t r = lookup(ip);
	if (__builtin_expect(!r, 0) && !(r = fill(ip)))
		return 0;
	if (m) {
		m->ip = ip;
		m->rule = r;
	}
	return r;
}

/* A walk in progress: where the next frame is, and what it has put out. */
struct walk {
	uintptr_t *out;
	int n, max;
	uintptr_t ip, sp, rbp;
	uintptr_t lo, room; /* every read lies in [lo, lo + room] */
	int from, len;      /* out[from, from + len) are the kept frames [at, at + len) */
	unsigned at;
	uintptr_t stop_lo, stop_len; /* a frame whose ip is in [lo, lo + len) is the last (len 0: none) */
};

/* Whether the kept frames from c on read RBP before they load it again: where they do not, RBP
 * is the program's scratch register there (code built without frame pointers, where it often
 * holds a pointer that changes from call to call) and its value cannot change the walk. Past the
 * kept ones: assumed read. */
static inline int rbp_read(const struct kept *k, unsigned c)
{
	for (; c < k->n; c++) {
		if (k->f[c].base)
			return 1;
		if (k->f[c].meta != META_KEEP)
			return 0; /* loaded again (or the end) */
	}
	return 1;
}

/* Follows the kept frames from k's frame c, whose state is w's (RBP aside where it is not read):
 * puts out every frame whose step's return-address slot still holds what it held, and whose
 * RBP slot does too or is not read before the next load; stops at the first that does not (not
 * put out: the table steps it) or at the end of the stack, of max or, in a walk to the stop range,
 * at a frame in it (1: the walk is done). Kept frames in the stop range are all kept as the
 * table's to step (keep), so only those are looked at for it. RBP
 * is always the walk's own, and the kept frames get the values followed (a kept stack holds one
 * walk's states). Locals, not w's fields, in the loop: a store into out may alias them. */
static __attribute__((noinline)) int follow(struct kept *restrict k, unsigned c, struct walk *restrict w)
{
	uintptr_t *restrict out = w->out + w->n, *restrict const end = w->out + w->max;
	struct frame *f = &k->f[c];
	uintptr_t ip = w->ip, rbp = w->rbp;
	int done = 1;
	w->from = w->n;
	w->at = c;
	for (;;) {
		int32_t meta = f->meta;
		if (meta <= META_SLOW) {
			/* The end, or a frame in the stop range (all kept as the table's to step) */
			done = meta == META_END || ip - w->stop_lo < w->stop_len;
			if (done)
				*out++ = ip;
			break;
		}
		uintptr_t sp = f[1].sp, next = f[1].ip;
		if (*(const uintptr_t *)(sp - 8) != next) { /* also past the last: stop_word */
			done = 0;
			break;
		}
		f->rbp = rbp;
		if (meta != META_KEEP) {
			uintptr_t loaded = *(const uintptr_t *)(sp + (uintptr_t)(intptr_t)meta);
			if (loaded != f[1].rbp && rbp_read(k, (unsigned)(f - k->f) + 1)) {
				done = 0;
				break;
			}
			rbp = loaded;
		}
		*out++ = ip;
		ip = next;
		f++;
		if (out == end)
			break;
	}
	f->rbp = rbp;
	w->ip = ip;
	w->sp = f->sp;
	w->rbp = rbp;
	w->n = (int)(out - w->out);
	w->len = w->n - w->from;
	return done;
}

/* Copies the frames [a, b) that the walk w stepped itself (in s, by output index) into k. */
static inline void keep_own(struct kept *k, const struct walk *w, const struct frame *s, unsigned a,
			    unsigned b)
{
	for (unsigned i = a; i < b; i++) {
		k->f[i] = s[i];
		k->f[i].ip = w->out[i];
	}
}

/* Ends k's n kept frames at the first in the stop range, kept as one the table steps, whose
 * callers' RBP is assumed read (as a walk to the stop range keeps it): follow then never needs to
 * look for the stop range. Returns the frames left. */
static unsigned keep_to_stop(struct kept *k, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		if (k->f[i].ip - tab.stop_lo < tab.stop_len) {
			k->f[i].meta = META_SLOW;
			k->f[i].base = 1;
			return i + 1;
		}
	}
	return n;
}

/* Whether the finished walk w put out exactly what the last one did (all of which k keeps): it
 * followed k's frames to the walk's end, from the same index, and the frames it stepped itself
 * before them are k's first ones. Asked before keep. */
static inline int same_as_kept(const struct kept *k, const struct walk *w)
{
	unsigned from = (unsigned)w->from;
	if (!w->len || !k->whole || from != w->at || (unsigned)w->n != k->n || from + (unsigned)w->len != k->n)
		return 0;
	for (unsigned i = 0; i < from; i++)
		if (w->out[i] != k->f[i].ip)
			return 0;
	return 1;
}

/* Keeps the finished walk w as the thread's last stack: the frames it stepped itself (in s,
 * by output index) around those it followed from the kept ones. */
static void keep(struct kept *k, const struct walk *w, const struct frame *s)
{
	unsigned n = (unsigned)w->n < KEPT_FRAMES ? (unsigned)w->n : KEPT_FRAMES;
	unsigned from = (unsigned)w->from, len = (unsigned)w->len;
	if (!len) {
		keep_own(k, w, s, 0, n);
	} else {
		if (from != w->at && from < KEPT_FRAMES) {
			unsigned m = from + len <= KEPT_FRAMES ? len : KEPT_FRAMES - from;
			memmove(&k->f[from], &k->f[w->at], m * sizeof k->f[0]);
		}
		keep_own(k, w, s, 0, from < n ? from : n);
		keep_own(k, w, s, from + len, n);
	}
	if (!w->stop_len && tab.stop_len) /* a walk past the stop range, in a Python process */
		n = keep_to_stop(k, n);
	k->whole = n == (unsigned)w->n;
	k->n = n;
	k->f[n].ip = 0;
	k->f[n].sp = (uintptr_t)&stop_word + 8;
}

/* ---- the walk ---- */

/* The thread's stack, as glibc knows it; lo = hi = 1 when it does not say. */
static void thread_bounds(struct mgp_stack_bounds *b)
{
	pthread_attr_t a;
	void *addr;
	size_t size;
	b->stk_lo = b->stk_hi = 1;
	if (pthread_getattr_np(pthread_self(), &a) != 0)
		return;
	if (pthread_attr_getstack(&a, &addr, &size) == 0 && addr && size) {
		b->stk_lo = (uintptr_t)addr;
		b->stk_hi = (uintptr_t)addr + size;
	}
	pthread_attr_destroy(&a);
}

/* The walk proper, with k the thread's kept frames (NULL: none to use) and rules its memo of rules
 * (NULL: none): each frame's rule from the memo or the table, until a frame in the state of a kept
 * one; then the kept ones as long as they hold.
 * In locals, not w's fields: a store into out may alias them. */
static int walk(struct walk *w, struct kept *k, struct rule_memo *rules)
{
	struct frame s[KEPT_FRAMES + 1]; /* the frames this walk steps itself, by output index */
	uintptr_t *out = w->out, ip = w->ip, sp = w->sp, rbp = w->rbp;
	const uintptr_t lo = w->lo, room = w->room, top = lo + room;
	const uintptr_t stop_lo = w->stop_lo, stop_len = w->stop_len;
	int n = 0, max = w->max;
	unsigned c = 0, end = k ? k->n : 0;
	while (n < max) {
		/* The first kept frame at or above sp; kept frames below it cannot be met again. */
		while (c < end && k->f[c].sp < sp)
			c++;
		if (c < end && k->f[c].sp == sp && k->f[c].ip == ip &&
		    (k->f[c].rbp == rbp || !rbp_read(k, c))) {
			*w = (struct walk){out, n, max, ip, sp, rbp, lo, room, -1, 0, 0, stop_lo, stop_len};
			int done = follow(k, c, w);
			n = w->n, ip = w->ip, sp = w->sp, rbp = w->rbp;
			c = end; /* one run of kept frames a walk */
			if (done)
				break;
		}
		int32_t meta = META_END;
		unsigned i = (unsigned)n;
		uintptr_t cfa = 0, rbp0 = rbp;
		out[n++] = ip;
		if (ip - stop_lo < stop_len) {
			/* The last frame, its step not looked up: kept as one the table steps, whose
			 * callers' RBP is assumed read. */
			if (i < KEPT_FRAMES) {
				s[i] = (struct frame){0, sp, rbp, META_SLOW, 1};
			}
			break;
		}
		uint64_t r = rule_of(rules, ip);
		if (__builtin_expect(!r, 0))
			return -1; /* also an ip of 0: no module holds it */
		if (__builtin_expect(r & (R_UNSUP | R_END), 0)) {
			if (r & R_UNSUP)
				return -1;
		} else {
			cfa = ((r & R_RBP_BASE) ? rbp : sp) + (uintptr_t)((int64_t)r >> R_CFA_SHIFT);
			if (cfa - 8 - sp > top - sp)
				return -1; /* the caller's frame must lie above this one, on this stack */
			meta = META_KEEP;
			if (r & R_RBP_SAVED) {
				int64_t off = (int64_t)(r << (64 - R_CFA_SHIFT)) >> (64 - R_CFA_SHIFT + R_RBP_SHIFT);
				uintptr_t at = cfa + (uintptr_t)off;
				if (at - lo > room)
					return -1;
				meta = at >= sp ? (int32_t)off : META_SLOW;
				rbp = *(const uintptr_t *)at;
			}
		}
		if (i < KEPT_FRAMES) {
			s[i] = (struct frame){0, sp, rbp0, meta, (r & R_RBP_BASE) != 0};
		}
		if (meta == META_END)
			break;
		ip = *(const uintptr_t *)(cfa - 8);
		sp = cfa;
	}
	w->n = n;
	if (k) {
		if (!same_as_kept(k, w))
			k->id++;
		keep(k, w, s);
	}
	return n;
}

/* Called by mgp_unwind_backtrace's entry with the state at its return: ip, the return address;
 * sp, the caller's stack pointer after the return; rbp, unchanged. Hidden, not static: the entry
 * below jumps to it by name. */
int mgp_unwind_walk(uintptr_t *out, int max, uintptr_t ip, uintptr_t sp, uintptr_t rbp);
int mgp_unwind_walk(uintptr_t *out, int max, uintptr_t ip, uintptr_t sp, uintptr_t rbp)
{
	struct mgp_stack_bounds *b = &mgp_stack_bounds;
	mgp_unwind_stack_id = 0;
	if (!b->stk_hi)
		thread_bounds(b);
	/* Every read lies in [lo, hi - 8] (above the stack pointer at the start, below the stack's
	 * top): one unsigned compare each. */
	const uintptr_t top = b->stk_hi - 8;
	int stop = max & MGP_UNWIND_TO_STOP;
	max &= ~MGP_UNWIND_TO_STOP;
	struct walk w = {out, 0, max, ip, sp, rbp, sp, top - sp, -1, 0, 0, tab.stop_lo, stop ? tab.stop_len : 0};
	if (b->stk_hi <= b->stk_lo || sp < b->stk_lo || sp > top || !tab.main)
		goto fall_back; /* bounds unknown, or another stack (an alternate signal stack, a
				   coroutine's) */
	struct kept *k = &kept;
	int got;
	if (k->busy) {
		got = walk(&w, NULL, NULL);
	} else {
		k->busy = 1;
		uint32_t gen = __atomic_load_n(&tab.gen, __ATOMIC_RELAXED);
		/* Asked for each walk, not kept: an exiting thread's block goes to the next new one. */
		struct rule_memo *rules = mgp_tcache_part(MGP_TCACHE_RULES);
		if (k->gen != gen) { /* as of the walk's start: a flush during it empties them next time */
			k->n = 0;
			if (rules)
				memset(rules, 0, (size_t)sizeof *rules << RULE_MEMO_BITS);
			k->gen = gen;
		}
		got = walk(&w, k, rules);
		if (got >= 0)
			mgp_unwind_stack_id = k->id;
		k->busy = 0;
	}
	if (got >= 0) {
		if (mgp_unwind_mode == MGP_UNWIND_CHECK) {
			__atomic_add_fetch(&tab.frames, (unsigned)got, __ATOMIC_RELAXED);
			__atomic_add_fetch(&tab.followed, (unsigned)w.len, __ATOMIC_RELAXED);
		}
		return got;
	}
fall_back:
	if (mgp_unwind_mode == MGP_UNWIND_CHECK)
		__atomic_add_fetch(&tab.fell_back, 1, __ATOMIC_RELAXED);
	return -1;
}

/* The entry: the caller's return address, its stack pointer after the return and its RBP, then
 * a jump (so the walk starts at the caller's frame, as unw_backtrace's first entry does). */
__asm__(".text\n"
	".globl mgp_unwind_backtrace\n"
	".hidden mgp_unwind_backtrace\n"
	".type mgp_unwind_backtrace, @function\n"
	"mgp_unwind_backtrace:\n"
	"	.cfi_startproc\n"
	"	movq (%rsp), %rdx\n"
	"	leaq 8(%rsp), %rcx\n"
	"	movq %rbp, %r8\n"
	"	jmp mgp_unwind_walk\n"
	"	.cfi_endproc\n"
	".size mgp_unwind_backtrace, .-mgp_unwind_backtrace\n");

void mgp_unwind_flush(void)
{
	if (!tab.main)
		return;
	mgp_spin_lock(&tab.lock); /* held only by an insert (or a growth: one copy of the table) */
	struct table *ts[] = {tab.main, tab.own};
	for (unsigned i = 0; i < 2; i++) {
		struct table *t = ts[i];
		if (!t)
			continue;
		struct table h = *t;
		mgp_os_discard(t, table_bytes(h.bits)); /* readers see no table, then empty slots */
		__atomic_store_n(&t->top, h.top, __ATOMIC_RELAXED);
		__atomic_store_n(&t->max, h.max, __ATOMIC_RELAXED);
		__atomic_store_n(&t->bits, h.bits, __ATOMIC_RELEASE);
	}
	__atomic_add_fetch(&tab.gen, 1, __ATOMIC_RELAXED);
	mgp_spin_unlock(&tab.lock);
}

void mgp_unwind_stop_at(uintptr_t lo, uintptr_t hi)
{
	tab.stop_lo = lo + 1;
	tab.stop_len = hi > lo ? hi - lo : 0;
}

void mgp_unwind_init(enum mgp_unwind_mode mode)
{
	mgp_unwind_mode = (int)mode;
	if (mode == MGP_UNWIND_LIBUNWIND)
		return;
	tab.main = table_new(TABLE_FIRST, TABLE_BITS);
	if (!tab.main) {
		mgp_log("no memory for the unwinder's table: stacks are unwound by libunwind");
		mgp_unwind_mode = MGP_UNWIND_LIBUNWIND;
		return;
	}
	thread_bounds(&mgp_stack_bounds);
}

/* In a forked child (one thread): a fresh table of its own for what it meets that the parent had
 * not (a grandchild drops its parent's: the first table stays shared with the first process). */
static void own_table(void)
{
	if (!tab.main)
		return;
	if (tab.own)
		mgp_os_free(tab.own, table_bytes(tab.own->bits)); /* (a replaced one stays mapped) */
	tab.own = table_new(OWN_FIRST, OWN_BITS); /* NULL: the inherited table takes them */
}

#else /* not x86-64: libunwind only */

int mgp_unwind_backtrace(uintptr_t *out, int max)
{
	(void)out;
	(void)max;
	return -1;
}

void mgp_unwind_stop_at(uintptr_t lo, uintptr_t hi)
{
	(void)lo;
	(void)hi;
}

void mgp_unwind_flush(void)
{
}

void mgp_unwind_init(enum mgp_unwind_mode mode)
{
	(void)mode;
}

#endif

void mgp_unwind_forked(void)
{
	tab.lock = 0; /* a filler that held it is not in this process */
#if defined(__x86_64__)
	own_table();
#endif
	tab.checked = tab.mismatched = tab.fell_back = tab.frames = tab.followed = 0;
}

/* ---- check mode ---- */

static unsigned skip_own(const uintptr_t *ips, unsigned n, uintptr_t lo, uintptr_t hi)
{
	unsigned s = 0;
	while (s < n && ips[s] >= lo && ips[s] < hi)
		s++;
	return s;
}

static void report(const uintptr_t *a, unsigned na, const uintptr_t *b, unsigned nb)
{
	unsigned i = 0;
	while (i < na && i < nb && a[i] == b[i])
		i++;
	mgp_log("unwind check: stacks differ at frame %u: probe %u frames (%lx), libunwind %u (%lx)",
		i, na, i < na ? (unsigned long)a[i] : 0ul, nb, i < nb ? (unsigned long)b[i] : 0ul);
}

void mgp_unwind_check(const uintptr_t *mine, int got, int max, uintptr_t own_lo, uintptr_t own_hi)
{
	uintptr_t theirs[MGC_MAX_FRAMES + MGP_CAPTURE_SLACK + 1];
	int to_stop = max & MGP_UNWIND_TO_STOP;
	max &= ~MGP_UNWIND_TO_STOP;
	int n = unw_backtrace((void **)theirs, max + 1); /* one frame deeper: this one */
	unsigned nt = n > 0 ? (unsigned)n : 0, nm = (unsigned)got;
	unsigned st = skip_own(theirs, nt, own_lo, own_hi), sm = skip_own(mine, nm, own_lo, own_hi);
	unsigned a = nm - sm, b = nt - st, k = a < b ? a : b;
	/* A walk that ended at the stop range is a prefix: the same frames up to there. */
	int stopped = to_stop && got > 0 && mine[got - 1] - tab.stop_lo < tab.stop_len;
	int whole = got < max && n < max + 1 && !stopped;
	int same = memcmp(mine + sm, theirs + st, k * sizeof *mine) == 0 && (!whole || a == b);
	__atomic_add_fetch(&tab.checked, 1, __ATOMIC_RELAXED);
	if (!same && __atomic_add_fetch(&tab.mismatched, 1, __ATOMIC_RELAXED) <= 5)
		report(mine + sm, a, theirs + st, b);
}

void mgp_unwind_summary(void)
{
	if (mgp_unwind_mode != MGP_UNWIND_CHECK)
		return;
	mgp_log("unwind check: %llu stacks compared, %llu mismatches, %llu left to libunwind; %u "
		"return addresses in the table; %llu of %llu frames followed from the thread's last stack",
		__atomic_load_n(&tab.checked, __ATOMIC_RELAXED),
		__atomic_load_n(&tab.mismatched, __ATOMIC_RELAXED),
		__atomic_load_n(&tab.fell_back, __ATOMIC_RELAXED),
		(tab.main ? tab.main->used : 0) + (tab.own ? tab.own->used : 0),
		__atomic_load_n(&tab.followed, __ATOMIC_RELAXED),
		__atomic_load_n(&tab.frames, __ATOMIC_RELAXED));
}
