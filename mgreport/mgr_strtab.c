/* SPDX-License-Identifier: MIT */
/* mgr_strtab.c: see mgr_strtab.h. Open addressing with linear probing, FNV-1a hashes. */
#define _GNU_SOURCE
#include "mgr_strtab.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static uint64_t hash_str(const char *s)
{
	uint64_t h = 1469598103934665603ull;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

static int grow(struct mgr_strtab *t)
{
	size_t cap = t->cap ? t->cap * 2 : 256;
	size_t *slot = calloc(2 * cap, sizeof *slot);
	char **s = realloc(t->s, cap * sizeof *s);
	if (s)
		t->s = s;
	if (!slot || !s) {
		free(slot);
		return -ENOMEM;
	}
	for (size_t i = 0; i < t->n; i++) {
		size_t k = (size_t)hash_str(s[i]) & (2 * cap - 1);
		while (slot[k])
			k = (k + 1) & (2 * cap - 1);
		slot[k] = i + 1;
	}
	free(t->slot);
	t->slot = slot;
	t->cap = cap;
	return 0;
}

/* The slot of s: its own, or the empty one where it would go. */
static size_t probe(const struct mgr_strtab *t, const char *s)
{
	size_t mask = 2 * t->cap - 1, k = (size_t)hash_str(s) & mask;
	while (t->slot[k] && strcmp(t->s[t->slot[k] - 1], s) != 0)
		k = (k + 1) & mask;
	return k;
}

long mgr_strtab_find(const struct mgr_strtab *t, const char *s)
{
	if (!t->cap)
		return -1;
	size_t k = probe(t, s);
	return t->slot[k] ? (long)t->slot[k] - 1 : -1;
}

long mgr_strtab_add(struct mgr_strtab *t, const char *s)
{
	if (t->n == t->cap && grow(t) < 0)
		return -1;
	size_t k = probe(t, s);
	if (t->slot[k])
		return (long)t->slot[k] - 1;
	char *copy = strdup(s);
	if (!copy)
		return -1;
	t->s[t->n++] = copy;
	t->slot[k] = t->n;
	return (long)t->n - 1;
}

void mgr_strtab_free(struct mgr_strtab *t)
{
	for (size_t i = 0; i < t->n; i++)
		free(t->s[i]);
	free(t->s);
	free(t->slot);
	memset(t, 0, sizeof *t);
}
