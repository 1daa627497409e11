/* SPDX-License-Identifier: MIT */
/* mgp_writer.c: the writer lock and the snapshot of each tick (see mgp_writer.h). Runs on the
 * sampler thread, at step markers, fork, exec and exit, never inside an allocation hook; never
 * calls malloc or stdio, and a failure of an output stops only that output or recording, never the
 * program. */
#include "mgp_writer.h"

#include <pthread.h>

#include "mgp_modules.h"
#include "mgp_os.h"
#include "mgp_sampler.h"
#include "mgp_shm.h"
#include "mgp_snapshot.h"
#include "mgp_state.h"
#include "mgp_sites.h"
#include "mgp_step.h"
#include "mgp_thread.h"
#include "mgp_trace.h"

static struct {
	pthread_mutex_t lock;
	int owner;           /* pid of the process whose outputs these are */
	uint64_t start_mono; /* its start: snapshot times count from it */
	uint32_t soon_run;   /* maintenance passes in a row that ran because the last said soon */
} writer = {.lock = PTHREAD_MUTEX_INITIALIZER};

void mgp_writer_start(const struct mgp_process *p)
{
	writer.start_mono = p->start_mono_ns;
	__atomic_store_n(&writer.owner, p->pid, __ATOMIC_RELEASE);
}

int mgp_writer_pid(void)
{
	return __atomic_load_n(&writer.owner, __ATOMIC_ACQUIRE);
}

int mgp_writer_owner(void)
{
	return mgp_recording() && mgp_getpid() == mgp_writer_pid();
}

int mgp_writer_enter(void)
{
	if (!mgp_writer_owner())
		return 0;
	mgp_guard_enter();
	pthread_mutex_lock(&writer.lock);
	if (mgp_recording() && mgp_trace_ok())
		return 1;
	if (!mgp_trace_ok())
		mgp_state_stop(); /* the trace said why when it failed */
	pthread_mutex_unlock(&writer.lock);
	mgp_guard_leave();
	return 0;
}

void mgp_writer_leave(void)
{
	pthread_mutex_unlock(&writer.lock);
	mgp_guard_leave();
}

void mgp_writer_lock(void)
{
	pthread_mutex_lock(&writer.lock);
}

void mgp_writer_unlock(void)
{
	pthread_mutex_unlock(&writer.lock);
}

void mgp_writer_modules(void)
{
	mgp_modules_sync();
	mgp_trace_modules();
}

int mgp_writer_maintain(enum mgp_maintain why)
{
	int quiet_too = why == MGP_MAINTAIN_TICK;
	mgp_threads_drain(); /* also the grace period the last pass's evicted sites waited for */
	mgp_sites_evict_free(mgp_trace_site_written);
	mgp_sites_compact();
	mgp_sites_evict_unlink(mgp_trace_site_written, quiet_too);
	if (!quiet_too) { /* sites holding memory may retire before a snapshot */
		mgp_writer_modules();
		mgp_trace_write_held_stacks();
	}
	struct mgp_retire_scan scan = mgp_sites_retire_begin(mgp_trace_site_written);
	writer.soon_run = why == MGP_MAINTAIN_SOON ? writer.soon_run + 1 : 0;
	return mgp_writer_soon(why, scan, writer.soon_run);
}

/* A step marker leaves the live segment's site scan to the sampler thread (it costs ~1 ms a step
 * with the ~600 sites of the PyTorch sample sampled at 512K, more with 10^5 sites exact). The scan
 * reads the live bytes this snapshot wrote into the trace (mgp_shm_keep), not the counters as they
 * are when it runs, so its grid point is the step's to the byte however late it runs; a pending
 * scan is done before the next snapshot writes newer values (here, first). */
int mgp_writer_snapshot(uint32_t flags)
{
	struct mgc_rec_snapshot sn;
	mgp_shm_publish_pending();
	mgp_threads_drain();
	mgp_snapshot_take(&sn, writer.start_mono, mgp_step_now(), flags, mgp_step_label());
	mgp_writer_modules();
	mgp_trace_snapshot(&sn);
	return mgp_shm_publish(&sn, flags == MGC_SNAP_STEP && mgp_sampler_alive());
}
