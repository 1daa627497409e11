/* SPDX-License-Identifier: MIT */
/* mgp_python.c: reads the calling thread's CPython frames inside the allocation hook (contract in
 * mgp_python.h). The layouts of CPython's private structures are per minor version: 3.11 and 3.12
 * from their headers, 3.13 checked against the _Py_DebugOffsets the interpreter carries at the
 * start of _PyRuntime. Every pointer is checked before it is followed and every code object
 * against the exported PyCode_Type; a version it does not know turns Python frames off with one
 * notice. Must never call malloc, stdio, dlsym or take a lock on the fast path. */
#define _GNU_SOURCE
#include "mgp_python.h"

#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <string.h>

#include "mgc_format.h"
#include "mgp_os.h"
#include "mgp_pycode.h"
#include "mgp_tcache.h"

#define MAX_PY_FRAMES 1024u /* frames walked per stack at most (a bound against a corrupt chain) */
#define FRAME_OWNED_BY_GENERATOR 1u
#define FRAME_OWNED_BY_CSTACK 3u /* 3.12+: the evaluator's entry (shim) frame */

/* Offsets into CPython's private structures, in bytes. */
struct layout {
	unsigned minor;
	size_t tss_key;           /* _PyRuntime: the gilstate Py_tss_t {int init; pthread_key_t key} */
	size_t finalizing;        /* _PyRuntime._finalizing */
	size_t ts_cframe;         /* PyThreadState.cframe (3.11, 3.12); 0 in 3.13 */
	size_t cf_frame;          /* _PyCFrame.current_frame, or PyThreadState.current_frame (3.13) */
	size_t fr_code, fr_previous, fr_instr, fr_owner;
	size_t fr_is_entry;       /* 3.11 only */
	size_t co_firstlineno, co_filename, co_qualname, co_linetable, co_firsttraceable, co_code;
	size_t str_ascii, str_compact; /* where the characters of a compact (ASCII) string start */
};

static const struct layout layouts[] = {
	{11, 592, 24, 56, 8, 32, 48, 56, 69, 68, 72, 112, 128, 136, 168, 184, 48, 72},
	{12, 1544, 24, 56, 0, 0, 8, 56, 70, 0, 68, 112, 128, 136, 176, 192, 40, 56},
	{13, 2160, 608, 0, 72, 0, 8, 56, 70, 0, 68, 112, 128, 136, 184, 200, 40, 56},
};

/* The interpreter being read: found at start-up, read-only after (but for the counters). */
static struct {
	int on;
	struct layout L;
	const char *runtime;
	uintptr_t code_type, str_type, bytes_type;
	uintptr_t eval_lo, eval_hi;     /* _PyEval_EvalFrameDefault */
	uint64_t bad_frames;            /* frames that failed validation (atomic) */
	uint64_t bad_told;
	char notice[256];
	int notice_pending;
} interp;

/* ---- reading memory of the interpreter ---- */

static inline int ok_ptr(uintptr_t p)
{
	return p >= 4096 && p < (1ull << 47) && (p & 7) == 0;
}

static inline uintptr_t rd(uintptr_t p, size_t off)
{
	return *(const uintptr_t *)(p + off);
}

static inline int32_t rd32(uintptr_t p, size_t off)
{
	return *(const int32_t *)(p + off);
}

/* A compact str object's characters (code names and file names always are compact). */
static int read_str(uintptr_t s, struct mgp_pystr *out)
{
	if (!ok_ptr(s) || rd(s, 8) != interp.str_type)
		return -1;
	uint32_t state = (uint32_t)rd32(s, 32);
	unsigned kind = (state >> 2) & 7u, compact = (state >> 5) & 1u, ascii = (state >> 6) & 1u;
	if (!compact)
		return -1;
	out->len = rd(s, 16);
	out->kind = kind;
	out->ascii = (int)ascii;
	out->data = (const void *)(s + (ascii ? interp.L.str_ascii : interp.L.str_compact));
	return 0;
}

/* What names a code object, as it stands: the fields its fingerprint is made of. */
struct code_names {
	uintptr_t filename, qualname, linetable;
	int32_t firstlineno;
};

/* The fast path's functions below take the layout as a constant (mgp_python_merge calls them with
 * each known version's own): its offsets become immediates, its version tests disappear. */
#define FAST static inline __attribute__((always_inline))

FAST void code_names(const struct layout *L, uintptr_t code, struct code_names *n)
{
	n->filename = rd(code, L->co_filename);
	n->qualname = rd(code, L->co_qualname);
	n->linetable = rd(code, L->co_linetable);
	n->firstlineno = rd32(code, L->co_firstlineno);
}

static uint64_t fingerprint(const struct code_names *n)
{
	uint64_t h = n->filename ^ (n->qualname * 0x9e3779b97f4a7c15ull) ^ (n->linetable << 17) ^
		     (uint64_t)(uint32_t)n->firstlineno;
	return mgc_mix64(h);
}

/* First sight of a code object: copy what names it into the registry. */
static uint32_t register_code(uintptr_t code, uint64_t fp)
{
	struct mgp_pycode_src src = {.firstlineno = rd32(code, interp.L.co_firstlineno)};
	uintptr_t lt = rd(code, interp.L.co_linetable);
	if (read_str(rd(code, interp.L.co_qualname), &src.qualname) < 0 ||
	    read_str(rd(code, interp.L.co_filename), &src.file) < 0 || !ok_ptr(lt) || rd(lt, 8) != interp.bytes_type) {
		__atomic_fetch_add(&interp.bad_frames, 1, __ATOMIC_RELAXED);
		return 0;
	}
	src.linetable = (const uint8_t *)(lt + 32); /* PyBytesObject.ob_sval */
	src.linetable_len = rd(lt, 16);             /* ob_size */
	return mgp_pycode_add(code, fp, &src);
}

/* Each thread's last code objects seen, by address, in its block of caches (mgp_tcache.h: not in
 * TLS, which small thread stacks pay for): a direct-mapped copy of the registry's (address,
 * fingerprint) -> id, which never changes once made (the registry forgets nothing), so a hit is
 * the registry's own answer without its shared table's cache misses. It holds the fields the
 * fingerprint is made of rather than the fingerprint: the same fields make the same fingerprint,
 * so a hit needs no hashing. Written only by its thread. */
#define MEMO_BITS 6u
struct code_memo {
	uintptr_t code;
	struct code_names names;
	uint32_t id;
};
_Static_assert(sizeof(struct code_memo) << MEMO_BITS <= MGP_TCACHE_PART, "the code memo's part of the block");

/* The registry's id of a code object, registering it the first time (and noting it in m, unless
 * NULL); 0 when it fails validation. */
static __attribute__((noinline)) uint32_t code_id_slow(struct code_memo *m, uintptr_t code,
						       const struct code_names *n)
{
	uint64_t fp = fingerprint(n);
	uint32_t id = mgp_pycode_find(code, fp);
	if (!id && !(id = register_code(code, fp)))
		return 0;
	if (m)
		*m = (struct code_memo){code, *n, id};
	return id;
}

/* The id of a code object, from memo (the thread's, or NULL) where it can. */
FAST uint32_t code_id(const struct layout *L, struct code_memo *memo, uintptr_t code)
{
	struct code_names n;
	code_names(L, code, &n);
	if (!memo)
		return code_id_slow(NULL, code, &n);
	struct code_memo *m = &memo[(code >> 4) & ((1u << MEMO_BITS) - 1)];
	if (m->code == code && m->names.filename == n.filename && m->names.qualname == n.qualname &&
	    m->names.linetable == n.linetable && m->names.firstlineno == n.firstlineno)
		return m->id;
	return code_id_slow(m, code, &n);
}

/* The tagged value of one frame, or 0 for a frame to leave out (incomplete, not code). */
FAST uint64_t frame_value(const struct layout *L, struct code_memo *memo, uintptr_t f, unsigned owner)
{
	uintptr_t code = rd(f, L->fr_code);
	if (!ok_ptr(code) || rd(code, 8) != interp.code_type)
		return 0; /* 3.13: None for frames that run no code object */
	/* The instruction's offset in the code: huge when before it. A generator's frame may stand
	 * before its first traceable instruction; any other is incomplete there. */
	uintptr_t off = rd(f, L->fr_instr) - (code + L->co_code);
	uintptr_t first = 2 * (uintptr_t)(uint32_t)rd32(code, L->co_firsttraceable);
	if (off >= (1u << 31) || (off < first && owner != FRAME_OWNED_BY_GENERATOR))
		return 0;
	uint32_t id = code_id(L, memo, code);
	if (!id)
		return 0;
	return mgc_pyframe_make(id, (uint32_t)off);
}

/* The calling thread's innermost frame, or 0 (no interpreter state on this thread, or the
 * interpreter is shutting down). */
static uintptr_t current_frame(void)
{
	uintptr_t rt = (uintptr_t)interp.runtime;
	if (__atomic_load_n((const int *)(rt + interp.L.tss_key), __ATOMIC_RELAXED) != 1 || rd(rt, interp.L.finalizing))
		return 0;
	uintptr_t ts = (uintptr_t)pthread_getspecific(*(const pthread_key_t *)(rt + interp.L.tss_key + 4));
	if (!ok_ptr(ts))
		return 0;
	if (interp.L.ts_cframe) {
		ts = rd(ts, interp.L.ts_cframe);
		if (!ok_ptr(ts))
			return 0;
	}
	return rd(ts, interp.L.cf_frame);
}

/* Emits the Python frames of one call of the evaluator, from *cur to its entry frame (3.11) or
 * up to its shim frame (3.12+), and leaves *cur at the next call's first frame. */
FAST unsigned emit_group(const struct layout *L, struct code_memo *memo, uintptr_t *cur, uintptr_t *out,
			 unsigned k, unsigned cap, unsigned *budget)
{
	while (*cur && *budget) {
		uintptr_t f = *cur;
		(*budget)--;
		if (!ok_ptr(f)) {
			__atomic_fetch_add(&interp.bad_frames, 1, __ATOMIC_RELAXED);
			*cur = 0;
			break;
		}
		unsigned owner = *(const uint8_t *)(f + L->fr_owner);
		*cur = rd(f, L->fr_previous);
		if (L->minor >= 12 && owner == FRAME_OWNED_BY_CSTACK)
			break;
		uint64_t v = frame_value(L, memo, f, owner);
		if (v && k < cap)
			out[k++] = (uintptr_t)v;
		if (L->minor == 11 && *(const uint8_t *)(f + L->fr_is_entry))
			break;
	}
	return k;
}

uintptr_t mgp_python_current(void)
{
	return interp.on ? current_frame() : 0;
}

static inline int is_evaluator(uintptr_t ip)
{
	return ip > interp.eval_lo && ip <= interp.eval_hi;
}

unsigned mgp_python_first_evaluator(const uintptr_t *ips, unsigned from, unsigned n)
{
	while (from < n && !is_evaluator(ips[from]))
		from++;
	return from;
}

FAST unsigned merge_with(const struct layout *L, uintptr_t cur, const uintptr_t *ips, unsigned n,
			unsigned ev, uintptr_t *out, unsigned cap)
{
	unsigned k = 0, budget = MAX_PY_FRAMES;
	struct code_memo *memo = mgp_tcache_part(MGP_TCACHE_PYCODE);
	/* The native frames inside the innermost Python frame (all of them without one). */
	for (unsigned i = 0; i < n && i < ev && k < cap; i++)
		out[k++] = ips[i];
	/* Then every Python frame of the thread, outermost last. The native frames between two Python
	 * frames are left out: nearly all are the interpreter's own, and not unwinding them is what
	 * makes a Python stack cheap (mgp_capture_stack). Without an evaluator frame unwound (a module
	 * without unwind information on the way) the Python frames still come after the native ones. */
	while (cur && k < cap && budget)
		k = emit_group(L, memo, &cur, out, k, cap, &budget);
	return k;
}

unsigned mgp_python_merge(uintptr_t cur, const uintptr_t *ips, unsigned n, unsigned ev, uintptr_t *out,
			  unsigned cap)
{
	switch (interp.L.minor) { /* the versions of `layouts`, in order */
	case 11:
		return merge_with(&layouts[0], cur, ips, n, ev, out, cap);
	case 12:
		return merge_with(&layouts[1], cur, ips, n, ev, out, cap);
	default:
		return merge_with(&layouts[2], cur, ips, n, ev, out, cap);
	}
}

void mgp_python_evaluator(uintptr_t *lo, uintptr_t *hi)
{
	*lo = interp.eval_lo;
	*hi = interp.eval_hi;
}

int mgp_python_on(void)
{
	return interp.on;
}

unsigned mgp_python_minor(void)
{
	return interp.L.minor;
}

/* ---- start-up ---- */

static void set_notice(const char *text)
{
	mgp_fmt(interp.notice, sizeof interp.notice, "%s", text);
	interp.notice_pending = 1;
}

/* 3.13 carries its own offsets: the table's must agree with them. */
static int debug_offsets_agree(const struct layout *L)
{
	const uint64_t *d = (const uint64_t *)(const void *)interp.runtime;
	if (memcmp(interp.runtime, "xdebugpy", 8) != 0 || d[2] != 0 /* free-threaded build */)
		return 0;
	/* cookie, version, free_threaded, runtime_state{size, finalizing, interpreters_head},
	 * interpreter_state{13 fields}, thread_state{size, prev, next, interp, current_frame, ...},
	 * interpreter_frame{size, previous, executable, instr_ptr, localsplus, owner},
	 * code_object{size, filename, name, qualname, linetable, firstlineno, ...} */
	const uint64_t *rs = d + 3, *ts = rs + 3 + 13, *fr = ts + 9, *co = fr + 6;
	return rs[1] == L->finalizing && ts[4] == L->cf_frame && fr[1] == L->fr_previous &&
	       fr[2] == L->fr_code && fr[3] == L->fr_instr && fr[5] == L->fr_owner &&
	       co[1] == L->co_filename && co[3] == L->co_qualname && co[4] == L->co_linetable &&
	       co[5] == L->co_firstlineno && co[9] == L->co_code;
}

static const struct layout *pick_layout(unsigned major, unsigned minor)
{
	if (major != 3)
		return NULL;
	for (size_t i = 0; i < sizeof layouts / sizeof layouts[0]; i++)
		if (layouts[i].minor == minor)
			return minor >= 13 && !debug_offsets_agree(&layouts[i]) ? NULL : &layouts[i];
	return NULL;
}

int mgp_python_init(int enabled)
{
	const uint32_t *version = dlsym(RTLD_DEFAULT, "Py_Version");
	interp.runtime = dlsym(RTLD_DEFAULT, "_PyRuntime");
	void *eval = dlsym(RTLD_DEFAULT, "_PyEval_EvalFrameDefault");
	interp.code_type = (uintptr_t)dlsym(RTLD_DEFAULT, "PyCode_Type");
	interp.str_type = (uintptr_t)dlsym(RTLD_DEFAULT, "PyUnicode_Type");
	interp.bytes_type = (uintptr_t)dlsym(RTLD_DEFAULT, "PyBytes_Type");
	if (!interp.runtime || !eval || !interp.code_type || !interp.str_type || !interp.bytes_type)
		return 0; /* not a Python process */
	if (!enabled) {
		set_notice("Python frames are off (MGPROBE_PYTHON=0): stacks show the interpreter's native "
			   "frames");
		return 0;
	}
	if (!version) { /* 3.10 and older export no Py_Version */
		set_notice("Python frames are off: CPython older than 3.11 is not supported (3.11 to 3.13 are); "
			   "stacks show the interpreter's native frames");
		return 0;
	}
	unsigned major = (*version >> 24) & 0xffu, minor = (*version >> 16) & 0xffu;
	const struct layout *L = pick_layout(major, minor);
	Dl_info info;
	const ElfW(Sym) *sym = NULL;
	if (!L || !dladdr1(eval, &info, (void **)&sym, RTLD_DL_SYMENT) || !sym || !sym->st_size) {
		mgp_fmt(interp.notice, sizeof interp.notice, "Python frames are off: CPython %u.%u is not supported "
			"(3.11 to 3.13 are); stacks show the interpreter's native frames", major, minor);
		interp.notice_pending = 1;
		return 0;
	}
	if (mgp_pycode_init() < 0) {
		set_notice("Python frames are off: no memory for the code-object table");
		return 0;
	}
	interp.L = *L;
	interp.eval_lo = (uintptr_t)eval;
	interp.eval_hi = (uintptr_t)eval + sym->st_size;
	interp.on = 1;
	return 1;
}

int mgp_python_take_notice(char *buf, size_t cap)
{
	uint64_t bad = __atomic_load_n(&interp.bad_frames, __ATOMIC_RELAXED);
	if (interp.notice_pending) {
		interp.notice_pending = 0;
		mgp_fmt(buf, cap, "%s", interp.notice);
		return 1;
	}
	if (bad && !interp.bad_told) {
		interp.bad_told = bad;
		mgp_fmt(buf, cap, "Python frames: a frame or code object failed validation and was left out "
			"(native frames stand for it)");
		return 1;
	}
	return 0;
}
