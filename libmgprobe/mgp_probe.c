/* SPDX-License-Identifier: MIT */
/* mgp_probe.c: the interposed allocator entry points, the probe's one state struct, start-up,
 * fork/exec/exit handling, the sampler thread and the step API. The hooks must return exactly
 * what the real functions return (errno included) and must never call stdio, dlsym or a
 * blocking lock on the fast path; any internal failure turns recording off with one line. */
/* The build sets _FILE_OFFSET_BITS=64, which renames mmap to mmap64 in the headers; the probe
 * defines both symbols itself. */
#undef _FILE_OFFSET_BITS
#define _GNU_SOURCE
#define MGPROBE_BUILDING_PROBE
#include "mgprobe.h"

#include <dlfcn.h>
#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define UNW_LOCAL_ONLY
#include <libunwind.h>

#include "mg_config.h"
#include "mgc_format.h"
#include "mgc_proc.h"
#if MG_HAVE_CUPTI
#include "mgp_cupti.h"
#endif
#include "mgp_live.h"
#include "mgp_mmaps.h"
#include "mgp_os.h"
#include "mgp_settings.h"
#include "mgp_shm.h"
#include "mgp_sites.h"
#include "mgp_trace.h"

#define EXPORT __attribute__((visibility("default")))
#define likely(x) __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)

#define SKIP_SLACK 16u /* extra frames captured to cover the probe's own */

/* Set while the probe itself runs on this thread: nested allocator calls go straight through. */
static __thread int tls_guard __attribute__((tls_model("initial-exec")));

struct real_fns {
	void *(*malloc)(size_t);
	void (*free)(void *);
	void *(*calloc)(size_t, size_t);
	void *(*realloc)(void *, size_t);
	int (*posix_memalign)(void **, size_t, size_t);
	void *(*aligned_alloc)(size_t, size_t);
	void *(*memalign)(size_t, size_t);
	void *(*valloc)(size_t);
	void *(*pvalloc)(size_t);
	void (*free_sized)(void *, size_t);
	void (*free_aligned_sized)(void *, size_t, size_t);
	void *(*mmap)(void *, size_t, int, int, int, off_t);
	int (*munmap)(void *, size_t);
	void *(*mremap)(void *, size_t, size_t, int, ...);
	pid_t (*fork)(void);
	int (*execve)(const char *, char *const[], char *const[]);
	int (*execv)(const char *, char *const[]);
	int (*execvp)(const char *, char *const[]);
	int (*execvpe)(const char *, char *const[], char *const[]);
	int (*posix_spawn)(pid_t *, const char *, const posix_spawn_file_actions_t *,
			   const posix_spawnattr_t *, char *const[], char *const[]);
	int (*posix_spawnp)(pid_t *, const char *, const posix_spawn_file_actions_t *,
			    const posix_spawnattr_t *, char *const[], char *const[]); /* spawn_fn */
	void (*exit_)(int);
	void (*Exit_)(int);
	int (*dlclose)(void *);
};

/* The probe's whole state. `tracking` gates the hooks; everything behind `wlock` is the writer's. */
static struct {
	struct real_fns real;
	int resolving;         /* inside dlsym: serve allocations from the boot arena */
	int tracking;          /* hooks record allocations */
	int closed;            /* final snapshot written */
	int pid;               /* the process this state belongs to (fork changes it) */
	struct mgp_settings set;
	uint64_t step;         /* atomic: current step */
	uint64_t start_mono, start_real;
	uintptr_t self_lo, self_hi;
	char label[32];
	char path[2304];       /* this process's trace file */
	pthread_mutex_t wlock;
	int oom_noted;
} P = {.wlock = PTHREAD_MUTEX_INITIALIZER};

/* C23 functions that glibc 2.36 does not declare yet. */
void free_sized(void *p, size_t n);
void free_aligned_sized(void *p, size_t align, size_t n);
void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off_t off);

/* ---- bootstrap arena: allocations made while dlsym resolves the real functions ---- */

#define BOOT_SIZE (256u * 1024u)
static char boot_arena[BOOT_SIZE] __attribute__((aligned(64)));
static size_t boot_used;

static void *boot_alloc(size_t n)
{
	/* 16-byte header holding the size, so realloc can copy out of the arena. */
	size_t need = ((n + 15) & ~(size_t)15) + 16;
	if (n > BOOT_SIZE)
		goto nomem;
	size_t off = __atomic_fetch_add(&boot_used, need, __ATOMIC_RELAXED);
	if (off + need > BOOT_SIZE)
		goto nomem;
	memcpy(boot_arena + off, &n, sizeof n);
	return boot_arena + off + 16;
nomem:
	errno = ENOMEM;
	return NULL;
}

static inline int is_boot(const void *p)
{
	return (const char *)p >= boot_arena && (const char *)p < boot_arena + BOOT_SIZE;
}

static void resolve(void)
{
	if (P.real.malloc || P.resolving)
		return;
	P.resolving = 1;
#define R(field, name) *(void **)&P.real.field = dlsym(RTLD_NEXT, name)
	R(calloc, "calloc");
	R(free, "free");
	R(realloc, "realloc");
	R(posix_memalign, "posix_memalign");
	R(aligned_alloc, "aligned_alloc");
	R(memalign, "memalign");
	R(valloc, "valloc");
	R(pvalloc, "pvalloc");
	R(free_sized, "free_sized");
	R(free_aligned_sized, "free_aligned_sized");
	R(mmap, "mmap");
	R(munmap, "munmap");
	R(mremap, "mremap");
	R(fork, "fork");
	R(execve, "execve");
	R(execv, "execv");
	R(execvp, "execvp");
	R(execvpe, "execvpe");
	R(posix_spawn, "posix_spawn");
	R(posix_spawnp, "posix_spawnp");
	R(exit_, "_exit");
	R(Exit_, "_Exit");
	R(dlclose, "dlclose");
	void *m = dlsym(RTLD_NEXT, "malloc");
#undef R
	__atomic_store_n((void **)&P.real.malloc, m, __ATOMIC_RELEASE);
	P.resolving = 0;
	if (!P.real.malloc || !P.real.free || !P.real.calloc || !P.real.realloc) {
		mgp_log("cannot find the real allocator (dlsym failed); aborting");
		abort();
	}
}

/* ---- recording ---- */

static void note_oom(void)
{
	if (__atomic_exchange_n(&P.oom_noted, 1, __ATOMIC_RELAXED))
		return;
	P.tracking = 0;
	mgp_log("out of memory for the probe's own tables: recording stopped, the program runs on");
}

static inline uint32_t birth_now(void)
{
	uint64_t s = __atomic_load_n(&P.step, __ATOMIC_RELAXED);
	return s > UINT32_MAX ? UINT32_MAX : (uint32_t)s;
}

/* Captures the caller's stack (probe frames dropped) and returns its site id. */
static uint32_t capture_site(unsigned kind)
{
	uintptr_t ips[MGC_MAX_FRAMES + SKIP_SLACK];
	int got = unw_backtrace((void **)ips, (int)(P.set.depth + SKIP_SLACK));
	int s = 0;
	while (s < got && ips[s] >= P.self_lo && ips[s] < P.self_hi)
		s++;
	unsigned n = got > s ? (unsigned)(got - s) : 0;
	if (n > P.set.depth)
		n = P.set.depth;
	return mgp_sites_intern(ips + s, n, kind);
}

static void record_alloc(void *p, size_t n, unsigned kind)
{
	int e = errno;
	tls_guard = 1;
	uint32_t site = capture_site(kind);
	uint32_t birth = birth_now();
	if (likely(mgp_live_insert((uint64_t)(uintptr_t)p, n, site, birth) == 0))
		mgp_site_on_alloc(mgp_site_get(site), n, birth);
	else
		note_oom();
	tls_guard = 0;
	errno = e;
}

static inline void account_free(const struct mgp_entry *en)
{
	mgp_site_on_free(mgp_site_get(en->site), en->size, en->birth);
}

static inline void record_free(void *p)
{
	struct mgp_entry en;
	if (mgp_live_remove((uint64_t)(uintptr_t)p, &en))
		account_free(&en);
}

static void mmap_removed(uint32_t site, uint64_t bytes, uint32_t birth, int last)
{
	if (last)
		mgp_site_on_free(mgp_site_get(site), bytes, birth);
	else
		mgp_site_on_shrink(mgp_site_get(site), bytes, birth);
}

static inline uint64_t page_round(size_t n)
{
	return ((uint64_t)n + 4095u) & ~(uint64_t)4095u;
}

/* ---- the malloc family ---- */

EXPORT void *malloc(size_t n)
{
	if (unlikely(!P.real.malloc)) {
		if (P.resolving)
			return boot_alloc(n);
		resolve();
	}
	void *p = P.real.malloc(n);
	if (likely(p != NULL) && P.tracking && !tls_guard)
		record_alloc(p, n, MGC_KIND_HEAP);
	return p;
}

EXPORT void free(void *p)
{
	if (unlikely(!p) || unlikely(is_boot(p)))
		return;
	if (unlikely(!P.real.free))
		resolve();
	if (P.tracking && !tls_guard)
		record_free(p);
	P.real.free(p);
}

EXPORT void *calloc(size_t a, size_t b)
{
	if (unlikely(!P.real.calloc)) {
		if (P.resolving || !P.real.malloc) {
			size_t n;
			if (__builtin_mul_overflow(a, b, &n)) {
				errno = ENOMEM;
				return NULL;
			}
			if (P.resolving)
				return boot_alloc(n); /* the arena is zero and never reused */
		}
		resolve();
	}
	void *p = P.real.calloc(a, b);
	if (likely(p != NULL) && P.tracking && !tls_guard)
		record_alloc(p, a * b, MGC_KIND_HEAP);
	return p;
}

static void *realloc_impl(void *p, size_t n)
{
	if (unlikely(is_boot(p))) {
		size_t old;
		memcpy(&old, (char *)p - 16, sizeof old);
		void *q = malloc(n);
		if (q)
			memcpy(q, p, old < n ? old : n);
		return q;
	}
	if (!P.tracking || tls_guard)
		return P.real.realloc(p, n);
	if (!p) {
		void *q = P.real.realloc(NULL, n);
		if (q)
			record_alloc(q, n, MGC_KIND_HEAP);
		return q;
	}
	/* Take the old block out of the table first: once the real realloc returns, another thread
	 * may be handed the same address. */
	struct mgp_entry en;
	int had = mgp_live_remove((uint64_t)(uintptr_t)p, &en);
	void *q = P.real.realloc(p, n);
	if (!q && n != 0) {
		/* Failed: the old block is untouched. */
		if (had) {
			int e = errno;
			if (mgp_live_insert(en.ptr, en.size, en.site, en.birth) < 0)
				account_free(&en), note_oom();
			errno = e;
		}
		return NULL;
	}
	if (had)
		account_free(&en);
	if (q)
		record_alloc(q, n, MGC_KIND_HEAP);
	return q;
}

EXPORT void *realloc(void *p, size_t n)
{
	if (unlikely(!P.real.realloc)) {
		if (P.resolving) {
			void *q = boot_alloc(n);
			if (q && p) {
				size_t old;
				memcpy(&old, (char *)p - 16, sizeof old);
				memcpy(q, p, old < n ? old : n);
			}
			return q;
		}
		resolve();
	}
	return realloc_impl(p, n);
}

EXPORT void *reallocarray(void *p, size_t a, size_t b)
{
	/* glibc's reallocarray calls realloc through the PLT: doing the overflow check here and
	 * calling our own realloc keeps each call counted once, with identical results. */
	size_t n;
	if (__builtin_mul_overflow(a, b, &n)) {
		errno = ENOMEM;
		return NULL;
	}
	if (unlikely(!P.real.realloc))
		resolve();
	return realloc_impl(p, n);
}

EXPORT int posix_memalign(void **out, size_t align, size_t n)
{
	if (unlikely(!P.real.posix_memalign))
		resolve();
	int r = P.real.posix_memalign(out, align, n);
	if (r == 0 && P.tracking && !tls_guard)
		record_alloc(*out, n, MGC_KIND_HEAP);
	return r;
}

#define ALIGNED_HOOK(name, params, args, size)                                            \
	EXPORT void *name params                                                          \
	{                                                                                 \
		if (unlikely(!P.real.name))                                               \
			resolve();                                                        \
		void *p = P.real.name args;                                               \
		if (likely(p != NULL) && P.tracking && !tls_guard)                        \
			record_alloc(p, size, MGC_KIND_HEAP);                             \
		return p;                                                                 \
	}

ALIGNED_HOOK(aligned_alloc, (size_t align, size_t n), (align, n), n)
ALIGNED_HOOK(memalign, (size_t align, size_t n), (align, n), n)
ALIGNED_HOOK(valloc, (size_t n), (n), n)
ALIGNED_HOOK(pvalloc, (size_t n), (n), n)

EXPORT void free_sized(void *p, size_t n)
{
	if (unlikely(!p) || unlikely(is_boot(p)))
		return;
	if (unlikely(!P.real.free))
		resolve();
	if (P.tracking && !tls_guard)
		record_free(p);
	if (P.real.free_sized)
		P.real.free_sized(p, n);
	else
		P.real.free(p);
}

EXPORT void free_aligned_sized(void *p, size_t align, size_t n)
{
	if (unlikely(!p) || unlikely(is_boot(p)))
		return;
	if (unlikely(!P.real.free))
		resolve();
	if (P.tracking && !tls_guard)
		record_free(p);
	if (P.real.free_aligned_sized)
		P.real.free_aligned_sized(p, align, n);
	else
		P.real.free(p);
}

/* ---- anonymous mappings ---- */

static void after_mmap(void *r, size_t len, int flags)
{
	int e = errno;
	tls_guard = 1;
	uint64_t a = (uint64_t)(uintptr_t)r, n = page_round(len);
	/* MAP_FIXED may replace tracked memory. */
	mgp_mmaps_remove(a, n, mmap_removed);
	if ((flags & MAP_ANONYMOUS) && (flags & MAP_TYPE) == MAP_PRIVATE) {
		uint32_t site = capture_site(MGC_KIND_MMAP);
		uint32_t birth = birth_now();
		if (mgp_mmaps_add(a, n, site, birth) == 0)
			mgp_site_on_alloc(mgp_site_get(site), n, birth);
		else
			note_oom();
	}
	tls_guard = 0;
	errno = e;
}

EXPORT void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	if (unlikely(!P.real.mmap))
		resolve();
	void *r = P.real.mmap(addr, len, prot, flags, fd, off);
	if (r != MAP_FAILED && P.tracking && !tls_guard)
		after_mmap(r, len, flags);
	return r;
}

EXPORT void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	return mmap(addr, len, prot, flags, fd, off);
}

EXPORT int munmap(void *addr, size_t len)
{
	if (unlikely(!P.real.munmap))
		resolve();
	int r = P.real.munmap(addr, len);
	if (r == 0 && P.tracking && !tls_guard) {
		int e = errno;
		mgp_mmaps_remove((uint64_t)(uintptr_t)addr, page_round(len), mmap_removed);
		errno = e;
	}
	return r;
}

EXPORT void *mremap(void *old, size_t old_size, size_t new_size, int flags, ...)
{
	void *new_addr = NULL;
	if (flags & MREMAP_FIXED) {
		va_list ap;
		va_start(ap, flags);
		new_addr = va_arg(ap, void *);
		va_end(ap);
	}
	if (unlikely(!P.real.mremap))
		resolve();
	void *r = P.real.mremap(old, old_size, new_size, flags, new_addr);
	if (r != MAP_FAILED && P.tracking && !tls_guard) {
		int e = errno;
		tls_guard = 1;
		uint64_t gone = mgp_mmaps_remove((uint64_t)(uintptr_t)old, page_round(old_size), mmap_removed);
		if (gone) {
			/* Moved or resized tracked memory: a new allocation at this call site. */
			uint64_t a = (uint64_t)(uintptr_t)r, n = page_round(new_size);
			mgp_mmaps_remove(a, n, mmap_removed);
			uint32_t site = capture_site(MGC_KIND_MMAP);
			uint32_t birth = birth_now();
			if (mgp_mmaps_add(a, n, site, birth) == 0)
				mgp_site_on_alloc(mgp_site_get(site), n, birth);
		}
		tls_guard = 0;
		errno = e;
	}
	return r;
}

/* ---- writing ---- */

/* Runs `fn` with the writer lock, for the process that owns the trace only (a vfork child or a
 * raw clone shares our memory and file but must not write). */
static int writer_enter(void)
{
	if (!P.tracking || P.closed || mgp_getpid() != P.pid)
		return 0;
	tls_guard++;
	pthread_mutex_lock(&P.wlock);
	if (P.closed || !mgp_trace_ok()) {
		pthread_mutex_unlock(&P.wlock);
		tls_guard--;
		return 0;
	}
	return 1;
}

static void writer_leave(void)
{
	pthread_mutex_unlock(&P.wlock);
	tls_guard--;
}

static void write_state(uint32_t flags)
{
	mgp_trace_sync_modules(0);
	mgp_trace_write_stacks();
	mgp_trace_snapshot(__atomic_load_n(&P.step, __ATOMIC_RELAXED), flags, P.label);
	mgp_shm_publish(__atomic_load_n(&P.step, __ATOMIC_RELAXED), flags, P.label);
}

#if MG_HAVE_CUPTI
/* What joining activity records to the callbacks found, as a notice in the trace: the cross-check
 * of the two sources (calls the callbacks missed show up as records without a call). */
static void cupti_notice(void)
{
	struct mgp_cupti_stats st;
	char text[400];
	mgp_cupti_stats(&st);
	if (!st.alloc_records && !st.free_records && !st.callback_only)
		return;
	mgp_fmt(text, sizeof text,
		"CUDA activity records: %llu allocations and %llu releases joined to their calls, %llu calls "
		"without a record, %llu records without a call (%llu bytes), %llu mismatched, %llu dropped "
		"by CUPTI, %llu bytes of static device variables",
		(unsigned long long)st.joined_allocs, (unsigned long long)st.joined_frees,
		(unsigned long long)st.callback_only, (unsigned long long)st.record_only,
		(unsigned long long)st.record_only_bytes, (unsigned long long)st.join_mismatches,
		(unsigned long long)st.dropped_records, (unsigned long long)st.static_bytes);
	mgp_trace_notice(text);
}
#endif

static void finish(uint32_t reason, int status)
{
#if MG_HAVE_CUPTI
	/* Records still in CUPTI's buffers (at exit: the atexit handler has done it already). */
	if (reason == MGC_END__EXIT && P.tracking && !P.closed && mgp_getpid() == P.pid)
		mgp_cupti_flush(1);
#endif
	if (!writer_enter())
		return;
#if MG_HAVE_CUPTI
	cupti_notice();
#endif
	write_state(MGC_SNAP_FINAL); /* changed sites only: the reader carries the rest */
	mgp_trace_perfmap(P.pid);
	mgp_shm_exit(status);
	mgp_trace_end(reason, status);
	mgp_trace_close();
	P.closed = 1;
	writer_leave();
}

static void *sampler_main(void *arg)
{
	(void)arg;
	tls_guard = 1;
	for (;;) {
		struct timespec ts = {P.set.interval_ms / 1000, (long)(P.set.interval_ms % 1000) * 1000000L};
		while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
			;
		tls_guard = 0; /* writer_enter counts */
#if MG_HAVE_CUPTI
		if (P.tracking && !P.closed)
			mgp_cupti_flush(0); /* outside the writer lock: CUPTI may call back here */
#endif
		if (!writer_enter()) {
			tls_guard = 1;
			if (P.closed || !P.tracking)
				return NULL;
			continue;
		}
		write_state(0);
		mgp_trace_flush();
		writer_leave();
		tls_guard = 1;
	}
	return NULL;
}

static void start_sampler(void)
{
	pthread_t t;
	pthread_attr_t attr;
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old); /* the program's signals go to its own threads */
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&attr, 256 * 1024);
	int r = pthread_create(&t, &attr, sampler_main, NULL);
	pthread_attr_destroy(&attr);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (r != 0)
		mgp_log("cannot start the sampler thread (%s): snapshots only at steps and exit",
			strerror(r));
}

/* ---- trace file naming ---- */

static void read_comm(char *out, size_t cap)
{
	char buf[64];
	long n = mgc_read_file("/proc/self/comm", buf, sizeof buf);
	size_t k = 0;
	for (long i = 0; i < n && buf[i] != '\n' && k + 1 < cap; i++) {
		char c = buf[i];
		int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
			 c == '.' || c == '_' || c == '-';
		out[k++] = ok ? c : '_';
	}
	if (k == 0)
		out[k++] = 'p';
	out[k] = 0;
}

static int open_trace(int root, int truncate_root)
{
	struct mgp_process_info info = {.pid = P.pid, .ppid = getppid(),
					.start_realtime_ns = P.start_real, .start_mono_ns = P.start_mono,
					.interval_ms = P.set.interval_ms, .depth = P.set.depth,
					.rank = -1, .local_rank = -1};
	const char *r = getenv("RANK");
	if (!r)
		r = getenv("SLURM_PROCID");
	uint64_t v;
	if (r && mgp_parse_u64(r, &v) == 0)
		info.rank = (int)v;
	r = getenv("LOCAL_RANK");
	if (r && mgp_parse_u64(r, &v) == 0)
		info.local_rank = (int)v;

	int err;
	if (root) {
		mgp_fmt(P.path, sizeof P.path, "%s.mgt", P.set.output);
		err = mgp_trace_open(P.path, !truncate_root, &info);
		if (err != -EEXIST)
			goto done;
	}
	char comm[32];
	read_comm(comm, sizeof comm);
	for (int n = 0; n < 100; n++) {
		const char *base = P.set.output[0] ? P.set.output : P.set.dir;
		const char *sep = P.set.output[0] ? "." : "/mgprobe.";
		if (n == 0)
			mgp_fmt(P.path, sizeof P.path, "%s%s%s.%d.mgt", base, sep, comm, P.pid);
		else
			mgp_fmt(P.path, sizeof P.path, "%s%s%s.%d.%d.mgt", base, sep, comm, P.pid, n);
		err = mgp_trace_open(P.path, 1, &info);
		if (err != -EEXIST)
			break;
	}
done:
	if (err < 0)
		mgp_log("cannot create the trace %s (%s): the program runs unprofiled", P.path,
			strerror(-err));
	return err;
}

/* ---- fork, exec, exit ---- */

static void atfork_prepare(void)
{
	tls_guard++;
	pthread_mutex_lock(&P.wlock);
	mgp_sites_lock();
	mgp_mmaps_lock();
	mgp_live_lock_all();
}

static void atfork_parent(void)
{
	mgp_live_unlock_all();
	mgp_mmaps_unlock();
	mgp_sites_unlock();
	pthread_mutex_unlock(&P.wlock);
#if MG_HAVE_CUPTI
	static int told;
	if (mgp_cupti_tracing() && !__atomic_exchange_n(&told, 1, __ATOMIC_RELAXED))
		mgp_log("children forked after CUDA started trace host memory only (CUDA cannot be used "
			"after fork); this process's CUDA tracing goes on");
#endif
	tls_guard--;
}

static void atfork_child(void)
{
	mgp_live_unlock_all();
	mgp_mmaps_unlock();
	mgp_sites_unlock();
	pthread_mutex_unlock(&P.wlock);
	int had_cuda = 0;
#if MG_HAVE_CUPTI
	had_cuda = mgp_cupti_atfork_child(); /* before the child's first snapshot */
#endif
	P.pid = mgp_getpid();
	mgp_trace_forget();
	mgp_shm_forget();
	if (!P.tracking || P.closed || P.set.no_children) {
		P.tracking = 0;
		tls_guard--;
		return;
	}
	/* The child's own file: the inherited live allocations are live in the child too. */
	P.start_mono = mgp_now_ns();
	P.start_real = mgp_real_ns();
	if (open_trace(0, 0) < 0) {
		P.tracking = 0;
		tls_guard--;
		return;
	}
	if (had_cuda)
		mgp_trace_notice("CUDA memory is not traced in this forked child: CUDA cannot be used after "
				 "fork, and the parent's device memory is not the child's");
	mgp_trace_sync_modules(1);
	mgp_trace_write_stacks();
	mgp_trace_snapshot(__atomic_load_n(&P.step, __ATOMIC_RELAXED), MGC_SNAP_FULL, P.label);
	mgp_trace_flush();
	mgp_shm_open(&(struct mgp_shm_info){P.start_real, P.start_mono, P.set.interval_ms, P.set.depth, P.set.max_sites});
	mgp_shm_publish(__atomic_load_n(&P.step, __ATOMIC_RELAXED), MGC_SNAP_FULL, P.label);
	start_sampler();
	tls_guard--;
}

/* A child this process made: recorded in its trace and listed in its live segment. */
static void note_child(pid_t pid, uint32_t how)
{
	if (pid > 0 && writer_enter()) {
		mgp_trace_child(pid, how);
		mgp_trace_flush();
		mgp_shm_child(pid);
		writer_leave();
	}
}

EXPORT pid_t fork(void)
{
	if (unlikely(!P.real.fork))
		resolve();
	pid_t r = P.real.fork();
	note_child(r, MGC_CHILD_FORK);
	return r;
}

typedef int (*spawn_fn)(pid_t *, const char *, const posix_spawn_file_actions_t *,
			const posix_spawnattr_t *, char *const[], char *const[]);

/* posix_spawn and posix_spawnp: the real call, then the child noted in our trace. */
static int spawn_and_note(spawn_fn real, pid_t *pid, const char *target,
			  const posix_spawn_file_actions_t *fa, const posix_spawnattr_t *attr,
			  char *const argv[], char *const envp[])
{
	pid_t local;
	pid_t *pp = pid ? pid : &local;
	int r = real(pp, target, fa, attr, argv, envp);
	if (r == 0)
		note_child(*pp, MGC_CHILD_SPAWN);
	return r;
}

EXPORT int posix_spawn(pid_t *pid, const char *path, const posix_spawn_file_actions_t *fa,
		       const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
	if (unlikely(!P.real.posix_spawn))
		resolve();
	return spawn_and_note(P.real.posix_spawn, pid, path, fa, attr, argv, envp);
}

EXPORT int posix_spawnp(pid_t *pid, const char *file, const posix_spawn_file_actions_t *fa,
			const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
	if (unlikely(!P.real.posix_spawnp))
		resolve();
	return spawn_and_note(P.real.posix_spawnp, pid, file, fa, attr, argv, envp);
}

static void before_exec(void)
{
	if (!writer_enter())
		return;
	write_state(MGC_SNAP_FINAL); /* changed sites only: the reader carries the rest */
	mgp_shm_exec();
	mgp_trace_end(MGC_END_EXEC, 0);
	mgp_trace_flush();
	writer_leave();
}

EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
	if (unlikely(!P.real.execve))
		resolve();
	before_exec();
	return P.real.execve(path, argv, envp);
}

EXPORT int execv(const char *path, char *const argv[])
{
	if (unlikely(!P.real.execv))
		resolve();
	before_exec();
	return P.real.execv(path, argv);
}

EXPORT int execvp(const char *file, char *const argv[])
{
	if (unlikely(!P.real.execvp))
		resolve();
	before_exec();
	return P.real.execvp(file, argv);
}

EXPORT int execvpe(const char *file, char *const argv[], char *const envp[])
{
	if (unlikely(!P.real.execvpe))
		resolve();
	before_exec();
	return P.real.execvpe(file, argv, envp);
}

/* The execl family takes its arguments inline: collect them and go through the execv hooks above
 * (glibc's own execl calls an internal execve that no hook sees). */
static char **collect_args(const char *arg0, va_list ap, size_t *n_out, char *const **envp_out,
			   int with_env)
{
	va_list cp;
	size_t n = 0; /* arguments before the NULL */
	if (arg0) {
		va_copy(cp, ap);
		n = 1;
		while (va_arg(cp, const char *))
			n++;
		va_end(cp);
	}
	size_t bytes = (n + 1) * sizeof(char *);
	char **argv = mgp_os_alloc(bytes);
	if (!argv)
		return NULL;
	argv[0] = (char *)arg0;
	for (size_t i = 1; i <= n && arg0; i++)
		argv[i] = va_arg(ap, char *); /* the last one read is the NULL */
	if (with_env)
		*envp_out = va_arg(ap, char *const *);
	*n_out = bytes;
	return argv;
}

enum exec_how { EXEC_V, EXEC_VP, EXEC_VE };

static int exec_inline(enum exec_how how, const char *target, const char *arg, va_list ap)
{
	size_t bytes;
	char *const *envp = NULL;
	char **argv = collect_args(arg, ap, &bytes, &envp, how == EXEC_VE);
	if (!argv) {
		errno = ENOMEM;
		return -1;
	}
	int r = how == EXEC_V    ? execv(target, argv)
		: how == EXEC_VP ? execvp(target, argv)
				 : execve(target, argv, envp);
	int e = errno; /* only on failure: a successful exec does not return */
	mgp_os_free(argv, bytes);
	errno = e;
	return r;
}

EXPORT int execl(const char *path, const char *arg, ...)
{
	va_list ap;
	va_start(ap, arg);
	int r = exec_inline(EXEC_V, path, arg, ap);
	va_end(ap);
	return r;
}

EXPORT int execlp(const char *file, const char *arg, ...)
{
	va_list ap;
	va_start(ap, arg);
	int r = exec_inline(EXEC_VP, file, arg, ap);
	va_end(ap);
	return r;
}

EXPORT int execle(const char *path, const char *arg, ...)
{
	va_list ap;
	va_start(ap, arg);
	int r = exec_inline(EXEC_VE, path, arg, ap);
	va_end(ap);
	return r;
}

EXPORT void _exit(int status)
{
	if (unlikely(!P.real.exit_))
		resolve();
	finish(MGC_END__EXIT, status);
	P.real.exit_(status);
	__builtin_unreachable();
}

EXPORT void _Exit(int status)
{
	if (unlikely(!P.real.Exit_))
		resolve();
	finish(MGC_END__EXIT, status);
	P.real.Exit_(status);
	__builtin_unreachable();
}

EXPORT int dlclose(void *handle)
{
	if (unlikely(!P.real.dlclose))
		resolve();
	/* Stacks that point into the library are written while it is still in the module map. */
	if (writer_enter()) {
		mgp_trace_sync_modules(0);
		mgp_trace_write_stacks();
		writer_leave();
	}
	return P.real.dlclose(handle);
}

/* ---- the step API ---- */

EXPORT void mgprobe_step(uint64_t step)
{
	__atomic_store_n(&P.step, step, __ATOMIC_RELAXED);
	if (!writer_enter())
		return;
	mgp_trace_step(step);
	write_state(MGC_SNAP_STEP);
	mgp_trace_flush();
	writer_leave();
}

EXPORT void mgprobe_label(const char *label)
{
	if (!label || !writer_enter())
		return;
	size_t n = strnlen(label, sizeof P.label - 1);
	memcpy(P.label, label, n);
	P.label[n] = 0;
	mgp_trace_label(__atomic_load_n(&P.step, __ATOMIC_RELAXED), P.label);
	mgp_trace_flush();
	writer_leave();
}

EXPORT void mgprobe_snapshot(void)
{
	if (!writer_enter())
		return;
	write_state(0);
	mgp_trace_flush();
	writer_leave();
}

EXPORT int mgprobe_active(void)
{
	return P.tracking && !P.closed;
}

#if MG_HAVE_CUPTI
/* ---- CUDA: the driver calls InitializeInjection at cuInit (CUDA_INJECTION64_PATH) ---- */

static int cupti_active(void)
{
	return P.tracking && !P.closed && mgp_getpid() == P.pid;
}

static uint32_t cupti_capture(unsigned kind)
{
	return capture_site(kind);
}

static void cupti_guard(int on)
{
	tls_guard += on ? 1 : -1;
}

static const struct mgp_cupti_sink cupti_sink = {cupti_active, cupti_capture, birth_now, cupti_guard,
						 note_oom};

/* Registered at cuInit, so it runs before the library destructors (libcupti's among them) and
 * before the probe's own: the last activity records reach the final snapshot. */
static void cupti_at_exit(void)
{
	if (P.tracking && !P.closed && mgp_getpid() == P.pid) {
		tls_guard++;
		mgp_cupti_flush(1);
		tls_guard--;
	}
}

EXPORT int InitializeInjection(void)
{
	static int done;
	if (__atomic_exchange_n(&done, 1, __ATOMIC_ACQ_REL) || !P.tracking)
		return 1;
	tls_guard++;
	static const struct mgp_trace_cuda cuda = {mgp_cupti_pool_cells, mgp_cupti_take_devsites};
	if (mgp_cupti_init(&cupti_sink) == 0 && mgp_cupti_start() == 0) {
		pthread_mutex_lock(&P.wlock);
		mgp_trace_set_cuda(&cuda);
		pthread_mutex_unlock(&P.wlock);
		atexit(cupti_at_exit);
	}
	tls_guard--;
	return 1; /* CUPTI failing must never fail cuInit */
}
#endif

/* ---- start-up and configuration ---- */

/* Removes libmgprobe from LD_PRELOAD so exec'd programs run without it (--no-children). */
static void drop_preload(void)
{
	const char *lp = getenv("LD_PRELOAD");
	char keep[4096];
	size_t k = 0;
	if (!lp)
		return;
	const char *p = lp;
	while (*p) {
		size_t n = strcspn(p, ": ");
		if (n && !(n >= 14 && memcmp(p + n - 14, "libmgprobe.so", 13) == 0) &&
		    !(n >= 13 && memcmp(p + n - 13, "libmgprobe.so", 13) == 0) && k + n + 2 < sizeof keep) {
			if (k)
				keep[k++] = ':';
			memcpy(keep + k, p, n);
			k += n;
		}
		p += n;
		while (*p == ':' || *p == ' ')
			p++;
	}
	keep[k] = 0;
	if (k)
		setenv("LD_PRELOAD", keep, 1);
	else
		unsetenv("LD_PRELOAD");
	const char *inj = getenv("CUDA_INJECTION64_PATH"); /* the driver would load the probe too */
	if (inj && strstr(inj, "libmgprobe.so"))
		unsetenv("CUDA_INJECTION64_PATH");
}

__attribute__((constructor)) static void mgp_init(void)
{
	resolve();
	tls_guard++;
	P.pid = mgp_getpid();
	P.start_mono = mgp_now_ns();
	P.start_real = mgp_real_ns();
	if (mgp_settings_read(&P.set) < 0)
		goto out;
	if (P.set.no_children)
		drop_preload();
	if (mgp_sites_init(P.set.max_sites) < 0 || mgp_trace_init(P.set.max_sites) < 0) {
		mgp_log("out of memory for the probe's tables: the program runs unprofiled");
		goto out;
	}
	mgp_trace_self_range((const void *)&mgp_init, &P.self_lo, &P.self_hi);

	/* Which file: the exact -o name for the launched process, derived names for the rest. */
	int root = 0, truncate_root = 0;
	if (P.set.output[0]) {
		if (P.set.output_pid < 0) {
			char buf[24];
			mgp_fmt(buf, sizeof buf, "%d", P.pid);
			setenv("MGPROBE_OUTPUT_PID", buf, 1);
			root = truncate_root = 1;
		} else if (P.set.output_pid == P.pid) {
			root = 1;
		}
	}
	if (open_trace(root, truncate_root) < 0)
		goto out;
	mgp_trace_sync_modules(1);
	mgp_shm_open(&(struct mgp_shm_info){P.start_real, P.start_mono, P.set.interval_ms, P.set.depth, P.set.max_sites});
	P.tracking = 1;
	write_state(MGC_SNAP_FULL);
	mgp_trace_flush();
	pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
	start_sampler();
out:
	tls_guard--;
}

__attribute__((destructor)) static void mgp_fini(void)
{
	finish(MGC_END_EXIT, 0);
}
