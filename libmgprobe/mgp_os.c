/* SPDX-License-Identifier: MIT */
/* mgp_os.c: OS access that is safe inside the allocator hooks: raw syscalls only, no malloc, no
 * stdio, no locks. Messages are formatted into a stack buffer and written with one write(2). */
#include "mgp_os.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

void *mgp_os_map(void *addr, size_t len, int prot, int flags, int fd, long off)
{
	long r = syscall(SYS_mmap, addr, len, prot, flags, fd, off);
	if (r < 0 && r > -4096)
		return NULL;
	return (void *)r;
}

/* What the probe has mapped for itself, and how much it may (atomics: any thread allocates). */
static struct {
	uint64_t mapped;
	uint64_t peak;
	uint64_t budget;
} os_mem = {0, 0, UINT64_MAX};

uint64_t mgp_os_budget_init(void)
{
	struct rlimit rl;
	uint64_t b = UINT64_MAX;
	if (getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
		b = (uint64_t)rl.rlim_cur / MGP_OS_SHARE_DIV;
	__atomic_store_n(&os_mem.budget, b, __ATOMIC_RELAXED);
	return b;
}

uint64_t mgp_os_mapped(void)
{
	return __atomic_load_n(&os_mem.mapped, __ATOMIC_RELAXED);
}

uint64_t mgp_os_peak(void)
{
	return __atomic_load_n(&os_mem.peak, __ATOMIC_RELAXED);
}

uint64_t mgp_os_budget(void)
{
	return __atomic_load_n(&os_mem.budget, __ATOMIC_RELAXED);
}

static inline size_t page_up(size_t n)
{
	return (n + 4095u) & ~(size_t)4095u;
}

void *mgp_os_alloc(size_t size)
{
	size_t len = page_up(size);
	uint64_t now = __atomic_add_fetch(&os_mem.mapped, len, __ATOMIC_RELAXED);
	void *p = NULL;
	if (len && now <= __atomic_load_n(&os_mem.budget, __ATOMIC_RELAXED))
		p = mgp_os_map(NULL, len, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (!p) {
		__atomic_sub_fetch(&os_mem.mapped, len, __ATOMIC_RELAXED);
		return NULL;
	}
	uint64_t peak = __atomic_load_n(&os_mem.peak, __ATOMIC_RELAXED);
	while (now > peak && !__atomic_compare_exchange_n(&os_mem.peak, &peak, now, 1, __ATOMIC_RELAXED,
							  __ATOMIC_RELAXED))
		;
	return p;
}

void mgp_os_free(void *p, size_t size)
{
	if (!p)
		return;
	syscall(SYS_munmap, p, size);
	__atomic_sub_fetch(&os_mem.mapped, page_up(size), __ATOMIC_RELAXED);
}

void mgp_os_discard(void *p, size_t size)
{
	if (p && size)
		syscall(SYS_madvise, p, size, MADV_DONTNEED);
}

/* The formatter writes what fits and counts the rest, as snprintf does: n is the length so far. */
static size_t put_c(char *buf, size_t cap, size_t n, char c)
{
	if (n + 1 < cap)
		buf[n] = c;
	return n + 1;
}

static size_t put_u(char *buf, size_t cap, size_t n, unsigned long long v, unsigned base)
{
	char tmp[24];
	size_t k = 0;
	do {
		unsigned d = (unsigned)(v % base);
		tmp[k++] = (char)(d < 10 ? '0' + d : 'a' + d - 10);
		v /= base;
	} while (v && k < sizeof tmp);
	while (k > 0)
		n = put_c(buf, cap, n, tmp[--k]);
	return n;
}

/* A conversion's flags: "%.*s" precision, and the length modifiers l, ll, z. */
struct conv {
	long prec; /* -1: none */
	int lng, sz;
};

/* One conversion of letter c; returns the new length, or (size_t)-1 for an unknown letter. */
static size_t put_conv(char *buf, size_t cap, size_t n, char c, const struct conv *cv, va_list *ap)
{
	switch (c) {
	case 's': {
		const char *s = va_arg(*ap, const char *);
		long prec = cv->prec;
		for (s = s ? s : "(null)"; *s && prec != 0; s++, prec--)
			n = put_c(buf, cap, n, *s);
		return n;
	}
	case 'c':
		return put_c(buf, cap, n, (char)va_arg(*ap, int));
	case 'd': {
		long long v = cv->lng >= 2 ? va_arg(*ap, long long)
			      : cv->lng    ? va_arg(*ap, long)
					   : va_arg(*ap, int);
		unsigned long long u = (unsigned long long)v;
		if (v < 0) {
			n = put_c(buf, cap, n, '-');
			u = 0ull - u;
		}
		return put_u(buf, cap, n, u, 10);
	}
	case 'u':
	case 'x': {
		unsigned long long v = cv->sz ? va_arg(*ap, size_t)
				       : cv->lng >= 2 ? va_arg(*ap, unsigned long long)
				       : cv->lng ? va_arg(*ap, unsigned long)
						 : va_arg(*ap, unsigned);
		return put_u(buf, cap, n, v, c == 'x' ? 16 : 10);
	}
	case 'p':
		n = put_c(buf, cap, put_c(buf, cap, n, '0'), 'x');
		return put_u(buf, cap, n, (uintptr_t)va_arg(*ap, void *), 16);
	case '%':
		return put_c(buf, cap, n, '%');
	default:
		return (size_t)-1;
	}
}

size_t mgp_vfmt(char *buf, size_t cap, const char *fmt, va_list ap)
{
	size_t n = 0;
	va_list args;
	if (cap == 0)
		return 0;
	va_copy(args, ap);
	for (const char *f = fmt; *f; f++) {
		if (*f != '%') {
			n = put_c(buf, cap, n, *f);
			continue;
		}
		struct conv cv = {.prec = -1};
		if (*++f == '.' && f[1] == '*') {
			cv.prec = va_arg(args, int);
			f += 2;
		}
		for (; *f == 'l'; f++)
			cv.lng++;
		if (*f == 'z') {
			cv.sz = 1;
			f++;
		}
		size_t r = put_conv(buf, cap, n, *f, &cv, &args);
		if (r == (size_t)-1)
			break; /* an unknown conversion ends the text */
		n = r;
	}
	va_end(args);
	buf[n < cap ? n : cap - 1] = 0;
	return n < cap ? n : cap - 1;
}

size_t mgp_fmt(char *buf, size_t cap, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	size_t n = mgp_vfmt(buf, cap, fmt, ap);
	va_end(ap);
	return n;
}

/* SIGXFSZ is held around the write: a stderr redirected to a file past the file-size limit must
 * not kill the program. */
void mgp_log(const char *fmt, ...)
{
	char buf[512];
	int saved = errno;
	memcpy(buf, "mgprobe: ", 9);
	va_list ap;
	va_start(ap, fmt);
	size_t n = 9 + mgp_vfmt(buf + 9, sizeof buf - 10, fmt, ap);
	va_end(ap);
	buf[n++] = '\n';
	sigset_t old;
	mgp_xfsz_hold(&old);
	ssize_t w = write(2, buf, n);
	mgp_xfsz_release(&old, w < 0 && errno == EFBIG);
	errno = saved;
}

static int fsize_said;

void mgp_log_fsize(const char *fmt, ...)
{
	if (__atomic_exchange_n(&fsize_said, 1, __ATOMIC_RELAXED))
		return;
	static const char *const units[] = {"bytes", "KiB", "MiB", "GiB", "TiB"};
	struct rlimit rl;
	unsigned long long v = getrlimit(RLIMIT_FSIZE, &rl) == 0 ? rl.rlim_cur : 0;
	unsigned u = 0;
	while (u < 4 && v >= 1024 && v % 1024 == 0)
		v /= 1024, u++;
	char what[400];
	va_list ap;
	va_start(ap, fmt);
	mgp_vfmt(what, sizeof what, fmt, ap);
	va_end(ap);
	mgp_log("the file-size limit (%llu %s, ulimit -f) %s", v, units[u], what);
}

int mgp_parse_u64(const char *s, uint64_t *out)
{
	uint64_t v = 0;
	if (!s || !*s)
		return -EINVAL;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return -EINVAL;
		uint64_t d = (uint64_t)(*s - '0');
		if (v > (UINT64_MAX - d) / 10)
			return -EINVAL;
		v = v * 10 + d;
	}
	*out = v;
	return 0;
}

void mgp_xfsz_hold(sigset_t *old)
{
	sigset_t x;
	sigemptyset(&x);
	sigaddset(&x, SIGXFSZ);
	pthread_sigmask(SIG_BLOCK, &x, old);
}

void mgp_xfsz_release(const sigset_t *old, int raised)
{
	if (raised && !sigismember(old, SIGXFSZ)) {
		sigset_t x;
		struct timespec zero = {0, 0};
		sigemptyset(&x);
		sigaddset(&x, SIGXFSZ);
		sigtimedwait(&x, NULL, &zero);
	}
	pthread_sigmask(SIG_SETMASK, old, NULL);
}

uint64_t mgp_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t mgp_thread_cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t mgp_real_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int mgp_getpid(void)
{
	return (int)syscall(SYS_getpid);
}
