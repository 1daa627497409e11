/* SPDX-License-Identifier: MIT */
/* mge_memstat.h: the process memory figures mgtrain prints: VmRSS from /proc/self/status and
 * glibc's live and free heap bytes (mallinfo2). */
#ifndef MGE_MEMSTAT_H
#define MGE_MEMSTAT_H

/* VmRSS in MiB, or -1.0 when /proc/self/status cannot be read. */
double mge_memstat_rss_mb(void);

/* glibc's bytes in use (uordblks + hblkhd: live, mmapped chunks included) and free bytes kept in
 * the arenas (fordblks), in MiB, all arenas summed. */
void mge_memstat_heap_mb(double *live, double *free_kept);

#endif /* MGE_MEMSTAT_H */
