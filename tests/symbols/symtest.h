/* SPDX-License-Identifier: MIT */
/* symtest.h: what the symbolizer tests share: capturing a return address, finding the running
 * module's path, bias and build id the way the probe does (dl_iterate_phdr + PT_NOTE), and a
 * frame check on top of mg_test.h. Test code only; never include it from libraries. */
#ifndef MG_SYMTEST_H
#define MG_SYMTEST_H

#include <elf.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mg_test.h"
#include "mgc_symbols.h"

/* What the probe records about the module holding an address. */
struct symtest_module {
	char path[4096];
	uint8_t build_id[64];
	size_t build_id_len;
	uint64_t bias;
};

/* The last captured return address and the source line of the call that produced it. */
static struct {
	uintptr_t ip;
	int line;
} symtest_cap;

/* Records its own return address: an address in the caller, just after the call at `line`.
 * Callers must do work after the call, so that it is not a tail call. */
static __attribute__((noinline, unused)) void symtest_capture(int line)
{
	symtest_cap.ip = (uintptr_t)__builtin_return_address(0);
	symtest_cap.line = line;
	__asm__ volatile("" ::: "memory");
}

struct symtest_search {
	uintptr_t addr;
	struct symtest_module *out;
	int found;
};

static inline void symtest_build_id(const struct dl_phdr_info *info, struct symtest_module *m)
{
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		size_t align = ph->p_align == 8 ? 8 : 4;
		const char *p = (const char *)(info->dlpi_addr + ph->p_vaddr);
		const char *end = p + ph->p_memsz;

		if (ph->p_type != PT_NOTE)
			continue;
		while (p + sizeof(ElfW(Nhdr)) <= end) {
			const ElfW(Nhdr) *nh = (const ElfW(Nhdr) *)p;
			const char *name = p + sizeof(*nh);
			const char *desc = name + ((nh->n_namesz + align - 1) & ~(align - 1));

			if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 &&
			    memcmp(name, "GNU", 4) == 0 && nh->n_descsz <= sizeof(m->build_id)) {
				memcpy(m->build_id, desc, nh->n_descsz);
				m->build_id_len = nh->n_descsz;
				return;
			}
			p = desc + ((nh->n_descsz + align - 1) & ~(align - 1));
		}
	}
}

static inline int symtest_phdr_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	struct symtest_search *q = (struct symtest_search *)data;

	(void)size;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type != PT_LOAD || q->addr < lo || q->addr >= lo + ph->p_memsz)
			continue;
		q->out->bias = info->dlpi_addr;
		if (info->dlpi_name == NULL || info->dlpi_name[0] == '\0') {
			ssize_t n = readlink("/proc/self/exe", q->out->path, sizeof(q->out->path) - 1);

			q->out->path[n > 0 ? n : 0] = '\0';
		} else {
			snprintf(q->out->path, sizeof(q->out->path), "%s", info->dlpi_name);
		}
		symtest_build_id(info, q->out);
		q->found = 1;
		return 1;
	}
	return 0;
}

/* Fills *m for the loaded module that contains addr; 0 or -1 when none does. */
static inline int symtest_find_module(uintptr_t addr, struct symtest_module *m)
{
	struct symtest_search q = { addr, m, 0 };

	memset(m, 0, sizeof(*m));
	dl_iterate_phdr(symtest_phdr_cb, &q);
	return q.found ? 0 : -1;
}

static inline const char *symtest_basename(const char *path)
{
	const char *slash = path ? strrchr(path, '/') : NULL;

	return slash ? slash + 1 : path;
}

static inline void symtest_dump(const char *what, const struct mgc_frame *f, int n)
{
	fprintf(stderr, "  %s: %d frame(s)\n", what, n);
	for (int i = 0; i < n; i++)
		fprintf(stderr, "    #%d %s at %s:%d in %s%s [%s] +0x%llx\n", i, f[i].function,
			f[i].file ? f[i].file : "?", f[i].line, symtest_basename(f[i].module),
			f[i].inlined ? " (inlined)" : "", mgc_frame_status_name(f[i].status),
			(unsigned long long)f[i].offset);
}

/* Checks one frame's function, file basename (NULL: no file expected) and line; prints the
 * frame when a check fails or SYMTEST_VERBOSE is set. */
static inline void symtest_check_frame(const char *what, const struct mgc_frame *f,
				       const char *function, const char *file, int line, int inlined)
{
	int before = mg_test_failures;

	MG_STR(f->function, function, "%s", what);
	MG_STR(f->file ? symtest_basename(f->file) : NULL, file, "%s", what);
	MG_EQ(f->line, line, "%s", what);
	MG_EQ(f->inlined, inlined, "%s", what);
	if (mg_test_failures != before || getenv("SYMTEST_VERBOSE"))
		symtest_dump(what, f, 1);
}

#endif /* MG_SYMTEST_H */
