/* SPDX-License-Identifier: MIT */
/* Symbolizes an address inside a dlopen'ed shared library (argv[1]) found through
 * dl_iterate_phdr, then the same address against copies of that library made by objcopy:
 * without debug info (argv[2]), without any .symtab (argv[3]), and with its DWARF moved to a
 * separate file named by .gnu_debuglink (argv[4]). Last, a frame inside the system's libc, whose
 * separate debug file, where installed, is found under /usr/lib/debug/.build-id. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

#include "symtest.h"

static uintptr_t libc_ip;

/* qsort's comparator: its return address is inside libc's sorting code. */
static int compare_ints(const void *a, const void *b)
{
	if (libc_ip == 0)
		libc_ip = (uintptr_t)__builtin_return_address(0);
	return *(const int *)a - *(const int *)b;
}

/* Whatever the libc build, an address in its code must get a name; with the separate debug
 * file installed (Debian: libc6-dbg) also a source file from DWARF. */
static void check_libc(struct mgc_symbolizer *s)
{
	int v[32];
	struct symtest_module m;
	struct mgc_frame f[8];
	char debug_path[256];
	int n, len;

	for (int i = 0; i < 32; i++)
		v[i] = 32 - i;
	qsort(v, 32, sizeof(v[0]), compare_ints);
	if (libc_ip == 0 || symtest_find_module(libc_ip, &m) != 0 || m.build_id_len < 2) {
		printf("libc frame not captured: libc case skipped\n");
		return;
	}
	n = mgc_symbolize(s, m.path, m.build_id, m.build_id_len, m.bias, libc_ip, f, 8);
	MG_TRUE(n >= 1, "libc: frames");
	if (n < 1)
		return;
	if (getenv("SYMTEST_VERBOSE"))
		symtest_dump("libc", f, n);
	MG_TRUE(strcmp(f[n - 1].function, "??") != 0, "libc: outer function has a name");
	len = snprintf(debug_path, sizeof(debug_path), "/usr/lib/debug/.build-id/%02x/", m.build_id[0]);
	for (size_t i = 1; i < m.build_id_len && len < 200; i++)
		len += snprintf(debug_path + len, sizeof(debug_path) - (size_t)len, "%02x", m.build_id[i]);
	snprintf(debug_path + len, sizeof(debug_path) - (size_t)len, ".debug");
	if (access(debug_path, R_OK) == 0) {
		MG_EQ(f[n - 1].status, MGC_FRAME_DWARF, "libc with separate debug file: status");
		MG_TRUE(f[n - 1].file != NULL, "libc with separate debug file: has a source file");
		MG_TRUE(f[n - 1].line > 0, "libc with separate debug file: has a line");
	} else {
		printf("%s not installed: libc checked by name only\n", debug_path);
	}
}

int main(int argc, char **argv)
{
	struct mgc_symbolizer *s;
	struct mgc_frame f[8];
	struct symtest_module m;
	int (*call)(void (*)(int));
	void *lib;
	int n;

	if (argc < 2) {
		fprintf(stderr, "usage: %s LIB [NODEBUG-COPY STRIPPED-COPY DEBUGLINK-COPY]\n", argv[0]);
		return 2;
	}
	lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	if (lib == NULL) {
		fprintf(stderr, "dlopen %s: %s\n", argv[1], dlerror());
		return 1;
	}
	*(void **)&call = dlsym(lib, "symlib_call");
	if (call == NULL) {
		fprintf(stderr, "dlsym symlib_call: %s\n", dlerror());
		return 1;
	}
	call(symtest_capture);
	if (symtest_find_module(symtest_cap.ip, &m) != 0) {
		fprintf(stderr, "no module holds 0x%llx\n", (unsigned long long)symtest_cap.ip);
		return 1;
	}
	MG_STR(symtest_basename(m.path), symtest_basename(argv[1]), "module found by dl_iterate_phdr");
	MG_TRUE(m.build_id_len > 0, "the library has a build id");

	s = mgc_symbolizer_new();
	if (s == NULL) {
		perror("mgc_symbolizer_new");
		return 1;
	}
	n = mgc_symbolize(s, m.path, m.build_id, m.build_id_len, m.bias, symtest_cap.ip, f, 8);
	MG_EQ(n, 1, "dso: frames");
	symtest_check_frame("dso", &f[0], "symlib_call", "symlib.c", symtest_cap.line, 0);
	MG_EQ(f[0].status, MGC_FRAME_DWARF, "dso: status");
	MG_EQ(f[0].offset, symtest_cap.ip - m.bias, "dso: offset");

	if (argc >= 5) {
		n = mgc_symbolize(s, argv[2], m.build_id, m.build_id_len, m.bias, symtest_cap.ip, f, 8);
		MG_EQ(n, 1, "no debug info: frames");
		symtest_check_frame("no debug info", &f[0], "symlib_call", NULL, 0, 0);
		MG_EQ(f[0].status, MGC_FRAME_SYMTAB, "no debug info: status");

		n = mgc_symbolize(s, argv[3], m.build_id, m.build_id_len, m.bias, symtest_cap.ip, f, 8);
		MG_EQ(n, 1, "dynsym only: frames");
		symtest_check_frame("dynsym only", &f[0], "symlib_call", NULL, 0, 0);
		MG_EQ(f[0].status, MGC_FRAME_SYMTAB, "dynsym only: status");

		n = mgc_symbolize(s, argv[4], m.build_id, m.build_id_len, m.bias, symtest_cap.ip, f, 8);
		MG_EQ(n, 1, "debuglink: frames");
		symtest_check_frame("debuglink", &f[0], "symlib_call", "symlib.c", symtest_cap.line, 0);
		MG_EQ(f[0].status, MGC_FRAME_DWARF, "debuglink: status");
	} else {
		printf("objcopy copies not given: stripped cases skipped\n");
	}

	check_libc(s);
	mgc_symbolizer_free(s);
	dlclose(lib);
	return mg_test_done("test_symbols_dso");
}
