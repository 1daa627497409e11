/* SPDX-License-Identifier: MIT */
/* mgp_hooks.c: the lookup of the real libc functions (mgp_hooks.h's list), the boot arena that
 * serves allocations while dlsym runs, and the interposed allocator entry points: the malloc
 * family and anonymous mmap/munmap/mremap. Each hook calls the real function, then records through
 * mgp_record only when mgp_recording() and not mgp_guarded(). The hooks must return exactly what
 * the real functions return (errno included) and never call stdio, dlsym or a blocking lock. */
/* The build sets _FILE_OFFSET_BITS=64, which renames mmap to mmap64 in the headers; the probe
 * defines both symbols itself. */
#undef _FILE_OFFSET_BITS
#define _GNU_SOURCE
#include "mgp_hooks.h"

#include <dlfcn.h>
#include <errno.h>
#include <malloc.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "mgp_capture.h"
#include "mgp_os.h"
#include "mgp_record.h"
#include "mgp_sample.h"
#include "mgp_state.h"

struct mgp_real_fns mgp_real;

/* Declared by glibc only for _FILE_OFFSET_BITS=64, which this file undoes. */
void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off_t off);

/* ---- the boot arena: allocations made while dlsym resolves the real functions ---- */

#define BOOT_SIZE (256u * 1024u)

static struct {
	char arena[BOOT_SIZE] __attribute__((aligned(64)));
	size_t used;
	int resolving; /* inside mgp_resolve: allocations come from the arena */
} boot;

static void *boot_alloc(size_t n)
{
	/* 16-byte header holding the size, so realloc can copy out of the arena. */
	size_t need = ((n + 15) & ~(size_t)15) + 16;
	if (n > BOOT_SIZE)
		goto nomem;
	size_t off = __atomic_fetch_add(&boot.used, need, __ATOMIC_RELAXED);
	if (off + need > BOOT_SIZE)
		goto nomem;
	memcpy(boot.arena + off, &n, sizeof n);
	return boot.arena + off + 16;
nomem:
	errno = ENOMEM;
	return NULL;
}

static inline int is_boot(const void *p)
{
	return (uintptr_t)p - (uintptr_t)boot.arena < BOOT_SIZE; /* one comparison: below wraps */
}

/* A copy of an arena block of at most n bytes, from `alloc` (the arena itself, or malloc). */
static void *boot_realloc(void *p, size_t n, void *(*alloc)(size_t))
{
	void *q = alloc(n);
	if (q && p) {
		size_t old;
		memcpy(&old, (char *)p - 16, sizeof old);
		memcpy(q, p, old < n ? old : n);
	}
	return q;
}

void mgp_resolve(void)
{
	if (mgp_real.malloc || boot.resolving)
		return;
	boot.resolving = 1;
#define RESOLVE(ret, name, params)                                                                \
	__atomic_store_n((void **)&mgp_real.name, dlsym(RTLD_NEXT, #name), __ATOMIC_RELEASE);
	MGP_HOOKS(RESOLVE)
#undef RESOLVE
	boot.resolving = 0;
	if (!mgp_real.malloc || !mgp_real.free || !mgp_real.calloc || !mgp_real.realloc) {
		mgp_log("cannot find the real allocator (dlsym failed); aborting");
		abort();
	}
}

/* ---- the malloc family ---- */

MGP_EXPORT void *malloc(size_t n)
{
	if (mgp_unlikely(!mgp_real.malloc)) {
		if (boot.resolving)
			return boot_alloc(n);
		mgp_resolve();
	}
	void *p = mgp_real.malloc(n);
	if (mgp_likely(p != NULL) && mgp_recording() && !mgp_guarded() && !mgp_sample_skip(n))
		mgp_record_alloc(p, n);
	return p;
}

/* What free, free_sized and free_aligned_sized do before their real call: 0 when there is no real
 * call to make (NULL, or a boot-arena block). Always inlined: free is half of every pair. */
static inline __attribute__((always_inline)) int free_first(void *p)
{
	if (mgp_unlikely(!p) || mgp_unlikely(is_boot(p)))
		return 0;
	if (mgp_unlikely(!mgp_real.free))
		mgp_resolve();
	if (mgp_recording() && !mgp_guarded() && mgp_sample_maybe((uint64_t)(uintptr_t)p))
		mgp_record_free(p);
	return 1;
}

/* free's checks and lookup, out of line: the exported free is then a tail call either way and
 * keeps no frame of its own. */
static __attribute__((noinline)) void free_checked(void *p)
{
	if (free_first(p))
		mgp_real.free(p);
}

/* Sampling: a block in a region with no recorded block (most frees) goes straight to the real
 * free: 21 instructions and no frame, where free_first's checks took ~35. */
MGP_EXPORT void free(void *p)
{
	void (*real)(void *) = mgp_real.free;
	if (mgp_likely(mgp_sample_surely_not((uint64_t)(uintptr_t)p)) && mgp_likely(real != NULL) &&
	    !is_boot(p)) {
		real(p);
		return;
	}
	free_checked(p);
}

MGP_EXPORT void free_sized(void *p, size_t n)
{
	if (!free_first(p))
		return;
	if (mgp_real.free_sized)
		mgp_real.free_sized(p, n);
	else
		mgp_real.free(p);
}

MGP_EXPORT void free_aligned_sized(void *p, size_t align, size_t n)
{
	if (!free_first(p))
		return;
	if (mgp_real.free_aligned_sized)
		mgp_real.free_aligned_sized(p, align, n);
	else
		mgp_real.free(p);
}

MGP_EXPORT void *calloc(size_t a, size_t b)
{
	if (mgp_unlikely(!mgp_real.calloc)) {
		if (boot.resolving || !mgp_real.malloc) {
			size_t n;
			if (__builtin_mul_overflow(a, b, &n)) {
				errno = ENOMEM;
				return NULL;
			}
			if (boot.resolving)
				return boot_alloc(n); /* the arena is zero and never reused */
		}
		mgp_resolve();
	}
	void *p = mgp_real.calloc(a, b);
	if (mgp_likely(p != NULL) && mgp_recording() && !mgp_guarded() && !mgp_sample_skip(a * b))
		mgp_record_alloc(p, a * b);
	return p;
}

static void *realloc_impl(void *p, size_t n)
{
	if (mgp_unlikely(is_boot(p)))
		return boot_realloc(p, n, malloc);
	if (!mgp_recording() || mgp_guarded())
		return mgp_real.realloc(p, n);
	if (!p) {
		void *q = mgp_real.realloc(NULL, n);
		if (q && !mgp_sample_skip(n))
			mgp_record_alloc(q, n);
		return q;
	}
	/* Take the old block out of the table first: once the real realloc returns, another thread
	 * may be handed the same address. */
	struct mgp_entry en;
	int had = mgp_record_take(p, &en);
	void *q = mgp_real.realloc(p, n);
	if (!q && n != 0) {
		if (had) /* failed: the old block is untouched */
			mgp_record_restore(&en);
		return NULL;
	}
	if (had)
		mgp_record_gone(&en);
	if (q && !mgp_sample_skip(n))
		mgp_record_alloc(q, n);
	return q;
}

MGP_EXPORT void *realloc(void *p, size_t n)
{
	if (mgp_unlikely(!mgp_real.realloc)) {
		if (boot.resolving)
			return boot_realloc(p, n, boot_alloc);
		mgp_resolve();
	}
	return realloc_impl(p, n);
}

MGP_EXPORT void *reallocarray(void *p, size_t a, size_t b)
{
	/* glibc's reallocarray calls realloc through the PLT: doing the overflow check here and
	 * calling our own realloc keeps each call counted once, with identical results. */
	size_t n;
	if (__builtin_mul_overflow(a, b, &n)) {
		errno = ENOMEM;
		return NULL;
	}
	if (mgp_unlikely(!mgp_real.realloc))
		mgp_resolve();
	return realloc_impl(p, n);
}

MGP_EXPORT int posix_memalign(void **out, size_t align, size_t n)
{
	int r = MGP_REAL(posix_memalign)(out, align, n);
	if (r == 0 && mgp_recording() && !mgp_guarded() && !mgp_sample_skip(n))
		mgp_record_alloc(*out, n);
	return r;
}

#define ALIGNED_HOOK(name, params, args, size)                                                    \
	MGP_EXPORT void *name params                                                              \
	{                                                                                         \
		void *p = MGP_REAL(name) args;                                                    \
		if (mgp_likely(p != NULL) && mgp_recording() && !mgp_guarded() &&                 \
		    !mgp_sample_skip(size))                                                       \
			mgp_record_alloc(p, size);                                                \
		return p;                                                                         \
	}

ALIGNED_HOOK(aligned_alloc, (size_t align, size_t n), (align, n), n)
ALIGNED_HOOK(memalign, (size_t align, size_t n), (align, n), n)
ALIGNED_HOOK(valloc, (size_t n), (n), n)
ALIGNED_HOOK(pvalloc, (size_t n), (n), n)

/* ---- alternate signal stacks: where a capture must not run (mgp_capture_room) ---- */

MGP_EXPORT int sigaltstack(const stack_t *ss, stack_t *old)
{
	int r = MGP_REAL(sigaltstack)(ss, old);
	if (r == 0 && ss)
		mgp_capture_altstack(ss->ss_sp, ss->ss_size, (ss->ss_flags & SS_DISABLE) != 0);
	return r;
}

/* ---- anonymous mappings ---- */

MGP_EXPORT void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	void *r = MGP_REAL(mmap)(addr, len, prot, flags, fd, off);
	if (r != MAP_FAILED && mgp_recording() && !mgp_guarded())
		mgp_record_mmap(r, len, prot, flags);
	return r;
}

MGP_EXPORT void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	return mmap(addr, len, prot, flags, fd, off);
}

MGP_EXPORT int munmap(void *addr, size_t len)
{
	int r = MGP_REAL(munmap)(addr, len);
	if (r == 0 && mgp_recording() && !mgp_guarded())
		mgp_record_munmap(addr, len);
	return r;
}

MGP_EXPORT void *mremap(void *old, size_t old_size, size_t new_size, int flags, ...)
{
	void *new_addr = NULL;
	if (flags & MREMAP_FIXED) {
		va_list ap;
		va_start(ap, flags);
		new_addr = va_arg(ap, void *);
		va_end(ap);
	}
	void *r = MGP_REAL(mremap)(old, old_size, new_size, flags, new_addr);
	if (r != MAP_FAILED && mgp_recording() && !mgp_guarded())
		mgp_record_mremap(old, old_size, r, new_size);
	return r;
}
