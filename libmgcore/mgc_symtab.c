/* SPDX-License-Identifier: MIT */
/* mgc_symtab.c: the symbol index of mgc_symtab.h. dwfl_module_addrinfo searches the global
 * symbols (libdwfl's first_global to the end), then, when none of them named the address, the
 * locals; it keeps the sized symbol containing the address that is closest to it (ties by
 * binding, then size, in table order), else a sizeless assembly label in the address's section
 * that no sized symbol's end passes. The index answers only where those rules leave no choice:
 * exactly one sized symbol contains the address (a global one, or else a local one), or none does
 * and every label below the address lies below a global symbol's end, so no symbol is named. It
 * must never answer otherwise. */
#include "mgc_symtab.h"

#include <stdint.h>
#include <stdlib.h>

/* Symbols up to this size are found by a bounded walk back from the address; larger ones (big
 * data tables) are few and checked one by one. */
#define SYMTAB_SMALL (1u << 20)

struct symtab_ent {
	GElf_Addr lo, hi; /* [lo, hi): the symbol's value as libdwfl gives it, and its end */
	const char *name;
};

/* The sized symbols of one part of the table (globals or locals). */
struct symtab_part {
	struct symtab_ent *small; /* sorted by lo */
	GElf_Addr *reach;         /* reach[i]: the highest end among small[0..i] */
	size_t nsmall;
	struct symtab_ent *big;
	size_t nbig;
};

struct mgc_symtab {
	struct symtab_part global, local;
	GElf_Addr *labels; /* values of the sizeless symbols of both parts, sorted */
	size_t nlabels;
};

static int ent_cmp(const void *a, const void *b)
{
	const struct symtab_ent *x = a, *y = b;
	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

static int addr_cmp(const void *a, const void *b)
{
	GElf_Addr x = *(const GElf_Addr *)a, y = *(const GElf_Addr *)b;
	return x < y ? -1 : x > y;
}

static void part_free(struct symtab_part *p)
{
	free(p->small);
	free(p->reach);
	free(p->big);
}

static int part_alloc(struct symtab_part *p, size_t cap)
{
	p->small = malloc(cap * sizeof *p->small);
	p->reach = malloc(cap * sizeof *p->reach);
	p->big = malloc(cap * sizeof *p->big);
	return p->small && p->reach && p->big ? 0 : -1;
}

static void part_add(struct symtab_part *p, const struct symtab_ent *e)
{
	if (e->hi - e->lo <= SYMTAB_SMALL)
		p->small[p->nsmall++] = *e;
	else
		p->big[p->nbig++] = *e;
}

static void part_sort(struct symtab_part *p)
{
	qsort(p->small, p->nsmall, sizeof *p->small, ent_cmp);
	for (size_t i = 0; i < p->nsmall; i++)
		p->reach[i] = i && p->reach[i - 1] > p->small[i].hi ? p->reach[i - 1] : p->small[i].hi;
}

/* Reads symbols [from, to) into part p (the sized ones) and t's labels (the sizeless ones): those
 * dwfl_module_addrinfo weighs at all. */
static void read_part(Dwfl_Module *mod, int from, int to, struct symtab_part *p, struct mgc_symtab *t)
{
	for (int i = from; i < to; i++) {
		GElf_Sym sym;
		GElf_Addr value;
		GElf_Word shndx;
		const char *name = dwfl_module_getsym_info(mod, i, &sym, &value, &shndx, NULL, NULL);
		int type = GELF_ST_TYPE(sym.st_info);
		if (!name || !name[0] || sym.st_shndx == SHN_UNDEF || type == STT_SECTION || type == STT_FILE ||
		    type == STT_TLS)
			continue;
		if (sym.st_size == 0 || value + sym.st_size < value)
			t->labels[t->nlabels++] = value; /* (a wrapping size: treated as unknown) */
		else
			part_add(p, &(struct symtab_ent){value, value + sym.st_size, name});
	}
	part_sort(p);
}

struct mgc_symtab *mgc_symtab_new(Dwfl_Module *mod)
{
	int n = dwfl_module_getsymtab(mod);
	int first = dwfl_module_getsymtab_first_global(mod);
	if (n <= 1 || first < 0)
		return NULL;
	struct mgc_symtab *t = calloc(1, sizeof *t);
	size_t cap = (size_t)n;
	if (!t || part_alloc(&t->global, cap) < 0 || part_alloc(&t->local, cap) < 0 ||
	    !(t->labels = malloc(cap * sizeof *t->labels))) {
		mgc_symtab_free(t);
		return NULL;
	}
	read_part(mod, first == 0 ? 1 : first, n, &t->global, t);
	read_part(mod, 1, first, &t->local, t);
	qsort(t->labels, t->nlabels, sizeof *t->labels, addr_cmp);
	return t;
}

void mgc_symtab_free(struct mgc_symtab *t)
{
	if (!t)
		return;
	part_free(&t->global);
	part_free(&t->local);
	free(t->labels);
	free(t);
}

/* How many of p's symbols contain addr (the first found in *name), and in *reach the highest end
 * of those that start at or below it. */
static size_t part_find(const struct symtab_part *p, GElf_Addr addr, const char **name, GElf_Addr *reach)
{
	size_t lo = 0, hi = p->nsmall, found = 0;
	while (lo < hi) { /* the first symbol past addr */
		size_t mid = lo + (hi - lo) / 2;
		if (p->small[mid].lo <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	*reach = lo ? p->reach[lo - 1] : 0;
	for (size_t i = lo; i > 0 && addr - p->small[i - 1].lo < SYMTAB_SMALL; i--)
		if (addr < p->small[i - 1].hi && found++ == 0)
			*name = p->small[i - 1].name;
	for (size_t i = 0; i < p->nbig; i++) {
		if (p->big[i].lo > addr)
			continue;
		*reach = p->big[i].hi > *reach ? p->big[i].hi : *reach;
		if (addr < p->big[i].hi && found++ == 0)
			*name = p->big[i].name;
	}
	return found;
}

int mgc_symtab_lookup(const struct mgc_symtab *t, GElf_Addr addr, const char **name)
{
	const char *g = NULL, *l = NULL;
	GElf_Addr reach, local_reach;
	if (!t)
		return 0;
	size_t ng = part_find(&t->global, addr, &g, &reach);
	if (ng)
		return ng == 1 ? (*name = g, 1) : 0;
	size_t lo = 0, hi = t->nlabels;
	while (lo < hi) { /* the first label past addr */
		size_t mid = lo + (hi - lo) / 2;
		if (t->labels[mid] <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo && t->labels[lo - 1] >= reach)
		return 0; /* a label might be named (or keep the locals from being searched) */
	size_t nl = part_find(&t->local, addr, &l, &local_reach);
	if (nl > 1)
		return 0;
	*name = l; /* the one local symbol, or none at all */
	return 1;
}
