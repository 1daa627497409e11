/* SPDX-License-Identifier: MIT */
/* test_shm_cut.c: issue 13.9 at the segment reader that mgmon calls (mgc_shm_read): a segment cut
 * WHILE it is copied. A child cuts this test's own segment in a loop (to one page, to nothing and
 * back) while the parent reads it as mgmon does (read; on -ESTALE, close and open again). A reader
 * that copies from a mapping dies of SIGBUS here within a few reads; the reader must only ever
 * answer 0, -EAGAIN or -ESTALE (or, opening, refuse a segment being made again), and read the
 * segment whole once the cutting stops. No timing: the child cuts a fixed number of times. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "mg_test.h"
#include "mgc_shm.h"

#define CUTS 4000

static char path[64];

static struct mgc_shm_header header(void)
{
	struct mgc_shm_header h = {.version = MGC_SHM_VERSION, .header_size = sizeof h,
				   .total_size = sizeof(struct mgc_shm), .pid = (int32_t)getpid(),
				   .nsites = MGC_SHM_SITES}; /* every site: the longest copy */
	memcpy(h.magic, MGC_SHM_MAGIC, 8);
	return h;
}

/* The segment whole again: its full size, and the header where a cut to nothing took it. */
static int restore(int fd)
{
	struct mgc_shm_header h = header();
	if (ftruncate(fd, sizeof(struct mgc_shm)) < 0 || pwrite(fd, &h, sizeof h, 0) != (ssize_t)sizeof h)
		return -1;
	return 0;
}

static void cutter(int fd)
{
	for (int i = 0; i < CUTS; i++)
		if (ftruncate(fd, i % 2 ? 4096 : 0) < 0 || restore(fd) < 0)
			_exit(1);
	_exit(0);
}

/* One read as mgmon makes it; counts[0..2] for 0, -EAGAIN, -ESTALE. 0 or the unexpected answer. */
static int read_once(struct mgc_shm_map **m, struct mgc_shm *copy, unsigned counts[3])
{
	char err[256];
	if (!*m) {
		int r = mgc_shm_open(getpid(), m, err, sizeof err);
		return r == 0 || r == -EAGAIN || r == -EINVAL ? 0 : r; /* -EINVAL: cut to a page */
	}
	int r = mgc_shm_read(*m, copy, 10);
	if (r == -ESTALE) {
		mgc_shm_close(*m);
		*m = NULL;
	}
	if (r != 0 && r != -EAGAIN && r != -ESTALE)
		return r;
	counts[r == 0 ? 0 : r == -EAGAIN ? 1 : 2]++;
	return 0;
}

int main(void)
{
	mgc_shm_path(getpid(), path, sizeof path);
	struct mgc_shm *copy = malloc(sizeof *copy);
	MG_TRUE(copy != NULL);
	unlink(path);
	int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	MG_TRUE(fd >= 0 && fchmod(fd, 0600) == 0 && restore(fd) == 0, "a segment at %s", path);

	struct mgc_shm_map *m = NULL;
	char err[256];
	MG_EQ(mgc_shm_open(getpid(), &m, err, sizeof err), 0, "%s", err);
	MG_EQ(mgc_shm_read(m, copy, 0), 0, "read before the cuts");
	MG_EQ(copy->h.nsites, MGC_SHM_SITES, "sites in the copy");

	pid_t child = fork();
	MG_TRUE(child >= 0);
	if (child == 0)
		cutter(fd);
	unsigned counts[3] = {0, 0, 0}, reads = 0;
	int bad = 0, status = 0;
	while (!bad && waitpid(child, &status, WNOHANG) == 0) {
		bad = read_once(&m, copy, counts);
		reads++;
	}
	if (bad)
		waitpid(child, &status, 0);
	MG_EQ(bad, 0, "every answer while the segment is cut is 0, -EAGAIN or -ESTALE (%s)",
	      strerror(-bad));
	MG_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the child cut the segment %d times", CUTS);
	printf("%u reads while it was cut: %u copies, %u busy, %u changed\n", reads, counts[0],
		     counts[1], counts[2]);

	/* The cutting stopped with the segment whole: it reads whole again. */
	if (m)
		mgc_shm_close(m);
	m = NULL;
	MG_EQ(mgc_shm_open(getpid(), &m, err, sizeof err), 0, "%s", err);
	MG_EQ(mgc_shm_read(m, copy, 0), 0, "read after the cuts");
	MG_EQ(copy->h.nsites, MGC_SHM_SITES, "sites in the copy after the cuts");
	MG_EQ(ftruncate(fd, 4096), 0);
	MG_EQ(mgc_shm_read(m, copy, 0), -ESTALE, "cut to a page: the segment changed");
	MG_EQ(ftruncate(fd, 0), 0);
	MG_EQ(mgc_shm_read(m, copy, 0), -ESTALE, "cut to nothing: the segment changed");
	MG_EQ(restore(fd), 0);
	MG_EQ(mgc_shm_read(m, copy, 0), 0, "made whole again");
	MG_EQ(ftruncate(fd, 0), 0);
	MG_EQ(ftruncate(fd, sizeof(struct mgc_shm)), 0);
	MG_EQ(mgc_shm_read(m, copy, 0), -ESTALE, "cut and grown again, all zeros: the segment changed");
	mgc_shm_close(m);
	close(fd);
	unlink(path);
	free(copy);
	return mg_test_done("shm-cut");
}
