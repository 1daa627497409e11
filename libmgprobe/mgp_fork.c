/* SPDX-License-Identifier: MIT */
/* mgp_fork.c: the fork, posix_spawn and exec hooks and the fork handlers (see mgp_fork.h). The
 * handlers hold every probe lock across fork, so the child never inherits a table or file in the
 * middle of a change. The hooks return exactly what the real functions return, errno included. */
#define _GNU_SOURCE
#include "mgp_fork.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <unistd.h>

#include "mgc_format.h"
#include "mgp_cuda.h"
#include "mgp_hooks.h"
#include "mgp_life.h"
#include "mgp_live.h"
#include "mgp_mmaps.h"
#include "mgp_os.h"
#include "mgp_sample.h"
#include "mgp_shm.h"
#include "mgp_sites.h"
#include "mgp_state.h"
#include "mgp_thread.h"
#include "mgp_trace.h"
#include "mgp_unwind.h"
#include "mgp_writer.h"

/* ---- fork handlers ---- */

static void unlock_all(void)
{
	mgp_live_unlock_all();
	mgp_mmaps_unlock();
	mgp_sites_unlock();
	mgp_threads_unlock_all();
	mgp_writer_unlock();
}

/* In the order a recording thread takes them: its record, then the sites, mappings and live-table
 * locks (the writer lock is taken by nobody who holds one of those). */
static void atfork_prepare(void)
{
	mgp_guard_enter();
	mgp_writer_lock();
	mgp_life_fork_prepare();
	mgp_threads_lock_all();
	mgp_sites_lock();
	mgp_mmaps_lock();
	mgp_live_lock_all();
}

static void atfork_parent(void)
{
	mgp_sample_forked(0); /* under the fork's locks: two threads forking count one at a time */
	unlock_all();
	mgp_cuda_fork_parent();
	mgp_guard_leave();
}

static void atfork_child(void)
{
	unlock_all();
	mgp_sample_forked(1);
	mgp_unwind_forked();
	mgp_life_forked(mgp_cuda_fork_child()); /* CUDA first: before the child's first snapshot */
	mgp_guard_leave();
}

void mgp_fork_init(void)
{
	pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
}

/* ---- children ---- */

/* A child this process made: recorded in its trace and listed in its live segment. */
static void note_child(pid_t pid, uint32_t how)
{
	if (pid > 0 && mgp_writer_enter()) {
		mgp_trace_child(pid, how);
		mgp_trace_flush();
		mgp_shm_child(pid);
		mgp_writer_leave();
	}
}

MGP_EXPORT pid_t fork(void)
{
	pid_t r = MGP_REAL(fork)();
	note_child(r, MGC_CHILD_FORK);
	return r;
}

/* posix_spawn and posix_spawnp: the real call, then the child noted in our trace. */
static int spawn_and_note(__typeof__(mgp_real.posix_spawn) real, pid_t *pid, const char *target,
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

MGP_EXPORT int posix_spawn(pid_t *pid, const char *path, const posix_spawn_file_actions_t *fa,
			   const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
	return spawn_and_note(MGP_REAL(posix_spawn), pid, path, fa, attr, argv, envp);
}

MGP_EXPORT int posix_spawnp(pid_t *pid, const char *file, const posix_spawn_file_actions_t *fa,
			    const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
	return spawn_and_note(MGP_REAL(posix_spawnp), pid, file, fa, attr, argv, envp);
}

/* ---- exec ---- */

/* The trace of this image ends before the new one starts (if the exec fails, the process runs on
 * with its trace ended and its segment gone). */
static void before_exec(void)
{
	if (!mgp_writer_enter())
		return;
	mgp_writer_snapshot(MGC_SNAP_FINAL); /* changed sites only: the reader carries the rest */
	mgp_shm_exec();
	mgp_trace_end(MGC_END_EXEC, 0);
	mgp_trace_flush();
	mgp_writer_leave();
}

MGP_EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
	__typeof__(mgp_real.execve) real = MGP_REAL(execve);
	before_exec();
	return real(path, argv, envp);
}

MGP_EXPORT int execv(const char *path, char *const argv[])
{
	__typeof__(mgp_real.execv) real = MGP_REAL(execv);
	before_exec();
	return real(path, argv);
}

MGP_EXPORT int execvp(const char *file, char *const argv[])
{
	__typeof__(mgp_real.execvp) real = MGP_REAL(execvp);
	before_exec();
	return real(file, argv);
}

MGP_EXPORT int execvpe(const char *file, char *const argv[], char *const envp[])
{
	__typeof__(mgp_real.execvpe) real = MGP_REAL(execvpe);
	before_exec();
	return real(file, argv, envp);
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

/* execl, execlp, execle: the arguments inline, the target a path or a file name. */
#define EXEC_INLINE(name, how)                                                                    \
	MGP_EXPORT int name(const char *target, const char *arg, ...)                             \
	{                                                                                         \
		va_list ap;                                                                       \
		va_start(ap, arg);                                                                \
		int r = exec_inline(how, target, arg, ap);                                        \
		va_end(ap);                                                                       \
		return r;                                                                         \
	}

EXEC_INLINE(execl, EXEC_V)
EXEC_INLINE(execlp, EXEC_VP)
EXEC_INLINE(execle, EXEC_VE)
