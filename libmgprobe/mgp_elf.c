/* SPDX-License-Identifier: MIT */
/* mgp_elf.c: program-header readers for loaded modules (see mgp_elf.h). Everything read lies in
 * the module's own mapped segments; bounds are checked against the note segment's size. */
#include "mgp_elf.h"

#include <elf.h>
#include <string.h>
#include <unistd.h>

int mgp_elf_range(const struct dl_phdr_info *info, uint64_t *lo, uint64_t *hi)
{
	uint64_t a = UINT64_MAX, b = 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD)
			continue;
		uint64_t s = info->dlpi_addr + ph->p_vaddr, e = s + ph->p_memsz;
		if (s < a)
			a = s;
		if (e > b)
			b = e;
	}
	if (a == UINT64_MAX) {
		*lo = *hi = 0;
		return -1;
	}
	*lo = a;
	*hi = b;
	return 0;
}

struct module_query {
	uint64_t addr, lo, hi;
	int found;
};

static int module_phdr(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct module_query *q = arg;
	uint64_t lo, hi;
	(void)size;
	if (mgp_elf_range(info, &lo, &hi) == 0 && q->addr >= lo && q->addr < hi) {
		q->lo = lo;
		q->hi = hi;
		q->found = 1;
		return 1;
	}
	return 0;
}

int mgp_elf_module_of(const void *addr, uint64_t *lo, uint64_t *hi)
{
	struct module_query q = {(uint64_t)(uintptr_t)addr, 0, 0, 0};
	dl_iterate_phdr(module_phdr, &q);
	*lo = q.lo;
	*hi = q.hi;
	return q.found ? 0 : -1;
}

const char *mgp_elf_name(const struct dl_phdr_info *info, char *buf, size_t cap)
{
	if (info->dlpi_name && *info->dlpi_name)
		return info->dlpi_name;
	ssize_t n = readlink("/proc/self/exe", buf, cap - 1);
	buf[n > 0 ? n : 0] = 0;
	return buf;
}

unsigned mgp_elf_build_id(const struct dl_phdr_info *info, uint8_t *out, unsigned cap)
{
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_NOTE)
			continue;
		const char *p = (const char *)(info->dlpi_addr + ph->p_vaddr);
		const char *end = p + ph->p_memsz;
		while (p + sizeof(ElfW(Nhdr)) <= end) {
			const ElfW(Nhdr) *nh = (const ElfW(Nhdr) *)p;
			const char *name = p + sizeof *nh;
			const char *desc = name + ((nh->n_namesz + 3) & ~3u);
			if (desc + nh->n_descsz > end)
				break;
			if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 && memcmp(name, "GNU", 4) == 0) {
				unsigned n = nh->n_descsz < cap ? nh->n_descsz : cap;
				memcpy(out, desc, n);
				return n;
			}
			p = desc + ((nh->n_descsz + 3) & ~3u);
		}
	}
	return 0;
}
