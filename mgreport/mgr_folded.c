/* SPDX-License-Identifier: MIT */
/* mgr_folded.c: see mgr_folded.h. Each stack goes into a tree of frames (a node per distinct
 * prefix, found by its parent and label in one hash table) as it is read; the lines are written
 * from the tree in the order sorting the joined lines gives. */
#define _GNU_SOURCE
#include "mgr_folded.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mgr_strtab.h"

struct node {
	uint32_t parent, label; /* parent node (0: the root), label index */
	uint32_t child, next;   /* first child, next sibling (0: none; node 0 is the root) */
	long long weight;       /* of the stack ending here: > 0 when one does */
};

struct tree {
	struct mgr_strtab labels;
	struct node *nodes;
	size_t n, cap;
	uint32_t *slot; /* node index per slot (0: empty), nslot a power of two, at most half full */
	size_t nslot;
};

static size_t slot_of(const struct tree *t, uint32_t parent, uint32_t label)
{
	uint64_t h = ((uint64_t)parent << 32 | label) * 0x9e3779b97f4a7c15ull;
	return (size_t)(h >> 20) & (t->nslot - 1);
}

static int grow_slots(struct tree *t)
{
	size_t ns = t->nslot ? t->nslot * 2 : 1u << 12;
	uint32_t *s = calloc(ns, sizeof *s);
	if (!s)
		return -ENOMEM;
	free(t->slot);
	t->slot = s;
	t->nslot = ns;
	for (size_t i = 1; i < t->n; i++) {
		size_t k = slot_of(t, t->nodes[i].parent, t->nodes[i].label);
		while (t->slot[k])
			k = (k + 1) & (ns - 1);
		t->slot[k] = (uint32_t)i;
	}
	return 0;
}

/* The child of `parent` labelled `label`, added when new; 0 without memory. */
static uint32_t child(struct tree *t, uint32_t parent, uint32_t label)
{
	if (2 * (t->n + 1) > t->nslot && grow_slots(t) < 0)
		return 0;
	size_t k = slot_of(t, parent, label);
	for (; t->slot[k]; k = (k + 1) & (t->nslot - 1)) {
		const struct node *nd = &t->nodes[t->slot[k]];
		if (nd->parent == parent && nd->label == label)
			return t->slot[k];
	}
	if (t->n == t->cap) {
		size_t nc = t->cap * 2;
		struct node *nn = nc < UINT32_MAX ? realloc(t->nodes, nc * sizeof *nn) : NULL;
		if (!nn)
			return 0;
		t->nodes = nn;
		t->cap = nc;
	}
	uint32_t id = (uint32_t)t->n++;
	t->nodes[id] = (struct node){parent, label, 0, t->nodes[parent].child, 0};
	t->nodes[parent].child = id;
	t->slot[k] = id;
	return id;
}

static int add_stack(struct tree *t, const struct mgr_stack *s)
{
	long long w = llround(s->weight);
	uint32_t at = 0;
	if (!(w > 0))
		return 0;
	for (size_t j = 0; j < s->nframes; j++) {
		long lab = mgr_strtab_add(&t->labels, s->frames[j].label);
		if (lab < 0 || !(at = child(t, at, (uint32_t)lab)))
			return -ENOMEM;
	}
	t->nodes[at].weight += w;
	return 0;
}

/* One place among a node's children: the line ending at child `node` (sub = 0) or the lines
 * below it (sub = 1), which all start with its label and a ';'. */
struct entry {
	const struct tree *t;
	uint32_t node;
	int sub;
};

/* The order of the joined lines: labels compared as if followed by ';' (lines below) or by their
 * end (the line ending there). */
static int cmp_entry(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;
	const char *p = x->t->labels.s[x->t->nodes[x->node].label];
	const char *q = y->t->labels.s[y->t->nodes[y->node].label];
	for (;; p++, q++) {
		unsigned char c = *p ? (unsigned char)*p : x->sub ? ';' : 0;
		unsigned char d = *q ? (unsigned char)*q : y->sub ? ';' : 0;
		if (c != d)
			return c < d ? -1 : 1;
		if (!*p || !*q)
			return 0; /* equal only for the same entry: labels are distinct among siblings */
	}
}

/* The path from the root to `node`'s parent is in line[0..len): writes node's lines and those
 * below it, in order. */
static int write_below(FILE *f, const struct tree *t, uint32_t node, char **line, size_t *cap, size_t len)
{
	size_t n = 0;
	for (uint32_t c = t->nodes[node].child; c; c = t->nodes[c].next)
		n += 1 + (t->nodes[c].child != 0);
	struct entry *e = malloc((n ? n : 1) * sizeof *e);
	if (!e)
		return -ENOMEM;
	n = 0;
	for (uint32_t c = t->nodes[node].child; c; c = t->nodes[c].next) {
		if (t->nodes[c].weight > 0)
			e[n++] = (struct entry){t, c, 0};
		if (t->nodes[c].child)
			e[n++] = (struct entry){t, c, 1};
	}
	qsort(e, n, sizeof *e, cmp_entry);
	int rc = 0;
	for (size_t i = 0; i < n && rc == 0; i++) {
		const char *lab = t->labels.s[t->nodes[e[i].node].label];
		size_t l = strlen(lab), at = node ? len + 1 : 0;
		if (at + l + 1 > *cap) {
			size_t nc = 2 * (at + l + 1);
			char *nl = realloc(*line, nc);
			if (!nl) {
				rc = -ENOMEM;
				break;
			}
			*line = nl;
			*cap = nc;
		}
		if (node)
			(*line)[len] = ';';
		memcpy(*line + at, lab, l);
		(*line)[at + l] = 0;
		if (e[i].sub)
			rc = write_below(f, t, e[i].node, line, cap, at + l);
		else
			fprintf(f, "%s %lld\n", *line, t->nodes[e[i].node].weight);
	}
	free(e);
	return rc;
}

int mgr_folded_write(FILE *f, struct mgr_stack_iter *its, size_t n)
{
	struct tree t = {.cap = 1024};
	char *line = NULL;
	size_t cap = 0;
	t.nodes = calloc(t.cap, sizeof *t.nodes);
	int rc = t.nodes ? 0 : -ENOMEM;
	t.n = 1; /* the root */
	for (size_t k = 0; k < n && rc == 0; k++) {
		struct mgr_stack s;
		while (rc == 0 && (rc = mgr_stack_iter_next(&its[k], &s)) == 1) {
			rc = add_stack(&t, &s);
			mgr_stack_free(&s);
		}
	}
	if (rc == 0)
		rc = write_below(f, &t, 0, &line, &cap, 0);
	free(line);
	free(t.nodes);
	free(t.slot);
	mgr_strtab_free(&t.labels);
	return rc;
}
