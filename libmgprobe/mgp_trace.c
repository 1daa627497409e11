/* SPDX-License-Identifier: MIT */
/* mgp_trace.c: serializes the probe's state into trace records. Runs on the sampler thread or a
 * thread at a step marker, with the writer lock held; never on the allocation fast path, never
 * calling malloc (buffers come from the kernel), and never failing the target: an I/O error
 * closes the trace with one line on stderr. */
#define _GNU_SOURCE
#include "mgp_trace.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <malloc.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "mgc_proc.h"
#include "mgp_elf.h"
#include "mgp_os.h"
#include "mgp_sites.h"

#define OUT_CAP (1u << 20)
#define MAX_MODS 8192u
#define NAMES_CAP (4u << 20)

struct mod {
	uint64_t bias, start, end;
	uint32_t id;
	uint32_t path_off, path_len;
	uint8_t bid[40];
	uint8_t bid_len;
	uint8_t live;
	uint8_t seen;
};

static struct {
	int fd;
	int ok;
	dev_t dev;    /* the trace file's identity: the program may close our fd and reuse it */
	ino_t ino;
	uint64_t start_mono;
	char *out;
	size_t len;
	char *scratch;
	size_t scratch_cap;
	uint64_t *last_allocs, *last_frees, *last_live; /* per site, as last written */
	uint32_t *dirty_ids;                            /* scratch for the changed-site list */
	uint32_t *leaves;                               /* per site, its stack's innermost node */
	struct trie_slot *trie;                         /* the frame tree written so far */
	uint64_t trie_cap;
	uint32_t trie_nodes;
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
	uint32_t max_sites;
	uint32_t stacks_written;
	struct mod *mods;
	uint32_t nmods, next_mod_id, gen;
	unsigned long long adds, subs;
	char *names;
	uint32_t names_used;
} W = {.fd = -1};

int mgp_trace_init(uint32_t max_sites)
{
	W.out = mgp_os_alloc(OUT_CAP);
	W.scratch_cap = 1u << 20;
	W.scratch = mgp_os_alloc(W.scratch_cap);
	W.last_allocs = mgp_os_alloc((size_t)max_sites * 8);
	W.last_frees = mgp_os_alloc((size_t)max_sites * 8);
	W.last_live = mgp_os_alloc((size_t)max_sites * 8);
	W.dirty_ids = mgp_os_alloc((size_t)max_sites * 4);
	W.leaves = mgp_os_alloc((size_t)max_sites * 4);
	W.mods = mgp_os_alloc(MAX_MODS * sizeof(struct mod));
	W.names = mgp_os_alloc(NAMES_CAP);
	if (!W.out || !W.scratch || !W.last_allocs || !W.last_frees || !W.last_live || !W.dirty_ids || !W.leaves ||
	    !W.mods || !W.names)
		return -ENOMEM;
	W.max_sites = max_sites;
	return 0;
}

int mgp_trace_ok(void)
{
	return W.ok;
}

/* Whether W.fd is still the trace file we opened. A program that closes every descriptor and
 * opens its own files may be given our number: writing or closing it would hurt the program. */
static int fd_is_ours(void)
{
	struct stat st;
	return W.fd >= 0 && fstat(W.fd, &st) == 0 && st.st_dev == W.dev && st.st_ino == W.ino;
}

static void close_if_ours(void)
{
	if (fd_is_ours())
		close(W.fd);
	W.fd = -1;
}

static void fail(int err)
{
	if (!W.ok)
		return;
	W.ok = 0;
	mgp_log("cannot write the trace (%s): recording stopped, the program runs on", strerror(err));
	close_if_ours();
}

int mgp_trace_flush(void)
{
	size_t off = 0;
	if (!W.ok) {
		W.len = 0;
		return -EIO;
	}
	if (W.len && !fd_is_ours()) {
		W.len = 0;
		W.fd = -1;
		fail(EBADF); /* "Bad file descriptor": the program closed it */
		return -EBADF;
	}
	sigset_t old;
	mgp_xfsz_hold(&old); /* a file-size limit stops the trace, not the program */
	while (off < W.len) {
		ssize_t r = write(W.fd, W.out + off, W.len - off);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			int e = errno;
			mgp_xfsz_release(&old, e == EFBIG);
			W.len = 0;
			fail(e);
			return -e;
		}
		if (r == 0) {
			mgp_xfsz_release(&old, 0);
			W.len = 0;
			fail(ENOSPC);
			return -ENOSPC;
		}
		off += (size_t)r;
	}
	mgp_xfsz_release(&old, 0);
	W.len = 0;
	return 0;
}

/* Appends raw bytes to the output buffer, flushing when full. */
static void put(const void *p, size_t n)
{
	const char *s = p;
	while (n && W.ok) {
		if (W.len == OUT_CAP && mgp_trace_flush() < 0)
			return;
		size_t k = OUT_CAP - W.len < n ? OUT_CAP - W.len : n;
		memcpy(W.out + W.len, s, k);
		W.len += k;
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
	return mgp_now_ns() - W.start_mono;
}


int mgp_trace_open(const char *path, int excl, const struct mgp_process_info *info)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | (excl ? O_EXCL : O_TRUNC), 0644);
	if (fd < 0)
		return -errno;
	/* Out of the way of the low numbers programs use and reuse. */
	int high = fcntl(fd, F_DUPFD_CLOEXEC, 512);
	if (high >= 0) {
		close(fd);
		fd = high;
	}
	struct stat st;
	if (fstat(fd, &st) < 0) {
		int e = errno;
		close(fd);
		return -e;
	}
	W.dev = st.st_dev;
	W.ino = st.st_ino;
	W.fd = fd;
	W.ok = 1;
	W.len = 0;
	W.start_mono = info->start_mono_ns;

	struct mgc_file_header fh = {.version = MGC_TRACE_VERSION,
				     .header_size = sizeof(struct mgc_file_header)};
	memcpy(fh.magic, MGC_TRACE_MAGIC, 8);
	put(&fh, sizeof fh);

	static char meminfo[4096], cmdline[4096], exe[1024], host[256];
	struct mgc_rec_process pr = {0};
	pr.pid = info->pid;
	pr.ppid = info->ppid;
	pr.start_realtime_ns = info->start_realtime_ns;
	pr.start_mono_ns = info->start_mono_ns;
	if (mgc_read_file("/proc/meminfo", meminfo, sizeof meminfo) > 0) {
		pr.mem_total = mgc_kv_kb(meminfo, "MemTotal");
		pr.mem_available = mgc_kv_kb(meminfo, "MemAvailable");
	}
	pr.cgroup_limit = mgc_cgroup_limit(0);
	pr.page_size = (uint32_t)sysconf(_SC_PAGESIZE);
	pr.interval_ms = info->interval_ms;
	pr.depth = info->depth;
	pr.rank = info->rank;
	pr.local_rank = info->local_rank;
	struct utsname u;
	host[0] = 0;
	if (uname(&u) == 0)
		mgp_fmt(host, sizeof host, "%s", u.nodename);
	long cl = mgc_read_file("/proc/self/cmdline", cmdline, sizeof cmdline);
	if (cl < 0)
		cl = 0;
	while (cl > 0 && cmdline[cl - 1] == 0)
		cl--;
	ssize_t el = readlink("/proc/self/exe", exe, sizeof exe - 1);
	if (el < 0)
		el = 0;
	pr.host_len = (uint32_t)strlen(host);
	pr.cmdline_len = (uint32_t)cl;
	pr.exe_len = (uint32_t)el;
	/* The three strings go in one part: copy them behind each other in the scratch buffer. */
	size_t off = 0;
	memcpy(W.scratch + off, host, pr.host_len);
	off += pr.host_len;
	memcpy(W.scratch + off, cmdline, pr.cmdline_len);
	off += pr.cmdline_len;
	memcpy(W.scratch + off, exe, pr.exe_len);
	off += pr.exe_len;
	record3(MGC_REC_PROCESS, &pr, sizeof pr, W.scratch, off, NULL, 0);
	return mgp_trace_flush();
}

/* ---- module map ---- */

struct scan {
	struct mod tmp[64];
	unsigned n;
};


static struct mod *find_mod(uint64_t bias, const char *name, size_t nlen)
{
	for (uint32_t i = 0; i < W.nmods; i++) {
		struct mod *m = &W.mods[i];
		if (m->live && m->bias == bias && m->path_len == nlen &&
		    memcmp(W.names + m->path_off, name, nlen) == 0)
			return m;
	}
	return NULL;
}

static void emit_load(const struct mod *m)
{
	struct mgc_rec_module r = {.id = m->id, .gen = W.gen, .bias = m->bias, .start = m->start,
				   .end = m->end, .build_id_len = m->bid_len, .path_len = m->path_len};
	record3(MGC_REC_MODULE_LOAD, &r, sizeof r, m->bid, m->bid_len, W.names + m->path_off,
		m->path_len);
}

static int changed;

static int on_phdr(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	(void)arg;
	char exe[1024];
	const char *name = mgp_elf_name(info, exe, sizeof exe);
	size_t nlen = strlen(name);
	struct mod *m = find_mod(info->dlpi_addr, name, nlen);
	if (m) {
		m->seen = 1;
		return 0;
	}
	if (W.nmods >= MAX_MODS || W.names_used + nlen > NAMES_CAP)
		return 0;
	m = &W.mods[W.nmods++];
	memset(m, 0, sizeof *m);
	m->bias = info->dlpi_addr;
	mgp_elf_range(info, &m->start, &m->end);
	m->bid_len = (uint8_t)mgp_elf_build_id(info, m->bid, sizeof m->bid);
	m->path_off = W.names_used;
	m->path_len = (uint32_t)nlen;
	memcpy(W.names + W.names_used, name, nlen);
	W.names_used += (uint32_t)nlen;
	m->id = ++W.next_mod_id;
	m->live = 1;
	m->seen = 1;
	changed = 1;
	return 0;
}

static int count_phdr(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct scan *sc = arg;
	(void)size;
	(void)sc;
	W.adds = info->dlpi_adds;
	W.subs = info->dlpi_subs;
	return 1; /* the counters are the same in every entry: one is enough */
}

void mgp_trace_sync_modules(int force)
{
	if (!W.ok)
		return;
	unsigned long long a = W.adds, s = W.subs;
	dl_iterate_phdr(count_phdr, NULL);
	if (!force && a == W.adds && s == W.subs)
		return;
	for (uint32_t i = 0; i < W.nmods; i++)
		W.mods[i].seen = 0;
	uint32_t first_new = W.nmods;
	changed = 0;
	dl_iterate_phdr(on_phdr, NULL);
	for (uint32_t i = 0; i < W.nmods; i++)
		if (W.mods[i].live && !W.mods[i].seen)
			changed = 1;
	if (!changed)
		return;
	W.gen++;
	for (uint32_t i = 0; i < W.nmods; i++) {
		struct mod *m = &W.mods[i];
		if (m->live && !m->seen) {
			m->live = 0;
			struct mgc_rec_module_unload r = {.id = m->id, .gen = W.gen};
			record3(MGC_REC_MODULE_UNLOAD, &r, sizeof r, NULL, 0, NULL, 0);
		}
	}
	for (uint32_t i = first_new; i < W.nmods; i++)
		emit_load(&W.mods[i]);
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
	uint64_t ncap = W.trie_cap ? W.trie_cap * 2 : (1u << 16);
	struct trie_slot *nt = mgp_os_alloc(ncap * sizeof *nt);
	if (!nt)
		return -ENOMEM;
	for (uint64_t i = 0; i < W.trie_cap; i++) {
		if (!W.trie[i].node)
			continue;
		uint64_t j = trie_hash(W.trie[i].parent, W.trie[i].ip) & (ncap - 1);
		while (nt[j].node)
			j = (j + 1) & (ncap - 1);
		nt[j] = W.trie[i];
	}
	mgp_os_free(W.trie, W.trie_cap * sizeof *W.trie);
	W.trie = nt;
	W.trie_cap = ncap;
	return 0;
}

/* The node for ip under parent; a new one is appended to the scratch buffer at *off. 0 when out
 * of memory. */
static uint32_t trie_node(uint32_t parent, uint64_t ip, size_t *off)
{
	if ((W.trie_nodes + 1) * 2 > W.trie_cap && trie_grow() < 0)
		return 0;
	uint64_t j = trie_hash(parent, ip) & (W.trie_cap - 1);
	while (W.trie[j].node) {
		if (W.trie[j].ip == ip && W.trie[j].parent == parent)
			return W.trie[j].node;
		j = (j + 1) & (W.trie_cap - 1);
	}
	if (scratch_reserve(*off + MGC_FRAME_NODE_SIZE) < 0)
		return 0;
	uint32_t node = ++W.trie_nodes;
	W.trie[j] = (struct trie_slot){ip, parent, node};
	memcpy(W.scratch + *off, &ip, 8);
	memcpy(W.scratch + *off + 8, &parent, 4);
	*off += MGC_FRAME_NODE_SIZE;
	return node;
}

/* Writes the stacks of the sites published since the last call: first the frame-tree nodes they
 * add (FRAMES, in chunks), then STACK2 records, each an array of sites naming their innermost
 * node. */
void mgp_trace_write_stacks(void)
{
	uint32_t n = mgp_sites_count();
	if (!W.ok)
		return;
	if (W.stacks_written == 0)
		W.stacks_written = 1; /* id 0 is "none" */
	uint32_t first_node = W.trie_nodes + 1;
	size_t off = 0;
	for (uint32_t id = W.stacks_written; id < n; id++) {
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
		W.leaves[id] = node;
	}
	/* The new nodes, in chunks of at most 1M (12 MB records). */
	uint32_t total = W.trie_nodes + 1 - first_node;
	for (uint32_t done = 0; done < total;) {
		uint32_t k = total - done < (1u << 20) ? total - done : (1u << 20);
		struct mgc_rec_frames fr = {.first = first_node + done, .count = k};
		record3(MGC_REC_FRAMES, &fr, sizeof fr, W.scratch + (size_t)done * MGC_FRAME_NODE_SIZE,
			(size_t)k * MGC_FRAME_NODE_SIZE, NULL, 0);
		done += k;
	}
	/* Then the stacks, many to a record (chunks of at most 256k, 4 MB). */
	for (uint32_t id = W.stacks_written; id < n;) {
		uint32_t k = 0;
		if (scratch_reserve((size_t)(1u << 18) * sizeof(struct mgc_rec_stack2)) < 0) {
			fail(ENOMEM);
			return;
		}
		for (; id < n && k < (1u << 18); id++, k++) {
			const struct mgp_site *s = mgp_site_get(id);
			struct mgc_rec_stack2 r = {.id = id, .gen = W.gen, .kind = s->kind,
						   .nframes = s->nframes, .leaf = W.leaves[id]};
			memcpy(W.scratch + (size_t)k * sizeof r, &r, sizeof r);
		}
		record3(MGC_REC_STACK2, W.scratch, (size_t)k * sizeof(struct mgc_rec_stack2), NULL, 0,
			NULL, 0);
	}
	W.stacks_written = n;
}

static int scratch_reserve(size_t need)
{
	if (need <= W.scratch_cap)
		return 0;
	size_t ncap = W.scratch_cap * 2;
	while (ncap < need)
		ncap *= 2;
	char *n = mgp_os_alloc(ncap);
	if (!n)
		return -ENOMEM;
	memcpy(n, W.scratch, W.scratch_cap);
	mgp_os_free(W.scratch, W.scratch_cap);
	W.scratch = n;
	W.scratch_cap = ncap;
	return 0;
}

void mgp_trace_set_cuda(const struct mgp_trace_cuda *cuda)
{
	W.cuda = cuda;
}

/* A CUDA site's change goes to its (kind, device) cell. Cells are never removed: a cell that went
 * back to zero is still written, so a reader sees it drop. */
static void cell_add(uint16_t kind, uint64_t dbytes, uint64_t dcount)
{
	uint32_t c = 0;
	while (c < W.ncells && W.cells[c].kind != kind)
		c++;
	if (c == W.ncells) {
		if (W.ncells == MGP_TRACE_MAX_CELLS || (!dbytes && !dcount))
			return; /* full: the totals keep them; nothing yet (a forked child's zeroed sites) */
		W.cells[W.ncells++] = (struct mgc_devmem_cell){.kind = kind};
	}
	W.cells[c].bytes += dbytes;
	W.cells[c].count += (uint32_t)dcount;
}

/* After a snapshot in a process that has CUDA memory: DEVMEM (the cells, then the pools') and
 * DEVSITE for device-site details that changed. */
static void write_cuda(void)
{
	struct mgc_devmem_cell pools[MGP_TRACE_MAX_CELLS];
	uint32_t np = W.cuda ? W.cuda->pool_cells(pools, MGP_TRACE_MAX_CELLS) : 0;
	if (W.ncells + np) {
		struct mgc_rec_devmem r = {.ncells = W.ncells + np};
		record3(MGC_REC_DEVMEM, &r, sizeof r, W.cells, W.ncells * sizeof W.cells[0], pools,
			np * sizeof pools[0]);
	}
	if (!W.cuda)
		return;
	struct mgc_rec_devsite ds[64];
	uint32_t n;
	while ((n = W.cuda->take_devsites(ds, 64)) > 0)
		record3(MGC_REC_DEVSITE, ds, n * sizeof ds[0], NULL, 0, NULL, 0);
}

void mgp_trace_snapshot(uint64_t step, uint32_t flags, const char *label)
{
	static char status[8192];
	if (!W.ok)
		return;
	struct mgc_rec_snapshot sn = {0};
	sn.t_ns = now_rel();
	sn.step = step;
	sn.flags = flags;
	if (label)
		strncpy(sn.label, label, sizeof sn.label - 1);
	if (mgc_read_file("/proc/self/status", status, sizeof status) > 0) {
		sn.rss_anon = mgc_kv_kb(status, "RssAnon");
		sn.rss_file = mgc_kv_kb(status, "RssFile");
		sn.rss_shmem = mgc_kv_kb(status, "RssShmem");
	}
	struct mallinfo2 mi = mallinfo2();
	sn.malloc_free_bytes = mi.fordblks + mi.fsmblks;
	sn.malloc_arena_bytes = mi.arena + mi.hblkhd;

	/* Only the sites that changed since the last snapshot are visited (the changed-site
	 * bitmap), so a snapshot costs O(changed), not O(sites): a PyTorch process has 10^5 sites
	 * from its start-up. The totals are kept up to date by each visited site's difference;
	 * a FULL snapshot visits every site and sums them afresh. */
	size_t off = 0;
	uint32_t nsites = 0, count = mgp_sites_count();
	int full = (flags & MGC_SNAP_FULL) != 0;
	uint32_t prev_id = 0;
	uint32_t nd = mgp_sites_take_dirty(W.dirty_ids);
	uint32_t nvisit = full ? (count > 1 ? count - 1 : 0) : nd;
	if (full) {
		memset(&W.tot, 0, sizeof W.tot);
		for (uint32_t c = 0; c < W.ncells; c++)
			W.cells[c].bytes = W.cells[c].count = 0;
	}
	for (uint32_t i = 0; i < nvisit; i++) {
		uint32_t id = full ? i + 1 : W.dirty_ids[i];
		const struct mgp_site *s = mgp_site_get(id);
		uint64_t a = __atomic_load_n(&s->allocs, __ATOMIC_ACQUIRE);
		uint64_t f = __atomic_load_n(&s->frees, __ATOMIC_RELAXED);
		uint64_t live = __atomic_load_n(&s->live_bytes, __ATOMIC_RELAXED);
		uint64_t la = full ? 0 : W.last_allocs[id], lf = full ? 0 : W.last_frees[id];
		uint64_t ll = full ? 0 : W.last_live[id];
		unsigned k = s->kind == MGC_KIND_MMAP ? 1 : mgc_kind_is_cuda(s->kind) ? 2 : 0;
		W.tot.live[k] += live - ll; /* modular: a transiently negative read evens out later */
		W.tot.count[k] += (a - f) - (la - lf);
		if (k == 2)
			cell_add(s->kind, live - ll, (a - f) - (la - lf));
		W.tot.allocs += a - la;
		W.tot.frees += f - lf;
		W.last_allocs[id] = a;
		W.last_frees[id] = f;
		W.last_live[id] = live;
		if (!full && a == la && f == lf && live == ll)
			continue;
		if (a == 0 && f == 0)
			continue;
		/* at most 7 + 32 varints of 10 bytes */
		if (scratch_reserve(off + 10 * (8 + MGC_COHORTS)) < 0)
			break;
		unsigned char *q = (unsigned char *)W.scratch + off;
		size_t w = 0;
		uint64_t coh[MGC_COHORTS];
		uint32_t mask = 0;
		for (unsigned c = 0; c < MGC_COHORTS; c++) {
			uint64_t v = __atomic_load_n(&s->cohorts[c], __ATOMIC_RELAXED);
			if (v && v < (1ull << 62)) { /* a transiently negative bucket reads as huge: skip it */
				mask |= 1u << c;
				coh[c] = v;
			}
		}
		w += mgc_put_varint(q + w, id - prev_id);
		w += mgc_put_varint(q + w, live);
		w += mgc_put_varint(q + w, a - f);
		w += mgc_put_varint(q + w, a);
		w += mgc_put_varint(q + w, __atomic_load_n(&s->alloc_bytes, __ATOMIC_RELAXED));
		w += mgc_put_varint(q + w, f);
		w += mgc_put_varint(q + w, __atomic_load_n(&s->peak_bytes, __ATOMIC_RELAXED));
		w += mgc_put_varint(q + w, mask);
		for (unsigned c = 0; c < MGC_COHORTS; c++)
			if (mask & (1u << c))
				w += mgc_put_varint(q + w, coh[c]);
		off += w;
		prev_id = id;
		nsites++;
	}
	sn.heap_live_bytes = W.tot.live[0];
	sn.heap_live_count = W.tot.count[0];
	sn.mmap_live_bytes = W.tot.live[1];
	sn.mmap_live_count = W.tot.count[1];
	sn.device_live_bytes = W.tot.live[2];
	sn.allocs_total = W.tot.allocs;
	sn.frees_total = W.tot.frees;
	sn.nsites = nsites;
	/* The header in varints (mgc_format.h, SNAPSHOT2), then the sites encoded above. */
	unsigned char h[16 * 10 + 40];
	size_t hn = 0;
	hn += mgc_put_varint(h + hn, sn.t_ns - W.prev_t);
	hn += mgc_put_varint(h + hn, mgc_zigzag((int64_t)(sn.step - W.prev_step)));
	hn += mgc_put_varint(h + hn, sn.rss_anon >> 10);
	hn += mgc_put_varint(h + hn, sn.rss_file >> 10);
	hn += mgc_put_varint(h + hn, sn.rss_shmem >> 10);
	hn += mgc_put_varint(h + hn, sn.heap_live_bytes);
	hn += mgc_put_varint(h + hn, sn.heap_live_count);
	hn += mgc_put_varint(h + hn, sn.mmap_live_bytes);
	hn += mgc_put_varint(h + hn, sn.mmap_live_count);
	hn += mgc_put_varint(h + hn, sn.malloc_free_bytes);
	hn += mgc_put_varint(h + hn, sn.malloc_arena_bytes);
	hn += mgc_put_varint(h + hn, sn.device_live_bytes);
	hn += mgc_put_varint(h + hn, sn.allocs_total);
	hn += mgc_put_varint(h + hn, sn.frees_total);
	hn += mgc_put_varint(h + hn, sn.flags);
	size_t ll = strnlen(sn.label, sizeof sn.label);
	if (ll == strnlen(W.prev_label, sizeof W.prev_label) && memcmp(sn.label, W.prev_label, ll) == 0) {
		hn += mgc_put_varint(h + hn, 0);
	} else {
		hn += mgc_put_varint(h + hn, ll + 1);
		memcpy(h + hn, sn.label, ll);
		hn += ll;
		memset(W.prev_label, 0, sizeof W.prev_label);
		memcpy(W.prev_label, sn.label, ll);
	}
	hn += mgc_put_varint(h + hn, nsites);
	W.prev_t = sn.t_ns;
	W.prev_step = sn.step;
	record3(MGC_REC_SNAPSHOT2, h, hn, W.scratch, off, NULL, 0);
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

void mgp_trace_perfmap(int pid)
{
	char path[64];
	if (!W.ok)
		return;
	mgp_fmt(path, sizeof path, "/tmp/perf-%d.map", pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	size_t chunk = 1u << 20;
	if (scratch_reserve(chunk) == 0) {
		for (;;) {
			ssize_t r = read(fd, W.scratch, chunk);
			if (r < 0 && errno == EINTR)
				continue;
			if (r <= 0)
				break;
			record3(MGC_REC_PERFMAP, W.scratch, (size_t)r, NULL, 0, NULL, 0);
		}
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
	W.ok = 0;
	W.len = 0;
	W.stacks_written = 0;
	W.nmods = 0;
	W.names_used = 0;
	W.gen = 0;
	W.adds = W.subs = 0;
	size_t used = (size_t)mgp_sites_count() * 8; /* only pages the parent touched */
	memset(W.last_allocs, 0, used);
	memset(W.last_frees, 0, used);
	memset(W.last_live, 0, used);
	memset(&W.tot, 0, sizeof W.tot);
	W.ncells = 0;
	W.prev_t = W.prev_step = 0;
	memset(W.prev_label, 0, sizeof W.prev_label);
	/* the child's file starts its own frame tree */
	mgp_os_free(W.trie, W.trie_cap * sizeof *W.trie);
	W.trie = NULL;
	W.trie_cap = 0;
	W.trie_nodes = 0;
}

void mgp_trace_close(void)
{
	mgp_trace_flush();
	close_if_ours();
	W.ok = 0;
}
