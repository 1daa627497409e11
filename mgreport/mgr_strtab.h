/* SPDX-License-Identifier: MIT */
/* mgr_strtab.h: a table of distinct strings, each with a dense index in the order first added:
 * how the HTML data interns frame names, how the speedscope export and the JSON's stack table
 * ("stack_frames") number their frames and how the diff matches stacks by their text. Never holds a pointer into the caller's memory. */
#ifndef MGR_STRTAB_H
#define MGR_STRTAB_H

#include <stddef.h>

struct mgr_strtab {
	char **s;      /* s[i]: the string of index i, owned */
	size_t n, cap; /* cap is a power of two */
	size_t *slot;  /* 2 * cap slots: index + 1, 0 = empty */
};

/* The index of s, added (copied) when new; -1 without memory. Zero-initialize the table first. */
long mgr_strtab_add(struct mgr_strtab *t, const char *s);

/* The index of s, or -1 when absent. */
long mgr_strtab_find(const struct mgr_strtab *t, const char *s);

void mgr_strtab_free(struct mgr_strtab *t);

#endif /* MGR_STRTAB_H */
