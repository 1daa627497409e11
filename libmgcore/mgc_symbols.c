/* SPDX-License-Identifier: MIT */
/* mgc_symbols.c: offline symbolizer on elfutils libdwfl (contract in mgc_symbols.h). Each module
 * gets its own Dwfl reported at address 0, so a lookup is at ELF vaddr = ip - 1 - bias; answers
 * are cached per (module, offset). It must never abort or use a file whose build id disagrees
 * with the trace: every failure becomes a "??" frame. */
#include "mgc_symbols.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "mgc_format.h"
#include "mgc_python.h"
#include "mgc_symtab.h"

/* From the C++ runtime (libstdc++, linked by libmgcore); C has no header for it. Returns a
 * malloc'd string or NULL with *status != 0. */
extern char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

/* Deeper inline chains (none seen in practice) are cut here, losing their outer frames. */
#define SYM_MAX_FRAMES 64

static const char unknown_name[] = "??";

/* ---- a small open-addressing hash table of pointers, keyed by a 64-bit hash ---------------- */

struct sym_slot {
	uint64_t hash;
	void *item; /* NULL: empty */
};

struct sym_htab {
	struct sym_slot *slots;
	size_t cap; /* 0 or a power of two */
	size_t count;
};

typedef bool (*sym_eq_fn)(const void *item, const void *key);

static uint64_t sym_hash_bytes(uint64_t h, const void *p, size_t n)
{
	const unsigned char *b = p;

	for (size_t i = 0; i < n; i++) {
		h ^= b[i];
		h *= 0x100000001b3ULL;
	}
	return h;
}

static void *sym_htab_find(const struct sym_htab *t, uint64_t hash, sym_eq_fn eq, const void *key)
{
	if (t->cap == 0)
		return NULL;
	for (size_t i = hash & (t->cap - 1);; i = (i + 1) & (t->cap - 1)) {
		const struct sym_slot *sl = &t->slots[i];

		if (sl->item == NULL)
			return NULL;
		if (sl->hash == hash && eq(sl->item, key))
			return sl->item;
	}
}

static void sym_htab_place(struct sym_slot *slots, size_t cap, uint64_t hash, void *item)
{
	size_t i = hash & (cap - 1);

	while (slots[i].item != NULL)
		i = (i + 1) & (cap - 1);
	slots[i].hash = hash;
	slots[i].item = item;
}

/* Adds an item known to be absent. 0 or -ENOMEM (the table is then unchanged). */
static int sym_htab_add(struct sym_htab *t, uint64_t hash, void *item)
{
	if ((t->count + 1) * 4 > t->cap * 3) {
		size_t cap = t->cap ? t->cap * 2 : 64;
		struct sym_slot *slots = calloc(cap, sizeof(*slots));

		if (slots == NULL)
			return -ENOMEM;
		for (size_t i = 0; i < t->cap; i++)
			if (t->slots[i].item != NULL)
				sym_htab_place(slots, cap, t->slots[i].hash, t->slots[i].item);
		free(t->slots);
		t->slots = slots;
		t->cap = cap;
	}
	sym_htab_place(t->slots, t->cap, hash, item);
	t->count++;
	return 0;
}

/* Calls fn on every item, then empties the table. */
static void sym_htab_clear(struct sym_htab *t, void (*fn)(void *item))
{
	for (size_t i = 0; i < t->cap; i++)
		if (t->slots[i].item != NULL)
			fn(t->slots[i].item);
	free(t->slots);
	memset(t, 0, sizeof(*t));
}

/* ---- the symbolizer ------------------------------------------------------------------------ */

/* One address range of a compile unit, for DWARF without .debug_aranges (clang's default),
 * which libdwfl 0.188 cannot map to a CU by itself. */
struct sym_cu_range {
	Dwarf_Addr lo, hi; /* [lo, hi) in DWARF addresses */
	Dwarf_Die cu;
};

struct sym_module {
	char *path;
	uint8_t *build_id;
	size_t build_id_len;
	Dwfl *dwfl;               /* NULL when unusable */
	Dwfl_Module *mod;
	Dwarf_Addr start, end;    /* the module's vaddr range (bias 0) */
	enum mgc_frame_status status; /* MGC_FRAME_DWARF when usable, else why not */
	bool cu_index_built;      /* cu_index is built on the first address aranges miss */
	struct sym_cu_range *cu_index; /* sorted by lo */
	size_t cu_index_len;
	Dwarf_Addr cu_index_bias; /* DWARF address = module address - bias */
	bool symtab_built;        /* symtab is built on the first address DWARF does not name */
	struct mgc_symtab *symtab; /* NULL: every such address asks libdwfl */
};

struct sym_module_key {
	const char *path;
	const uint8_t *build_id;
	size_t build_id_len;
};

struct sym_addr {
	const struct sym_module *module;
	uint64_t offset;
	int n;
	struct mgc_frame frames[];
};

struct sym_addr_key {
	const struct sym_module *module;
	uint64_t offset;
};

struct mgc_symbolizer {
	struct sym_htab modules; /* struct sym_module */
	struct sym_htab addrs;   /* struct sym_addr */
	struct sym_htab strings; /* char *, interned function and file names */
	char *debuginfo_path;    /* NULL: libdwfl's default */
	Dwfl_Callbacks callbacks;
};

static bool sym_module_eq(const void *item, const void *key)
{
	const struct sym_module *m = item;
	const struct sym_module_key *k = key;

	return m->build_id_len == k->build_id_len && strcmp(m->path, k->path) == 0 &&
	       (k->build_id_len == 0 || memcmp(m->build_id, k->build_id, k->build_id_len) == 0);
}

static bool sym_addr_eq(const void *item, const void *key)
{
	const struct sym_addr *a = item;
	const struct sym_addr_key *k = key;

	return a->module == k->module && a->offset == k->offset;
}

static bool sym_string_eq(const void *item, const void *key)
{
	return strcmp(item, key) == 0;
}

static uint64_t sym_addr_hash(const struct sym_module *m, uint64_t offset)
{
	return mgc_mix64((uint64_t)(uintptr_t)m * 0x9e3779b97f4a7c15ULL ^ offset);
}

/* Returns the pool's copy of str, or NULL on ENOMEM. */
static const char *sym_intern(struct mgc_symbolizer *s, const char *str)
{
	size_t len = strlen(str);
	uint64_t h = mgc_mix64(sym_hash_bytes(0xcbf29ce484222325ULL, str, len));
	char *copy = sym_htab_find(&s->strings, h, sym_string_eq, str);

	if (copy != NULL)
		return copy;
	copy = malloc(len + 1);
	if (copy == NULL)
		return NULL;
	memcpy(copy, str, len + 1);
	if (sym_htab_add(&s->strings, h, copy) < 0) {
		free(copy);
		return NULL;
	}
	return copy;
}

/* Interns the demangled form of a linker name ("_ZN2ns6Widget4makeEi" -> "ns::Widget::make(int)");
 * names that are not mangled, or fail to demangle, are kept as they are. NULL on ENOMEM. */
static const char *sym_intern_function(struct mgc_symbolizer *s, const char *name)
{
	if (name == NULL || name[0] == '\0')
		return unknown_name;
	if (name[0] == '_' && name[1] == 'Z') {
		int status = 0;
		char *plain = __cxa_demangle(name, NULL, NULL, &status);

		if (plain != NULL && status == 0) {
			const char *r = sym_intern(s, plain);

			free(plain);
			return r;
		}
		free(plain);
	}
	return sym_intern(s, name);
}

struct mgc_symbolizer *mgc_symbolizer_new(void)
{
	struct mgc_symbolizer *s = calloc(1, sizeof(*s));

	if (s == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	s->callbacks.find_elf = dwfl_build_id_find_elf;
	s->callbacks.find_debuginfo = dwfl_standard_find_debuginfo;
	s->callbacks.section_address = dwfl_offline_section_address;
	s->callbacks.debuginfo_path = &s->debuginfo_path;
	return s;
}

static void sym_module_free(void *item)
{
	struct sym_module *m = item;

	mgc_symtab_free(m->symtab);
	if (m->dwfl != NULL)
		dwfl_end(m->dwfl);
	free(m->cu_index);
	free(m->path);
	free(m->build_id);
	free(m);
}

void mgc_symbolizer_free(struct mgc_symbolizer *s)
{
	if (s == NULL)
		return;
	sym_htab_clear(&s->addrs, free);
	sym_htab_clear(&s->modules, sym_module_free);
	sym_htab_clear(&s->strings, free);
	free(s);
}

const char *mgc_frame_status_name(enum mgc_frame_status st)
{
	switch (st) {
	case MGC_FRAME_DWARF: return "dwarf";
	case MGC_FRAME_SYMTAB: return "symtab";
	case MGC_FRAME_NO_SYMBOL: return "no symbol";
	case MGC_FRAME_NO_FILE: return "no file";
	case MGC_FRAME_BUILD_ID_MISMATCH: return "build id mismatch";
	}
	return "?";
}

/* Opens the file behind m and checks its build id; sets m->status. Only a regular file is
 * opened (a FIFO or device named by a corrupt trace would block or lie). */
static void sym_module_open(struct mgc_symbolizer *s, struct sym_module *m)
{
	struct stat st;
	const unsigned char *bits = NULL;
	GElf_Addr id_vaddr = 0;
	Dwarf_Addr elf_bias;
	int id_len;

	m->status = MGC_FRAME_NO_FILE;
	if (stat(m->path, &st) != 0 || !S_ISREG(st.st_mode))
		return;
	m->dwfl = dwfl_begin(&s->callbacks);
	if (m->dwfl == NULL)
		return;
	dwfl_report_begin(m->dwfl);
	/* Base 0 with add_p_vaddr: module addresses are the ELF's own vaddrs, also for prelinked
	 * DSOs whose first PT_LOAD is not at 0. */
	m->mod = dwfl_report_elf(m->dwfl, m->path, m->path, -1, 0, true);
	dwfl_report_end(m->dwfl, NULL, NULL);
	if (m->mod == NULL)
		goto fail_close;

	if (dwfl_module_getelf(m->mod, &elf_bias) == NULL)
		goto fail_close;
	if (m->build_id_len > 0) {
		id_len = dwfl_module_build_id(m->mod, &bits, &id_vaddr);
		if (id_len <= 0 || (size_t)id_len != m->build_id_len ||
		    memcmp(bits, m->build_id, m->build_id_len) != 0) {
			m->status = MGC_FRAME_BUILD_ID_MISMATCH;
			goto fail_close;
		}
	}
	dwfl_module_info(m->mod, NULL, &m->start, &m->end, NULL, NULL, NULL, NULL);
	m->status = MGC_FRAME_DWARF;
	return;

fail_close:
	mgc_symtab_free(m->symtab);
	m->symtab = NULL;
	dwfl_end(m->dwfl);
	m->dwfl = NULL;
	m->mod = NULL;
}

/* Finds or creates (and opens) the module; NULL only on ENOMEM. */
static struct sym_module *sym_module_get(struct mgc_symbolizer *s, const char *path,
					 const uint8_t *build_id, size_t build_id_len)
{
	struct sym_module_key key = { path, build_id, build_id_len };
	size_t path_len = strlen(path);
	uint64_t h = sym_hash_bytes(0xcbf29ce484222325ULL, path, path_len + 1);
	struct sym_module *m;

	h = mgc_mix64(sym_hash_bytes(h, build_id, build_id_len));
	m = sym_htab_find(&s->modules, h, sym_module_eq, &key);
	if (m != NULL)
		return m;

	m = calloc(1, sizeof(*m));
	if (m == NULL)
		return NULL;
	m->path = malloc(path_len + 1);
	m->build_id = malloc(build_id_len ? build_id_len : 1);
	if (m->path == NULL || m->build_id == NULL)
		goto fail_free;
	memcpy(m->path, path, path_len + 1);
	if (build_id_len > 0)
		memcpy(m->build_id, build_id, build_id_len);
	m->build_id_len = build_id_len;
	if (sym_htab_add(&s->modules, h, m) < 0)
		goto fail_free;
	sym_module_open(s, m);
	return m;

fail_free:
	sym_module_free(m);
	return NULL;
}

/* DW_AT_linkage_name (mangled, complete) when there is one, else DW_AT_name; both followed
 * through DW_AT_abstract_origin and DW_AT_specification. NULL when the DIE has neither. */
static const char *sym_die_name(Dwarf_Die *die)
{
	Dwarf_Attribute attr;
	const char *name = NULL;

	if (dwarf_attr_integrate(die, DW_AT_linkage_name, &attr) != NULL ||
	    dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &attr) != NULL)
		name = dwarf_formstring(&attr);
	if (name == NULL)
		name = dwarf_diename(die);
	return name;
}

static bool sym_is_function(Dwarf_Die *die)
{
	int tag = dwarf_tag(die);

	return tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine ||
	       tag == DW_TAG_entry_point;
}

/* Where an inlined subroutine was called from: its DW_AT_call_file (an index into its CU's
 * file table) and DW_AT_call_line. File NULL and line 0 when absent or out of range. */
static void sym_call_site(Dwarf_Die *inl, const char **file, int *line)
{
	Dwarf_Attribute attr;
	Dwarf_Word idx, val;
	Dwarf_Die cu;
	Dwarf_Files *files;
	size_t nfiles;

	*file = NULL;
	*line = 0;
	if (dwarf_formudata(dwarf_attr(inl, DW_AT_call_file, &attr), &idx) == 0 &&
	    dwarf_diecu(inl, &cu, NULL, NULL) != NULL &&
	    dwarf_getsrcfiles(&cu, &files, &nfiles) == 0 && idx < nfiles)
		*file = dwarf_filesrc(files, idx, NULL, NULL);
	if (dwarf_formudata(dwarf_attr(inl, DW_AT_call_line, &attr), &val) == 0 && val <= INT32_MAX)
		*line = (int)val;
}

static int sym_cu_range_cmp(const void *a, const void *b)
{
	const struct sym_cu_range *x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* Collects every compile unit's ranges (DW_AT_low_pc/high_pc or DW_AT_ranges) into a sorted
 * table. On ENOMEM or without DWARF the table stays empty: lookups then find no CU. */
static void sym_cu_index_build(struct sym_module *m)
{
	Dwarf *dw = dwfl_module_getdwarf(m->mod, &m->cu_index_bias);
	Dwarf_CU *unit = NULL;
	Dwarf_Die cu;
	uint8_t unit_type;
	size_t cap = 0;

	m->cu_index_built = true;
	if (dw == NULL)
		return;
	while (dwarf_get_units(dw, unit, &unit, NULL, &unit_type, &cu, NULL) == 0) {
		Dwarf_Addr base, lo, hi;
		ptrdiff_t off = 0;

		if (unit_type != DW_UT_compile && unit_type != DW_UT_partial &&
		    unit_type != DW_UT_skeleton)
			continue;
		while ((off = dwarf_ranges(&cu, off, &base, &lo, &hi)) > 0) {
			if (lo >= hi)
				continue;
			if (m->cu_index_len == cap) {
				size_t ncap = cap ? cap * 2 : 64;
				struct sym_cu_range *r = realloc(m->cu_index, ncap * sizeof(*r));

				if (r == NULL) {
					free(m->cu_index);
					m->cu_index = NULL;
					m->cu_index_len = 0;
					return;
				}
				m->cu_index = r;
				cap = ncap;
			}
			m->cu_index[m->cu_index_len++] = (struct sym_cu_range){ lo, hi, cu };
		}
	}
	if (m->cu_index_len > 1)
		qsort(m->cu_index, m->cu_index_len, sizeof(m->cu_index[0]), sym_cu_range_cmp);
}

/* The compile unit covering module address addr, and the bias to subtract for DWARF
 * addresses; NULL when no debug information covers it. */
static Dwarf_Die *sym_cu_at(struct sym_module *m, Dwarf_Addr addr, Dwarf_Addr *bias)
{
	Dwarf_Die *cu = dwfl_module_addrdie(m->mod, addr, bias);
	size_t lo = 0, hi;
	Dwarf_Addr a;

	if (cu != NULL)
		return cu;
	if (!m->cu_index_built)
		sym_cu_index_build(m);
	a = addr - m->cu_index_bias;
	hi = m->cu_index_len;
	while (lo < hi) { /* first range with lo > a */
		size_t mid = lo + (hi - lo) / 2;

		if (m->cu_index[mid].lo <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* Ranges rarely overlap; look back a few for one that still covers a. */
	for (size_t i = lo, k = 0; i > 0 && k < 8; i--, k++) {
		if (a < m->cu_index[i - 1].hi) {
			*bias = m->cu_index_bias;
			return &m->cu_index[i - 1].cu;
		}
	}
	return NULL;
}

/* Fills the inline chain at addr (bias: the DWARF bias of cudie) from DWARF scopes, innermost
 * first, with file:line of the innermost from the line table and of each outer one from the
 * call site below it (the `addr2line -i` answer). Returns the number of frames (0 when DWARF
 * does not cover addr), or -ENOMEM. Function names are interned; file names are libdw's. */
static int sym_dwarf_frames(struct mgc_symbolizer *s, Dwarf_Die *cudie, Dwarf_Addr bias,
			    Dwarf_Addr addr, const char *file, int line, struct mgc_frame *fr, int max)
{
	Dwarf_Die *scopes = NULL;
	Dwarf_Die innermost;
	int nscopes, n = 0;

	if (cudie == NULL)
		return 0;
	nscopes = dwarf_getscopes(cudie, addr - bias, &scopes);
	if (nscopes <= 0) {
		free(scopes);
		return 0;
	}
	/* Past an inlined instance dwarf_getscopes goes on with the scopes of its abstract
	 * definition (for variable lookup); the callers are the concrete DIE's parents. */
	innermost = scopes[0];
	free(scopes);
	scopes = NULL;
	nscopes = dwarf_getscopes_die(&innermost, &scopes);
	for (int i = 0; i < nscopes && n < max; i++) {
		Dwarf_Die *die = &scopes[i];
		const char *name;

		if (!sym_is_function(die))
			continue;
		name = sym_intern_function(s, sym_die_name(die));
		if (name == NULL) {
			free(scopes);
			return -ENOMEM;
		}
		fr[n] = (struct mgc_frame){ .function = name, .file = file, .line = line,
					    .status = MGC_FRAME_DWARF };
		if (dwarf_tag(die) != DW_TAG_inlined_subroutine) {
			n++;
			break;
		}
		fr[n++].inlined = 1;
		sym_call_site(die, &file, &line);
	}
	free(scopes);
	return n;
}

/* Interns a source file name, made absolute with the compile directory when it is relative
 * (GCC records "../src/x.c" against the build directory). NULL on ENOMEM. */
static const char *sym_intern_file(struct mgc_symbolizer *s, const char *comp_dir, const char *file)
{
	size_t dlen, flen;
	const char *r;
	char *full;

	if (file[0] == '/' || comp_dir == NULL || comp_dir[0] == '\0')
		return sym_intern(s, file);
	dlen = strlen(comp_dir);
	flen = strlen(file);
	full = malloc(dlen + 1 + flen + 1);
	if (full == NULL)
		return NULL;
	memcpy(full, comp_dir, dlen);
	full[dlen] = '/';
	memcpy(full + dlen + 1, file, flen + 1);
	r = sym_intern(s, full);
	free(full);
	return r;
}

/* The symbol table's name for addr (dwfl_module_addrinfo's answer), or NULL. */
static const char *sym_symtab_name(struct sym_module *m, Dwarf_Addr addr)
{
	const char *name;
	GElf_Off off;
	GElf_Sym sym;

	if (!m->symtab_built) {
		m->symtab = mgc_symtab_new(m->mod);
		m->symtab_built = true;
	}
	if (mgc_symtab_lookup(m->symtab, addr, &name))
		return name;
	return dwfl_module_addrinfo(m->mod, addr, &off, &sym, NULL, NULL, NULL);
}

/* Resolves offset (= ip - bias) in a usable module into a new cache entry; NULL on ENOMEM. */
static struct sym_addr *sym_resolve(struct mgc_symbolizer *s, struct sym_module *m,
				    uint64_t offset)
{
	struct mgc_frame fr[SYM_MAX_FRAMES];
	const char *file = NULL, *comp_dir = NULL;
	int line = 0, n = 0;
	Dwarf_Addr addr = offset - 1;

	if (offset != 0 && addr >= m->start && addr < m->end) {
		Dwarf_Addr dwbias = 0;
		Dwarf_Die *cudie = sym_cu_at(m, addr, &dwbias);
		Dwarf_Line *dl = cudie ? dwarf_getsrc_die(cudie, addr - dwbias) : NULL;
		Dwarf_Attribute attr;

		if (cudie != NULL)
			comp_dir = dwarf_formstring(dwarf_attr(cudie, DW_AT_comp_dir, &attr));
		if (dl != NULL && dwarf_lineno(dl, &line) == 0 && line > 0)
			file = dwarf_linesrc(dl, NULL, NULL);
		if (file == NULL)
			line = 0;
		n = cudie ? sym_dwarf_frames(s, cudie, dwbias, addr, file, line, fr, SYM_MAX_FRAMES) : 0;
		if (n < 0)
			return NULL;

		/* The symbol table only where DWARF has no name: libdwfl scans it linearly, so
		 * the module's index answers where it is sure to give libdwfl's answer. */
		if (n == 0 || fr[n - 1].function == unknown_name) {
			const char *symname = sym_symtab_name(m, addr);

			if (n == 0) {
				/* No DWARF function here (stripped, or code without DIEs): the symbol
				 * table may name it, the line table may still place it. */
				fr[0] = (struct mgc_frame){ .function = unknown_name, .file = file,
							    .line = line, .status = MGC_FRAME_SYMTAB };
				if (file != NULL)
					fr[0].status = MGC_FRAME_DWARF;
				else if (symname == NULL)
					fr[0].status = MGC_FRAME_NO_SYMBOL;
				n = 1;
			}
			if (symname != NULL &&
			    (fr[n - 1].function = sym_intern_function(s, symname)) == NULL)
				return NULL;
		}
	}
	if (n == 0) {
		fr[0] = (struct mgc_frame){ .function = unknown_name, .status = MGC_FRAME_NO_SYMBOL };
		n = 1;
	}

	struct sym_addr *a = malloc(sizeof(*a) + (size_t)n * sizeof(a->frames[0]));

	if (a == NULL)
		return NULL;
	a->module = m;
	a->offset = offset;
	a->n = n;
	for (int i = 0; i < n; i++) {
		a->frames[i] = fr[i];
		a->frames[i].module = m->path;
		a->frames[i].offset = offset;
		if (fr[i].file != NULL &&
		    (a->frames[i].file = sym_intern_file(s, comp_dir, fr[i].file)) == NULL) {
			free(a);
			return NULL;
		}
	}
	if (sym_htab_add(&s->addrs, sym_addr_hash(m, offset), a) < 0) {
		free(a);
		return NULL;
	}
	return a;
}

int mgc_symbolize(struct mgc_symbolizer *s, const char *path, const uint8_t *build_id,
		  size_t build_id_len, uint64_t bias, uint64_t ip, struct mgc_frame *out, int max)
{
	struct sym_module *m;
	struct sym_addr *a;
	uint64_t offset = ip - bias; /* wraps for garbage ip < bias: then outside every module */

	if (s == NULL || path == NULL || out == NULL || max < 1 ||
	    (build_id == NULL && build_id_len > 0))
		return -EINVAL;
	m = sym_module_get(s, path, build_id, build_id_len);
	if (m == NULL)
		return -ENOMEM;
	if (m->dwfl == NULL) {
		out[0] = (struct mgc_frame){ .function = unknown_name, .module = m->path,
					     .status = m->status, .offset = offset };
		return 1;
	}

	struct sym_addr_key key = { m, offset };

	a = sym_htab_find(&s->addrs, sym_addr_hash(m, offset), sym_addr_eq, &key);
	if (a == NULL && (a = sym_resolve(s, m, offset)) == NULL)
		return -ENOMEM;
	int n = a->n < max ? a->n : max;

	memcpy(out, a->frames, (size_t)n * sizeof(out[0]));
	if (n < a->n) {
		/* Cut short: the last slot gets the outer function, as documented. */
		out[n - 1] = a->frames[a->n - 1];
	}
	return n;
}

/* ---- whole stacks -------------------------------------------------------------------------- */

static const char *sym_basename(const char *path)
{
	const char *b = path ? strrchr(path, '/') : NULL;
	return b ? b + 1 : path;
}

/* 1 for the modules a site is not named after: the C library, the loader, the C++ runtime, the
 * probe itself, CUDA's runtime, driver and tracer (an allocation made through them belongs to
 * their caller). */
static bool sym_runtime_module(const char *path)
{
	const char *b = sym_basename(path);
	if (!b)
		return true;
	return strncmp(b, "libc.so", 7) == 0 || strncmp(b, "libc-", 5) == 0 || strncmp(b, "ld-linux", 8) == 0 ||
	       strncmp(b, "libstdc++", 9) == 0 || strncmp(b, "libmgprobe", 10) == 0 ||
	       strncmp(b, "libcudart.so", 12) == 0 || strncmp(b, "libcuda.so", 10) == 0 ||
	       strncmp(b, "libcupti.so", 11) == 0;
}

/* A CUDA allocation's stack is taken inside CUPTI's callback: its innermost frames are the
 * tracer's (libcupti), never the program's. Drops them. */
static void sym_drop_tracer(struct mgc_stack *st)
{
	size_t k = 0;
	while (k < st->n && !st->frames[k].python && st->frames[k].module &&
	       strncmp(sym_basename(st->frames[k].module) ?: "", "libcupti.so", 11) == 0)
		k++;
	if (k == 0 || k == st->n)
		return;
	memmove(st->frames, st->frames + k, (st->n - k) * sizeof st->frames[0]);
	st->n -= k;
}

static size_t sym_named_frame(const struct mgc_stack *st)
{
	size_t first_py = st->n, first_known = st->n;
	for (size_t i = 0; i < st->n; i++) {
		if (!st->frames[i].python)
			continue;
		if (!mgc_pyfile_is_library(st->frames[i].file))
			return i;
		if (first_py == st->n)
			first_py = i;
	}
	if (first_py < st->n)
		return first_py;
	for (size_t i = 0; i < st->n; i++) {
		if (st->frames[i].function == unknown_name || strcmp(st->frames[i].function, "??") == 0)
			continue;
		if (!sym_runtime_module(st->frames[i].module))
			return i;
		if (first_known == st->n)
			first_known = i;
	}
	return first_known < st->n ? first_known : 0;
}

/* Room for `more` frames at the end of st (capacity *cap). */
static int sym_stack_room(struct mgc_stack *st, size_t *cap, size_t more)
{
	if (st->n + more <= *cap)
		return 0;
	size_t ncap = *cap ? *cap : 16;
	while (ncap < st->n + more)
		ncap *= 2;
	struct mgc_frame *nf = realloc(st->frames, ncap * sizeof *nf);
	if (nf == NULL)
		return -ENOMEM;
	st->frames = nf;
	*cap = ncap;
	return 0;
}

/* One frame of a stack: a Python frame, or a return address in a module or in generated code.
 * Fills fr[0..8) and returns how many, or -ENOMEM. */
static int sym_frame(struct mgc_symbolizer *s, uint64_t ip, mgc_module_fn find, void *ctx,
		     const struct mgc_pycodes *py, struct mgc_frame *fr)
{
	struct mgc_module_ref m = { 0 };

	if (mgc_pyframe_is(ip)) {
		struct mgc_pyframe pf;
		mgc_pycodes_frame(py, ip, &pf);
		fr[0] = (struct mgc_frame){ .function = pf.function, .file = pf.file, .line = pf.line,
					    .status = MGC_FRAME_DWARF, .python = 1 };
		return 1;
	}
	find(ctx, ip - 1, &m);
	if (m.path != NULL)
		return mgc_symbolize(s, m.path, m.build_id, m.build_id_len, m.bias, ip, fr, 8);
	fr[0] = (struct mgc_frame){ .function = m.generated ? m.generated : unknown_name,
				    .module = m.generated ? "[perf-map]" : unknown_name,
				    .status = MGC_FRAME_NO_FILE, .offset = ip };
	return 1;
}

int mgc_symbolize_stack(struct mgc_symbolizer *s, const uint64_t *ips, size_t nips, mgc_module_fn find,
			void *ctx, const struct mgc_pycodes *py, struct mgc_stack *out)
{
	size_t cap = 0;
	memset(out, 0, sizeof(*out));
	for (size_t i = 0; i < nips; i++) {
		struct mgc_frame fr[8];
		int k = sym_frame(s, ips[i], find, ctx, py, fr);

		if (k < 0 || sym_stack_room(out, &cap, (size_t)k) < 0) {
			mgc_stack_free(out);
			return -ENOMEM;
		}
		memcpy(out->frames + out->n, fr, (size_t)k * sizeof(fr[0]));
		out->n += (size_t)k;
	}
	sym_drop_tracer(out);
	out->named = sym_named_frame(out);
	return 0;
}

void mgc_stack_free(struct mgc_stack *st)
{
	free(st->frames);
	memset(st, 0, sizeof(*st));
}
