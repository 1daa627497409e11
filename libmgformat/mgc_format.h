/* SPDX-License-Identifier: MIT */
/* mgc_format.h: the on-disk trace format (*.mgt), shared by the writer (libmgprobe) and every
 * reader. Header-only and dependency-free (libmgformat) so the probe can include it; fixed-width
 * little-endian fields, sizes frozen by _Static_assert. Documented for humans in
 * docs/trace-format.md: keep both in step, and bump MGC_TRACE_VERSION on any incompatible
 * change. */
#ifndef MGC_FORMAT_H
#define MGC_FORMAT_H

#include <stddef.h>
#include <stdint.h>

#include "mgc_hash.h"

#define MGC_TRACE_MAGIC "MGTRACE"     /* 7 chars + NUL = 8 bytes */
#define MGC_TRACE_VERSION 3u /* 2: stacks as a prefix tree (FRAMES + STACK2); 3: FRAMES3 + STACK3 */
#define MGC_MAX_FRAMES 256u           /* hard cap on a stack's depth */
#define MGC_COHORTS 32u               /* birth-step buckets per site */
#define MGC_SITE_OVERFLOW 1u          /* the site of no frames that takes the allocations from new
				       * stacks once the probe's site table is full */
#define MGC_MAX_RECORD (64u << 20)    /* a reader rejects records longer than this */

/* File header: the first 16 bytes of every trace. */
struct mgc_file_header {
	char magic[8];        /* "MGTRACE\0" */
	uint32_t version;     /* MGC_TRACE_VERSION of the writer */
	uint32_t header_size; /* sizeof(struct mgc_file_header); records start here */
};
_Static_assert(sizeof(struct mgc_file_header) == 16, "file header is frozen");

/* Version 3 files continue the header with flags (header_size 24 or more). */
struct mgc_file_header3 {
	struct mgc_file_header h;
	uint32_t flags;       /* enum mgc_file_flags */
	uint32_t reserved;
};
_Static_assert(sizeof(struct mgc_file_header3) == 24, "v3 file header is frozen");

enum mgc_file_flags {
	/* Everything after the header is one zstd stream of records, flushed (ZSTD_e_flush) where
	 * the writer flushes the file, so a cut file decompresses up to its last flush. Offsets that
	 * records name (FORKED) count the decompressed stream from the start of the file, header
	 * included, as if the file were not compressed. */
	MGC_FILE_ZSTD = 1u,
	/* SNAPSHOT2's header in changes (below, "With MGC_FILE_DELTAS"), and no STEP records: a
	 * snapshot flagged MGC_SNAP_STEP is the step marker. */
	MGC_FILE_DELTAS = 2u,
};

/* Every record: this header, then `len` payload bytes, then zero padding to a multiple of 8.
 * `check` is FNV-1a (32 bit, mgc_fnv1a) of the payload: a reader stops at the first record whose length
 * runs past the end of the file or whose check does not match (a truncated or torn tail). */
struct mgc_rec {
	uint32_t type;
	uint32_t len;
	uint32_t check;
	uint32_t reserved;
};
_Static_assert(sizeof(struct mgc_rec) == 16, "record header is frozen");

enum mgc_rec_type {
	MGC_REC_PROCESS = 1,       /* struct mgc_rec_process + strings: once, first */
	MGC_REC_MODULE_LOAD = 2,   /* struct mgc_rec_module + build id + path */
	MGC_REC_MODULE_UNLOAD = 3, /* struct mgc_rec_module_unload */
	MGC_REC_STACK = 4,         /* struct mgc_rec_stack + nframes u64 IPs */
	MGC_REC_SNAPSHOT = 5,      /* struct mgc_rec_snapshot + nsites site entries */
	MGC_REC_STEP = 6,          /* struct mgc_rec_step */
	MGC_REC_LABEL = 7,         /* struct mgc_rec_label + text */
	MGC_REC_CHILD = 8,         /* struct mgc_rec_child */
	MGC_REC_END = 9,           /* struct mgc_rec_end: the process stopped recording */
	MGC_REC_NOTICE = 10,       /* struct mgc_rec_notice + text: the probe turned something off */
	MGC_REC_FRAMES = 11,       /* struct mgc_rec_frames + count packed nodes (v2) */
	MGC_REC_STACK2 = 12,       /* an array of struct mgc_rec_stack2: stacks as leaves of the frame tree (v2) */
	MGC_REC_PERFMAP = 13,      /* a chunk of the process's /tmp/perf-PID.map text, in order */
	MGC_REC_SNAPSHOT2 = 14,    /* a snapshot in varints (v2): see below */
	MGC_REC_DEVMEM = 15,       /* struct mgc_rec_devmem + cells: CUDA bytes by kind and device, after its snapshot */
	MGC_REC_DEVSITE = 16,      /* an array of struct mgc_rec_devsite: CUPTI activity details of device sites */
	MGC_REC_PYCODE = 17,       /* struct mgc_rec_pycode + qualname + file + line table: a Python code object */
	MGC_REC_FRAMES3 = 18,      /* frame-tree nodes with their ids, in varints (v3): see below */
	MGC_REC_STACK3 = 19,       /* stacks as leaves of the frame tree, in varints (v3): see below */
	MGC_REC_OVERHEAD = 20,     /* struct mgc_rec_overhead: the probe's own memory, at the end */
	MGC_REC_FORKED = 21,       /* struct mgc_rec_forked + the parent's trace path: a fork child's base */
	MGC_REC_SAMPLING = 22,     /* struct mgc_rec_sampling: the allocations are sampled (after PROCESS) */
};
/* Readers skip record types they do not know (newer writers of the same version may add some). */

enum mgc_kind {
	MGC_KIND_HEAP = 0,    /* malloc family */
	MGC_KIND_MMAP = 1,    /* anonymous private mmap */
	MGC_KIND_DEVICE = 2,  /* CUDA device memory (cudaMalloc, async pools, VMM physical handles) */
	MGC_KIND_PINNED = 3,  /* CUDA page-locked host memory (cudaMallocHost, cudaHostAlloc) */
	MGC_KIND_MANAGED = 4, /* CUDA managed (unified) memory */
	MGC_KIND_POOL = 5,    /* DEVMEM cells only: a stream-ordered pool's reserved bytes (driver-held) */
};

/* A site's or a DEVMEM cell's kind field is a u16: the low byte is enum mgc_kind, the high byte
 * the CUDA device ordinal plus one for CUDA kinds (0: not known, or host memory). Host kinds
 * always have a zero high byte, so version 2 files written before CUDA kinds existed read the
 * same. */
static inline unsigned mgc_kind_mem(unsigned kind)
{
	return kind & 0xffu;
}

/* The device ordinal, or -1 when unknown / not a device. */
static inline int mgc_kind_device(unsigned kind)
{
	return (int)((kind >> 8) & 0xffu) - 1;
}

static inline unsigned mgc_kind_make(unsigned mem, int device)
{
	return (mem & 0xffu) | (device >= 0 && device < 255 ? (unsigned)(device + 1) << 8 : 0u);
}

/* "heap", "mmap", "device", "pinned", "managed", "pool": the memory kind's name, without device. */
static inline const char *mgc_kind_name(unsigned kind)
{
	static const char *const names[] = {"heap", "mmap", "device", "pinned", "managed", "pool"};
	unsigned m = mgc_kind_mem(kind);
	return m < sizeof names / sizeof names[0] ? names[m] : "other";
}

/* 1 for the CUDA kinds (traced through CUPTI), whose bytes are device_live_bytes, not host heap. */
static inline int mgc_kind_is_cuda(unsigned kind)
{
	unsigned m = mgc_kind_mem(kind);
	return m >= MGC_KIND_DEVICE && m <= MGC_KIND_MANAGED;
}

struct mgc_rec_process {
	int32_t pid;
	int32_t ppid;
	uint64_t start_realtime_ns; /* CLOCK_REALTIME at start */
	uint64_t start_mono_ns;     /* CLOCK_MONOTONIC at start; record times are relative to it */
	uint64_t mem_total;         /* bytes, /proc/meminfo MemTotal */
	uint64_t mem_available;     /* bytes, MemAvailable at start */
	uint64_t cgroup_limit;      /* bytes, cgroup memory.max; 0 = no limit */
	uint32_t page_size;
	uint32_t interval_ms;
	uint32_t depth;
	int32_t rank;               /* RANK / SLURM_PROCID, -1 if unset */
	int32_t local_rank;         /* LOCAL_RANK, -1 if unset */
	uint32_t host_len;          /* then host, cmdline (args separated by NUL), exe path */
	uint32_t cmdline_len;
	uint32_t exe_len;
};
_Static_assert(sizeof(struct mgc_rec_process) == 80, "process record is frozen");

struct mgc_rec_module {
	uint32_t id;           /* unique within the trace */
	uint32_t gen;          /* module-map generation in which it was seen loaded */
	uint64_t bias;         /* load bias: runtime address = bias + ELF vaddr */
	uint64_t start;        /* lowest runtime address of its PT_LOAD segments */
	uint64_t end;          /* one past the highest */
	uint32_t build_id_len; /* then build id bytes, then path (no NUL) */
	uint32_t path_len;
};
_Static_assert(sizeof(struct mgc_rec_module) == 40, "module record is frozen");

struct mgc_rec_module_unload {
	uint32_t id;
	uint32_t gen; /* first generation in which it is gone */
};
_Static_assert(sizeof(struct mgc_rec_module_unload) == 8, "unload record is frozen");

/* A call stack = an allocation site. ips[0] is the innermost caller of the allocator (probe
 * frames are already removed); every IP is a return address, so symbolize ip - 1. The stack is
 * resolved against the modules loaded in generation `gen`. */
struct mgc_rec_stack {
	uint32_t id;      /* site id, > 0 */
	uint32_t gen;
	uint16_t kind;    /* enum mgc_kind (v1: host kinds only) */
	uint16_t nframes;
	uint32_t reserved;
};
_Static_assert(sizeof(struct mgc_rec_stack) == 16, "stack record is frozen");

/* Version 2 writes stacks as a prefix tree: a node is (return address, parent node), node ids
 * count from 1 in the order written, parent 0 is the root (the outermost frame's parent). FRAMES
 * holds nodes first .. first + count - 1, each packed as a u64 IP then a u32 parent id (12 bytes,
 * no padding); a parent always comes before its children. STACK2 is an array of entries, each
 * naming a site's innermost frame node: walking parents from it gives the stack, innermost first,
 * nframes long. Shared outer
 * frames (main, the interpreter, a library's constructors) are written once, not once per stack. */
struct mgc_rec_frames {
	uint32_t first;
	uint32_t count;
};
_Static_assert(sizeof(struct mgc_rec_frames) == 8, "frames record is frozen");
#define MGC_FRAME_NODE_SIZE 12u

/* Version 3 writes the same tree with the probe's own node ids, which need not be consecutive (a
 * node no stack uses any more is freed in the probe and its id used again). An id may be defined
 * again: the probe gives back the stacks of written sites that went quiet and renumbers its
 * nodes, then defines the nodes of later stacks anew. A definition holds from where it is read
 * until the id is defined again, and a reader resolves each STACK3 entry when it reads it (files
 * written before this rule define each id once, and read the same).
 * FRAMES3 is a sequence of nodes, each three varints: zigzag(id - previous id), zigzag(id -
 * parent), zigzag(ip - previous ip) ("previous" within the record, starting at 0); a parent is
 * defined before its children. STACK3 is a sequence of stacks, each five varints: zigzag(site -
 * previous site), zigzag(leaf - previous leaf), nframes, kind, module generation. */

struct mgc_rec_stack2 {
	uint32_t id;      /* site id, > 0 */
	uint32_t gen;     /* module generation */
	uint16_t kind;    /* mgc_kind_make(mem, device): see mgc_kind_mem */
	uint16_t nframes;
	uint32_t leaf;    /* innermost frame's node; 0 for an empty stack */
};
_Static_assert(sizeof(struct mgc_rec_stack2) == 16, "stack2 record is frozen");

/* A Python frame in a stack: the top bit set (never a user-space return address), then a code
 * object id (bits 62..32, > 0, named by a PYCODE record of the same file) and the byte offset of
 * the instruction in the code object's bytecode (bits 31..0). The frame tree, STACK2 and every
 * reader carry it as an IP; only symbolization looks at the tag. */
#define MGC_PYFRAME_TAG (1ull << 63)

static inline int mgc_pyframe_is(uint64_t frame)
{
	return (frame & MGC_PYFRAME_TAG) != 0;
}

static inline uint64_t mgc_pyframe_make(uint32_t code_id, uint32_t offset)
{
	return MGC_PYFRAME_TAG | ((uint64_t)(code_id & 0x7fffffffu) << 32) | offset;
}

static inline uint32_t mgc_pyframe_code(uint64_t frame)
{
	return (uint32_t)(frame >> 32) & 0x7fffffffu;
}

static inline uint32_t mgc_pyframe_offset(uint64_t frame)
{
	return (uint32_t)frame;
}

/* A Python code object, written before the first stack that names its id. Its strings are UTF-8;
 * the line table is the code object's co_linetable bytes, in the format of CPython py_minor
 * (3.11 and later: Objects/locations.md), decoded by the reader. Code objects whose strings could
 * not be read are written with empty strings and table. */
struct mgc_rec_pycode {
	uint32_t id;           /* > 0, unique within the trace */
	int32_t firstlineno;   /* co_firstlineno */
	uint32_t qualname_len; /* then the bytes of co_qualname, co_filename and co_linetable */
	uint32_t file_len;
	uint32_t linetable_len;
	uint8_t py_major;      /* 3 */
	uint8_t py_minor;      /* 11, 12, 13 */
	uint16_t reserved;
};
_Static_assert(sizeof(struct mgc_rec_pycode) == 24, "pycode record is frozen");

enum mgc_snapshot_flags {
	MGC_SNAP_STEP = 1u,  /* taken at a step marker */
	MGC_SNAP_FINAL = 2u, /* taken at exit */
	MGC_SNAP_FULL = 4u,  /* lists every site, not only the changed ones */
	MGC_SNAP_FORK = 8u,  /* taken just before a fork: a child's base (MGC_REC_FORKED) */
};

struct mgc_rec_snapshot {
	uint64_t t_ns;            /* since start_mono_ns */
	uint64_t step;            /* current step (0 before the first marker) */
	uint64_t rss_anon;        /* bytes, /proc/self/status */
	uint64_t rss_file;
	uint64_t rss_shmem;
	uint64_t heap_live_bytes; /* sum over heap sites */
	uint64_t heap_live_count;
	uint64_t mmap_live_bytes; /* sum over anonymous mmap sites */
	uint64_t mmap_live_count;
	uint64_t malloc_free_bytes;  /* mallinfo2: fordblks + fsmblks, free but kept by glibc */
	uint64_t malloc_arena_bytes; /* mallinfo2: arena + hblkhd, obtained from the OS */
	uint64_t device_live_bytes;  /* CUDA allocations of every kind (device, pinned, managed) */
	uint64_t allocs_total;
	uint64_t frees_total;
	uint32_t nsites;          /* site entries that follow */
	uint32_t flags;           /* enum mgc_snapshot_flags */
	char label[32];           /* phase label in force, NUL-padded */
};
_Static_assert(sizeof(struct mgc_rec_snapshot) == 152, "snapshot record is frozen");

/* A site's counters, followed by popcount(cohort_mask) u64 live-byte values for the set bits in
 * ascending order. A site absent from a snapshot kept its previous values. */
struct mgc_rec_site {
	uint32_t site;
	uint32_t cohort_mask;
	uint64_t live_bytes;
	uint64_t live_count;
	uint64_t allocs;
	uint64_t alloc_bytes;
	uint64_t frees;
	uint64_t peak_bytes;
};
_Static_assert(sizeof(struct mgc_rec_site) == 56, "site entry is frozen");

struct mgc_rec_step {
	uint64_t t_ns;
	uint64_t step;
};
_Static_assert(sizeof(struct mgc_rec_step) == 16, "step record is frozen");

struct mgc_rec_label {
	uint64_t t_ns;
	uint64_t step;
	uint32_t len;
	uint32_t reserved;
};
_Static_assert(sizeof(struct mgc_rec_label) == 24, "label record is frozen");

enum mgc_child_how { MGC_CHILD_FORK = 1, MGC_CHILD_SPAWN = 2 };

struct mgc_rec_child {
	uint64_t t_ns;
	int32_t pid;
	uint32_t how; /* enum mgc_child_how */
};
_Static_assert(sizeof(struct mgc_rec_child) == 16, "child record is frozen");

enum mgc_end_reason { MGC_END_EXIT = 1, MGC_END_EXEC = 2, MGC_END__EXIT = 3 };

struct mgc_rec_end {
	uint64_t t_ns;
	uint32_t reason; /* enum mgc_end_reason */
	int32_t status;  /* exit status where known */
};
_Static_assert(sizeof(struct mgc_rec_end) == 16, "end record is frozen");

struct mgc_rec_notice {
	uint64_t t_ns;
	uint32_t len;
	uint32_t reserved;
};
_Static_assert(sizeof(struct mgc_rec_notice) == 16, "notice record is frozen");

/* A forked child's trace starts where its parent's stood at the fork: the child's file refers to
 * the parent's for its stacks, modules, code objects and every site's values (the parent writes
 * a snapshot, flagged MGC_SNAP_FORK, just before it forks) instead of copying them. A reader
 * reads the parent's file (the path as the parent wrote it; else the same name beside the
 * child's file) up to `parent_offset` for those, then the child's own records, which add to them.
 * Written right after PROCESS. Without the parent's file the child's own records still read,
 * with what came from the parent unknown. */
struct mgc_rec_forked {
	int32_t parent_pid;
	uint32_t path_len;           /* then the parent's trace path */
	uint64_t parent_start_mono_ns; /* the parent's PROCESS start_mono_ns: tells its file */
	uint64_t parent_offset;      /* stream bytes of the parent's file that the child's base is */
};
_Static_assert(sizeof(struct mgc_rec_forked) == 24, "forked record is frozen");

/* A sampled trace (mgprobe run --sample R): an allocation of n bytes was recorded with
 * probability p = 1 - exp(-n/R) (always from 4R up) and counted as n/p bytes and 1/p allocations,
 * so every site's bytes, counts and cohorts are unbiased estimates, unbiased allocation by
 * allocation before they were summed. Each SNAPSHOT2 site entry then ends with one more varint:
 * the variance of its live-bytes estimate divided by R (zigzagged in a forked child's file), from
 * which readers draw a band of +-2 sigma. Anonymous mappings and CUDA memory are not sampled. */
struct mgc_rec_sampling {
	uint64_t rate; /* R, bytes */
};
_Static_assert(sizeof(struct mgc_rec_sampling) == 8, "sampling record is frozen");

/* What the probe itself held in the process, written before END: so a report can tell the probe's
 * memory from the program's ("other anonymous" includes it). */
struct mgc_rec_overhead {
	uint64_t mapped;       /* bytes the probe had mapped for its tables and buffers at the end */
	uint64_t peak_mapped;  /* the most it had mapped at any time */
	uint64_t live_entries; /* blocks in its live table at the end */
	uint64_t live_bytes;   /* bytes of its live table */
	uint32_t sites;        /* sites in memory at the end */
	uint32_t sites_high;   /* the most site ids in use at once (the table's high-water mark) */
	uint32_t nodes;        /* frame-tree nodes in memory at the end */
	uint32_t nodes_high;
	uint32_t threads;      /* thread records made */
	uint32_t retired;      /* sites retired over the run: stacks given back, ids and totals kept
				  (0 from writers before retirement) */
};
_Static_assert(sizeof(struct mgc_rec_overhead) == 56, "overhead record is frozen");

/* DEVMEM follows the snapshot it belongs to, in processes that have made a CUDA allocation: one
 * cell per (kind, device) ever seen, all of them every time (a cell that went to zero stays). Kind
 * MGC_KIND_POOL cells are a stream-ordered pool's reserved size per device (from CUPTI activity
 * records), which holds its live allocations and the freed memory it keeps; count is its pools. */
struct mgc_rec_devmem {
	uint32_t ncells;
	uint32_t reserved;
};
_Static_assert(sizeof(struct mgc_rec_devmem) == 8, "devmem record is frozen");

struct mgc_devmem_cell {
	uint16_t kind;  /* mgc_kind_make(mem, device) */
	uint16_t reserved;
	uint32_t count; /* live allocations (pools: live pools) */
	uint64_t bytes;
};
_Static_assert(sizeof(struct mgc_devmem_cell) == 16, "devmem cell is frozen");

enum mgc_devsite_flags {
	MGC_DEVSITE_ASYNC = 1u,    /* stream-ordered (cudaMallocAsync family) */
	MGC_DEVSITE_POOL = 2u,     /* from a memory pool: pool_address and pool_type are set */
	MGC_DEVSITE_MISMATCH = 4u, /* an activity record disagreed with its callback (address or size) */
};

/* What CUPTI activity records (MEMORY2) said about a device site's allocations, joined to the
 * site's callbacks by correlation id: written when it first becomes known or changes. */
struct mgc_rec_devsite {
	uint32_t site;
	uint32_t stream;      /* CUDA stream id of the latest allocation */
	uint32_t mem_kind;    /* CUpti_ActivityMemoryKind of the latest allocation */
	uint32_t device;      /* device id from the record */
	uint32_t pool_type;   /* CUpti_ActivityMemoryPoolType; 0 none */
	uint32_t flags;       /* enum mgc_devsite_flags */
	uint64_t pool_address;
	uint64_t records;     /* allocation records joined to this site so far */
};
_Static_assert(sizeof(struct mgc_rec_devsite) == 40, "devsite record is frozen");

/* Birth-step bucket of an allocation born in `step`: 0 for step 0, k for steps in [2^(k-1), 2^k),
 * the last bucket holding everything later. Log-spaced so a day-long run stays small. */
static inline unsigned mgc_cohort_bucket(uint64_t step)
{
	if (step == 0)
		return 0;
	unsigned k = 64u - (unsigned)__builtin_clzll(step); /* floor(log2(step)) + 1 */
	return k < MGC_COHORTS ? k : MGC_COHORTS - 1;
}

/* First step of bucket k (inclusive). */
static inline uint64_t mgc_cohort_first_step(unsigned k)
{
	return k == 0 ? 0 : (uint64_t)1 << (k - 1);
}

/* Version 2 writes snapshots as SNAPSHOT2, the fields of SNAPSHOT in LEB128 varints:
 *   t_ns minus the previous snapshot's t_ns; zigzag(step minus the previous step);
 *   rss_anon, rss_file, rss_shmem in KiB (what /proc reports); heap_live_bytes, heap_live_count,
 *   mmap_live_bytes, mmap_live_count, malloc_free_bytes, malloc_arena_bytes, device_live_bytes,
 *   allocs_total, frees_total; flags; the label as 0 (unchanged since the previous snapshot) or
 *   length + 1 followed by its bytes; nsites; then per site, in increasing site id: the id minus
 *   the previous entry's id (the first: minus 0), live_bytes, live_count, allocs, alloc_bytes,
 *   frees, peak_bytes, cohort_mask, and the set cohorts' live bytes in bucket order.
 * "Previous" is within the same file; the first snapshot counts from 0 and an empty label.
 * With MGC_FILE_DELTAS (file flags), the time is in microseconds (t_ns / 1000 minus the previous
 * snapshot's) and the fields from rss_anon to frees_total are each zigzag(value minus the previous
 * snapshot's): a steady run's snapshots repeat the same few bytes, which zstd takes to almost
 * nothing (a step marker costs ~10 bytes). */
static inline size_t mgc_put_varint(unsigned char *p, uint64_t v)
{
	size_t n = 0;
	while (v >= 0x80) {
		p[n++] = (unsigned char)(v | 0x80);
		v >>= 7;
	}
	p[n++] = (unsigned char)v;
	return n;
}

/* Reads a varint at *p (not past end); 0 and advances *p, or -1 on a cut or overlong one. */
static inline int mgc_get_varint(const unsigned char **p, const unsigned char *end, uint64_t *v)
{
	uint64_t r = 0;
	for (unsigned shift = 0; shift < 64; shift += 7) {
		if (*p >= end)
			return -1;
		unsigned char b = *(*p)++;
		r |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*v = r;
			return 0;
		}
	}
	return -1;
}

static inline uint64_t mgc_zigzag(int64_t v)
{
	return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}

static inline int64_t mgc_unzigzag(uint64_t v)
{
	return (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
}

static inline size_t mgc_pad8(size_t n)
{
	return (n + 7u) & ~(size_t)7u;
}

#endif /* MGC_FORMAT_H */
