/* SPDX-License-Identifier: MIT */
/* mgp_modules.h: the process's module map (what dl_iterate_phdr reports: load bias, the range of
 * the PT_LOAD segments, GNU build id, path), read once per tick when the loader's counters say it
 * changed, and shared by both outputs: the trace writes its loads and unloads, the live segment
 * copies the modules loaded now. Writer lock held; never calls malloc (tables come from the
 * kernel). */
#ifndef MGP_MODULES_H
#define MGP_MODULES_H

#include <stdint.h>

struct mgp_module {
	uint64_t bias;              /* runtime address = bias + ELF vaddr */
	uint64_t start, end;        /* runtime range of its PT_LOAD segments; 0, 0 when none */
	uint32_t id;                /* unique in this process (since the last mgp_modules_forget) */
	uint32_t gen_loaded;        /* generation in which it was first seen */
	uint32_t gen_unloaded;      /* the first generation without it; 0 while loaded */
	uint32_t path_off, path_len; /* into mgp_modules_names() */
	uint8_t build_id[40];
	uint8_t build_id_len;
	uint8_t seen;               /* found by the current scan */
};

/* Reserves the tables. 0 or -ENOMEM. Call once at start-up. */
int mgp_modules_init(void);

/* Re-reads the map when the loader's add/remove counters moved (always the first time). Each
 * change (a module loaded or unloaded) bumps the generation once per call. */
void mgp_modules_sync(void);

/* The generation: 0 before the first sync, then the number of syncs that found a change. */
uint32_t mgp_modules_gen(void);

/* Every module seen, loaded or gone, in the order first seen: n entries. */
const struct mgp_module *mgp_modules_all(uint32_t *n);

/* Paths, indexed by path_off (not NUL-terminated). */
const char *mgp_modules_names(void);

/* In a forked child: start over, so the child's trace lists its modules afresh. */
void mgp_modules_forget(void);

#endif /* MGP_MODULES_H */
