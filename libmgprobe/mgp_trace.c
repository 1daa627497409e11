/* SPDX-License-Identifier: MIT */
/* mgp_trace.c: serializes the probe's state into trace records. Runs on the sampler thread or a
 * thread at a step marker, with the writer lock held; never on the allocation fast path, never
 * calling malloc (buffers come from the kernel), and never failing the target: an I/O error
 * closes the trace with one line on stderr. */
#define _GNU_SOURCE
#include "mgp_trace.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mgp_modules.h"
#include "mgp_os.h"
#include "mgp_pycode.h"
#include "mgp_python.h"
#include "mgp_sites.h"

#define OUT_CAP (1u << 20)

/* The trace writer's whole state (writer lock held). */
static struct {
	int fd;
	int ok;       /* the file is open and healthy */
	int opening;  /* mgp_trace_open is writing the header: a failure is its caller's to say */
	dev_t dev;    /* the trace file's identity: the program may close our fd and reuse it */
	ino_t ino;
	uint64_t start_mono;
	char *out;    /* records not yet written to the file */
	size_t len;
	char *scratch;
	size_t scratch_cap;
	uint32_t max_sites;
	uint64_t *last_allocs, *last_frees, *last_live; /* per site, as last written */
	uint32_t *dirty_ids;                            /* scratch for the changed-site list */
	uint32_t *leaves;                               /* per site, its stack's innermost node */
	struct trie_slot *trie;                         /* the frame tree written so far */
	uint64_t trie_cap;
	uint32_t trie_nodes;
	uint32_t stacks_written;                        /* sites below this id have their stack */
	uint32_t codes_written;                         /* Python code objects written (ids below) */
	uint32_t modules_gen;                           /* module generations written so far */
	struct {
		uint64_t live[3], count[3]; /* heap, mmap, CUDA */
		uint64_t allocs, frees;
	} tot;
	/* CUDA bytes by (kind, device), kept like tot; written as DEVMEM after each snapshot once
	 * any is seen. The pool cells and device-site details come from the CUDA source. */
	struct mgc_devmem_cell cells[MGP_TRACE_MAX_CELLS];
	uint32_t ncells;
	const struct mgp_trace_cuda *cuda;
	uint64_t prev_t, prev_step; /* the previous snapshot's, for SNAPSHOT2's deltas */
	char prev_label[32];
} trace = {.fd = -1};

int mgp_trace_init(uint32_t max_sites)
{
	trace.out = mgp_os_alloc(OUT_CAP);
	trace.scratch_cap = 1u << 20;
	trace.scratch = mgp_os_alloc(trace.scratch_cap);
	trace.last_allocs = mgp_os_alloc((size_t)max_sites * 8);
	trace.last_frees = mgp_os_alloc((size_t)max_sites * 8);
	trace.last_live = mgp_os_alloc((size_t)max_sites * 8);
	trace.dirty_ids = mgp_os_alloc((size_t)max_sites * 4);
	trace.leaves = mgp_os_alloc((size_t)max_sites * 4);
	if (!trace.out || !trace.scratch || !trace.last_allocs || !trace.last_frees || !trace.last_live ||
	    !trace.dirty_ids || !trace.leaves)
		return -ENOMEM;
	trace.max_sites = max_sites;
	return 0;
}

int mgp_trace_ok(void)
{
	return trace.ok;
}

/* Whether trace.fd is still the trace file we opened. A program that closes every descriptor and
 * opens its own files may be given our number: writing or closing it would hurt the program. */
static int fd_is_ours(void)
{
	struct stat st;
	return trace.fd >= 0 && fstat(trace.fd, &st) == 0 && st.st_dev == trace.dev &&
	       st.st_ino == trace.ino;
}

static void close_if_ours(void)
{
	if (fd_is_ours())
		close(trace.fd);
	trace.fd = -1;
}

/* Closes the trace after a write error, with one line unless it is being opened (the opener
 * says why it failed) or the file-size limit was already reported. */
static void fail(int err)
{
	if (!trace.ok)
		return;
	trace.ok = 0;
	if (!trace.opening && err == EFBIG)
		mgp_log_fsize("stopped the trace: recording stopped, the program runs on");
	else if (!trace.opening)
		mgp_log("cannot write the trace (%s): recording stopped, the program runs on",
			strerror(err));
	close_if_ours();
}

int mgp_trace_flush(void)
{
	size_t off = 0;
	if (!trace.ok) {
		trace.len = 0;
		return -EIO;
	}
	if (trace.len && !fd_is_ours()) {
		trace.len = 0;
		trace.fd = -1;
		fail(EBADF); /* "Bad file descriptor": the program closed it */
		return -EBADF;
	}
	sigset_t old;
	mgp_xfsz_hold(&old); /* a file-size limit stops the trace, not the program */
	while (off < trace.len) {
		ssize_t r = write(trace.fd, trace.out + off, trace.len - off);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			int e = errno;
			mgp_xfsz_release(&old, e == EFBIG);
			trace.len = 0;
			fail(e);
			return -e;
		}
		if (r == 0) {
			mgp_xfsz_release(&old, 0);
			trace.len = 0;
			fail(ENOSPC);
			return -ENOSPC;
		}
		off += (size_t)r;
	}
	mgp_xfsz_release(&old, 0);
	trace.len = 0;
	return 0;
}

/* Appends raw bytes to the output buffer, flushing when full. */
static void put(const void *p, size_t n)
{
	const char *s = p;
	while (n && trace.ok) {
		if (trace.len == OUT_CAP && mgp_trace_flush() < 0)
			return;
		size_t k = OUT_CAP - trace.len < n ? OUT_CAP - trace.len : n;
		memcpy(trace.out + trace.len, s, k);
		trace.len += k;
		s += k;
		n -= k;
	}
}

/* Writes one record whose payload is the concatenation of up to three parts. */
static void record3(uint32_t type, const void *a, size_t na, const void *b, size_t nb,
		    const void *c, size_t nc)
{
	static const char zeros[8];
	size_t len = na + nb + nc;
	uint32_t h = mgc_fnv1a_more(mgc_fnv1a_more(mgc_fnv1a_more(MGC_FNV1A_INIT, a, na), b, nb), c, nc);
	struct mgc_rec hdr = {.type = type, .len = (uint32_t)len, .check = h};
	put(&hdr, sizeof hdr);
	put(a, na);
	put(b, nb);
	put(c, nc);
	put(zeros, mgc_pad8(len) - len);
}

static uint64_t now_rel(void)
{
	return mgp_now_ns() - trace.start_mono;
}


/* Never through a symlink and never waiting on a FIFO (O_NOFOLLOW, O_NONBLOCK: -ELOOP, -ENXIO),
 * and only a regular file (-EINVAL); 0600 like a core dump, since a trace holds command lines. An
 * existing file is truncated only once it is known to be a regular file. */
static int open_file(const char *path, int excl)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY |
			    (excl ? O_EXCL : 0), 0600);
	if (fd < 0)
		return -errno;
	/* Out of the way of the low numbers programs use and reuse. */
	int high = fcntl(fd, F_DUPFD_CLOEXEC, 512);
	if (high >= 0) {
		close(fd);
		fd = high;
	}
	struct stat st;
	int err = fstat(fd, &st) < 0 ? -errno : !S_ISREG(st.st_mode) ? -EINVAL : 0;
	if (!err && !excl && (ftruncate(fd, 0) < 0 || fchmod(fd, 0600) < 0))
		err = -errno;
	if (err) {
		close(fd);
		return err;
	}
	trace.dev = st.st_dev;
	trace.ino = st.st_ino;
	trace.fd = fd;
	trace.ok = 1;
	trace.len = 0;
	return 0;
}

int mgp_trace_open(const char *path, int excl, const struct mgp_process *p)
{
	int err = open_file(path, excl);
	if (err < 0)
		return err;
	trace.start_mono = p->start_mono_ns;
	struct mgc_file_header fh = {.version = MGC_TRACE_VERSION,
				     .header_size = sizeof(struct mgc_file_header)};
	memcpy(fh.magic, MGC_TRACE_MAGIC, 8);
	put(&fh, sizeof fh);
	struct mgc_rec_process pr = {
		.pid = p->pid, .ppid = p->ppid,
		.start_realtime_ns = p->start_realtime_ns, .start_mono_ns = p->start_mono_ns,
		.mem_total = p->mem_total, .mem_available = p->mem_available,
		.cgroup_limit = p->cgroup_limit, .page_size = p->page_size,
		.interval_ms = p->interval_ms, .depth = p->depth,
		.rank = p->rank, .local_rank = p->local_rank,
		.host_len = (uint32_t)strlen(p->host), .cmdline_len = p->cmdline_len, .exe_len = p->exe_len,
	};
	/* The three strings go in one part: copy them behind each other in the scratch buffer. */
	memcpy(trace.scratch, p->host, pr.host_len);
	memcpy(trace.scratch + pr.host_len, p->cmdline, pr.cmdline_len);
	memcpy(trace.scratch + pr.host_len + pr.cmdline_len, p->exe, pr.exe_len);
	size_t strings = (size_t)pr.host_len + pr.cmdline_len + pr.exe_len;
	trace.opening = 1;
	record3(MGC_REC_PROCESS, &pr, sizeof pr, trace.scratch, strings, NULL, 0);
	err = mgp_trace_flush();
	trace.opening = 0;
	if (err < 0)
		unlink(path); /* created or emptied above, and nothing in it */
	return err;
}

/* ---- module map ---- */

static void write_module(const struct mgp_module *m, uint32_t gen)
{
	if (m->gen_unloaded == gen) {
		struct mgc_rec_module_unload r = {.id = m->id, .gen = gen};
		record3(MGC_REC_MODULE_UNLOAD, &r, sizeof r, NULL, 0, NULL, 0);
	} else if (m->gen_loaded == gen) {
		struct mgc_rec_module r = {.id = m->id, .gen = gen, .bias = m->bias, .start = m->start,
					   .end = m->end, .build_id_len = m->build_id_len,
					   .path_len = m->path_len};
		record3(MGC_REC_MODULE_LOAD, &r, sizeof r, m->build_id, m->build_id_len,
			mgp_modules_names() + m->path_off, m->path_len);
	}
}

void mgp_trace_modules(void)
{
	uint32_t n, gen = mgp_modules_gen();
	const struct mgp_module *mods = mgp_modules_all(&n);
	if (!trace.ok)
		return;
	/* Generation by generation, each one's unloads before its loads. */
	for (uint32_t g = trace.modules_gen + 1; g <= gen; g++) {
		for (int unloads = 1; unloads >= 0; unloads--)
			for (uint32_t i = 0; i < n; i++)
				if ((mods[i].gen_unloaded == g) == unloads)
					write_module(&mods[i], g);
	}
	trace.modules_gen = gen;
}

/* ---- stacks, snapshots, markers ---- */

static int scratch_reserve(size_t need);

/* ---- the frame tree: (parent node, IP) -> node id, the writer's own (under its lock) ---- */

struct trie_slot {
	uint64_t ip;
	uint32_t parent;
	uint32_t node; /* 0 = empty */
};

static inline uint64_t trie_hash(uint32_t parent, uint64_t ip)
{
	uint64_t h = (ip ^ ((uint64_t)parent << 40) ^ parent) * 0x9e3779b97f4a7c15ull;
	return h ^ (h >> 31);
}

static int trie_grow(void)
{
	uint64_t ncap = trace.trie_cap ? trace.trie_cap * 2 : (1u << 16);
	struct trie_slot *nt = mgp_os_alloc(ncap * sizeof *nt);
	if (!nt)
		return -ENOMEM;
	for (uint64_t i = 0; i < trace.trie_cap; i++) {
		if (!trace.trie[i].node)
			continue;
		uint64_t j = trie_hash(trace.trie[i].parent, trace.trie[i].ip) & (ncap - 1);
		while (nt[j].node)
			j = (j + 1) & (ncap - 1);
		nt[j] = trace.trie[i];
	}
	mgp_os_free(trace.trie, trace.trie_cap * sizeof *trace.trie);
	trace.trie = nt;
	trace.trie_cap = ncap;
	return 0;
}

/* The node for ip under parent; a new one is appended to the scratch buffer at *off. 0 when out
 * of memory. */
static uint32_t trie_node(uint32_t parent, uint64_t ip, size_t *off)
{
	if ((trace.trie_nodes + 1) * 2 > trace.trie_cap && trie_grow() < 0)
		return 0;
	uint64_t j = trie_hash(parent, ip) & (trace.trie_cap - 1);
	while (trace.trie[j].node) {
		if (trace.trie[j].ip == ip && trace.trie[j].parent == parent)
			return trace.trie[j].node;
		j = (j + 1) & (trace.trie_cap - 1);
	}
	if (scratch_reserve(*off + MGC_FRAME_NODE_SIZE) < 0)
		return 0;
	uint32_t node = ++trace.trie_nodes;
	trace.trie[j] = (struct trie_slot){ip, parent, node};
	memcpy(trace.scratch + *off, &ip, 8);
	memcpy(trace.scratch + *off + 8, &parent, 4);
	*off += MGC_FRAME_NODE_SIZE;
	return node;
}

/* Python code objects registered since the last call (mgp_pycode.h), before any stack that names
 * them, and a notice when Python frames are off or a frame failed validation. */
static void write_pycodes(void)
{
	char text[300];
	if (mgp_python_take_notice(text, sizeof text))
		mgp_trace_notice(text);
	uint32_t n = mgp_pycode_count();
	if (trace.codes_written == 0)
		trace.codes_written = 1; /* id 0 is "none" */
	const char *b = mgp_pycode_bytes();
	for (; trace.codes_written < n; trace.codes_written++) {
		const struct mgp_pycode *c = mgp_pycode_get(trace.codes_written);
		struct mgc_rec_pycode r = {.id = trace.codes_written, .firstlineno = c->firstlineno,
					   .qualname_len = c->qualname_len, .file_len = c->file_len,
					   .linetable_len = c->linetable_len, .py_major = 3,
					   .py_minor = (uint8_t)mgp_python_minor()};
		record3(MGC_REC_PYCODE, &r, sizeof r, b + c->qualname_off,
			(size_t)c->qualname_len + c->file_len + c->linetable_len, NULL, 0);
	}
}

/* Writes the stacks of the sites published since the last call: first the frame-tree nodes they
 * add (FRAMES, in chunks), then STACK2 records, each an array of sites naming their innermost
 * node. */
void mgp_trace_write_stacks(void)
{
	uint32_t n = mgp_sites_count(); /* first: a site's code objects are registered before it */
	if (!trace.ok)
		return;
	write_pycodes();
	if (trace.stacks_written == 0)
		trace.stacks_written = 1; /* id 0 is "none" */
	uint32_t first_node = trace.trie_nodes + 1;
	size_t off = 0;
	for (uint32_t id = trace.stacks_written; id < n; id++) {
		const struct mgp_site *s = mgp_site_get(id);
		const uint64_t *f = mgp_site_frames(s);
		uint32_t node = 0;
		for (unsigned k = s->nframes; k-- > 0;) {
			node = trie_node(node, f[k], &off);
			if (!node) {
				fail(ENOMEM);
				return;
			}
		}
		trace.leaves[id] = node;
	}
	/* The new nodes, in chunks of at most 1M (12 MiB records). */
	uint32_t total = trace.trie_nodes + 1 - first_node;
	for (uint32_t done = 0; done < total;) {
		uint32_t k = total - done < (1u << 20) ? total - done : (1u << 20);
		struct mgc_rec_frames fr = {.first = first_node + done, .count = k};
		record3(MGC_REC_FRAMES, &fr, sizeof fr, trace.scratch + (size_t)done * MGC_FRAME_NODE_SIZE,
			(size_t)k * MGC_FRAME_NODE_SIZE, NULL, 0);
		done += k;
	}
	/* Then the stacks, many to a record (chunks of at most 256k, 4 MiB). */
	for (uint32_t id = trace.stacks_written; id < n;) {
		uint32_t k = 0;
		if (scratch_reserve((size_t)(1u << 18) * sizeof(struct mgc_rec_stack2)) < 0) {
			fail(ENOMEM);
			return;
		}
		for (; id < n && k < (1u << 18); id++, k++) {
			const struct mgp_site *s = mgp_site_get(id);
			struct mgc_rec_stack2 r = {.id = id, .gen = mgp_modules_gen(), .kind = s->kind,
						   .nframes = s->nframes, .leaf = trace.leaves[id]};
			memcpy(trace.scratch + (size_t)k * sizeof r, &r, sizeof r);
		}
		record3(MGC_REC_STACK2, trace.scratch, (size_t)k * sizeof(struct mgc_rec_stack2), NULL, 0,
			NULL, 0);
	}
	trace.stacks_written = n;
}

static int scratch_reserve(size_t need)
{
	if (need <= trace.scratch_cap)
		return 0;
	size_t ncap = trace.scratch_cap * 2;
	while (ncap < need)
		ncap *= 2;
	char *n = mgp_os_alloc(ncap);
	if (!n)
		return -ENOMEM;
	memcpy(n, trace.scratch, trace.scratch_cap);
	mgp_os_free(trace.scratch, trace.scratch_cap);
	trace.scratch = n;
	trace.scratch_cap = ncap;
	return 0;
}

void mgp_trace_set_cuda(const struct mgp_trace_cuda *cuda)
{
	trace.cuda = cuda;
}

/* A CUDA site's change goes to its (kind, device) cell. Cells are never removed: a cell that went
 * back to zero is still written, so a reader sees it drop. */
static void cell_add(uint16_t kind, uint64_t dbytes, uint64_t dcount)
{
	uint32_t c = 0;
	while (c < trace.ncells && trace.cells[c].kind != kind)
		c++;
	if (c == trace.ncells) {
		if (trace.ncells == MGP_TRACE_MAX_CELLS || (!dbytes && !dcount))
			return; /* full: the totals keep them; nothing yet (a forked child's zeroed sites) */
		trace.cells[trace.ncells++] = (struct mgc_devmem_cell){.kind = kind};
	}
	trace.cells[c].bytes += dbytes;
	trace.cells[c].count += (uint32_t)dcount;
}

/* After a snapshot in a process that has CUDA memory: DEVMEM (the cells, then the pools') and
 * DEVSITE for device-site details that changed. */
static void write_cuda(void)
{
	struct mgc_devmem_cell pools[MGP_TRACE_MAX_CELLS];
	uint32_t np = trace.cuda ? trace.cuda->pool_cells(pools, MGP_TRACE_MAX_CELLS) : 0;
	if (trace.ncells + np) {
		struct mgc_rec_devmem r = {.ncells = trace.ncells + np};
		record3(MGC_REC_DEVMEM, &r, sizeof r, trace.cells, trace.ncells * sizeof trace.cells[0], pools,
			np * sizeof pools[0]);
	}
	if (!trace.cuda)
		return;
	struct mgc_rec_devsite ds[64];
	uint32_t n;
	while ((n = trace.cuda->take_devsites(ds, 64)) > 0)
		record3(MGC_REC_DEVSITE, ds, n * sizeof ds[0], NULL, 0, NULL, 0);
}

/* Which of tot's slots a site's kind counts in: heap, anonymous mmap, CUDA. */
static unsigned total_slot(unsigned kind)
{
	return kind == MGC_KIND_MMAP ? 1 : mgc_kind_is_cuda(kind) ? 2 : 0;
}

/* A site's counters, read once per snapshot. */
struct site_now {
	uint64_t allocs, frees, live;
};

/* Adds what a site changed since it was last seen to the totals (all of it in a FULL snapshot,
 * which starts them from zero) and remembers its counters. Differences are modular: a transiently
 * negative read evens out later. Returns whether the site changed. */
static int account_site(uint32_t id, const struct mgp_site *s, int full, struct site_now *now)
{
	now->allocs = __atomic_load_n(&s->allocs, __ATOMIC_ACQUIRE);
	now->frees = __atomic_load_n(&s->frees, __ATOMIC_RELAXED);
	now->live = __atomic_load_n(&s->live_bytes, __ATOMIC_RELAXED);
	uint64_t la = full ? 0 : trace.last_allocs[id], lf = full ? 0 : trace.last_frees[id];
	uint64_t ll = full ? 0 : trace.last_live[id];
	unsigned k = total_slot(s->kind);
	trace.tot.live[k] += now->live - ll;
	trace.tot.count[k] += (now->allocs - now->frees) - (la - lf);
	if (k == 2)
		cell_add(s->kind, now->live - ll, (now->allocs - now->frees) - (la - lf));
	trace.tot.allocs += now->allocs - la;
	trace.tot.frees += now->frees - lf;
	trace.last_allocs[id] = now->allocs;
	trace.last_frees[id] = now->frees;
	trace.last_live[id] = now->live;
	return full || now->allocs != la || now->frees != lf || now->live != ll;
}

/* The most bytes encode_site writes: 8 varints of counters and 32 of cohorts, 10 bytes each. */
#define SITE_ENTRY_MAX (10u * (8u + MGC_COHORTS))

/* A site's SNAPSHOT2 entry (mgc_format.h) at q; returns its length. */
static size_t encode_site(unsigned char *q, uint32_t id_delta, const struct mgp_site *s,
			  const struct site_now *now)
{
	uint64_t coh[MGC_COHORTS];
	uint32_t mask = 0;
	for (unsigned c = 0; c < MGC_COHORTS; c++) {
		uint64_t v = __atomic_load_n(&s->cohorts[c], __ATOMIC_RELAXED);
		if (v && v < (1ull << 62)) { /* a transiently negative bucket reads as huge: skip it */
			mask |= 1u << c;
			coh[c] = v;
		}
	}
	size_t w = mgc_put_varint(q, id_delta);
	w += mgc_put_varint(q + w, now->live);
	w += mgc_put_varint(q + w, now->allocs - now->frees);
	w += mgc_put_varint(q + w, now->allocs);
	w += mgc_put_varint(q + w, __atomic_load_n(&s->alloc_bytes, __ATOMIC_RELAXED));
	w += mgc_put_varint(q + w, now->frees);
	w += mgc_put_varint(q + w, __atomic_load_n(&s->peak_bytes, __ATOMIC_RELAXED));
	w += mgc_put_varint(q + w, mask);
	for (unsigned c = 0; c < MGC_COHORTS; c++)
		if (mask & (1u << c))
			w += mgc_put_varint(q + w, coh[c]);
	return w;
}

/* Visits the sites that changed since the last snapshot (the changed-site bitmap), or every site
 * in a FULL one, so a snapshot costs O(changed), not O(sites): a PyTorch process has 10^5 sites
 * from its start-up. Keeps the totals and encodes the entries into the scratch buffer; returns
 * their bytes and, in *nsites, their number. */
static size_t visit_sites(int full, uint32_t *nsites)
{
	size_t off = 0;
	uint32_t count = mgp_sites_count(), prev_id = 0;
	uint32_t nd = mgp_sites_take_dirty(trace.dirty_ids);
	uint32_t nvisit = full ? (count > 1 ? count - 1 : 0) : nd;
	*nsites = 0;
	if (full) {
		memset(&trace.tot, 0, sizeof trace.tot);
		for (uint32_t c = 0; c < trace.ncells; c++)
			trace.cells[c].bytes = trace.cells[c].count = 0;
	}
	for (uint32_t i = 0; i < nvisit; i++) {
		uint32_t id = full ? i + 1 : trace.dirty_ids[i];
		const struct mgp_site *s = mgp_site_get(id);
		struct site_now now;
		if (!account_site(id, s, full, &now) || (now.allocs == 0 && now.frees == 0))
			continue;
		if (scratch_reserve(off + SITE_ENTRY_MAX) < 0)
			break;
		off += encode_site((unsigned char *)trace.scratch + off, id - prev_id, s, &now);
		prev_id = id;
		(*nsites)++;
	}
	return off;
}

/* SNAPSHOT2's header (mgc_format.h) at h: the fields in varints, time and step as differences
 * from the previous snapshot, the label only when it changed. Returns its length. */
static size_t encode_header(unsigned char *h, const struct mgc_rec_snapshot *sn)
{
	size_t hn = 0;
	hn += mgc_put_varint(h + hn, sn->t_ns - trace.prev_t);
	hn += mgc_put_varint(h + hn, mgc_zigzag((int64_t)(sn->step - trace.prev_step)));
	hn += mgc_put_varint(h + hn, sn->rss_anon >> 10);
	hn += mgc_put_varint(h + hn, sn->rss_file >> 10);
	hn += mgc_put_varint(h + hn, sn->rss_shmem >> 10);
	hn += mgc_put_varint(h + hn, sn->heap_live_bytes);
	hn += mgc_put_varint(h + hn, sn->heap_live_count);
	hn += mgc_put_varint(h + hn, sn->mmap_live_bytes);
	hn += mgc_put_varint(h + hn, sn->mmap_live_count);
	hn += mgc_put_varint(h + hn, sn->malloc_free_bytes);
	hn += mgc_put_varint(h + hn, sn->malloc_arena_bytes);
	hn += mgc_put_varint(h + hn, sn->device_live_bytes);
	hn += mgc_put_varint(h + hn, sn->allocs_total);
	hn += mgc_put_varint(h + hn, sn->frees_total);
	hn += mgc_put_varint(h + hn, sn->flags);
	size_t ll = strnlen(sn->label, sizeof sn->label);
	if (ll == strnlen(trace.prev_label, sizeof trace.prev_label) &&
	    memcmp(sn->label, trace.prev_label, ll) == 0) {
		hn += mgc_put_varint(h + hn, 0);
	} else {
		hn += mgc_put_varint(h + hn, ll + 1);
		memcpy(h + hn, sn->label, ll);
		hn += ll;
		memset(trace.prev_label, 0, sizeof trace.prev_label);
		memcpy(trace.prev_label, sn->label, ll);
	}
	hn += mgc_put_varint(h + hn, sn->nsites);
	trace.prev_t = sn->t_ns;
	trace.prev_step = sn->step;
	return hn;
}

void mgp_trace_snapshot(struct mgc_rec_snapshot *sn)
{
	uint32_t nsites;
	size_t off = visit_sites((sn->flags & MGC_SNAP_FULL) != 0, &nsites);
	sn->heap_live_bytes = trace.tot.live[0];
	sn->heap_live_count = trace.tot.count[0];
	sn->mmap_live_bytes = trace.tot.live[1];
	sn->mmap_live_count = trace.tot.count[1];
	sn->device_live_bytes = trace.tot.live[2];
	sn->allocs_total = trace.tot.allocs;
	sn->frees_total = trace.tot.frees;
	sn->nsites = nsites;
	if (!trace.ok)
		return;
	unsigned char h[16 * 10 + 40];
	size_t hn = encode_header(h, sn);
	record3(MGC_REC_SNAPSHOT2, h, hn, trace.scratch, off, NULL, 0);
	write_cuda();
}

void mgp_trace_step(uint64_t step)
{
	struct mgc_rec_step r = {.t_ns = now_rel(), .step = step};
	record3(MGC_REC_STEP, &r, sizeof r, NULL, 0, NULL, 0);
}

void mgp_trace_label(uint64_t step, const char *label)
{
	size_t n = strlen(label);
	struct mgc_rec_label r = {.t_ns = now_rel(), .step = step, .len = (uint32_t)n};
	record3(MGC_REC_LABEL, &r, sizeof r, label, n, NULL, 0);
}

void mgp_trace_child(int pid, uint32_t how)
{
	struct mgc_rec_child r = {.t_ns = now_rel(), .pid = pid, .how = how};
	record3(MGC_REC_CHILD, &r, sizeof r, NULL, 0, NULL, 0);
}

void mgp_trace_end(uint32_t reason, int status)
{
	struct mgc_rec_end r = {.t_ns = now_rel(), .reason = reason, .status = status};
	record3(MGC_REC_END, &r, sizeof r, NULL, 0, NULL, 0);
}

/* The perf map's name is well known and its directory world-writable: anyone may have planted
 * something there for our pid. Opens it only as a regular file of our own user with one link,
 * never through a symlink (/etc/shadow) and never blocking (a FIFO). Returns the descriptor, or -1
 * with *why set (NULL when there is simply no map). */
static int open_perfmap(const char *path, const char **why)
{
	*why = NULL;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
	if (fd < 0) {
		if (errno == ELOOP)
			*why = "a symbolic link";
		else if (errno != ENOENT)
			*why = strerror(errno);
		return -1;
	}
	struct stat st;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
		*why = "not a regular file";
	else if (st.st_uid != geteuid())
		*why = "owned by another user";
	else if (st.st_nlink != 1)
		*why = "a file with other links";
	if (*why) {
		close(fd);
		return -1;
	}
	return fd;
}

void mgp_trace_perfmap(int pid)
{
	char path[64], note[160];
	const char *why;
	if (!trace.ok)
		return;
	mgp_fmt(path, sizeof path, "/tmp/perf-%d.map", pid);
	int fd = open_perfmap(path, &why);
	if (fd < 0) {
		if (why) {
			mgp_fmt(note, sizeof note, "the perf map %s was not copied: %s", path, why);
			mgp_trace_notice(note);
		}
		return;
	}
	size_t chunk = 1u << 20, total = 0;
	if (scratch_reserve(chunk) == 0) {
		while (total < MGP_PERFMAP_MAX) {
			size_t want = MGP_PERFMAP_MAX - total < chunk ? MGP_PERFMAP_MAX - total : chunk;
			ssize_t r = read(fd, trace.scratch, want);
			if (r < 0 && errno == EINTR)
				continue;
			if (r <= 0)
				break;
			record3(MGC_REC_PERFMAP, trace.scratch, (size_t)r, NULL, 0, NULL, 0);
			total += (size_t)r;
		}
	}
	char more;
	if (total >= MGP_PERFMAP_MAX && read(fd, &more, 1) == 1) {
		mgp_fmt(note, sizeof note, "the perf map %s was cut at %u MiB", path,
			(unsigned)(MGP_PERFMAP_MAX >> 20));
		mgp_trace_notice(note);
	}
	close(fd);
}

void mgp_trace_notice(const char *text)
{
	size_t n = strlen(text);
	struct mgc_rec_notice r = {.t_ns = now_rel(), .len = (uint32_t)n};
	record3(MGC_REC_NOTICE, &r, sizeof r, text, n, NULL, 0);
}

void mgp_trace_forget(void)
{
	close_if_ours();
	trace.ok = 0;
	trace.len = 0;
	trace.stacks_written = 0;
	trace.codes_written = 0;
	trace.modules_gen = 0;
	size_t used = (size_t)mgp_sites_count() * 8; /* only pages the parent touched */
	memset(trace.last_allocs, 0, used);
	memset(trace.last_frees, 0, used);
	memset(trace.last_live, 0, used);
	memset(&trace.tot, 0, sizeof trace.tot);
	trace.ncells = 0;
	trace.prev_t = trace.prev_step = 0;
	memset(trace.prev_label, 0, sizeof trace.prev_label);
	/* the child's file starts its own frame tree */
	mgp_os_free(trace.trie, trace.trie_cap * sizeof *trace.trie);
	trace.trie = NULL;
	trace.trie_cap = 0;
	trace.trie_nodes = 0;
}

void mgp_trace_close(void)
{
	mgp_trace_flush();
	close_if_ours();
	trace.ok = 0;
}
