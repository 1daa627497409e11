/* SPDX-License-Identifier: MIT */
/* mgc_python.h: Python frames in a trace (mgc_format.h: MGC_PYFRAME_TAG and PYCODE records):
 * the code objects the probe recorded, and the decoding of a frame's instruction offset into a
 * line with the code object's line table (CPython 3.11+ format, Objects/locations.md). Never
 * trusts the file: a bad record is refused, a bad table gives line 0, never a read past its end. */
#ifndef MGC_PYTHON_H
#define MGC_PYTHON_H

#include <stddef.h>
#include <stdint.h>

/* The code objects of one trace, by id. */
struct mgc_pycodes;

/* A Python frame resolved: strings owned by the mgc_pycodes they came from. */
struct mgc_pyframe {
	const char *function; /* co_qualname, "??" when unknown */
	const char *file;     /* co_filename, "??" when unknown */
	int line;             /* 0 when the table names none */
};

/* Adds one PYCODE record's payload to *codes (created on first use). 0; -EBADMSG when the
 * record's lengths do not add up (the caller treats the file as cut there); -ENOMEM. A later
 * record with the same id replaces the earlier one. */
int mgc_pycodes_add(struct mgc_pycodes **codes, const void *payload, uint32_t len);

/* The same from its parts (mgmon: the live segment's table). Strings need no NUL; copied. */
int mgc_pycodes_put(struct mgc_pycodes **codes, uint32_t id, int32_t firstlineno, const void *qualname,
		    size_t qualname_len, const void *file, size_t file_len, const void *table, size_t table_len);

/* 1 when the code object `id` is known. */
int mgc_pycodes_has(const struct mgc_pycodes *codes, uint32_t id);

void mgc_pycodes_free(struct mgc_pycodes *codes);

/* Resolves a tagged frame (mgc_pyframe_is(frame)). 0 and *out; -ENOENT when the trace has no
 * record of its code object (out is then "??", "??", 0). codes may be NULL. */
int mgc_pycodes_frame(const struct mgc_pycodes *codes, uint64_t frame, struct mgc_pyframe *out);

/* The line of the instruction at byte `offset` of a code object whose line table is
 * table[0..len) and first line firstlineno; 0 when the table has no line for it (or is bad).
 * Example: a table of one entry 0xe8 0x0a (no columns, line +5, one code unit) with firstlineno
 * 10 gives line 15 for offset 0, and 0 for offset 2. */
int mgc_pyline(const uint8_t *table, size_t len, int firstlineno, uint32_t offset);

/* 1 when a Python file is library code rather than the user's own: the standard library,
 * site-packages or dist-packages, frozen modules ("<frozen ...>") and other "<...>" pseudo files.
 * mgmon's site column and the report's headline name the first frame that is not. */
int mgc_pyfile_is_library(const char *file);

/* A library file's path from its package on ("torch/nn/modules/module.py" for
 * ".../site-packages/torch/nn/modules/module.py"); other paths as they are. Points into file. */
const char *mgc_pyfile_short(const char *file);

struct mgc_trace;
struct mgc_site;

/* 1 when the site is a pymalloc arena: anonymous mappings of exactly 1 MiB (CPython 3.10+'s
 * ARENA_SIZE) made by the interpreter itself, which its small-object allocator carves into objects
 * of every line that runs, so the stack only names the line that happened to need a new arena. */
int mgc_pyarena_site(const struct mgc_trace *t, const struct mgc_site *s);

struct mgc_site_counters;

/* The same test on a site's kind, counters and the module path of its innermost (native) frame:
 * for readers that hold no trace (mgmon). */
int mgc_pyarena_is(unsigned kind, const struct mgc_site_counters *c, const char *module);

#endif /* MGC_PYTHON_H */
