/* SPDX-License-Identifier: MIT */
/* test_symtab.c: the symbol index (libmgcore/mgc_symtab.h) gives libdwfl's own answer wherever it
 * answers. Every module this test has loaded (itself, libc, libstdc++, libdw, libelf, ...) and the
 * files named on the command line (a stripped copy: .dynsym only; a library with a big table) are
 * opened as the symbolizer opens them, and addresses around every symbol's start and end and
 * spread over the module are looked up both ways. */
#define _GNU_SOURCE
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mg_test.h"
#include "mgc_symtab.h"

#define MAX_ADDRS 1500 /* per module: libdwfl's lookup scans the whole table each time */

static const Dwfl_Callbacks callbacks = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.section_address = dwfl_offline_section_address,
};

static size_t answered_total, named_total, unnamed_total;

/* The addresses to try: around the symbols' bounds, then spread over [start, end). */
static size_t pick(Dwfl_Module *mod, GElf_Addr start, GElf_Addr end, GElf_Addr *out)
{
	int n = dwfl_module_getsymtab(mod);
	size_t k = 0, stride = n > MAX_ADDRS / 8 ? (size_t)n / (MAX_ADDRS / 8) : 1;
	for (int i = 1; i < n && k + 5 <= MAX_ADDRS / 2; i += (int)stride) {
		GElf_Sym sym;
		GElf_Addr v;
		if (!dwfl_module_getsym_info(mod, i, &sym, &v, NULL, NULL, NULL))
			continue;
		GElf_Addr cand[5] = {v - 1, v, v + sym.st_size / 2, v + sym.st_size - 1, v + sym.st_size};
		for (int c = 0; c < 5; c++)
			out[k++] = cand[c];
	}
	uint64_t x = 0x9e3779b97f4a7c15ull;
	while (k < MAX_ADDRS && end > start) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		out[k++] = start + (x >> 11) % (end - start);
	}
	return k;
}

static void check_module(const char *path)
{
	Dwfl *dwfl = dwfl_begin(&callbacks);
	dwfl_report_begin(dwfl);
	Dwfl_Module *mod = dwfl_report_elf(dwfl, path, path, -1, 0, true);
	dwfl_report_end(dwfl, NULL, NULL);
	GElf_Addr bias, start = 0, end = 0;
	if (!mod || !dwfl_module_getelf(mod, &bias)) {
		MG_FAIL("%s: libdwfl cannot open it", path);
		dwfl_end(dwfl);
		return;
	}
	dwfl_module_info(mod, NULL, &start, &end, NULL, NULL, NULL, NULL);
	struct mgc_symtab *t = mgc_symtab_new(mod);
	GElf_Addr *addrs = malloc(MAX_ADDRS * sizeof *addrs);
	size_t n = addrs ? pick(mod, start, end, addrs) : 0, answered = 0;
	for (size_t i = 0; i < n; i++) {
		const char *mine = NULL, *theirs;
		GElf_Off off;
		GElf_Sym sym;
		if (!mgc_symtab_lookup(t, addrs[i], &mine))
			continue;
		answered++;
		theirs = dwfl_module_addrinfo(mod, addrs[i], &off, &sym, NULL, NULL, NULL);
		MG_STR(mine, theirs, "%s at 0x%llx", path, (unsigned long long)addrs[i]);
		named_total += mine != NULL;
		unnamed_total += mine == NULL;
	}
	MG_TRUE(answered > 0, "%s: the index answered some of %zu addresses", path, n);
	printf("%s: %zu of %zu addresses answered by the index, all as libdwfl\n", path, answered, n);
	answered_total += answered;
	free(addrs);
	mgc_symtab_free(t);
	dwfl_end(dwfl);
}

static int each_loaded(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	(void)data;
	if (info->dlpi_name && info->dlpi_name[0] == '/' && !strstr(info->dlpi_name, "linux-vdso"))
		check_module(info->dlpi_name);
	return 0;
}

int main(int argc, char **argv)
{
	char self[4096];
	ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
	if (len > 0) {
		self[len] = 0;
		check_module(self);
	}
	dl_iterate_phdr(each_loaded, NULL);
	for (int i = 1; i < argc; i++)
		if (access(argv[i], R_OK) == 0)
			check_module(argv[i]);
	MG_TRUE(named_total > 1000 && unnamed_total > 0, "both answers came up: named %zu, none %zu", named_total,
		unnamed_total);
	return mg_test_done("symtab");
}
