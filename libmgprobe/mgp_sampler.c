/* SPDX-License-Identifier: MIT */
/* mgp_sampler.c: the sampler thread (see mgp_sampler.h). It writes only through the writer lock,
 * never calls malloc or stdio itself, and ends when recording ends. */
#define _GNU_SOURCE /* SCHED_BATCH */
#include "mgp_sampler.h"

#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <time.h>

#include "mgp_cuda.h"
#include "mgp_os.h"
#include "mgp_shm.h"
#include "mgp_sites.h"
#include "mgp_state.h"
#include "mgp_trace.h"
#include "mgp_writer.h"

#define SLICE_MS 100u          /* how often the sampler looks at how fast sites appear */
#define POLL_MS 5u             /* ... and for what step markers left, while they come */
#define POLL_FOR_MS 1000u      /* that long after the last marker that left something */
#define BURST_SITES 32768u     /* sites made since the last eviction that call for one now */
#define MS 1000000ull

static struct {
	int pid;       /* the process whose sampler thread runs (0: none; a fork child has its own) */
	int left;      /* a step marker left work (mgp_sampler_kick) */
	uint64_t poll_until; /* poll every POLL_MS until then (sampler thread only) */
	int soon;      /* the last maintenance pass asked for another soon (sampler thread only) */
} sampler;

int mgp_sampler_alive(void)
{
	return __atomic_load_n(&sampler.pid, __ATOMIC_ACQUIRE) == mgp_getpid();
}

void mgp_sampler_kick(void)
{
	__atomic_store_n(&sampler.left, 1, __ATOMIC_RELEASE);
}

/* Sleeps ns, then does what a marker left, if any. */
static void nap(uint64_t ns)
{
	struct timespec ts = {(time_t)(ns / 1000000000ull), (long)(ns % 1000000000ull)};
	nanosleep(&ts, NULL); /* woken early by a signal: the caller's loop sleeps the rest */
	if (__atomic_exchange_n(&sampler.left, 0, __ATOMIC_ACQUIRE) && mgp_writer_enter()) {
		mgp_shm_publish_pending();
		mgp_writer_leave();
		sampler.poll_until = mgp_now_ns() + POLL_FOR_MS * MS;
	}
}

/* Sleeps ms, in slices, doing what step markers leave (every POLL_MS while they come); between
 * slices, while the program makes new stacks fast (an import making 10^5 a second), evicts the
 * ones already gone, so the tables stay the size of what is live, and while the last pass says
 * one soon gives memory back (an import's sites retiring), runs it then, not at the next tick. */
static void sleep_maintaining(uint32_t ms)
{
	uint64_t now = mgp_now_ns(), end = now + ms * MS;
	while (now < end) {
		uint64_t slice_end = end - now < SLICE_MS * MS ? end : now + SLICE_MS * MS;
		while ((now = mgp_now_ns()) < slice_end) {
			uint64_t ns = slice_end - now;
			nap(now < sampler.poll_until && ns > POLL_MS * MS ? POLL_MS * MS : ns);
		}
		int burst = mgp_sites_created() >= BURST_SITES;
		if (now < end && (burst || sampler.soon) && mgp_writer_enter()) {
			sampler.soon = mgp_writer_maintain(burst ? MGP_MAINTAIN_BURST : MGP_MAINTAIN_SOON);
			mgp_writer_leave();
		}
	}
}

static void *sampler_main(void *arg)
{
	uint32_t ms = (uint32_t)(uintptr_t)arg;
	mgp_guard_enter(); /* whatever this thread allocates is the probe's */
	/* A batch thread: its timer wake-ups (every POLL_MS while markers come) never preempt the
	 * program's threads; it waits for its turn. */
	struct sched_param sp = {0};
	pthread_setschedparam(pthread_self(), SCHED_BATCH, &sp);
	__atomic_store_n(&sampler.pid, mgp_getpid(), __ATOMIC_RELEASE);
	for (;;) {
		sleep_maintaining(ms);
		if (mgp_recording())
			mgp_cuda_flush(0); /* outside the writer lock: CUPTI may call back here */
		if (!mgp_writer_enter()) {
			if (!mgp_recording())
				break;
			continue;
		}
		sampler.soon = mgp_writer_maintain(MGP_MAINTAIN_TICK);
		mgp_writer_snapshot(0);
		mgp_trace_flush();
		mgp_writer_leave();
	}
	__atomic_store_n(&sampler.pid, 0, __ATOMIC_RELEASE);
	mgp_guard_leave();
	return NULL;
}

void mgp_sampler_start(uint32_t interval_ms)
{
	pthread_t t;
	pthread_attr_t attr;
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old); /* the program's signals go to its own threads */
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&attr, 256 * 1024);
	int r = pthread_create(&t, &attr, sampler_main, (void *)(uintptr_t)interval_ms);
	pthread_attr_destroy(&attr);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (r != 0)
		mgp_log("cannot start the sampler thread (%s): snapshots only at steps and exit",
			strerror(r));
}
