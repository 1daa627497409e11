/* SPDX-License-Identifier: MIT */
/* mgc_proc.c: /proc and cgroup readers (see mgc_proc.h). The probe calls these from its
 * constructor and its snapshots inside other people's programs: raw system calls into caller
 * buffers only, never malloc, stdio or a lock. */
#include "mgc_proc.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

long mgc_read_file(const char *path, char *buf, size_t cap)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	size_t n = 0;
	while (n + 1 < cap) {
		ssize_t r = read(fd, buf + n, cap - 1 - n);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			int e = errno;
			close(fd);
			return -e;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	buf[n] = 0;
	return (long)n;
}

uint64_t mgc_kv_kb(const char *text, const char *key)
{
	size_t kl = strlen(key);
	for (const char *p = text; p && *p;) {
		if (strncmp(p, key, kl) == 0 && p[kl] == ':') {
			p += kl + 1;
			while (*p == ' ' || *p == '\t')
				p++;
			uint64_t v = 0;
			while (*p >= '0' && *p <= '9')
				v = v * 10 + (uint64_t)(*p++ - '0');
			return v * 1024;
		}
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return 0;
}

/* "/proc/self/<leaf>" or "/proc/<pid>/<leaf>" into buf (cap >= 64). */
static const char *proc_path(int pid, const char *leaf, char *buf, size_t cap)
{
	char dig[16];
	size_t n = 0, k = 0;
	const char *self = "/proc/self/";
	if (pid <= 0) {
		for (; self[n] && n + 1 < cap; n++)
			buf[n] = self[n];
	} else {
		for (unsigned v = (unsigned)pid; v || k == 0; v /= 10)
			dig[k++] = (char)('0' + v % 10);
		memcpy(buf, "/proc/", 6);
		for (n = 6; k && n + 1 < cap; n++)
			buf[n] = dig[--k];
		buf[n++] = '/';
	}
	for (; *leaf && n + 1 < cap; leaf++)
		buf[n++] = *leaf;
	buf[n] = 0;
	return buf;
}

uint64_t mgc_cgroup_limit(int pid)
{
	char cg[512], path[1024], val[64];
	if (mgc_read_file(proc_path(pid, "cgroup", path, sizeof path), cg, sizeof cg) <= 0)
		return 0;
	/* cgroup v2: a line "0::/some/path". Walk from it up to the root, keeping the tightest. */
	char *p = strstr(cg, "0::");
	if (!p)
		return 0;
	p += 3;
	char *nl = strchr(p, '\n');
	if (nl)
		*nl = 0;
	uint64_t best = 0;
	static const char root[] = "/sys/fs/cgroup", leaf[] = "/memory.max";
	for (;;) {
		size_t pl = strcmp(p, "/") ? strlen(p) : 0;
		if (sizeof root + pl + sizeof leaf > sizeof path)
			break;
		memcpy(path, root, sizeof root - 1);
		memcpy(path + sizeof root - 1, p, pl);
		memcpy(path + sizeof root - 1 + pl, leaf, sizeof leaf);
		if (mgc_read_file(path, val, sizeof val) > 0 && val[0] >= '0' && val[0] <= '9') {
			uint64_t v = 0;
			for (char *q = val; *q >= '0' && *q <= '9'; q++)
				v = v * 10 + (uint64_t)(*q - '0');
			if (v && (!best || v < best))
				best = v;
		}
		char *slash = strrchr(p, '/');
		if (!slash || slash == p)
			break;
		*slash = 0;
	}
	return best;
}

uint64_t mgc_stat_start_ticks(const char *stat_text)
{
	const char *p = stat_text;
	const char *close = NULL;
	for (; *p; p++) /* the last ')' ends the command name, which may hold spaces and parens */
		if (*p == ')')
			close = p;
	if (!close)
		return 0;
	int field = 2; /* each space after ")" starts the next field */
	for (p = close; *p && field < 22; p++)
		if (*p == ' ')
			field++;
	uint64_t v = 0;
	while (*p >= '0' && *p <= '9')
		v = v * 10 + (uint64_t)(*p++ - '0');
	return v;
}

uint64_t mgc_proc_start_ticks(int pid)
{
	char path[64], buf[1024];
	if (mgc_read_file(proc_path(pid, "stat", path, sizeof path), buf, sizeof buf) <= 0)
		return 0;
	return mgc_stat_start_ticks(buf);
}
