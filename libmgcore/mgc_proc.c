/* SPDX-License-Identifier: MIT */
/* mgc_proc.c: see mgc_proc.h. */
#define _GNU_SOURCE
#include "mgc_proc.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mgc_shm.h"

long mgc_proc_read(const char *path, char *buf, size_t cap)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	size_t n = 0;
	while (n + 1 < cap) {
		ssize_t r = read(fd, buf + n, cap - 1 - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	buf[n] = 0;
	return (long)n;
}

uint64_t mgc_proc_kv_bytes(const char *text, const char *key)
{
	size_t kl = strlen(key);
	for (const char *p = text; p && *p;) {
		if (strncmp(p, key, kl) == 0 && p[kl] == ':')
			return strtoull(p + kl + 1, NULL, 10) * 1024;
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return 0;
}

uint64_t mgc_proc_start_ticks(int pid)
{
	char path[64], buf[1024];
	snprintf(path, sizeof path, "/proc/%d/stat", pid);
	if (mgc_proc_read(path, buf, sizeof buf) <= 0)
		return 0;
	return mgc_stat_start_ticks(buf);
}

uint64_t mgc_proc_cgroup_limit(int pid)
{
	char path[1100], cg[512], val[64];
	uint64_t best = 0;
	snprintf(path, sizeof path, "/proc/%d/cgroup", pid);
	char *p = mgc_proc_read(path, cg, sizeof cg) > 0 ? strstr(cg, "0::") : NULL;
	if (!p)
		return 0;
	p += 3;
	p[strcspn(p, "\n")] = 0;
	for (;;) { /* from the process's cgroup up to the root */
		snprintf(path, sizeof path, "/sys/fs/cgroup%s/memory.max", strcmp(p, "/") ? p : "");
		if (mgc_proc_read(path, val, sizeof val) > 0 && val[0] >= '0' && val[0] <= '9') {
			uint64_t x = strtoull(val, NULL, 10);
			if (x && (!best || x < best))
				best = x;
		}
		char *slash = strrchr(p, '/');
		if (!slash || slash == p)
			return best;
		*slash = 0;
	}
}

uint64_t mgc_proc_mem_total(void)
{
	char buf[4096];
	return mgc_proc_read("/proc/meminfo", buf, sizeof buf) > 0 ? mgc_proc_kv_bytes(buf, "MemTotal") : 0;
}
