/* SPDX-License-Identifier: MIT */
/* mgp_thread.c: the thread records of mgp_thread.h: a registry that only grows (records are
 * reused after their thread exits), each record a lock and an open-addressing table of deltas.
 * Never calls malloc; the locks are spin locks held for a few dozen instructions (the owner's
 * record, or the writer's copy of it). */
#include "mgp_thread.h"

#include <errno.h>
#include <pthread.h>
#include <string.h>

#include "mgp_chunks.h"
#include "mgp_os.h"
#include "mgp_spin.h"

enum { REC_FREE = 0, REC_OWNED = 1 };

#define PROBES 8u /* slots tried before a delta is taken over */

/* The records in use, and the thread's own (initial-exec TLS: no allocation on access). GONE
 * marks a thread whose record was given back (it is exiting): it records through `shared`. */
#define GONE ((struct mgp_thread *)1)
static __thread struct mgp_thread *self __attribute__((tls_model("initial-exec")));

static struct {
	struct mgp_chunks recs;
	uint32_t n;          /* records made; ids below are readable */
	int lock;            /* registering and giving back */
	pthread_key_t key;   /* its destructor gives a record back */
	int have_key;
	struct mgp_thread shared; /* for threads without a record of their own */
} reg = {.recs = {.esize = sizeof(struct mgp_thread), .shift = 4}};

static void apply_all(struct mgp_thread *t)
{
	for (uint32_t i = 0; i < MGP_THREAD_DELTAS && t->used; i++) {
		if (!t->d[i].key)
			continue;
		mgp_site_apply(&t->d[i]);
		memset(&t->d[i], 0, sizeof t->d[i]);
		t->used--;
	}
}

/* pthread key destructor: the exiting thread's deltas go to the sites and its record is free. */
static void give_back(void *arg)
{
	struct mgp_thread *t = arg;
	self = GONE;
	mgp_spin_lock(&t->lock);
	apply_all(t);
	mgp_spin_unlock(&t->lock);
	mgp_spin_lock(&reg.lock); /* the registry's lock before a record's, never after */
	t->state = REC_FREE;
	mgp_spin_unlock(&reg.lock);
}

int mgp_threads_init(void)
{
	int r = pthread_key_create(&reg.key, give_back);
	reg.have_key = r == 0;
	return -r;
}

/* A free record, or a new one; NULL when out of memory. Registry lock held. */
static struct mgp_thread *take_record(void)
{
	for (uint32_t i = 0; i < reg.n; i++) {
		struct mgp_thread *t = mgp_chunk_at(&reg.recs, i);
		if (t->state == REC_FREE) {
			t->state = REC_OWNED;
			return t;
		}
	}
	if (mgp_chunks_ensure(&reg.recs, reg.n) < 0)
		return NULL;
	struct mgp_thread *t = mgp_chunk_at(&reg.recs, reg.n);
	t->state = REC_OWNED;
	__atomic_store_n(&reg.n, reg.n + 1, __ATOMIC_RELEASE);
	return t;
}

static struct mgp_thread *first_use(void)
{
	struct mgp_thread *t = NULL;
	if (self != GONE && reg.have_key) {
		mgp_spin_lock(&reg.lock);
		t = take_record();
		mgp_spin_unlock(&reg.lock);
		if (t && pthread_setspecific(reg.key, t) != 0) {
			t->state = REC_FREE;
			t = NULL;
		}
	}
	self = t ? t : GONE;
	return t ? t : &reg.shared;
}

struct mgp_thread *mgp_thread_enter(void)
{
	struct mgp_thread *t = self;
	if (__builtin_expect(t == NULL, 0))
		t = first_use();
	else if (__builtin_expect(t == GONE, 0))
		t = &reg.shared;
	mgp_spin_lock(&t->lock);
	return t;
}

struct mgp_delta *mgp_thread_delta(struct mgp_thread *t, uint32_t site, unsigned bucket)
{
	uint32_t key = mgp_delta_key(site, bucket);
	uint32_t home = (uint32_t)(((uint64_t)key * 0x9e3779b97f4a7c15ull) >> 32) % MGP_THREAD_DELTAS;
	uint32_t i = home;
	for (unsigned p = 0; p < PROBES; p++) {
		struct mgp_delta *d = &t->d[i];
		if (d->key == key)
			return d;
		if (!d->key) {
			d->key = key;
			t->used++;
			return d;
		}
		i = i + 1 == MGP_THREAD_DELTAS ? 0 : i + 1;
	}
	/* Crowded: the home slot's delta goes to its site now and the slot changes hands. */
	struct mgp_delta *d = &t->d[home];
	mgp_site_apply(d);
	memset(d, 0, sizeof *d);
	d->key = key;
	return d;
}

void mgp_threads_drain(void)
{
	uint32_t n = __atomic_load_n(&reg.n, __ATOMIC_ACQUIRE);
	for (uint32_t i = 0; i <= n; i++) {
		struct mgp_thread *t = i < n ? mgp_chunk_at(&reg.recs, i) : &reg.shared;
		mgp_spin_lock(&t->lock);
		apply_all(t);
		mgp_spin_unlock(&t->lock);
	}
}

void mgp_threads_lock_all(void)
{
	mgp_spin_lock(&reg.lock);
	for (uint32_t i = 0; i < reg.n; i++)
		mgp_spin_lock(&((struct mgp_thread *)mgp_chunk_at(&reg.recs, i))->lock);
	mgp_spin_lock(&reg.shared.lock);
}

void mgp_threads_unlock_all(void)
{
	mgp_spin_unlock(&reg.shared.lock);
	for (uint32_t i = 0; i < reg.n; i++)
		mgp_spin_unlock(&((struct mgp_thread *)mgp_chunk_at(&reg.recs, i))->lock);
	mgp_spin_unlock(&reg.lock);
}

void mgp_threads_forked(void)
{
	for (uint32_t i = 0; i <= reg.n; i++) {
		struct mgp_thread *t = i < reg.n ? mgp_chunk_at(&reg.recs, i) : &reg.shared;
		apply_all(t);
		if (t != self && t != &reg.shared && t->state == REC_OWNED) {
			t->state = REC_FREE; /* its thread is not in the child */
			mgp_os_discard(t, sizeof *t);
		}
	}
}

uint32_t mgp_threads_count(void)
{
	return __atomic_load_n(&reg.n, __ATOMIC_ACQUIRE);
}
