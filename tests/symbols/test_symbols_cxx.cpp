/* SPDX-License-Identifier: MIT */
/* Symbolizes addresses captured in C++ code: names come back demangled with namespace, class
 * and parameter types, from DWARF and, through a copy stripped of debug info (argv[1]), from
 * the ELF symbol table. */
#include <cstdio>

#include "symtest.h"

static volatile int sink;

namespace ns {
struct Widget {
	int v;
	static Widget make(int v);
};

__attribute__((noinline)) Widget Widget::make(int v)
{
	symtest_capture(__LINE__);
	Widget w{v + sink};
	return w;
}

template <typename T> __attribute__((noinline)) T twice(T x)
{
	symtest_capture(__LINE__);
	return static_cast<T>(x + x + sink);
}
} // namespace ns

int main(int argc, char **argv)
{
	struct mgc_symbolizer *s = mgc_symbolizer_new();
	struct mgc_frame f[8];
	struct symtest_module m;
	int n;

	if (s == nullptr) {
		perror("mgc_symbolizer_new");
		return 1;
	}

	sink += ns::Widget::make(3).v;
	uintptr_t make_ip = symtest_cap.ip;
	int make_line = symtest_cap.line;

	if (symtest_find_module(make_ip, &m) != 0) {
		fprintf(stderr, "no module holds the captured address\n");
		return 1;
	}
	n = mgc_symbolize(s, m.path, m.build_id, m.build_id_len, m.bias, make_ip, f, 8);
	MG_EQ(n, 1, "make: frames");
	symtest_check_frame("make", &f[0], "ns::Widget::make(int)", "test_symbols_cxx.cpp",
			    make_line, 0);

	sink += ns::twice<int>(4);
	n = mgc_symbolize(s, m.path, m.build_id, m.build_id_len, m.bias, symtest_cap.ip, f, 8);
	MG_EQ(n, 1, "twice: frames");
	symtest_check_frame("twice", &f[0], "int ns::twice<int>(int)", "test_symbols_cxx.cpp",
			    symtest_cap.line, 0);

	if (argc > 1) {
		/* The same build without debug info: the symbol table, demangled. */
		n = mgc_symbolize(s, argv[1], m.build_id, m.build_id_len, m.bias, make_ip, f, 8);
		MG_EQ(n, 1, "stripped make: frames");
		symtest_check_frame("stripped make", &f[0], "ns::Widget::make(int)", nullptr, 0, 0);
		MG_EQ(f[0].status, MGC_FRAME_SYMTAB, "stripped make: status");
	}

	mgc_symbolizer_free(s);
	return mg_test_done("test_symbols_cxx");
}
