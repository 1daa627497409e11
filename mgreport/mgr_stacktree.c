/* SPDX-License-Identifier: MIT */
/* mgr_stacktree.c: see mgr_stacktree.h. */
#include "mgr_stacktree.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static size_t slot_of(const struct mgr_stacktree *t, uint32_t parent, uint32_t key)
{
	uint64_t h = ((uint64_t)parent << 32 | key) * 0x9e3779b97f4a7c15ull;
	return (size_t)(h >> 20) & (t->nslot - 1);
}

static int grow_slots(struct mgr_stacktree *t)
{
	size_t ns = t->nslot ? t->nslot * 2 : 1u << 12;
	uint32_t *s = calloc(ns, sizeof *s);
	if (!s)
		return -ENOMEM;
	free(t->slot);
	t->slot = s;
	t->nslot = ns;
	for (size_t i = 1; i < t->n; i++) {
		size_t k = slot_of(t, t->nodes[i].parent, t->nodes[i].key);
		while (t->slot[k])
			k = (k + 1) & (ns - 1);
		t->slot[k] = (uint32_t)i;
	}
	return 0;
}

int mgr_stacktree_init(struct mgr_stacktree *t)
{
	memset(t, 0, sizeof *t);
	t->cap = 1024;
	t->nodes = calloc(t->cap, sizeof *t->nodes);
	t->n = 1;
	return t->nodes ? 0 : -ENOMEM;
}

uint32_t mgr_stacktree_child(struct mgr_stacktree *t, uint32_t parent, uint32_t key)
{
	if (2 * (t->n + 1) > t->nslot && grow_slots(t) < 0)
		return 0;
	size_t k = slot_of(t, parent, key);
	for (; t->slot[k]; k = (k + 1) & (t->nslot - 1)) {
		const struct mgr_stacknode *nd = &t->nodes[t->slot[k]];
		if (nd->parent == parent && nd->key == key)
			return t->slot[k];
	}
	if (t->n == t->cap) {
		size_t nc = t->cap * 2;
		struct mgr_stacknode *nn = nc < UINT32_MAX ? realloc(t->nodes, nc * sizeof *nn) : NULL;
		if (!nn)
			return 0;
		t->nodes = nn;
		t->cap = nc;
	}
	uint32_t id = (uint32_t)t->n++;
	t->nodes[id] = (struct mgr_stacknode){parent, key, 0, t->nodes[parent].child, 0};
	t->nodes[parent].child = id;
	t->slot[k] = id;
	return id;
}

void mgr_stacktree_free(struct mgr_stacktree *t)
{
	free(t->nodes);
	free(t->slot);
	memset(t, 0, sizeof *t);
}
