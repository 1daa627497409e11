/* SPDX-License-Identifier: MIT */
/* mgp_life.c: start-up, the trace's naming, a fork child's restart and the end of recording (see
 * mgp_life.h), plus the _exit, _Exit and dlclose hooks. Any failure at start-up leaves the program
 * running unprofiled with one line; nothing here may call malloc or stdio once hooks record. */
#define _GNU_SOURCE
#include "mgp_life.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <ucontext.h>
#include <unistd.h>

#include "mgc_format.h"
#include "mgc_proc.h"
#include "mgp_capture.h"
#include "mgp_cuda.h"
#include "mgp_fork.h"
#include "mgp_hooks.h"
#include "mgp_modules.h"
#include "mgp_os.h"
#include "mgp_python.h"
#include "mgp_record.h"
#include "mgp_sample.h"
#include "mgp_sampler.h"
#include "mgp_settings.h"
#include "mgp_shm.h"
#include "mgp_sites.h"
#include "mgp_snapshot.h"
#include "mgp_state.h"
#include "mgp_tcache.h"
#include "mgp_step.h"
#include "mgp_thread.h"
#include "mgp_trace.h"
#include "mgp_unwind.h"
#include "mgp_writer.h"

/* Set by the constructor (and, but for the settings, again in a fork child). */
static struct {
	struct mgp_settings set;
	struct mgp_process proc; /* who this process is, as both outputs are told */
	char path[2304];         /* this process's trace file */
} life;

/* ---- the trace file's name ---- */

/* The command name as a file-name part: anything but [A-Za-z0-9._-] becomes '_'. */
static void safe_comm(char *out, size_t cap)
{
	size_t k = 0;
	for (const char *c = life.proc.comm; *c && k + 1 < cap; c++) {
		int ok = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
			 *c == '.' || *c == '_' || *c == '-';
		out[k++] = ok ? *c : '_';
	}
	if (k == 0)
		out[k++] = 'p';
	out[k] = 0;
}

/* Opens this process's trace: the exact MGPROBE_OUTPUT name for the launched process (root),
 * derived names for the rest. 0 or -errno, after one line. */
static int open_trace(int root, int truncate_root)
{
	const struct mgp_process *p = &life.proc;
	int err;
	if (root) {
		mgp_fmt(life.path, sizeof life.path, "%s.mgt", life.set.output);
		err = mgp_trace_open(life.path, !truncate_root, p);
		if (err != -EEXIST)
			goto done;
	}
	char comm[32];
	safe_comm(comm, sizeof comm);
	for (int n = 0; n < 100; n++) {
		const char *base = life.set.output[0] ? life.set.output : life.set.dir;
		const char *sep = life.set.output[0] ? "." : "/mgprobe.";
		if (n == 0)
			mgp_fmt(life.path, sizeof life.path, "%s%s%s.%d.mgt", base, sep, comm, p->pid);
		else
			mgp_fmt(life.path, sizeof life.path, "%s%s%s.%d.%d.mgt", base, sep, comm, p->pid, n);
		err = mgp_trace_open(life.path, 1, p);
		if (err != -EEXIST)
			break;
	}
done:
	if (err == -ELOOP || err == -ENXIO || err == -EINVAL || err == -EISDIR)
		mgp_log("%s is %s: refused, the probe writes only regular files and never through a "
			"link: the program runs unprofiled", life.path,
			err == -ELOOP ? "a symbolic link" : "not a regular file");
	else if (err == -EFBIG)
		mgp_log_fsize("leaves no room for the trace %s: the program runs unprofiled", life.path);
	else if (err < 0)
		mgp_log("cannot create the trace %s (%s): the program runs unprofiled", life.path,
			strerror(-err));
	return err;
}

/* ---- start ---- */

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

/* Both outputs for the process just read into life.proc: its trace (with a notice first, if
 * any), then its live segment (which may fail alone); then recording starts with a snapshot of
 * every site (`first_flags` MGC_SNAP_FULL), or of the sites changed since the parent's fork
 * snapshot (0: a forked child whose file refers to its parent's). 0, or -EIO when there is no
 * trace (the process then runs unprofiled). */
static int start_outputs(int root, int truncate_root, const char *notice, uint32_t first_flags)
{
	if (open_trace(root, truncate_root) < 0)
		return -EIO;
	if (notice)
		mgp_trace_notice(notice);
	mgp_writer_start(&life.proc);
	mgp_shm_open(&life.proc);
	mgp_state_set(MGP_RECORDING);
	mgp_writer_snapshot(first_flags);
	mgp_trace_flush();
	return 0;
}

/* Which trace this process writes under MGPROBE_OUTPUT: the launched process (the first to start,
 * or the one MGPROBE_OUTPUT_PID names) claims the exact name; the rest derive theirs from it. */
static void choose_root(int pid, int *root, int *truncate_root)
{
	*root = *truncate_root = 0;
	if (!life.set.output[0])
		return;
	if (life.set.output_pid < 0) {
		char buf[24];
		mgp_fmt(buf, sizeof buf, "%d", pid);
		setenv("MGPROBE_OUTPUT_PID", buf, 1);
		*root = *truncate_root = 1;
	} else if (life.set.output_pid == pid) {
		*root = 1;
	}
}

__attribute__((constructor)) static void mgp_init(void)
{
	mgp_resolve();
	mgp_guard_enter();
	uint64_t start_mono = mgp_now_ns(), start_real = mgp_real_ns();
	int root, truncate_root;
	if (mgp_settings_read(&life.set) < 0)
		goto out;
	if (life.set.no_children)
		drop_preload();
	uint64_t budget = mgp_os_budget_init();
	if (mgp_sites_init(life.set.max_sites) < 0 || mgp_trace_init((int)life.set.compress) < 0 ||
	    mgp_modules_init() < 0 || mgp_threads_init() < 0 ||
	    mgp_sample_init(life.set.sample, life.set.sample_seed) < 0) {
		if (budget != UINT64_MAX)
			mgp_log("the address-space limit (ulimit -v) leaves the probe %llu KiB, too little "
				"for its tables: the program runs unprofiled", (unsigned long long)(budget >> 10));
		else
			mgp_log("out of memory for the probe's tables: the program runs unprofiled");
		goto out;
	}
	mgp_capture_init(life.set.depth);
	mgp_tcache_init();
	mgp_unwind_init((enum mgp_unwind_mode)life.set.unwind);
	if (mgp_python_init((int)life.set.python)) {
		uintptr_t lo, hi;
		mgp_python_evaluator(&lo, &hi);
		mgp_unwind_stop_at(lo, hi); /* a Python stack's walk ends at its first evaluator frame */
	}
	mgp_process_read(&life.proc, &life.set, start_mono, start_real);
	choose_root(life.proc.pid, &root, &truncate_root);
	if (start_outputs(root, truncate_root, NULL, MGC_SNAP_FULL) < 0)
		goto out;
	mgp_fork_init();
	mgp_sampler_start(life.set.interval_ms);
out:
	mgp_guard_leave();
}

int mgp_life_cuda_activity(void)
{
	return (int)life.set.cuda_activity;
}

void mgp_life_forked(int had_cuda)
{
	uint64_t start_mono = mgp_now_ns(), start_real = mgp_real_ns();
	int based = mgp_trace_forget();
	mgp_shm_forget();
	if (!based)
		mgp_modules_forget();
	else if (mgp_sites_forked() < 0)
		mgp_record_oom(); /* the child's counters could not start afresh */
	mgp_threads_forked(); /* the parent's other threads are not here: their deltas are ours */
	if (!mgp_recording() || life.set.no_children) {
		mgp_state_set(MGP_OFF);
		return;
	}
	/* The child's own file: the inherited live allocations are live in the child too. */
	mgp_process_read(&life.proc, &life.set, start_mono, start_real);
	if (start_outputs(0, 0, had_cuda ? "CUDA memory is not traced in this forked child: CUDA cannot "
					   "be used after fork, and the parent's device memory is not the "
					   "child's" : NULL, based ? 0 : MGC_SNAP_FULL) < 0) {
		mgp_state_set(MGP_OFF);
		return;
	}
	mgp_sampler_start(life.set.interval_ms);
}

void mgp_life_fork_prepare(void)
{
	mgp_trace_fork_point(NULL, 0);
	if (!mgp_writer_owner() || !mgp_trace_ok())
		return;
	/* Evicted sites are freed now, not by the parent after the fork (its writes to pages the child
	 * shares would copy them into the child). */
	mgp_threads_drain();
	mgp_sites_evict_free(mgp_trace_site_written);
	mgp_writer_snapshot(MGC_SNAP_FORK);
	mgp_trace_fork_point(life.path, life.proc.pid);
}

/* ---- the end ---- */

static void finish(uint32_t reason, int status)
{
	/* Records still in CUPTI's buffers (at exit: the atexit handler has done it already). */
	if (reason == MGC_END__EXIT && mgp_writer_owner())
		mgp_cuda_flush(1);
	if (!mgp_writer_enter())
		return;
	mgp_cuda_notice();
	mgp_writer_snapshot(MGC_SNAP_FINAL); /* changed sites only: the reader carries the rest */
	mgp_trace_perfmap(mgp_writer_pid());
	mgp_shm_exit(status);
	mgp_trace_overhead();
	mgp_unwind_summary();
	mgp_trace_end(reason, status);
	mgp_trace_close();
	mgp_state_set(MGP_CLOSED);
	mgp_writer_leave();
}

__attribute__((destructor)) static void mgp_fini(void)
{
	finish(MGC_END_EXIT, 0);
}

/* finish() writes the last snapshot, several KiB of stack. _exit is what a crash handler calls,
 * often on a small alternate signal stack (a SIGSTKSZ one, of which AVX-512 signal frames and the
 * handler's backtrace() leave a few hundred bytes): where a capture would not fit
 * (mgp_capture_room), it runs on this stack instead, one caller at a time (a second one finishes
 * where it is, as before). Untouched pages of it cost no memory. */
static char exit_stack[128 << 10] __attribute__((aligned(64)));
static atomic_flag exit_stack_busy = ATOMIC_FLAG_INIT;
static int exit_status;

static void finish_exit(void)
{
	finish(MGC_END__EXIT, exit_status);
}

static void finish_on_room(int status)
{
	ucontext_t here, there;
	if (mgp_capture_room() || atomic_flag_test_and_set(&exit_stack_busy) || getcontext(&there)) {
		finish(MGC_END__EXIT, status);
		return;
	}
	exit_status = status;
	there.uc_stack.ss_sp = exit_stack;
	there.uc_stack.ss_size = sizeof exit_stack;
	there.uc_link = &here;
	makecontext(&there, finish_exit, 0);
	swapcontext(&here, &there);
	atomic_flag_clear(&exit_stack_busy);
}

MGP_EXPORT void _exit(int status)
{
	__typeof__(mgp_real._exit) real = MGP_REAL(_exit);
	finish_on_room(status);
	real(status);
	__builtin_unreachable();
}

MGP_EXPORT void _Exit(int status)
{
	__typeof__(mgp_real._Exit) real = MGP_REAL(_Exit);
	finish_on_room(status);
	real(status);
	__builtin_unreachable();
}

MGP_EXPORT int dlclose(void *handle)
{
	__typeof__(mgp_real.dlclose) real = MGP_REAL(dlclose);
	/* Stacks that point into the library are written while it is still in the module map. */
	if (mgp_writer_enter()) {
		mgp_writer_modules();
		mgp_trace_write_stacks();
		mgp_writer_leave();
	}
	int r = real(handle);
	mgp_unwind_flush(); /* its addresses may hold other code from now on */
	return r;
}
