/* SPDX-License-Identifier: MIT */
/* mgp_elf.h: facts about a loaded module read from its program headers in memory (load range,
 * GNU build id), shared by the trace writer and the shared-memory publisher. Reads only mapped
 * memory; never allocates. */
#ifndef MGP_ELF_H
#define MGP_ELF_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <link.h>
#include <stdint.h>

/* Lowest and one-past-highest runtime address of the module's PT_LOAD segments. 0, or -1 when it
 * maps nothing (then *lo = *hi = 0). */
int mgp_elf_range(const struct dl_phdr_info *info, uint64_t *lo, uint64_t *hi);

/* The load range of the module holding addr (as mgp_elf_range): 0, or -1 when no loaded module
 * holds it (then *lo = *hi = 0). One dl_iterate_phdr walk: for start-up, not for hooks. */
int mgp_elf_module_of(const void *addr, uint64_t *lo, uint64_t *hi);

/* The module's path: dlpi_name, or for the main program (an empty name) /proc/self/exe read into
 * buf. */
const char *mgp_elf_name(const struct dl_phdr_info *info, char *buf, size_t cap);

/* Copies the module's GNU build id (at most cap bytes) to out; returns its length, 0 if none. */
unsigned mgp_elf_build_id(const struct dl_phdr_info *info, uint8_t *out, unsigned cap);

#endif /* MGP_ELF_H */
