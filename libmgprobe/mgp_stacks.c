/* SPDX-License-Identifier: MIT */
/* mgp_stacks.c: the frame tree of mgp_stacks.h: nodes in a chunked array (ids never move), a
 * free list, and an open-addressing index (parent, frame) -> node that only the sites lock's
 * holder touches. Never calls malloc; memory comes from the kernel as the tree grows. */
#include "mgp_stacks.h"

#include <errno.h>

#include "mgc_format.h"
#include "mgc_hash.h"
#include "mgp_os.h"

#define NODE_SHIFT 14u /* 16384 nodes (256 KiB) per chunk */

struct mgp_chunks mgp_nodes = {.esize = sizeof(struct mgp_node), .shift = NODE_SHIFT};
/* A bit per node: in the trace file. Set by the writer, cleared under the sites lock (by whoever
 * frees a node): atomic words. */
static struct mgp_chunks in_file = {.esize = 8, .shift = 12};

/* The store's own state, under the sites lock. */
static struct {
	uint32_t *index;  /* node ids by hash of (parent, frame); 0 = empty */
	uint64_t mask;    /* index slots - 1 */
	uint32_t high;    /* one past the highest id used; id 0 is the root */
	uint32_t used;    /* nodes in use */
	uint32_t indexed; /* nodes in the index (a forked child's index starts empty) */
	uint32_t free;    /* first free node, 0 = none */
	int forked;       /* a forked child: never compacted */
	uint32_t *new_index; /* compaction: the index being built, and its mask */
	uint64_t new_mask;
	uint32_t new_high;   /* compaction: one past the highest id given so far */
	/* The last stack interned, outermost frame first, and its nodes: consecutive new stacks (an
	 * import's registrations) share most of their outer frames, which then cost a compare each
	 * instead of a probe of the index. Emptied whenever a node is freed. */
	uint64_t last_ip[MGC_MAX_FRAMES];
	uint32_t last_node[MGC_MAX_FRAMES];
	unsigned last_n;
} st;

static inline uint64_t key_hash(uint32_t parent, uint64_t ip)
{
	return mgc_mix64(ip ^ ((uint64_t)parent << 32) ^ parent);
}

static inline struct mgp_node *node(uint32_t id)
{
	return (struct mgp_node *)mgp_chunk_at(&mgp_nodes, id);
}

int mgp_stacks_init(void)
{
	st.high = 1;
	return 0;
}

uint32_t mgp_stacks_nodes(void)
{
	return __atomic_load_n(&st.used, __ATOMIC_RELAXED);
}

uint32_t mgp_stacks_high(void)
{
	return __atomic_load_n(&st.high, __ATOMIC_ACQUIRE);
}

int mgp_stacks_in_file(uint32_t id)
{
	const uint64_t *w = mgp_chunk_find(&in_file, id >> 6);
	return w && (__atomic_load_n(w, __ATOMIC_RELAXED) >> (id & 63)) & 1;
}

int mgp_stacks_set_in_file(uint32_t id)
{
	if (mgp_chunks_ensure(&in_file, id >> 6) < 0)
		return -ENOMEM;
	__atomic_fetch_or((uint64_t *)mgp_chunk_at(&in_file, id >> 6), 1ull << (id & 63), __ATOMIC_RELAXED);
	return 0;
}

void mgp_stacks_forget_file(void)
{
	mgp_chunks_discard(&in_file);
}

static void index_put(uint32_t *tab, uint64_t mask, uint32_t id)
{
	const struct mgp_node *n = node(id);
	uint64_t i = key_hash(n->parent, n->ip) & mask;
	while (tab[i])
		i = (i + 1) & mask;
	tab[i] = id;
}

/* Keeps the index at most 70% full: doubles it (rehashing every node in use). */
static int index_room(void)
{
	uint64_t cap = st.index ? st.mask + 1 : 0;
	if ((uint64_t)(st.indexed + 1) * 10 <= cap * 7)
		return 0;
	uint64_t ncap = cap ? cap * 2 : 4096;
	uint32_t *nt = mgp_os_alloc(ncap * sizeof *nt);
	if (!nt)
		return -ENOMEM;
	for (uint64_t i = 0; i < cap; i++)
		if (st.index[i])
			index_put(nt, ncap - 1, st.index[i]);
	mgp_os_free(st.index, cap * sizeof *st.index);
	st.index = nt;
	st.mask = ncap - 1;
	return 0;
}

/* The index slot holding (parent, ip), or the empty slot where it would go. */
static uint64_t index_find(uint32_t parent, uint64_t ip)
{
	uint64_t i = key_hash(parent, ip) & st.mask;
	for (;;) {
		uint32_t id = st.index[i];
		if (!id)
			return i;
		const struct mgp_node *n = node(id);
		if (n->ip == ip && n->parent == parent)
			return i;
		i = (i + 1) & st.mask;
	}
}

/* A new node (parent, ip) into the empty index slot `slot`; its parent gains a reference. */
static uint32_t new_node(uint32_t parent, uint64_t ip, uint64_t slot)
{
	uint32_t id = st.free;
	if (id) {
		st.free = node(id)->parent;
	} else {
		if (mgp_chunks_ensure(&mgp_nodes, st.high) < 0)
			return 0;
		id = st.high;
	}
	struct mgp_node *n = node(id);
	n->ip = ip;
	n->parent = parent;
	n->refs = 0;
	if (parent)
		node(parent)->refs++;
	st.index[slot] = id;
	st.used++;
	st.indexed++;
	if (id == st.high)
		__atomic_store_n(&st.high, id + 1, __ATOMIC_RELEASE);
	return id;
}

int mgp_stacks_intern(const uintptr_t *ips, unsigned n, uint32_t *leaf)
{
	uint32_t parent = 0;
	unsigned same = 0; /* outer frames shared with the last stack */
	while (same < n && same < st.last_n && st.last_ip[same] == (uint64_t)ips[n - 1 - same])
		same++;
	if (same)
		parent = st.last_node[same - 1];
	for (unsigned k = n - same; k-- > 0;) {
		if (index_room() < 0)
			goto nomem;
		uint64_t slot = index_find(parent, ips[k]);
		uint32_t id = st.index[slot];
		if (!id && !(id = new_node(parent, ips[k], slot)))
			goto nomem;
		parent = id;
		st.last_ip[n - 1 - k] = ips[k];
		st.last_node[n - 1 - k] = id;
	}
	st.last_n = n;
	if (parent)
		node(parent)->refs++;
	*leaf = parent;
	return 0;
nomem:
	st.last_n = 0;
	if (parent) { /* the nodes made so far are not used by anything: free them */
		node(parent)->refs++;
		mgp_stacks_release(parent);
	}
	return -ENOMEM;
}

static uint64_t slot_home(const void *e)
{
	const struct mgp_node *n = node(*(const uint32_t *)e);
	return key_hash(n->parent, n->ip);
}

static int slot_empty(const void *e)
{
	return *(const uint32_t *)e == 0;
}

void mgp_stacks_release(uint32_t leaf)
{
	uint32_t id = leaf;
	while (id && --node(id)->refs == 0) {
		st.last_n = 0;
		struct mgp_node *n = node(id);
		uint64_t slot = index_find(n->parent, n->ip);
		st.index[mgc_oa_delete(st.index, sizeof *st.index, st.mask, slot, slot_home, slot_empty)] = 0;
		uint32_t parent = n->parent;
		if (mgp_stacks_in_file(id)) /* its id may come back with another frame */
			__atomic_fetch_and((uint64_t *)mgp_chunk_at(&in_file, id >> 6), ~(1ull << (id & 63)),
					   __ATOMIC_RELAXED);
		n->ip = 0;
		n->parent = st.free;
		st.free = id;
		st.used--;
		st.indexed--;
		id = parent;
	}
}

void mgp_stacks_forked(void)
{
	/* New nodes go to fresh pages, not the parent's, and into an index of their own: the
	 * parent's is dropped (the parent may rewrite or replace it, and every page it touches would
	 * be copied into the child). A child's new stacks then share no node with the parent's. */
	st.free = 0;
	st.last_n = 0;
	st.forked = 1;
	mgp_os_free(st.index, st.index ? (st.mask + 1) * sizeof *st.index : 0);
	st.index = NULL;
	st.mask = 0;
	st.indexed = 0;
}

unsigned mgp_stacks_walk(uint32_t leaf, uint64_t *out, unsigned cap)
{
	unsigned k = 0;
	for (uint32_t id = leaf; id && k < cap; id = node(id)->parent)
		out[k++] = node(id)->ip;
	return k;
}

/* ---- compaction ---- */

#define MOVED 0x80000000u   /* an old node's refs once it is copied: MOVED | its new id */

static struct mgp_chunks fresh = {.esize = sizeof(struct mgp_node), .shift = NODE_SHIFT};

int mgp_stacks_compact_due(uint32_t min_free)
{
	uint32_t holes = st.high - 1 - st.used;
	return !st.forked && holes >= min_free && holes > st.used;
}

static uint64_t index_cap(uint32_t n)
{
	uint64_t cap = 4096;
	while ((uint64_t)(n + 1) * 10 > cap * 7)
		cap *= 2;
	return cap;
}

static void fresh_drop(void)
{
	for (unsigned k = 0; k < MGP_CHUNKS_MAX; k++) {
		mgp_os_free(fresh.chunk[k], fresh.esize << fresh.shift);
		fresh.chunk[k] = NULL;
	}
}

int mgp_stacks_compact_start(void)
{
	uint64_t cap = index_cap(st.used);
	st.new_index = mgp_os_alloc(cap * sizeof *st.new_index);
	int err = st.new_index ? 0 : -ENOMEM;
	for (uint64_t i = 0; !err && i <= (uint64_t)st.used + 1; i += 1u << NODE_SHIFT)
		err = mgp_chunks_ensure(&fresh, i);
	if (!err)
		err = mgp_chunks_ensure(&fresh, (uint64_t)st.used + 1);
	if (err) {
		mgp_os_free(st.new_index, st.new_index ? cap * sizeof *st.new_index : 0);
		st.new_index = NULL;
		fresh_drop();
		return -ENOMEM;
	}
	st.new_mask = cap - 1;
	st.new_high = 1;
	return 0;
}

uint32_t mgp_stacks_compact_move(uint32_t leaf)
{
	uint32_t chain[MGC_MAX_FRAMES];
	unsigned k = 0;
	uint32_t id = leaf;
	for (; id && !(node(id)->refs & MOVED) && k < MGC_MAX_FRAMES; id = node(id)->parent)
		chain[k++] = id;
	uint32_t parent = id ? node(id)->refs & ~MOVED : 0;
	while (k-- > 0) {
		struct mgp_node *o = node(chain[k]);
		uint32_t nid = st.new_high++;
		*(struct mgp_node *)mgp_chunk_at(&fresh, nid) =
			(struct mgp_node){.ip = o->ip, .parent = parent, .refs = o->refs};
		o->refs = MOVED | nid;
		parent = nid;
	}
	return leaf ? node(leaf)->refs & ~MOVED : 0;
}

void mgp_stacks_compact_finish(void)
{
	size_t bytes = mgp_nodes.esize << mgp_nodes.shift;
	for (unsigned k = 0; k < MGP_CHUNKS_MAX; k++) {
		mgp_os_free(mgp_nodes.chunk[k], mgp_nodes.chunk[k] ? bytes : 0);
		__atomic_store_n(&mgp_nodes.chunk[k], fresh.chunk[k], __ATOMIC_RELEASE);
		fresh.chunk[k] = NULL;
	}
	mgp_os_free(st.index, st.index ? (st.mask + 1) * sizeof *st.index : 0);
	st.index = st.new_index;
	st.mask = st.new_mask;
	st.new_index = NULL;
	for (uint32_t id = 1; id < st.new_high; id++)
		index_put(st.index, st.mask, id);
	mgp_stacks_forget_file(); /* renumbered: defined again in the file as stacks need them */
	st.used = st.indexed = st.new_high - 1;
	st.free = 0;
	st.last_n = 0;
	__atomic_store_n(&st.high, st.new_high, __ATOMIC_RELEASE);
}
