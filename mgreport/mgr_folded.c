/* SPDX-License-Identifier: MIT */
/* mgr_folded.c: see mgr_folded.h. Each stack goes into a tree of frames (a node per distinct
 * prefix, mgr_stacktree) as it is read; the lines are written
 * from the tree in the order sorting the joined lines gives. */
#define _GNU_SOURCE
#include "mgr_folded.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mgr_stacktree.h"
#include "mgr_strtab.h"

struct tree {
	struct mgr_strtab labels; /* the nodes' keys */
	struct mgr_stacktree st;  /* a node's weight: of the stack ending there (> 0 when one does) */
};

static int add_stack(struct tree *t, const struct mgr_stack *s)
{
	long long w = llround(s->weight);
	uint32_t at = 0;
	if (!(w > 0))
		return 0;
	for (size_t j = 0; j < s->nframes; j++) {
		long lab = mgr_strtab_add(&t->labels, s->frames[j].label);
		if (lab < 0 || !(at = mgr_stacktree_child(&t->st, at, (uint32_t)lab)))
			return -ENOMEM;
	}
	t->st.nodes[at].weight += w;
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
	const char *p = x->t->labels.s[x->t->st.nodes[x->node].key];
	const char *q = y->t->labels.s[y->t->st.nodes[y->node].key];
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
	for (uint32_t c = t->st.nodes[node].child; c; c = t->st.nodes[c].next)
		n += 1 + (t->st.nodes[c].child != 0);
	struct entry *e = malloc((n ? n : 1) * sizeof *e);
	if (!e)
		return -ENOMEM;
	n = 0;
	for (uint32_t c = t->st.nodes[node].child; c; c = t->st.nodes[c].next) {
		if (t->st.nodes[c].weight > 0)
			e[n++] = (struct entry){t, c, 0};
		if (t->st.nodes[c].child)
			e[n++] = (struct entry){t, c, 1};
	}
	qsort(e, n, sizeof *e, cmp_entry);
	int rc = 0;
	for (size_t i = 0; i < n && rc == 0; i++) {
		const char *lab = t->labels.s[t->st.nodes[e[i].node].key];
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
			fprintf(f, "%s %lld\n", *line, t->st.nodes[e[i].node].weight);
	}
	free(e);
	return rc;
}

int mgr_folded_write(FILE *f, struct mgr_stack_iter *its, size_t n)
{
	struct tree t;
	char *line = NULL;
	size_t cap = 0;
	memset(&t, 0, sizeof t);
	int rc = mgr_stacktree_init(&t.st);
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
	mgr_stacktree_free(&t.st);
	mgr_strtab_free(&t.labels);
	return rc;
}
