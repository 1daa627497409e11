/* SPDX-License-Identifier: MIT */
/* mgp_sampler.c: the sampler thread (see mgp_sampler.h). It writes only through the writer lock,
 * never calls malloc or stdio itself, and ends when recording ends. */
#include "mgp_sampler.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <time.h>

#include "mgp_cuda.h"
#include "mgp_os.h"
#include "mgp_sites.h"
#include "mgp_state.h"
#include "mgp_trace.h"
#include "mgp_writer.h"

#define SLICE_MS 100u          /* how often the sampler looks at how fast sites appear */
#define BURST_SITES 32768u     /* sites made since the last eviction that call for one now */

/* Sleeps ms, in slices; between them, while the program makes new stacks fast (an import making
 * 10^5 a second), evicts the ones already gone, so the tables stay the size of what is live. */
static void sleep_maintaining(uint32_t ms)
{
	while (ms > 0) {
		uint32_t slice = ms < SLICE_MS ? ms : SLICE_MS;
		struct timespec ts = {slice / 1000, (long)(slice % 1000) * 1000000L};
		while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
			;
		ms -= slice;
		if (ms > 0 && mgp_sites_created() >= BURST_SITES && mgp_writer_enter()) {
			mgp_writer_maintain(0);
			mgp_writer_leave();
		}
	}
}

static void *sampler_main(void *arg)
{
	uint32_t ms = (uint32_t)(uintptr_t)arg;
	mgp_guard_enter(); /* whatever this thread allocates is the probe's */
	for (;;) {
		sleep_maintaining(ms);
		if (mgp_recording())
			mgp_cuda_flush(0); /* outside the writer lock: CUPTI may call back here */
		if (!mgp_writer_enter()) {
			if (!mgp_recording())
				break;
			continue;
		}
		mgp_writer_maintain(1);
		mgp_writer_snapshot(0);
		mgp_trace_flush();
		mgp_writer_leave();
	}
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
