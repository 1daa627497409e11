/* SPDX-License-Identifier: MIT */
/* mgp_os.h: what the probe needs from the OS, callable from inside malloc: raw-syscall memory,
 * a tiny formatter into caller buffers, messages written with write(2), clocks. The /proc readers
 * it shares with the readers are libmgformat's mgc_proc.h. Nothing here may call malloc, stdio or
 * any hooked function. */
#ifndef MGP_OS_H
#define MGP_OS_H

#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/* mmap(2) as a raw system call, bypassing the probe's own mmap hook. NULL on failure (errno is
 * not set). */
void *mgp_os_map(void *addr, size_t len, int prot, int flags, int fd, long off);

/* Anonymous memory straight from the kernel, zeroed, with mgp_os_map. NULL on failure, or when
 * it would take the probe past its share of the address-space limit (mgp_os_budget_init). Every
 * byte the probe maps for itself goes through these two, so they keep the count. */
void *mgp_os_alloc(size_t size);
void mgp_os_free(void *p, size_t size);

/* Reads RLIMIT_AS once at start-up: with a limit, the probe keeps its own mappings within
 * MGP_OS_SHARE_DIV-th of it (a small share, so the program keeps the rest), else unbounded.
 * Returns the budget in bytes (UINT64_MAX: none). */
#define MGP_OS_SHARE_DIV 16u
uint64_t mgp_os_budget_init(void);

/* Bytes the probe holds now from mgp_os_alloc, the most it held, and its budget. */
uint64_t mgp_os_mapped(void);
uint64_t mgp_os_peak(void);
uint64_t mgp_os_budget(void);

/* Gives the pages of [p, p+size) back to the kernel (MADV_DONTNEED): they read as zero again
 * and are no longer resident; the mapping and the count stay. */
void mgp_os_discard(void *p, size_t size);

/* snprintf subset: %s %c %d %u %ld %lu %lld %llu %zu %x %lx %llx %p %%. Always NUL-terminates;
 * returns the length written. */
size_t mgp_vfmt(char *buf, size_t cap, const char *fmt, va_list ap);
size_t mgp_fmt(char *buf, size_t cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* One line "mgprobe: ...\n" on stderr, written with a single write(2). */
void mgp_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* The file-size limit (RLIMIT_FSIZE) is one cause behind both outputs failing, so it is said once
 * per process: the first caller prints "mgprobe: the file-size limit (8 KiB, ulimit -f) " and
 * then its own words (what the limit stops); later calls print nothing. */
void mgp_log_fsize(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Parses a decimal unsigned; returns 0 on success, -EINVAL otherwise. */
int mgp_parse_u64(const char *s, uint64_t *out);

/* A file-size limit (RLIMIT_FSIZE) answers a write or fallocate past it with SIGXFSZ, which kills
 * by default. The probe's own file operations go between these two: hold blocks SIGXFSZ on this
 * thread; release restores the mask and, when `raised` (the operation failed with EFBIG), first
 * takes the SIGXFSZ it queued, unless the thread had it blocked already. The limit then stops the
 * trace, never the program. */
void mgp_xfsz_hold(sigset_t *old);
void mgp_xfsz_release(const sigset_t *old, int raised);

uint64_t mgp_now_ns(void);     /* CLOCK_MONOTONIC */
uint64_t mgp_real_ns(void);    /* CLOCK_REALTIME */
uint64_t mgp_thread_cpu_ns(void); /* CLOCK_THREAD_CPUTIME_ID: the calling thread's CPU time */
int mgp_getpid(void);          /* the raw syscall: correct after fork and in vfork children */

#endif /* MGP_OS_H */
