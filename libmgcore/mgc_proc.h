/* SPDX-License-Identifier: MIT */
/* mgc_proc.h: what the readers learn about a running process from /proc and /sys: small files
 * read whole, "Key: N kB" figures, its start time, its cgroup's memory limit, the machine's
 * memory. Plain read(2) into caller buffers; nothing here may block on or trust what it reads.
 * (The probe has its own malloc-free copies of these in libmgprobe/mgp_os.c.) */
#ifndef MGC_PROC_H
#define MGC_PROC_H

#include <stddef.h>
#include <stdint.h>

/* Reads up to cap - 1 bytes of a small file (NUL-terminated): the byte count, or -errno. */
long mgc_proc_read(const char *path, char *buf, size_t cap);

/* The figure of "Key:   N kB" in /proc-style text, in bytes; 0 when the key is absent. */
uint64_t mgc_proc_kv_bytes(const char *text, const char *key);

/* /proc/<pid>/stat starttime (field 22), or 0 when the process does not exist. */
uint64_t mgc_proc_start_ticks(int pid);

/* The tightest cgroup v2 memory.max from the process's cgroup up to the root, in bytes; 0 for
 * none (or no cgroup v2). */
uint64_t mgc_proc_cgroup_limit(int pid);

/* MemTotal of /proc/meminfo in bytes; 0 when unknown. */
uint64_t mgc_proc_mem_total(void);

#endif /* MGC_PROC_H */
