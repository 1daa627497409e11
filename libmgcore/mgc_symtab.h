/* SPDX-License-Identifier: MIT */
/* mgc_symtab.h: a sorted index of a libdwfl module's symbol table, for the symbolizer's lookups of
 * addresses that DWARF does not name (libdwfl's dwfl_module_addrinfo scans every symbol for each
 * address: a PyTorch trace's ~10^5 addresses in libtorch's ~10^5 symbols took minutes). It answers
 * only where its answer is the one dwfl_module_addrinfo gives (mgc_symtab.c says when); elsewhere
 * (nested symbols, assembly labels) it says "ask libdwfl". It never changes what a frame is named. */
#ifndef MGC_SYMTAB_H
#define MGC_SYMTAB_H

#include <elfutils/libdwfl.h>

struct mgc_symtab;

/* Builds the index of mod's global symbols (the names stay libdwfl's: valid while mod is). NULL
 * on ENOMEM or without a symbol table: every lookup then asks libdwfl. */
struct mgc_symtab *mgc_symtab_new(Dwfl_Module *mod);
void mgc_symtab_free(struct mgc_symtab *t);

/* The name dwfl_module_addrinfo(mod, addr) gives, when the index is sure of it: 1 and *name set
 * (NULL when no symbol names addr); 0 when only libdwfl can say (t may be NULL). */
int mgc_symtab_lookup(const struct mgc_symtab *t, GElf_Addr addr, const char **name);

#endif /* MGC_SYMTAB_H */
