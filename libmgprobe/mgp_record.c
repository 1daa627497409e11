/* SPDX-License-Identifier: MIT */
/* mgp_record.c: the recording chain of mgp_record.h. Every function runs inside a hook, with the
 * recursion guard entered around anything that may allocate (libunwind), and restores errno: the
 * program must see exactly what the real call did. Never calls malloc, stdio or a blocking lock. */
#define _GNU_SOURCE
#include "mgp_record.h"

#include <errno.h>
#include <sys/mman.h>

#include "mgp_capture.h"
#include "mgp_mmaps.h"
#include "mgp_os.h"
#include "mgp_sample.h"
#include "mgp_sites.h"
#include "mgp_state.h"
#include "mgp_step.h"
#include "mgp_thread.h"

void mgp_record_oom(void)
{
	if (mgp_state_stop())
		mgp_log("out of memory for the probe's own tables: recording stopped, the program runs on");
}

/* The calling stack: its frames (none when there was no room) and what the site lookup may trust
 * of them (mgp_capture_buf). */
struct stack {
	const uintptr_t *ips;
	unsigned k;
	uint64_t id;
	unsigned fixed;
};

/* No stack: no room to capture one, or a mapping no stack is taken for. */
static const struct stack no_stack;

/* What a recording step does with the calling stack. */
typedef void (*with_stack_fn)(void *ctx, const struct stack *s);

static inline uint32_t site_of(const struct stack *s, unsigned kind)
{
	return mgp_sites_intern_known(s->ips, s->k, kind, s->id, s->fixed);
}

/* The frame that holds the capture buffer, entered only when the stack has room for it. */
static __attribute__((noinline)) void captured(with_stack_fn fn, void *ctx)
{
	struct mgp_capture_buf buf;
	struct stack s;
	s.ips = mgp_capture_stack(&buf, &s.k);
	s.id = buf.id;
	s.fixed = buf.fixed;
	fn(ctx, &s);
}

/* Calls fn with the calling stack, or with none when the current stack cannot hold a capture (an
 * alternate signal stack): never past its end. */
static void with_stack(with_stack_fn fn, void *ctx)
{
	if (__builtin_expect(mgp_capture_room(), 1))
		captured(fn, ctx);
	else
		fn(ctx, &no_stack);
}

struct site_ctx {
	unsigned kind;
	uint32_t site;
};

static void site_at(void *ctx, const struct stack *s)
{
	struct site_ctx *c = ctx;
	c->site = site_of(s, c->kind);
}

uint32_t mgp_record_site(unsigned kind)
{
	struct site_ctx c = {kind, 0};
	with_stack(site_at, &c);
	return c.site;
}

struct alloc_ctx {
	void *p;
	size_t n;
};

static void alloc_at(void *ctx, const struct stack *s)
{
	const struct alloc_ctx *c = ctx;
	unsigned bucket = mgp_step_bucket();
	uint64_t bytes, count, ptr = (uint64_t)(uintptr_t)c->p;
	int64_t var;
	mgp_sample_weigh(c->n, &bytes, &count, &var);
	struct mgp_thread *t = mgp_thread_enter();
	uint32_t site = site_of(s, MGC_KIND_HEAP);
	if (__builtin_expect(mgp_live_insert(ptr, c->n, site, bucket) == 0, 1)) {
		mgp_sample_enter(ptr);
		mgp_thread_alloc(t, site, bucket, bytes, count, var);
	} else {
		mgp_record_oom();
	}
	mgp_thread_leave(t);
}

void mgp_record_alloc(void *p, size_t n)
{
	int e = errno;
	mgp_guard_enter();
	struct alloc_ctx c = {p, n};
	with_stack(alloc_at, &c);
	mgp_guard_leave();
	errno = e;
}

/* A heap block left the table: its site's counters, by what its allocation was counted as. */
static void heap_gone(struct mgp_thread *t, const struct mgp_entry *en)
{
	uint64_t bytes, count;
	int64_t var;
	mgp_sample_weigh(en->size, &bytes, &count, &var);
	mgp_thread_free(t, en->site, en->bucket, bytes, count, var);
}

/* Takes a block that may be recorded out of the live table (mgp_sample_maybe said so). */
static int take_entry(uint64_t ptr, struct mgp_entry *en)
{
	if (!mgp_live_remove(ptr, en))
		return 0;
	mgp_sample_leave(ptr);
	return 1;
}

int mgp_record_take(void *p, struct mgp_entry *en)
{
	uint64_t ptr = (uint64_t)(uintptr_t)p;
	return mgp_sample_maybe(ptr) && take_entry(ptr, en);
}

void mgp_record_free(void *p)
{
	struct mgp_entry en;
	uint64_t ptr = (uint64_t)(uintptr_t)p;
	if (!mgp_sample_maybe(ptr))
		return; /* sampling, and this block was never recorded */
	struct mgp_thread *t = mgp_thread_enter();
	if (take_entry(ptr, &en))
		heap_gone(t, &en);
	mgp_thread_leave(t);
}

void mgp_record_gone(const struct mgp_entry *en)
{
	struct mgp_thread *t = mgp_thread_enter();
	heap_gone(t, en);
	mgp_thread_leave(t);
}

void mgp_record_restore(const struct mgp_entry *en)
{
	int e = errno;
	if (mgp_live_insert(en->ptr, en->size, en->site, en->bucket) < 0) {
		mgp_record_gone(en);
		mgp_record_oom();
	} else {
		mgp_sample_enter(en->ptr);
	}
	errno = e;
}

static inline uint64_t page_round(size_t n)
{
	return ((uint64_t)n + 4095u) & ~(uint64_t)4095u;
}

/* A piece of a tracked mapping went away: the whole mapping (`last`) or some of its bytes. Runs
 * with the thread's record (ctx) held. */
static void mmap_removed(void *ctx, uint32_t site, uint64_t bytes, uint32_t bucket, int last)
{
	if (last)
		mgp_thread_free(ctx, site, bucket, bytes, 1, 0);
	else
		mgp_thread_shrink(ctx, site, bucket, bytes, 0);
}

static uint64_t remove_range(struct mgp_thread *t, uint64_t a, uint64_t n)
{
	return mgp_mmaps_remove(a, n, mmap_removed, t);
}

/* [a, a+n) is now a new private anonymous mapping made by the calling stack. */
static void mapping_added(struct mgp_thread *t, const struct stack *s, uint64_t a, uint64_t n)
{
	uint32_t site = site_of(s, MGC_KIND_MMAP);
	unsigned bucket = mgp_step_bucket();
	if (mgp_mmaps_add(a, n, site, bucket) == 0)
		mgp_thread_alloc(t, site, bucket, n, 1, 0); /* mappings are always recorded */
	else
		mgp_record_oom();
}

struct map_ctx {
	uint64_t a, n;      /* the new mapping */
	uint64_t old, old_n; /* mremap: the old one; 0 for mmap */
	int anon;
};

static void map_at(void *ctx, const struct stack *s)
{
	const struct map_ctx *c = ctx;
	struct mgp_thread *t = mgp_thread_enter();
	if (c->old) {
		/* Moved or resized tracked memory: a new allocation at this call site. */
		if (remove_range(t, c->old, c->old_n)) {
			remove_range(t, c->a, c->n);
			mapping_added(t, s, c->a, c->n);
		}
	} else {
		remove_range(t, c->a, c->n); /* MAP_FIXED may replace tracked memory */
		if (c->anon)
			mapping_added(t, s, c->a, c->n);
	}
	mgp_thread_leave(t);
}

void mgp_record_mmap(void *addr, size_t len, int prot, int flags)
{
	int e = errno;
	mgp_guard_enter();
	struct map_ctx c = {(uint64_t)(uintptr_t)addr, page_round(len), 0, 0,
			    /* PROT_NONE is address space reserved, not memory (the CUDA driver
			     * reserves 100+ GiB so): a part committed later with MAP_FIXED is
			     * counted then; one made usable by mprotect is not. */
			    (flags & MAP_ANONYMOUS) && (flags & MAP_TYPE) == MAP_PRIVATE && prot != PROT_NONE};
	if (c.anon)
		with_stack(map_at, &c);
	else
		map_at(&c, &no_stack);
	mgp_guard_leave();
	errno = e;
}

void mgp_record_munmap(void *addr, size_t len)
{
	int e = errno;
	struct mgp_thread *t = mgp_thread_enter();
	remove_range(t, (uint64_t)(uintptr_t)addr, page_round(len));
	mgp_thread_leave(t);
	errno = e;
}

void mgp_record_mremap(void *old, size_t old_size, void *addr, size_t new_size)
{
	int e = errno;
	mgp_guard_enter();
	struct map_ctx c = {(uint64_t)(uintptr_t)addr, page_round(new_size), (uint64_t)(uintptr_t)old,
			    page_round(old_size), 1};
	with_stack(map_at, &c);
	mgp_guard_leave();
	errno = e;
}
