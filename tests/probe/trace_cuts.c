/* SPDX-License-Identifier: MIT */
/* trace_cuts.c: loads every prefix of a trace (and, with --flip, the trace with each byte in turn
 * inverted) through libmgcore's loader and prints one line per case for test_truncated.py to
 * compare with what the records say: rc, snapshots, steps, ended, truncated, bytes_ok, the sites
 * seen and their live bytes. In-process, so every byte offset costs microseconds. With --whole,
 * only the whole file, read where it is (test_torture.py: a trace too big to cut). */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "mgc_trace.h"

/* Replaces the contents of the memory file fd (rewriting a disk file thousands of times is slow:
 * ext4 flushes a truncated-and-rewritten file on close). */
static int write_file(int fd, const unsigned char *p, size_t n)
{
	if (ftruncate(fd, 0) < 0)
		return -errno;
	size_t off = 0;
	while (off < n) {
		ssize_t w = pwrite(fd, p + off, n - off, (off_t)off);
		if (w <= 0)
			return w < 0 ? -errno : -EIO;
		off += (size_t)w;
	}
	return 0;
}

static void load_and_print(const char *work, size_t off)
{
	struct mgc_trace *t;
	char err[512];
	int rc = mgc_trace_load(work, &t, err, sizeof err);
	if (rc < 0) {
		printf("%zu %d\n", off, rc);
		return;
	}
	unsigned long long seen = 0, live = 0;
	for (size_t i = 0; i < t->nsites; i++) {
		if (t->sites[i] && t->sites[i]->seen) {
			seen++;
			live += t->sites[i]->counters.live_bytes;
		}
	}
	printf("%zu 0 %llu %llu %d %d %llu %llu %llu\n", off, (unsigned long long)t->snapshots,
	       (unsigned long long)t->steps, t->ended, t->truncated, (unsigned long long)t->bytes_ok,
	       seen, live);
	mgc_trace_free(t);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: trace_cuts TRACE [--flip | --whole]\n");
		return 2;
	}
	if (argc > 2 && strcmp(argv[2], "--whole") == 0) {
		load_and_print(argv[1], 0);
		return 0;
	}
	int flip = argc > 2 && strcmp(argv[2], "--flip") == 0;
	int fd = memfd_create("trace-cut", MFD_CLOEXEC);
	char work[64];
	if (fd < 0) {
		perror("memfd_create");
		return 1;
	}
	snprintf(work, sizeof work, "/proc/self/fd/%d", fd);
	FILE *f = fopen(argv[1], "rb");
	if (!f) {
		perror(argv[1]);
		return 1;
	}
	static unsigned char buf[1 << 22];
	size_t n = fread(buf, 1, sizeof buf, f);
	fclose(f);
	for (size_t off = 0; off <= n; off++) {
		if (flip && off == n)
			break;
		if (flip)
			buf[off] ^= 0xff;
		int rc = write_file(fd, buf, flip ? n : off);
		if (flip)
			buf[off] ^= 0xff;
		if (rc < 0) {
			fprintf(stderr, "memory file: %s\n", strerror(-rc));
			return 1;
		}
		load_and_print(work, off);
	}
	return 0;
}
