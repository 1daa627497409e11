/* SPDX-License-Identifier: MIT */
/* mgp_pycode.c: the code-object registry (contract in mgp_pycode.h). Open addressing over
 * (address, fingerprint) slots read lock-free; a new code object is copied and inserted under a
 * mutex and published with a release store of its address. Must never call malloc or free. */
#include "mgp_pycode.h"

#include <errno.h>
#include <pthread.h>
#include <string.h>

#include "mgc_format.h"
#include "mgc_shm_format.h"
#include "mgp_os.h"

#define MAX_CODES (1u << 17)       /* code objects kept; later ones are plain native frames */
#define SLOTS_FIRST 1024u           /* slots of the first table; it doubles when half full */
#define ARENA_BYTES (64u << 20)     /* copied names and line tables: address space, touched as used */
#define MAX_STRING (4u << 10)       /* characters kept of a name or file name */
#define MAX_LINETABLE (1u << 20)

struct slot {
	uint64_t addr; /* 0 = empty; published last, with release */
	uint64_t fp;
	uint32_t id;
	uint32_t pad;
};

/* A lookup table, replaced by one twice its size when half full. A replaced table stays mapped
 * but its pages go back to the kernel (they read as zero): a lookup still in it misses and takes
 * the locked path, which looks in the current one. A process with 10^3 code objects then holds
 * tens of KiB, not a table sized for MAX_CODES (6 MiB, all of it touched by the hashing). */
struct table {
	uint64_t mask;
	struct slot s[];
};

/* The code-object registry: lookups lock-free, a new code object added under `lock`. */
static struct {
	struct table *slots;
	struct mgp_pycode *codes;
	char *arena;
	uint32_t arena_used;
	uint32_t count; /* next id; ids < count are published */
	pthread_mutex_t lock;
} registry = {.lock = PTHREAD_MUTEX_INITIALIZER};

static void fork_lock(void)
{
	pthread_mutex_lock(&registry.lock);
}

static void fork_unlock(void)
{
	pthread_mutex_unlock(&registry.lock);
}

static size_t table_bytes(uint64_t nslots)
{
	return sizeof(struct table) + nslots * sizeof(struct slot);
}

static struct table *table_new(uint64_t nslots)
{
	struct table *t = mgp_os_alloc(table_bytes(nslots));
	if (t)
		t->mask = nslots - 1;
	return t;
}

int mgp_pycode_init(void)
{
	registry.slots = table_new(SLOTS_FIRST);
	registry.codes = mgp_os_alloc((size_t)MAX_CODES * sizeof *registry.codes);
	registry.arena = mgp_os_alloc(ARENA_BYTES);
	if (!registry.slots || !registry.codes || !registry.arena) {
		if (registry.slots)
			mgp_os_free(registry.slots, table_bytes(registry.slots->mask + 1));
		mgp_os_free(registry.codes, (size_t)MAX_CODES * sizeof *registry.codes);
		mgp_os_free(registry.arena, ARENA_BYTES);
		registry.slots = NULL;
		return -ENOMEM;
	}
	__atomic_store_n(&registry.count, 1, __ATOMIC_RELEASE); /* id 0 is "none" */
	pthread_atfork(fork_lock, fork_unlock, fork_unlock);
	return 0;
}

static inline uint64_t slot_of(uint64_t addr, uint64_t fp)
{
	return mgc_mix64(addr ^ (fp * 0x9e3779b97f4a7c15ull));
}

uint32_t mgp_pycode_find(uint64_t addr, uint64_t fp)
{
	const struct table *t = __atomic_load_n(&registry.slots, __ATOMIC_ACQUIRE);
	if (!t)
		return 0;
	for (uint64_t i = slot_of(addr, fp) & t->mask;; i = (i + 1) & t->mask) {
		uint64_t a = __atomic_load_n(&t->s[i].addr, __ATOMIC_ACQUIRE);
		if (a == 0)
			return 0;
		if (a == addr && t->s[i].fp == fp)
			return t->s[i].id;
	}
}

/* The slot of (addr, fp) in t, or the empty slot where it goes. Lock held. */
static uint64_t slot_find(const struct table *t, uint64_t addr, uint64_t fp)
{
	uint64_t i = slot_of(addr, fp) & t->mask;
	while (t->s[i].addr && !(t->s[i].addr == addr && t->s[i].fp == fp))
		i = (i + 1) & t->mask;
	return i;
}

/* Keeps the table at most half full (lock held): 0, or -ENOMEM (no new code objects then). */
static int table_room(uint32_t count)
{
	struct table *t = registry.slots, *nt;
	if ((uint64_t)count * 2 <= t->mask + 1)
		return 0;
	if (!(nt = table_new((t->mask + 1) * 2)))
		return -ENOMEM;
	for (uint64_t i = 0; i <= t->mask; i++)
		if (t->s[i].addr)
			nt->s[slot_find(nt, t->s[i].addr, t->s[i].fp)] = t->s[i];
	__atomic_store_n(&registry.slots, nt, __ATOMIC_RELEASE);
	mgp_os_discard(t->s, (t->mask + 1) * sizeof t->s[0]);
	return 0;
}

/* Appends one code point as UTF-8. */
static size_t put_utf8(char *o, uint32_t c)
{
	if (c < 0x80) {
		o[0] = (char)c;
		return 1;
	}
	if (c < 0x800) {
		o[0] = (char)(0xc0 | (c >> 6));
		o[1] = (char)(0x80 | (c & 0x3f));
		return 2;
	}
	if (c < 0x10000) {
		o[0] = (char)(0xe0 | (c >> 12));
		o[1] = (char)(0x80 | ((c >> 6) & 0x3f));
		o[2] = (char)(0x80 | (c & 0x3f));
		return 3;
	}
	o[0] = (char)(0xf0 | ((c >> 18) & 0x07));
	o[1] = (char)(0x80 | ((c >> 12) & 0x3f));
	o[2] = (char)(0x80 | ((c >> 6) & 0x3f));
	o[3] = (char)(0x80 | (c & 0x3f));
	return 4;
}

/* Copies a string into the arena as UTF-8; sets *off and *len (0 when it does not fit). A lone
 * surrogate U+DC80..U+DCFF is the byte 0x80..0xFF of a file name that was not UTF-8 (Python decodes
 * names with surrogateescape): that byte is written, so the name is the file's own (as os.fsencode
 * gives it back); any other surrogate, not UTF-8 at all, is U+FFFD. */
static void copy_str(const struct mgp_pystr *s, uint32_t *off, uint32_t *len)
{
	size_t n = s->len < MAX_STRING ? s->len : MAX_STRING;
	*off = registry.arena_used;
	*len = 0;
	if (!s->data || (s->kind != 1 && s->kind != 2 && s->kind != 4) ||
	    (size_t)registry.arena_used + n * 4 > ARENA_BYTES)
		return;
	char *o = registry.arena + registry.arena_used;
	size_t w = 0;
	if (s->kind == 1 && s->ascii) {
		memcpy(o, s->data, n);
		w = n;
	} else {
		for (size_t i = 0; i < n; i++) {
			uint32_t c = s->kind == 1   ? ((const uint8_t *)s->data)[i]
				     : s->kind == 2 ? ((const uint16_t *)s->data)[i]
						    : ((const uint32_t *)s->data)[i];
			if (c >= 0xdc80 && c <= 0xdcff)
				o[w++] = (char)(c - 0xdc00); /* a byte Python's surrogateescape kept (a file name) */
			else
				w += put_utf8(o + w, c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff) ? 0xfffd : c);
		}
	}
	registry.arena_used += (uint32_t)w;
	*len = (uint32_t)w;
}

static void copy_content(struct mgp_pycode *pc, const struct mgp_pycode_src *src)
{
	pc->firstlineno = src->firstlineno;
	copy_str(&src->qualname, &pc->qualname_off, &pc->qualname_len);
	copy_str(&src->file, &pc->file_off, &pc->file_len);
	pc->linetable_off = registry.arena_used;
	pc->linetable_len = 0;
	size_t n = src->linetable_len;
	if (src->linetable && n <= MAX_LINETABLE && (size_t)registry.arena_used + n <= ARENA_BYTES) {
		memcpy(registry.arena + registry.arena_used, src->linetable, n);
		registry.arena_used += (uint32_t)n;
		pc->linetable_len = (uint32_t)n;
	}
}

uint32_t mgp_pycode_add(uint64_t addr, uint64_t fp, const struct mgp_pycode_src *src)
{
	if (!registry.slots || addr == 0)
		return 0;
	pthread_mutex_lock(&registry.lock);
	struct table *t = registry.slots;
	uint64_t i = slot_find(t, addr, fp);
	if (t->s[i].addr) { /* another thread won */
		uint32_t id = t->s[i].id;
		pthread_mutex_unlock(&registry.lock);
		return id;
	}
	uint32_t id = registry.count;
	if (id >= MAX_CODES || table_room(id) < 0) {
		pthread_mutex_unlock(&registry.lock);
		return 0;
	}
	t = registry.slots;
	i = slot_find(t, addr, fp);
	copy_content(&registry.codes[id], src);
	t->s[i].fp = fp;
	t->s[i].id = id;
	__atomic_store_n(&t->s[i].addr, addr, __ATOMIC_RELEASE);
	__atomic_store_n(&registry.count, id + 1, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&registry.lock);
	return id;
}

uint32_t mgp_pycode_count(void)
{
	return registry.slots ? __atomic_load_n(&registry.count, __ATOMIC_ACQUIRE) : 0;
}

const struct mgp_pycode *mgp_pycode_get(uint32_t id)
{
	return &registry.codes[id];
}

const char *mgp_pycode_bytes(void)
{
	return registry.arena;
}

/* One bit per code id: which are in the segment's table already (cleared after each publish). */
static uint64_t published[MAX_CODES / 64];

static void publish_one(struct mgc_shm_py *py, uint32_t id)
{
	const struct mgp_pycode *c = &registry.codes[id];
	uint32_t strings = c->qualname_len + c->file_len;
	if (py->ncodes == MGC_SHM_PYCODES || py->bytes_used + strings > MGC_SHM_PYBYTES)
		return;
	uint32_t table = py->bytes_used + strings + c->linetable_len <= MGC_SHM_PYBYTES ? c->linetable_len : 0;
	py->codes[py->ncodes++] = (struct mgc_shm_pycode){id, c->firstlineno, py->bytes_used, c->qualname_len,
							  c->file_len, table};
	memcpy(py->bytes + py->bytes_used, registry.arena + c->qualname_off, strings + table);
	py->bytes_used += strings + table;
}

void mgp_pycode_publish(struct mgc_shm_py *py, const struct mgc_shm_site *sites, uint32_t n)
{
	uint32_t count = mgp_pycode_count();
	py->ncodes = 0;
	py->bytes_used = 0;
	for (uint32_t i = 0; i < n; i++) {
		for (unsigned k = 0; k < sites[i].nframes && k < MGC_SHM_FRAMES; k++) {
			uint64_t f = sites[i].ips[k];
			uint32_t id = mgc_pyframe_code(f);
			if (!mgc_pyframe_is(f) || id == 0 || id >= count || (published[id >> 6] & (1ull << (id & 63))))
				continue;
			published[id >> 6] |= 1ull << (id & 63);
			publish_one(py, id);
		}
	}
	for (uint32_t i = 0; i < n; i++)
		for (unsigned k = 0; k < sites[i].nframes && k < MGC_SHM_FRAMES; k++)
			if (mgc_pyframe_is(sites[i].ips[k]))
				published[mgc_pyframe_code(sites[i].ips[k]) >> 6] = 0;
}
