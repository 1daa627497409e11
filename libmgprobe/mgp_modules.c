/* SPDX-License-Identifier: MIT */
/* mgp_modules.c: the module map of mgp_modules.h. A scan is one dl_iterate_phdr pass; most ticks
 * only compare the loader's counters (one callback). Never calls malloc: the table and the path
 * bytes are reserved from the kernel once. */
#define _GNU_SOURCE
#include "mgp_modules.h"

#include <errno.h>
#include <link.h>
#include <string.h>

#include "mgp_elf.h"
#include "mgp_os.h"

#define MAX_MODS 8192u
#define NAMES_CAP (4u << 20)

static struct {
	struct mgp_module *mods;
	uint32_t n, next_id, gen;
	char *names;
	uint32_t names_used;
	unsigned long long adds, subs; /* the loader's counters at the last scan */
	int changed;                   /* the scan in progress found a new module */
} modules;

int mgp_modules_init(void)
{
	modules.mods = mgp_os_alloc(MAX_MODS * sizeof(struct mgp_module));
	modules.names = mgp_os_alloc(NAMES_CAP);
	return modules.mods && modules.names ? 0 : -ENOMEM;
}

static struct mgp_module *find_loaded(uint64_t bias, const char *name, size_t nlen)
{
	for (uint32_t i = 0; i < modules.n; i++) {
		struct mgp_module *m = &modules.mods[i];
		if (!m->gen_unloaded && m->bias == bias && m->path_len == nlen &&
		    memcmp(modules.names + m->path_off, name, nlen) == 0)
			return m;
	}
	return NULL;
}

static int on_phdr(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	(void)arg;
	char exe[1024];
	const char *name = mgp_elf_name(info, exe, sizeof exe);
	size_t nlen = strlen(name);
	struct mgp_module *m = find_loaded(info->dlpi_addr, name, nlen);
	if (m) {
		m->seen = 1;
		return 0;
	}
	if (modules.n >= MAX_MODS || modules.names_used + nlen > NAMES_CAP)
		return 0;
	m = &modules.mods[modules.n++];
	memset(m, 0, sizeof *m);
	m->bias = info->dlpi_addr;
	mgp_elf_range(info, &m->start, &m->end);
	m->build_id_len = (uint8_t)mgp_elf_build_id(info, m->build_id, sizeof m->build_id);
	m->path_off = modules.names_used;
	m->path_len = (uint32_t)nlen;
	memcpy(modules.names + modules.names_used, name, nlen);
	modules.names_used += (uint32_t)nlen;
	m->id = ++modules.next_id;
	m->gen_loaded = modules.gen + 1; /* the generation this scan makes, if it makes one */
	m->seen = 1;
	modules.changed = 1;
	return 0;
}

static int read_counters(struct dl_phdr_info *info, size_t size, void *arg)
{
	unsigned long long *c = arg;
	(void)size;
	c[0] = info->dlpi_adds;
	c[1] = info->dlpi_subs;
	return 1; /* the counters are the same in every entry: one is enough */
}

void mgp_modules_sync(void)
{
	unsigned long long c[2] = {0, 0};
	dl_iterate_phdr(read_counters, c);
	if (modules.gen && c[0] == modules.adds && c[1] == modules.subs)
		return;
	modules.adds = c[0];
	modules.subs = c[1];
	for (uint32_t i = 0; i < modules.n; i++)
		modules.mods[i].seen = 0;
	modules.changed = 0;
	dl_iterate_phdr(on_phdr, NULL);
	for (uint32_t i = 0; i < modules.n; i++) {
		struct mgp_module *m = &modules.mods[i];
		if (!m->gen_unloaded && !m->seen) {
			m->gen_unloaded = modules.gen + 1;
			modules.changed = 1;
		}
	}
	if (modules.changed)
		modules.gen++;
}

uint32_t mgp_modules_gen(void)
{
	return modules.gen;
}

const struct mgp_module *mgp_modules_all(uint32_t *n)
{
	*n = modules.n;
	return modules.mods;
}

const char *mgp_modules_names(void)
{
	return modules.names;
}

void mgp_modules_forget(void)
{
	modules.n = modules.next_id = modules.gen = 0;
	modules.names_used = 0;
	modules.adds = modules.subs = 0;
}
