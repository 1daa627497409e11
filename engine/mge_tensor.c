/* SPDX-License-Identifier: MIT */
/* mge_tensor.c: the caching allocator behind every engine tensor (one malloc'd block per tensor,
 * recycled through per-size-class free lists). It must never hand one block to two live tensors
 * and never free a block while its pool lives: that retention is the point (it is what a warmup is). */
#include "mge_tensor.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define MAX_CLASSES 256
#define HEADER_BYTES 64   /* the data follows the header at malloc alignment */

struct mge_block {
	struct mge_tensor t;       /* the tensor handed out: first, so a tensor pointer is a block pointer */
	struct mge_pool *pool;
	size_t class_bytes;
	struct mge_block *next;    /* free-list link while cached */
};
_Static_assert(sizeof(struct mge_block) <= HEADER_BYTES, "block header must fit HEADER_BYTES");

struct size_class {
	size_t bytes;
	struct mge_block *free;
};

struct mge_pool {
	pthread_mutex_t lock;
	const char *name;
	struct size_class classes[MAX_CLASSES];
	size_t nclasses;
	size_t reserved_bytes, in_use_bytes, live_tensors, blocks;
};

struct mge_pool *mge_pool_new(const char *name)
{
	struct mge_pool *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	pthread_mutex_init(&p->lock, NULL);
	p->name = name;
	return p;
}

int mge_pool_destroy(struct mge_pool *p)
{
	if (!p)
		return 0;
	if (p->live_tensors)
		return -EBUSY;
	for (size_t i = 0; i < p->nclasses; i++) {
		struct mge_block *b = p->classes[i].free;
		while (b) {
			struct mge_block *n = b->next;
			free(b);
			b = n;
		}
	}
	pthread_mutex_destroy(&p->lock);
	free(p);
	return 0;
}

void mge_pool_stats(struct mge_pool *p, struct mge_pool_stats *st)
{
	pthread_mutex_lock(&p->lock);
	st->reserved_bytes = p->reserved_bytes;
	st->in_use_bytes = p->in_use_bytes;
	st->live_tensors = p->live_tensors;
	st->blocks = p->blocks;
	st->classes = p->nclasses;
	pthread_mutex_unlock(&p->lock);
}

size_t mge_pool_class_bytes(size_t bytes)
{
	const size_t mib = (size_t)1 << 20;
	size_t pow = 512;

	if (bytes > mib)
		return (bytes + mib - 1) / mib * mib;
	if (bytes <= pow)
		return pow;
	while (pow * 2 < bytes)
		pow *= 2;
	/* bytes is in (pow, 2 pow]: round up to a quarter step of pow. */
	for (size_t q = 5; q <= 8; q++)
		if (bytes <= pow / 4 * q)
			return pow / 4 * q;
	return pow * 2;
}

static struct size_class *find_class(struct mge_pool *p, size_t bytes)
{
	for (size_t i = 0; i < p->nclasses; i++)
		if (p->classes[i].bytes == bytes)
			return &p->classes[i];
	if (p->nclasses == MAX_CLASSES)
		return NULL;
	p->classes[p->nclasses].bytes = bytes;
	p->classes[p->nclasses].free = NULL;
	return &p->classes[p->nclasses++];
}

struct mge_tensor *mge_tensor_new(struct mge_pool *p, int ndim, const int *dims)
{
	size_t numel = 1, cls;
	struct size_class *c;
	struct mge_block *b;

	if (ndim < 1 || ndim > 4) {
		errno = EINVAL;
		return NULL;
	}
	for (int i = 0; i < ndim; i++) {
		if (dims[i] <= 0) {
			errno = EINVAL;
			return NULL;
		}
		numel *= (size_t)dims[i];
	}
	cls = mge_pool_class_bytes(numel * sizeof(float));

	pthread_mutex_lock(&p->lock);
	c = find_class(p, cls);
	if (!c) {
		pthread_mutex_unlock(&p->lock);
		errno = ENOMEM;
		return NULL;
	}
	b = c->free;
	if (b) {
		c->free = b->next;
	} else {
		/* A new block: the pool grows. This malloc is the allocator's only one. */
		b = malloc(HEADER_BYTES + cls);
		if (!b) {
			pthread_mutex_unlock(&p->lock);
			errno = ENOMEM;
			return NULL;
		}
		b->pool = p;
		b->class_bytes = cls;
		p->reserved_bytes += cls;
		p->blocks++;
	}
	b->next = NULL;
	p->in_use_bytes += cls;
	p->live_tensors++;
	pthread_mutex_unlock(&p->lock);

	b->t.data = (float *)(void *)((char *)b + HEADER_BYTES);
	b->t.numel = numel;
	b->t.ndim = ndim;
	memset(b->t.dims, 0, sizeof(b->t.dims));
	memcpy(b->t.dims, dims, (size_t)ndim * sizeof(int));
	return &b->t;
}

struct mge_tensor *mge_tensor_zeros(struct mge_pool *p, int ndim, const int *dims)
{
	struct mge_tensor *t = mge_tensor_new(p, ndim, dims);

	if (t)
		memset(t->data, 0, t->numel * sizeof(float));
	return t;
}

void mge_tensor_free(struct mge_tensor *t)
{
	struct mge_block *b = (struct mge_block *)(void *)t;
	struct mge_pool *p;
	struct size_class *c;

	if (!t)
		return;
	p = b->pool;
	pthread_mutex_lock(&p->lock);
	c = find_class(p, b->class_bytes); /* exists: the block was made for it */
	b->next = c->free;
	c->free = b;
	p->in_use_bytes -= b->class_bytes;
	p->live_tensors--;
	pthread_mutex_unlock(&p->lock);
}
