/* SPDX-License-Identifier: MIT */
/* mgc_proc.h: small readers of /proc and of cgroup v2 limits, shared by the probe (about its own
 * process) and the readers (about any pid). Safe inside the probe: raw open/read/close into caller
 * buffers, never malloc, never stdio, never a lock. pid 0 means the calling process
 * (/proc/self). */
#ifndef MGC_PROC_H
#define MGC_PROC_H

#include <stddef.h>
#include <stdint.h>

/* Reads a whole small file into buf, NUL-terminated (at most cap - 1 bytes kept, cap >= 1).
 * Returns the bytes read or -errno. */
long mgc_read_file(const char *path, char *buf, size_t cap);

/* The value of "Key:" in a /proc-style "Key:   123 kB" text, times 1024 (bytes); 0 if absent. */
uint64_t mgc_kv_kb(const char *text, const char *key);

/* The tightest cgroup v2 memory.max on the path from the process's cgroup up to the root, in
 * bytes; 0 when there is none (or no cgroup v2). */
uint64_t mgc_cgroup_limit(int pid);

/* Field 22 (starttime, clock ticks since boot) of a /proc/PID/stat text: with the pid, what tells
 * a live process from a later one that reuses its pid. 0 when the text is not a stat line. */
uint64_t mgc_stat_start_ticks(const char *stat_text);

/* The same, read from /proc/<pid>/stat; 0 when the process does not exist. */
uint64_t mgc_proc_start_ticks(int pid);

#endif /* MGC_PROC_H */
