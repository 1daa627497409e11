/* SPDX-License-Identifier: MIT */
/* mgp_pycode.h: the probe's registry of Python code objects seen in stacks: each gets a dense id
 * the first time it is seen, and its qualified name, file name and line table are copied then, so
 * the trace writer can name it long after the interpreter freed it. Lookups are lock-free; only a
 * new code object takes a mutex. Never calls malloc: tables come from the kernel, bounded. */
#ifndef MGP_PYCODE_H
#define MGP_PYCODE_H

#include <stddef.h>
#include <stdint.h>

/* What the frame reader found in a code object, for the copy made on first sight. Strings are in
 * CPython's compact layout: `kind` bytes per character (1, 2 or 4), ASCII when kind is 1 and
 * `ascii` is set. */
struct mgp_pystr {
	const void *data;
	size_t len; /* characters */
	unsigned kind;
	int ascii;
};

struct mgp_pycode_src {
	int32_t firstlineno;
	struct mgp_pystr qualname, file;
	const uint8_t *linetable;
	size_t linetable_len;
};

/* A registered code object: offsets into the registry's byte arena (mgp_pycode_bytes). The
 * qualified name, the file name and the line table follow each other there, in that order. */
struct mgp_pycode {
	int32_t firstlineno;
	uint32_t qualname_off, qualname_len;
	uint32_t file_off, file_len;
	uint32_t linetable_off, linetable_len;
};

/* Reserves the tables. 0 or -ENOMEM. Call once, single-threaded; registers fork handlers. */
int mgp_pycode_init(void);

/* The id (>= 1) of the code object at `addr` whose fingerprint (a hash of fields that identify
 * its content: first line, name, file and line-table objects) is `fp`, or 0 when unknown. A
 * code object freed and another made at the same address differ in fingerprint. Hook-safe. */
uint32_t mgp_pycode_find(uint64_t addr, uint64_t fp);

/* Registers a new code object and copies its content from src (called after find said 0, with
 * src filled by the caller, who has validated the objects). Returns its id, or 0 when the
 * registry is full. Takes a mutex; never calls malloc. */
uint32_t mgp_pycode_add(uint64_t addr, uint64_t fp, const struct mgp_pycode_src *src);

/* One past the highest id handed out: ids [1, count) are complete. */
uint32_t mgp_pycode_count(void);

/* The code object with this id (1 <= id < count), and the arena its offsets point into. */
const struct mgp_pycode *mgp_pycode_get(uint32_t id);
const char *mgp_pycode_bytes(void);

struct mgc_shm_py;
struct mgc_shm_site;

/* Copies the code objects that the Python frames of sites[0..n) name into the live segment's
 * table (as many as fit, line tables last). Writer lock held, inside the segment's seqlock. */
void mgp_pycode_publish(struct mgc_shm_py *py, const struct mgc_shm_site *sites, uint32_t n);

#endif /* MGP_PYCODE_H */
