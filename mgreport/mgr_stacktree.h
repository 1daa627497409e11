/* SPDX-License-Identifier: MIT */
/* mgr_stacktree.h: stacks as a prefix tree, how the flame-graph exports (--folded, --speedscope)
 * hold every site's stack, and the JSON its flat sites' ("stack_nodes"), at the cost of their
 * distinct prefixes: a node per distinct (parent, key), the key the caller's number for a frame (an
 * interned label, a frame index), found through one hash table. Stores numbers only; names
 * nothing. */
#ifndef MGR_STACKTREE_H
#define MGR_STACKTREE_H

#include <stddef.h>
#include <stdint.h>

struct mgr_stacknode {
	uint32_t parent, key; /* parent node (0: the root), the caller's key */
	uint32_t child, next; /* first child, next sibling (0: none; node 0 is the root) */
	long long weight;     /* the caller's */
};

struct mgr_stacktree {
	struct mgr_stacknode *nodes; /* n of them, nodes[0] the root */
	size_t n, cap;
	uint32_t *slot; /* node index per slot (0: empty), nslot a power of two, at most half full */
	size_t nslot;
};

/* An empty tree (its root). 0 or -ENOMEM. */
int mgr_stacktree_init(struct mgr_stacktree *t);

/* The child of `parent` with `key`, added when new; 0 without memory. */
uint32_t mgr_stacktree_child(struct mgr_stacktree *t, uint32_t parent, uint32_t key);

void mgr_stacktree_free(struct mgr_stacktree *t);

#endif /* MGR_STACKTREE_H */
