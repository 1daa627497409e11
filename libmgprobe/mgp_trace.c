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
#define ZSTD_STATIC_LINKING_ONLY /* ZSTD_createCCtx_advanced: memory from the kernel */
#include <zstd.h>

#include "mgp_modules.h"
#include "mgp_os.h"
#include "mgp_pycode.h"
#include "mgp_python.h"
#include "mgp_sites.h"
#include "mgp_live.h"
#include "mgp_sample.h"
#include "mgp_shm.h"
#include "mgp_stacks.h"
#include "mgp_thread.h"

#define OUT_CAP (256u << 10) /* records gathered before a write: a flush when full */
#define SNAP_FIELDS 12u /* SNAPSHOT2 header fields from rss_anon to frees_total */

/* A buffer from the kernel that doubles when it must. */
struct buf {
	char *p;
	size_t cap;
	size_t touched; /* the most bytes of it used since its pages were last given back */
};

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
	uint64_t stream_off;                            /* stream bytes so far (header included) */
	int compress;                                   /* files are zstd streams (MGPROBE_COMPRESS) */
	ZSTD_CCtx *z;                                   /* the file's zstd stream (NULL: plain) */
	char *zbuf;
	struct {
		char path[2304];                        /* the parent's trace, for a forked child */
		uint64_t offset, start_mono;
		int pid;
		int set;                                /* a fork point was written: the child refers */
	} base;
	int relative;                                   /* a forked child's file: values since the fork */
	struct buf scratch;                             /* site entries, strings */
	struct buf stk;                                 /* frame nodes and stacks of a snapshot */
	struct buf ids;                                 /* the changed-site list */
	struct mgp_chunks site_done;                    /* a bit per site: its stack is in the file */
	uint32_t codes_written;                         /* Python code objects written (ids below) */
	uint32_t modules_gen;                           /* module generations written so far */
	uint64_t snapshots;                             /* written to this file */
	struct mgp_totals tot;                          /* as the last snapshot said */
	const struct mgp_trace_cuda *cuda;
	uint16_t cell_kinds[MGP_TRACE_MAX_CELLS];       /* CUDA cells in the order this file saw them */
	uint32_t ncells;
	uint64_t prev_t, prev_step; /* the previous snapshot's, for SNAPSHOT2's deltas */
	uint64_t prev_v[SNAP_FIELDS];
	char prev_label[32];
} trace = {.fd = -1,
	   .site_done = {.esize = 8, .shift = 12}}; /* 262144 sites per 32 KiB chunk */

static int buf_reserve(struct buf *b, size_t need)
{
	if (need > b->touched)
		b->touched = need;
	if (need <= b->cap)
		return 0;
	size_t ncap = b->cap ? b->cap * 2 : 1u << 16;
	while (ncap < need)
		ncap *= 2;
	char *n = mgp_os_alloc(ncap);
	if (!n)
		return -ENOMEM;
	memcpy(n, b->p, b->cap);
	mgp_os_free(b->p, b->cap);
	b->p = n;
	b->cap = ncap;
	return 0;
}

#define BUF_KEEP (1u << 20) /* buffers bigger than this are given back after each snapshot */

static void buf_drop(struct buf *b)
{
	mgp_os_free(b->p, b->cap);
	b->p = NULL;
	b->cap = 0;
	b->touched = 0;
}

#define BUF_RESIDENT (64u << 10) /* a kept buffer's pages past this go back after a snapshot */

/* What a burst needed goes back after a snapshot: a buffer bigger than BUF_KEEP whole, and a
 * kept one's pages past BUF_RESIDENT (they read as zero again, and cost nothing until a burst
 * needs them again): issue 16, ~1 MiB of the torch sample's import snapshots otherwise stayed
 * resident for the whole run. A steady run's snapshots fit in what stays. */
static void buf_trim(struct buf *b)
{
	if (b->cap > BUF_KEEP) {
		buf_drop(b);
	} else if (b->touched > BUF_RESIDENT) {
		mgp_os_discard(b->p + BUF_RESIDENT, b->cap - BUF_RESIDENT);
		b->touched = 0;
	}
}

int mgp_trace_init(int compress)
{
	trace.compress = compress;
	trace.out = mgp_os_alloc(OUT_CAP);
	return trace.out ? 0 : -ENOMEM;
}

/* Bit id of a chunked bitmap: read, and set (0 on success, -ENOMEM). */
static int bit_get(const struct mgp_chunks *c, uint32_t id)
{
	const uint64_t *w = mgp_chunk_find(c, id >> 6);
	return w && (*w >> (id & 63)) & 1;
}

static int bit_set(struct mgp_chunks *c, uint32_t id)
{
	if (mgp_chunks_ensure(c, id >> 6) < 0)
		return -ENOMEM;
	*(uint64_t *)mgp_chunk_at(c, id >> 6) |= 1ull << (id & 63);
	return 0;
}

int mgp_trace_site_written(uint32_t id)
{
	return bit_get(&trace.site_done, id);
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

/* Writes n bytes to the file. 0, or -errno after the trace failed (with one line). */
static int write_all(const char *p, size_t n)
{
	size_t off = 0;
	sigset_t old;
	mgp_xfsz_hold(&old); /* a file-size limit stops the trace, not the program */
	while (off < n) {
		ssize_t r = write(trace.fd, p + off, n - off);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			int e = r < 0 ? errno : ENOSPC;
			mgp_xfsz_release(&old, e == EFBIG);
			fail(e);
			return -e;
		}
		off += (size_t)r;
	}
	mgp_xfsz_release(&old, 0);
	return 0;
}

/* ---- compression: one zstd stream per file, flushed at every flush of the file ---- */

#define ZBUF_CAP (128u << 10)
#define ZLEVEL 3
/* A 256 KiB window and 64k-entry tables keep the compressor's memory near 1 MiB (a forked worker
 * has its own): on the torch sample's trace that costs 1% of the ratio of zstd's defaults. */
#define ZWINDOW_LOG 18
#define ZTABLE_LOG 16

/* zstd's memory comes from the kernel, never malloc: a 16-byte header keeps each block's size. */
static void *z_alloc(void *opaque, size_t n)
{
	(void)opaque;
	size_t len = n + 16;
	char *p = mgp_os_alloc(len);
	if (!p)
		return NULL;
	memcpy(p, &len, sizeof len);
	return p + 16;
}

static void z_free(void *opaque, void *q)
{
	(void)opaque;
	if (!q)
		return;
	size_t len;
	memcpy(&len, (char *)q - 16, sizeof len);
	mgp_os_free((char *)q - 16, len);
}

static void z_drop(void)
{
	ZSTD_freeCCtx(trace.z);
	trace.z = NULL;
	mgp_os_free(trace.zbuf, ZBUF_CAP);
	trace.zbuf = NULL;
}

static int z_start(void)
{
	z_drop();
	trace.z = ZSTD_createCCtx_advanced((ZSTD_customMem){z_alloc, z_free, NULL});
	trace.zbuf = mgp_os_alloc(ZBUF_CAP);
	if (!trace.z || !trace.zbuf ||
	    ZSTD_isError(ZSTD_CCtx_setParameter(trace.z, ZSTD_c_compressionLevel, ZLEVEL)) ||
	    ZSTD_isError(ZSTD_CCtx_setParameter(trace.z, ZSTD_c_windowLog, ZWINDOW_LOG)) ||
	    ZSTD_isError(ZSTD_CCtx_setParameter(trace.z, ZSTD_c_hashLog, ZTABLE_LOG)) ||
	    ZSTD_isError(ZSTD_CCtx_setParameter(trace.z, ZSTD_c_chainLog, ZTABLE_LOG))) {
		z_drop();
		return -ENOMEM;
	}
	return 0;
}

/* Compresses and writes the buffered records: `end` closes the stream (the file is complete),
 * else the stream is flushed so that what is written decompresses on its own. */
static int z_write(const char *p, size_t n, ZSTD_EndDirective how)
{
	ZSTD_inBuffer in = {p, n, 0};
	for (;;) {
		ZSTD_outBuffer out = {trace.zbuf, ZBUF_CAP, 0};
		size_t left = ZSTD_compressStream2(trace.z, &out, &in, how);
		if (ZSTD_isError(left)) {
			fail(EIO);
			return -EIO;
		}
		if (out.pos && write_all(trace.zbuf, out.pos) < 0)
			return -EIO;
		if (left == 0 && in.pos == in.size)
			return 0;
	}
}

static int flush_how(ZSTD_EndDirective how)
{
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
	int r = trace.z ? z_write(trace.out, trace.len, how) : write_all(trace.out, trace.len);
	trace.len = 0;
	return r;
}

int mgp_trace_flush(void)
{
	return trace.len ? flush_how(ZSTD_e_flush) : (trace.ok ? 0 : -EIO);
}

/* Appends raw bytes to the output buffer, flushing when full. */
static void put(const void *p, size_t n)
{
	const char *s = p;
	trace.stream_off += n;
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

/* SNAPSHOT2's header fields written as changes (mgc_format.h, MGC_FILE_DELTAS). */
static void snap_fields(const struct mgc_rec_snapshot *sn, uint64_t v[SNAP_FIELDS])
{
	const uint64_t f[SNAP_FIELDS] = {sn->rss_anon >> 10, sn->rss_file >> 10, sn->rss_shmem >> 10,
					 sn->heap_live_bytes, sn->heap_live_count, sn->mmap_live_bytes,
					 sn->mmap_live_count, sn->malloc_free_bytes, sn->malloc_arena_bytes,
					 sn->device_live_bytes, sn->allocs_total, sn->frees_total};
	memcpy(v, f, sizeof f);
}

int mgp_trace_open(const char *path, int excl, const struct mgp_process *p)
{
	int err = open_file(path, excl);
	if (err < 0)
		return err;
	trace.start_mono = p->start_mono_ns;
	struct mgc_file_header3 fh = {.h = {.version = MGC_TRACE_VERSION,
					    .header_size = sizeof(struct mgc_file_header3)},
				      .flags = MGC_FILE_ZSTD | MGC_FILE_DELTAS};
	memcpy(fh.h.magic, MGC_TRACE_MAGIC, 8);
	if (!trace.compress || z_start() < 0)
		fh.flags &= ~(uint64_t)MGC_FILE_ZSTD; /* plain: asked for, or no memory for the compressor */
	trace.opening = 1; /* a failure from here on is this function's to say */
	err = write_all((const char *)&fh, sizeof fh);
	trace.opening = 0;
	if (err < 0) {
		unlink(path); /* created or emptied above, and nothing in it */
		return err;
	}
	trace.stream_off = sizeof fh;
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
	size_t strings = (size_t)pr.host_len + pr.cmdline_len + pr.exe_len;
	if (buf_reserve(&trace.scratch, strings) < 0)
		return -ENOMEM;
	char *sc = trace.scratch.p;
	memcpy(sc, p->host, pr.host_len);
	memcpy(sc + pr.host_len, p->cmdline, pr.cmdline_len);
	memcpy(sc + pr.host_len + pr.cmdline_len, p->exe, pr.exe_len);
	trace.opening = 1;
	record3(MGC_REC_PROCESS, &pr, sizeof pr, sc, strings, NULL, 0);
	if (mgp_sample_conf.rate) {
		struct mgc_rec_sampling sr = {.rate = mgp_sample_conf.rate};
		record3(MGC_REC_SAMPLING, &sr, sizeof sr, NULL, 0, NULL, 0);
	}
	if (trace.base.set) { /* a forked child: the parent's file holds the rest */
		struct mgc_rec_forked f = {.parent_pid = trace.base.pid,
					   .path_len = (uint32_t)strlen(trace.base.path),
					   .parent_start_mono_ns = trace.base.start_mono,
					   .parent_offset = trace.base.offset};
		record3(MGC_REC_FORKED, &f, sizeof f, trace.base.path, f.path_len, NULL, 0);
	}
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

/* ---- stacks: the store's nodes, each written once, before the first stack that ends in it ---- */

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

/* The FRAMES3 (in trace.stk) and STACK3 (in st) payloads of one snapshot (mgc_format.h). */
static struct {
	struct buf st;     /* STACK3 entries */
	size_t nodes_len, st_len;
	uint64_t prev_ip;
	uint32_t prev_node, prev_site, prev_leaf;
} nw;

/* Appends node `id` (its parent already in the file) to the FRAMES3 payload. */
static int put_node(uint32_t id)
{
	const struct mgp_node *n = mgp_node_get(id);
	if (buf_reserve(&trace.stk, nw.nodes_len + 30) < 0 || mgp_stacks_set_in_file(id) < 0)
		return -ENOMEM;
	unsigned char *q = (unsigned char *)trace.stk.p + nw.nodes_len;
	size_t w = mgc_put_varint(q, mgc_zigzag((int64_t)id - (int64_t)nw.prev_node));
	w += mgc_put_varint(q + w, mgc_zigzag((int64_t)id - (int64_t)n->parent));
	w += mgc_put_varint(q + w, mgc_zigzag((int64_t)(n->ip - nw.prev_ip)));
	nw.nodes_len += w;
	nw.prev_node = id;
	nw.prev_ip = n->ip;
	return 0;
}

/* The nodes of a stack not in the file yet, outermost first. */
static int put_stack_nodes(uint32_t leaf)
{
	uint32_t todo[MGC_MAX_FRAMES];
	unsigned k = 0;
	for (uint32_t id = leaf; id && !mgp_stacks_in_file(id) && k < MGC_MAX_FRAMES;
	     id = mgp_node_get(id)->parent)
		todo[k++] = id;
	while (k > 0)
		if (put_node(todo[--k]) < 0)
			return -ENOMEM;
	return 0;
}

static void flush_stacks(void);

#define STACKS_CHUNK (256u << 10) /* FRAMES3 and STACK3 records are written in pieces this big */

/* Site `id` goes into the file: its nodes and its STACK3 entry. 0 or -ENOMEM. */
static int put_site_stack(uint32_t id)
{
	const struct mgp_site *s = mgp_site_get(id);
	uint32_t leaf = mgp_site_leaf(id);
	if (nw.nodes_len > STACKS_CHUNK || nw.st_len > STACKS_CHUNK)
		flush_stacks(); /* 10^5 new sites at once (an import) need no 10 MiB of buffers */
	if (put_stack_nodes(leaf) < 0 || buf_reserve(&nw.st, nw.st_len + 40) < 0 ||
	    bit_set(&trace.site_done, id) < 0)
		return -ENOMEM;
	unsigned char *q = (unsigned char *)nw.st.p + nw.st_len;
	size_t w = mgc_put_varint(q, mgc_zigzag((int64_t)id - (int64_t)nw.prev_site));
	w += mgc_put_varint(q + w, mgc_zigzag((int64_t)leaf - (int64_t)nw.prev_leaf));
	w += mgc_put_varint(q + w, leaf ? s->nframes : 0); /* retired: its stack is gone */
	w += mgc_put_varint(q + w, s->kind);
	w += mgc_put_varint(q + w, mgp_modules_gen());
	nw.st_len += w;
	nw.prev_site = id;
	nw.prev_leaf = leaf;
	return 0;
}

/* Writes the FRAMES3 and STACK3 records gathered (after the code objects they name). */
static void flush_stacks(void)
{
	write_pycodes();
	if (nw.nodes_len)
		record3(MGC_REC_FRAMES3, trace.stk.p, nw.nodes_len, NULL, 0, NULL, 0);
	if (nw.st_len)
		record3(MGC_REC_STACK3, nw.st.p, nw.st_len, NULL, 0, NULL, 0);
	nw.nodes_len = nw.st_len = 0;
	nw.prev_ip = 0;
	nw.prev_node = nw.prev_site = nw.prev_leaf = 0;
}

static int holds(const struct mgp_site_counts *c)
{
	return __atomic_load_n(&c->live_bytes, __ATOMIC_RELAXED) != 0 ||
	       __atomic_load_n(&c->allocs, __ATOMIC_RELAXED) != __atomic_load_n(&c->frees, __ATOMIC_RELAXED);
}

/* The stacks of the sites in use not in the file yet (only those holding memory: held_only). */
static void write_stacks(int held_only)
{
	if (!trace.ok)
		return;
	uint32_t n = mgp_sites_count();
	for (uint32_t id = 2; id < n; id++) {
		const struct mgp_site_counts *c = mgp_site_counts(id);
		if (c->state == MGP_SITE_FREE || bit_get(&trace.site_done, id) || (held_only && !holds(c)))
			continue;
		if (put_site_stack(id) < 0) {
			fail(ENOMEM);
			return;
		}
	}
	flush_stacks();
}

void mgp_trace_write_stacks(void)
{
	/* Before a dlclose: every site in use that is not in the file yet, while its frames' module
	 * is still in the map. */
	write_stacks(0);
}

void mgp_trace_write_held_stacks(void)
{
	write_stacks(1);
}

void mgp_trace_set_cuda(const struct mgp_trace_cuda *cuda)
{
	trace.cuda = cuda;
}

/* After a snapshot in a process that has CUDA memory: DEVMEM (the cells, then the pools') and
 * DEVSITE for device-site details that changed. */
static void write_cuda(void)
{
	struct mgc_devmem_cell now[MGP_TRACE_MAX_CELLS], cells[MGP_TRACE_MAX_CELLS], pools[MGP_TRACE_MAX_CELLS];
	uint32_t n = mgp_sites_cuda_cells(now, MGP_TRACE_MAX_CELLS), nc = 0;
	/* In the order this file first saw them with memory; a cell back at zero stays. */
	for (uint32_t i = 0; i < n; i++) {
		uint32_t k = 0;
		while (k < trace.ncells && trace.cell_kinds[k] != now[i].kind)
			k++;
		if (k == trace.ncells && (now[i].bytes || now[i].count))
			trace.cell_kinds[trace.ncells++] = now[i].kind;
	}
	for (uint32_t k = 0; k < trace.ncells; k++) {
		cells[nc] = (struct mgc_devmem_cell){.kind = trace.cell_kinds[k]};
		for (uint32_t i = 0; i < n; i++)
			if (now[i].kind == trace.cell_kinds[k])
				cells[nc] = now[i];
		nc++;
	}
	uint32_t np = trace.cuda ? trace.cuda->pool_cells(pools, MGP_TRACE_MAX_CELLS) : 0;
	if (nc + np) {
		struct mgc_rec_devmem r = {.ncells = nc + np};
		record3(MGC_REC_DEVMEM, &r, sizeof r, cells, nc * sizeof cells[0], pools, np * sizeof pools[0]);
	}
	if (!trace.cuda)
		return;
	struct mgc_rec_devsite ds[64];
	uint32_t nd;
	while ((nd = trace.cuda->take_devsites(ds, 64)) > 0)
		record3(MGC_REC_DEVSITE, ds, nd * sizeof ds[0], NULL, 0, NULL, 0);
}

/* The most bytes encode_site writes: 9 varints of counters (the last, sampled runs' variance)
 * and 32 of cohorts, 10 bytes each. */
#define SITE_ENTRY_MAX (10u * (9u + MGC_COHORTS))

/* A value that is a count in a file of its own and a change since the fork in a forked child's
 * (MGC_REC_FORKED), where it may be negative: zigzagged there. */
static inline uint64_t signed_value(uint64_t v)
{
	return trace.relative ? mgc_zigzag((int64_t)v) : v;
}

/* A site's SNAPSHOT2 entry (mgc_format.h) at q; returns its length. */
static size_t encode_site(unsigned char *q, uint32_t id, uint32_t id_delta, const struct mgp_site_counts *c)
{
	uint64_t coh[MGC_COHORTS];
	uint32_t mask = 0;
	for (unsigned k = 0; k < MGC_COHORTS; k++) {
		uint64_t v = mgp_site_cohort(c, k);
		/* A transiently negative bucket reads as huge: skipped, but in a forked child's file,
		 * where a change since the fork may be negative. */
		if (v && (v < (1ull << 62) || trace.relative)) {
			mask |= 1u << k;
			coh[k] = signed_value(v);
		}
	}
	uint64_t allocs = __atomic_load_n(&c->allocs, __ATOMIC_RELAXED);
	uint64_t frees = __atomic_load_n(&c->frees, __ATOMIC_RELAXED);
	size_t w = mgc_put_varint(q, id_delta);
	uint64_t live = __atomic_load_n(&c->live_bytes, __ATOMIC_RELAXED);
	mgp_shm_keep(id, live); /* the live segment's scan shows what the trace got */
	w += mgc_put_varint(q + w, signed_value(live));
	w += mgc_put_varint(q + w, signed_value(allocs - frees));
	w += mgc_put_varint(q + w, allocs);
	w += mgc_put_varint(q + w, __atomic_load_n(&c->alloc_bytes, __ATOMIC_RELAXED));
	w += mgc_put_varint(q + w, frees);
	w += mgc_put_varint(q + w, __atomic_load_n(&c->peak_bytes, __ATOMIC_RELAXED));
	w += mgc_put_varint(q + w, mask);
	for (unsigned k = 0; k < MGC_COHORTS; k++)
		if (mask & (1u << k))
			w += mgc_put_varint(q + w, coh[k]);
	if (mgp_sample_conf.rate)
		w += mgc_put_varint(q + w, signed_value(mgp_site_var(id)));
	return w;
}

#define CHURN_EVERY 64u /* snapshots between rewrites of sites that only churned */

/* Whether a changed site goes into this snapshot, and its stack first if it is new to the file.
 * A host site enters the file once it holds memory at a snapshot or has made
 * MGP_SITES_KEEP_ALLOCS allocations, and at exit: a start-up transient (a few allocations, freed
 * within one interval) never does: it counts in the totals only, and its memory goes back by
 * eviction. A CUDA site (few, never evicted) enters at its first change. Once in, it is
 * rewritten when its live bytes or count moved, and when it only churned (allocations and frees
 * in balance), every CHURN_EVERY snapshots and in the last. -1 when out of memory. */
static int wanted(uint32_t id, unsigned flags)
{
	struct mgp_site_counts *c = mgp_site_counts(id);
	unsigned dirty = __atomic_exchange_n(&c->dirty, 0, __ATOMIC_RELAXED);
	if (c->state == MGP_SITE_FREE)
		return 0;
	if (!bit_get(&trace.site_done, id)) {
		uint64_t allocs = __atomic_load_n(&c->allocs, __ATOMIC_RELAXED);
		if (!holds(c) && allocs < MGP_SITES_KEEP_ALLOCS && !(flags & MGC_SNAP_FINAL) && id != 1 &&
		    !mgc_kind_is_cuda(mgp_site_get(id)->kind))
			return 0;
		return put_site_stack(id) < 0 ? -1 : 1;
	}
	if ((dirty & MGP_SITE_LIVE) || (flags & (MGC_SNAP_FINAL | MGC_SNAP_FULL)) ||
	    trace.snapshots % CHURN_EVERY == 0)
		return 1;
	mgp_sites_mark(id, MGP_SITE_CHURN); /* left for a later snapshot */
	return 0;
}

/* The sites changed since the last snapshot (the changed-site bitmap), or every site in use in a
 * FULL one, so a snapshot costs O(changed), not O(sites): a PyTorch process has 10^5 sites from
 * its start-up. Encodes the entries into the scratch buffer; returns their bytes and, in
 * *nsites, their number. */
static size_t visit_sites(unsigned flags, uint32_t *nsites)
{
	size_t off = 0;
	uint32_t count = mgp_sites_count(), prev_id = 0;
	if (buf_reserve(&trace.ids, (size_t)count * 4) < 0)
		return 0;
	uint32_t *ids = (uint32_t *)trace.ids.p;
	uint32_t nd = mgp_sites_take_dirty(ids);
	trace.ids.touched = (size_t)nd * 4; /* room for every site, but only the changed ones written */
	int full = (flags & MGC_SNAP_FULL) != 0;
	uint32_t nvisit = full ? (count > 1 ? count - 1 : 0) : nd;
	*nsites = 0;
	for (uint32_t i = 0; i < nvisit; i++) {
		uint32_t id = full ? i + 1 : ids[i];
		const struct mgp_site_counts *c = mgp_site_counts(id);
		int w = wanted(id, flags);
		if (w < 0 || buf_reserve(&trace.scratch, off + SITE_ENTRY_MAX) < 0) {
			fail(ENOMEM);
			break;
		}
		if (!w || (__atomic_load_n(&c->allocs, __ATOMIC_RELAXED) == 0 &&
			   __atomic_load_n(&c->frees, __ATOMIC_RELAXED) == 0 &&
			   __atomic_load_n(&c->live_bytes, __ATOMIC_RELAXED) == 0))
			continue;
		off += encode_site((unsigned char *)trace.scratch.p + off, id, id - prev_id, c);
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
	hn += mgc_put_varint(h + hn, sn->t_ns / 1000 - trace.prev_t / 1000);
	hn += mgc_put_varint(h + hn, mgc_zigzag((int64_t)(sn->step - trace.prev_step)));
	uint64_t v[SNAP_FIELDS];
	snap_fields(sn, v);
	for (unsigned i = 0; i < SNAP_FIELDS; i++) {
		hn += mgc_put_varint(h + hn, mgc_zigzag((int64_t)(v[i] - trace.prev_v[i])));
		trace.prev_v[i] = v[i];
	}
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
	uint32_t nsites = 0;
	size_t off = trace.ok ? visit_sites(sn->flags, &nsites) : 0;
	struct mgp_totals *t = &trace.tot;
	mgp_sites_totals(t);
	sn->heap_live_bytes = t->live[0];
	sn->heap_live_count = t->count[0];
	sn->mmap_live_bytes = t->live[1];
	sn->mmap_live_count = t->count[1];
	sn->device_live_bytes = t->live[2];
	sn->allocs_total = t->allocs;
	sn->frees_total = t->frees;
	sn->nsites = nsites;
	if (!trace.ok)
		return;
	flush_stacks();
	unsigned char h[16 * 10 + 40];
	size_t hn = encode_header(h, sn);
	record3(MGC_REC_SNAPSHOT2, h, hn, trace.scratch.p, off, NULL, 0);
	trace.snapshots++;
	struct buf *bufs[] = {&trace.scratch, &trace.stk, &trace.ids, &nw.st};
	for (unsigned k = 0; k < sizeof bufs / sizeof bufs[0]; k++)
		buf_trim(bufs[k]);
	write_cuda();
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

void mgp_trace_overhead(void)
{
	struct mgc_rec_overhead r = {
		.mapped = mgp_os_mapped(), .peak_mapped = mgp_os_peak(), .live_entries = mgp_live_count(),
		.live_bytes = mgp_live_bytes_used(), .sites = mgp_sites_used(), .sites_high = mgp_sites_count(),
		.nodes = mgp_stacks_nodes(), .nodes_high = mgp_stacks_high(), .threads = mgp_threads_count(),
		.retired = mgp_sites_retired()};
	record3(MGC_REC_OVERHEAD, &r, sizeof r, NULL, 0, NULL, 0);
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
	if (buf_reserve(&trace.scratch, chunk) == 0) {
		while (total < MGP_PERFMAP_MAX) {
			size_t want = MGP_PERFMAP_MAX - total < chunk ? MGP_PERFMAP_MAX - total : chunk;
			ssize_t r = read(fd, trace.scratch.p, want);
			if (r < 0 && errno == EINTR)
				continue;
			if (r <= 0)
				break;
			record3(MGC_REC_PERFMAP, trace.scratch.p, (size_t)r, NULL, 0, NULL, 0);
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

void mgp_trace_fork_point(const char *path, int pid)
{
	trace.base.set = 0;
	if (!path || !trace.ok || mgp_trace_flush() < 0)
		return;
	mgp_fmt(trace.base.path, sizeof trace.base.path, "%s", path);
	trace.base.offset = trace.stream_off;
	trace.base.start_mono = trace.start_mono;
	trace.base.pid = pid;
	trace.base.set = 1;
}

int mgp_trace_forget(void)
{
	close_if_ours();
	trace.ok = 0;
	trace.len = 0;
	trace.snapshots = 0;
	trace.ncells = 0;
	trace.prev_t = trace.prev_step = 0;
	memset(trace.prev_v, 0, sizeof trace.prev_v);
	memset(trace.prev_label, 0, sizeof trace.prev_label);
	z_drop(); /* the parent's compressor and buffers are the parent's */
	buf_drop(&trace.scratch);
	buf_drop(&trace.stk);
	buf_drop(&trace.ids);
	buf_drop(&nw.st);
	nw.nodes_len = nw.st_len = 0;
	trace.relative = trace.base.set;
	if (trace.base.set)
		return 1; /* the parent's file up to the fork has its stacks, modules and code objects */
	/* No fork point (the parent's trace had failed): the child's file lists everything itself. */
	trace.codes_written = 0;
	trace.modules_gen = 0;
	mgp_chunks_discard(&trace.site_done);
	mgp_stacks_forget_file();
	return 0;
}

void mgp_trace_close(void)
{
	if (trace.ok)
		flush_how(ZSTD_e_end);
	z_drop();
	close_if_ours();
	trace.ok = 0;
}
