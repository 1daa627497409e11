/* SPDX-License-Identifier: MIT */
/* mgp_stacks.h: the probe's stack store, a prefix tree of frames in memory: a node is one frame (a
 * 64-bit value: a return address, or a Python frame, carried unchanged) under its caller's node,
 * and a stack is its innermost node. Stacks share their outer frames, so 10^5 import-time stacks
 * of ~40 frames cost a few nodes each. Nodes are counted (children and sites that end at them)
 * and freed when no stack uses them. The trace writes the same nodes, ids and all. Changes are
 * made under the site table's lock (mgp_sites); a stack in use may be read by anyone. Never
 * calls malloc. */
#ifndef MGP_STACKS_H
#define MGP_STACKS_H

#include <stdint.h>

#include "mgp_chunks.h"

struct mgp_node {
	uint64_t ip;
	uint32_t parent; /* the caller's node; 0 for the outermost frame (and, when free, the next
			    free node) */
	uint32_t refs;   /* child nodes plus sites ending here; 0 when free */
};

extern struct mgp_chunks mgp_nodes;

static inline const struct mgp_node *mgp_node_get(uint32_t id)
{
	return (const struct mgp_node *)mgp_chunk_at(&mgp_nodes, id);
}

/* Sets the store up (nothing is mapped until the first stack). 0 or -ENOMEM. */
int mgp_stacks_init(void);

/* The innermost node of the stack ips[0..n) (innermost first), with one reference taken for the
 * caller (a site); 0 for n == 0. Missing nodes are made. Returns 0, or -ENOMEM (nothing taken).
 * Sites lock held. */
int mgp_stacks_intern(const uintptr_t *ips, unsigned n, uint32_t *leaf);

/* Drops a reference taken by mgp_stacks_intern; nodes no stack uses any more are freed. Sites
 * lock held. */
void mgp_stacks_release(uint32_t leaf);

/* The frames of the stack ending at leaf, innermost first, at most cap of them: returns how many.
 * The stack must be in use (its site alive). */
unsigned mgp_stacks_walk(uint32_t leaf, uint64_t *out, unsigned cap);

/* A forked child (mgp_sites_forked): freed parent nodes are not reused, and the store is never
 * compacted (its pages are the parent's, shared until written). */
void mgp_stacks_forked(void);

/* Compaction, once stacks given back (mgp_sites retiring quiet sites) leave most node ids free:
 * the nodes in use are copied into new chunks with ids from 1, in the order the stacks reach
 * them (a parent before its children), and the old chunks and index go back to the kernel. Node
 * ids change, and none is in the file any more (the trace defines them again: FRAMES3 allows it).
 * Sites lock held, and
 * the writer lock (the only other readers of nodes). `due` says whether it is worth it (over
 * half the ids free, and at least min_free) and allowed (never in a forked child); `start` reserves everything it needs (0, -ENOMEM: nothing
 * changed); `move` gives a stack its new innermost node (call it for every stack in use: a site's
 * leaf, and nothing else holds nodes); `finish` replaces the store. */
int mgp_stacks_compact_due(uint32_t min_free);
int mgp_stacks_compact_start(void);
uint32_t mgp_stacks_compact_move(uint32_t leaf);
void mgp_stacks_compact_finish(void);

/* Whether node id is in the trace file: set by the trace writer when it writes the node (0 or
 * -ENOMEM; writer lock), cleared when the node is freed (its id may come back with another frame)
 * or renumbered, and all at once for a new file (forget). */
int mgp_stacks_in_file(uint32_t id);
int mgp_stacks_set_in_file(uint32_t id);
void mgp_stacks_forget_file(void);

/* Nodes in use now, and one past the highest node id ever used. */
uint32_t mgp_stacks_nodes(void);
uint32_t mgp_stacks_high(void);

#endif /* MGP_STACKS_H */
