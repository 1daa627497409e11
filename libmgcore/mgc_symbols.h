/* SPDX-License-Identifier: MIT */
/* mgc_symbols.h: the offline symbolizer shared by mgreport and mgmon. It turns a recorded return
 * address plus its module (path, GNU build id, load bias) into function, file and line with
 * elfutils libdwfl, inlined frames and C++ demangling included. It must never abort or trust a
 * file blindly: missing files, stripped binaries, other builds and garbage addresses give "??". */
#ifndef MGC_SYMBOLS_H
#define MGC_SYMBOLS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Opens each distinct (path, build id) once, on its first address, and keeps it (and its
 * separate debug file) open until freed: one or two file descriptors per module used. Caches
 * every resolved address: a new address costs tens of microseconds, a repeated one a lookup. */
struct mgc_symbolizer;

/* Where a frame's answer came from; anything but DWARF and SYMTAB means function is "??". */
enum mgc_frame_status {
	MGC_FRAME_DWARF = 0,          /* file and line (and the function) from debug information */
	MGC_FRAME_SYMTAB = 1,         /* function from the ELF symbol table only: file NULL, line 0 */
	MGC_FRAME_NO_SYMBOL = 2,      /* the module is usable but no function covers the address */
	MGC_FRAME_NO_FILE = 3,        /* the module file is missing, unreadable or not ELF */
	MGC_FRAME_BUILD_ID_MISMATCH = 4, /* the file at path is not the build that was recorded */
};

/* One source-level frame. A single return address can give several: the functions inlined into
 * each other at that address, innermost first. Strings are owned by the symbolizer. */
struct mgc_frame {
	const char *function; /* demangled ("ns::Widget::make(int)"); "??" when unknown */
	const char *file;     /* source file, absolute when the debug info names the compile
	                       * directory ("/build/../src/x.c"), or NULL */
	int line;             /* 0 when unknown */
	const char *module;   /* the module path given to mgc_symbolize (the symbolizer's own copy) */
	int inlined;          /* 1: this frame was inlined into the next one (file:line is then the
	                       * position inside this function, the next frame's line is its call site) */
	enum mgc_frame_status status;
	uint64_t offset;      /* ip - bias: the recorded address inside the module */
	int python;           /* 1: a Python frame (mgc_python.h): function is the code object's
	                       * qualified name, file its file name, module NULL */
};

/* Returns a new, empty symbolizer, or NULL with errno = ENOMEM. Nothing is opened until used. */
struct mgc_symbolizer *mgc_symbolizer_new(void);

/* Closes every file and frees every string handed out. NULL is accepted. */
void mgc_symbolizer_free(struct mgc_symbolizer *s);

/* Resolves the return address `ip` recorded in the module (path, build_id, bias), where
 * runtime address = bias + ELF vaddr; the call instruction at ip - 1 is what gets looked up.
 * Fills out[0..n-1], innermost first: inlined callees (inlined = 1), then the function they sit
 * in; returns n (1 <= n <= max). Example: ip inside f() where g() was inlined gives
 * { g at the line in g, inlined } { f at the line that calls g }. When the chain is longer than
 * max, the innermost max - 1 frames are followed by the outer function in out[max - 1]; with
 * max == 1 that is the physical function and its line.
 *
 * Never fails on what the trace or the disk hold: a missing or non-ELF file, a file whose build
 * id differs from build_id, a stripped file without symbols or an address outside the module
 * still yields one frame with function "??", the module path and a status that says why.
 * build_id_len == 0 means "unknown": the file at path is then used unchecked. Separate debug
 * files are found the standard libdwfl way (build id under /usr/lib/debug/.build-id,
 * .gnu_debuglink next to the file or under /usr/lib/debug; debuginfod if DEBUGINFOD_URLS is set).
 *
 * Returns -EINVAL for NULL s, path or out, max < 1, or NULL build_id with build_id_len > 0;
 * -ENOMEM when out of memory. Results are cached per (path, build id, ip - bias): asking again
 * is a hash lookup. Strings stay valid until mgc_symbolizer_free. Not thread-safe: one
 * symbolizer per thread, or a lock around it. */
int mgc_symbolize(struct mgc_symbolizer *s, const char *path, const uint8_t *build_id,
		  size_t build_id_len, uint64_t bias, uint64_t ip, struct mgc_frame *out, int max);

/* Where a recorded address was loaded from, as the stack's source knows it: a trace's module
 * map, or the live segment's. */
struct mgc_module_ref {
	const char *path;          /* NULL: no module holds the address */
	const uint8_t *build_id;
	size_t build_id_len;
	uint64_t bias;
	const char *generated;     /* no module: what the process's perf map names there (generated
	                            * code: a Python perf trampoline, a JIT), or NULL */
};

/* Fills *out for `addr` (a call's address: a return address minus one). */
typedef void (*mgc_module_fn)(void *ctx, uint64_t addr, struct mgc_module_ref *out);

struct mgc_pycodes; /* mgc_python.h */

/* A whole symbolized stack. */
struct mgc_stack {
	struct mgc_frame *frames; /* n, innermost first, inlined frames included; owned (malloc) */
	size_t n;
	size_t named;             /* the frame that names the site: the first Python frame in the
	                           * user's own code (mgc_pyfile_is_library), else the first Python
	                           * frame, else the first with a known function outside the C library,
	                           * the C++ runtime, the loader and the probe, else the first with a
	                           * known function; else 0 */
};

/* Symbolizes the frames ips[0..nips), innermost first: a return address through its module, found
 * with find(ctx, ip - 1); a Python frame (mgc_pyframe_is) through the code objects py (may be
 * NULL). An address in no module is one frame "??" (module "??"), or the perf map's name (module
 * "[perf-map]"). 0, or -ENOMEM (out is then empty). Free with mgc_stack_free. */
int mgc_symbolize_stack(struct mgc_symbolizer *s, const uint64_t *ips, size_t nips, mgc_module_fn find,
			void *ctx, const struct mgc_pycodes *py, struct mgc_stack *out);

void mgc_stack_free(struct mgc_stack *st);

/* "dwarf", "symtab", "no symbol", "no file", "build id mismatch"; "?" for other values. */
const char *mgc_frame_status_name(enum mgc_frame_status st);

#ifdef __cplusplus
}
#endif

#endif /* MGC_SYMBOLS_H */
