/* SPDX-License-Identifier: MIT */
/* Symbolizes return addresses captured in this very program (built with -g, as PIE and, with
 * SYMTEST_NOPIE, as a non-PIE executable): a noinline function, one and two levels of
 * always_inline callees, truncation to max frames, and the per-address cache. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "mgc_symbols.h"
#include "symtest.h"

static volatile int sink;
static int outer_call_line; /* line in mg_sym_outer that calls the inlined leaf */
static int mid_call_line;   /* line in mg_sym_mid that calls the leaf */
static int outer2_call_line; /* line in mg_sym_outer2 that calls mg_sym_mid */

int mg_sym_plain(void);
int mg_sym_outer(void);
int mg_sym_outer2(void);

__attribute__((noinline)) int mg_sym_plain(void)
{
	symtest_capture(__LINE__);
	return sink;
}

static inline __attribute__((always_inline)) void mg_sym_leaf(void)
{
	symtest_capture(__LINE__);
	sink++;
}

__attribute__((noinline)) int mg_sym_outer(void)
{
	outer_call_line = __LINE__; mg_sym_leaf();
	return sink;
}

static inline __attribute__((always_inline)) void mg_sym_mid(void)
{
	mid_call_line = __LINE__; mg_sym_leaf();
	sink += 2;
}

__attribute__((noinline)) int mg_sym_outer2(void)
{
	outer2_call_line = __LINE__; mg_sym_mid();
	return sink;
}

struct expect {
	const char *function;
	int line;
	int inlined;
};

/* Checks a whole inline chain, innermost first, all in this file. */
static void check_chain(const char *what, const struct mgc_frame *f, int n,
			const struct expect *e, int ne)
{
	char label[64];

	MG_EQ(n, ne, "%s", what);
	if (n != ne) {
		symtest_dump(what, f, n);
		return;
	}
	for (int i = 0; i < n; i++) {
		snprintf(label, sizeof(label), "%s #%d", what, i);
		symtest_check_frame(label, &f[i], e[i].function, "test_symbols_c.c", e[i].line,
				    e[i].inlined);
	}
}

/* Symbolizes the last captured address in this executable; returns the frame count. */
static int symbolize_capture(struct mgc_symbolizer *s, struct mgc_frame *out, int max,
			     struct symtest_module *m)
{
	int n;

	if (symtest_find_module(symtest_cap.ip, m) != 0) {
		MG_FAIL("no loaded module contains 0x%llx", (unsigned long long)symtest_cap.ip);
		return 0;
	}
	n = mgc_symbolize(s, m->path, m->build_id, m->build_id_len, m->bias, symtest_cap.ip, out,
			  max);
	MG_TRUE(n >= 1 && n <= max, "mgc_symbolize returns at least one frame");
	return n;
}

int main(void)
{
	struct mgc_symbolizer *s = mgc_symbolizer_new();
	struct mgc_frame f[8];
	struct symtest_module m;
	int n, leaf_line;

	if (s == NULL) {
		perror("mgc_symbolizer_new");
		return 1;
	}

	/* A plain noinline function: one frame, the call's line. */
	mg_sym_plain();
	n = symbolize_capture(s, f, 8, &m);
	MG_TRUE(m.build_id_len > 0, "the executable has a build id");
#ifdef SYMTEST_NOPIE
	MG_EQ(m.bias, 0, "non-PIE bias");
#else
	MG_TRUE(m.bias != 0, "PIE bias is not 0");
#endif
	MG_EQ(n, 1, "plain: frames");
	symtest_check_frame("plain", &f[0], "mg_sym_plain", "test_symbols_c.c", symtest_cap.line, 0);
	MG_STR(f[0].module, m.path, "plain: module");
	MG_EQ(f[0].offset, symtest_cap.ip - m.bias, "plain: offset");
	MG_EQ(f[0].status, MGC_FRAME_DWARF, "plain: status");
	MG_TRUE(f[0].file != NULL && f[0].file[0] == '/', "plain: file is absolute");

	/* The same address again comes from the cache: the same interned strings. */
	const char *fn = f[0].function, *file = f[0].file;

	n = symbolize_capture(s, f, 8, &m);
	MG_EQ(n, 1, "plain again: frames");
	MG_TRUE(f[0].function == fn, "plain again: cached function string");
	MG_TRUE(f[0].file == file, "plain again: cached file string");

	/* One level of inlining: the leaf at its own line, then the caller at the call site. */
	mg_sym_outer();
	leaf_line = symtest_cap.line;
	n = symbolize_capture(s, f, 8, &m);
	check_chain("inlined", f, n, (struct expect[]){ { "mg_sym_leaf", leaf_line, 1 },
			{ "mg_sym_outer", outer_call_line, 0 } }, 2);

	/* Two levels: leaf in mid in outer2. */
	mg_sym_outer2();
	n = symbolize_capture(s, f, 8, &m);
	check_chain("inlined twice", f, n, (struct expect[]){ { "mg_sym_leaf", leaf_line, 1 },
			{ "mg_sym_mid", mid_call_line, 1 }, { "mg_sym_outer2", outer2_call_line, 0 } }, 3);

	/* Cut to max: the outer function stays last, at its own line. */
	n = symbolize_capture(s, f, 2, &m);
	check_chain("max 2", f, n, (struct expect[]){ { "mg_sym_leaf", leaf_line, 1 },
			{ "mg_sym_outer2", outer2_call_line, 0 } }, 2);
	n = symbolize_capture(s, f, 1, &m);
	MG_EQ(n, 1, "max 1: frames");
	symtest_check_frame("max 1", &f[0], "mg_sym_outer2", "test_symbols_c.c", outer2_call_line, 0);

	/* No build id given: the file is used unchecked. */
	n = mgc_symbolize(s, m.path, NULL, 0, m.bias, symtest_cap.ip, f, 8);
	MG_EQ(n, 3, "no build id: frames");
	MG_STR(n == 3 ? f[2].function : NULL, "mg_sym_outer2", "no build id: outer function");

	mgc_symbolizer_free(s);
	return mg_test_done("test_symbols_c");
}
