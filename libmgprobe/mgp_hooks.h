/* SPDX-License-Identifier: MIT */
/* mgp_hooks.h: the list of every libc function the probe interposes and calls on to, written once
 * (MGP_HOOKS), from which come the table of the real functions, their lookup and the declarations;
 * mgp_hooks.c holds the lookup and the allocation hooks, mgp_fork.c, mgp_life.c and mgp_tstack.c
 * the others.
 * A hook must return exactly what the real function returns, errno included, and must never call
 * stdio, dlsym (outside mgp_resolve) or a blocking lock on its fast path. */
#ifndef MGP_HOOKS_H
#define MGP_HOOKS_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stddef.h>
#include <sys/types.h>

#define MGP_EXPORT __attribute__((visibility("default")))
#define mgp_likely(x) __builtin_expect(!!(x), 1)
#define mgp_unlikely(x) __builtin_expect(!!(x), 0)

/* X(return type, name, parameter types): the interposed functions whose real version the probe
 * calls. The exported wrappers that call other hooks instead (reallocarray, mmap64, execl,
 * execlp, execle) are not here. The declarations below let the compiler check every entry
 * against libc's own, and declare the C23 ones glibc 2.36 lacks (free_sized,
 * free_aligned_sized). */
#define MGP_HOOKS(X)                                                                               \
	X(void *, calloc, (size_t, size_t))                                                         \
	X(void, free, (void *))                                                                     \
	X(void *, realloc, (void *, size_t))                                                        \
	X(int, posix_memalign, (void **, size_t, size_t))                                           \
	X(void *, aligned_alloc, (size_t, size_t))                                                  \
	X(void *, memalign, (size_t, size_t))                                                       \
	X(void *, valloc, (size_t))                                                                 \
	X(void *, pvalloc, (size_t))                                                                \
	X(void, free_sized, (void *, size_t))                                                       \
	X(void, free_aligned_sized, (void *, size_t, size_t))                                       \
	X(void *, mmap, (void *, size_t, int, int, int, off_t))                                     \
	X(int, munmap, (void *, size_t))                                                            \
	X(void *, mremap, (void *, size_t, size_t, int, ...))                                       \
	X(pid_t, fork, (void))                                                                      \
	X(int, execve, (const char *, char *const[], char *const[]))                               \
	X(int, execv, (const char *, char *const[]))                                                \
	X(int, execvp, (const char *, char *const[]))                                               \
	X(int, execvpe, (const char *, char *const[], char *const[]))                               \
	X(int, posix_spawn, (pid_t *, const char *, const posix_spawn_file_actions_t *,             \
			     const posix_spawnattr_t *, char *const[], char *const[]))              \
	X(int, posix_spawnp, (pid_t *, const char *, const posix_spawn_file_actions_t *,            \
			      const posix_spawnattr_t *, char *const[], char *const[]))             \
	X(void, _exit, (int))                                                                       \
	X(void, _Exit, (int))                                                                       \
	X(int, dlclose, (void *))                                                                   \
	X(int, sigaltstack, (const stack_t *, stack_t *))                                           \
	X(int, pthread_create, (pthread_t *, const pthread_attr_t *, void *(*)(void *), void *))    \
	X(void *, malloc, (size_t)) /* last: resolved last, it says the table is complete */

#define MGP_HOOK_DECLARE(ret, name, params) ret name params;
#define MGP_HOOK_POINTER(ret, name, params) ret(*name) params;

MGP_HOOKS(MGP_HOOK_DECLARE)

/* The real functions, found with dlsym(RTLD_NEXT) by mgp_resolve. */
struct mgp_real_fns {
	MGP_HOOKS(MGP_HOOK_POINTER)
};
extern struct mgp_real_fns mgp_real;

/* Fills mgp_real (once; the constructor calls it first, and any hook that runs before). While
 * dlsym works, allocations are served from a static boot arena that free ignores. Aborts with one
 * line when libc's allocator cannot be found: nothing could run then. */
void mgp_resolve(void);

/* The real `name`, looked up first if this is the probe's first call. */
#define MGP_REAL(name) (mgp_unlikely(!mgp_real.name) ? mgp_resolve(), mgp_real.name : mgp_real.name)

#endif /* MGP_HOOKS_H */
