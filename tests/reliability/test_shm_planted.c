/* SPDX-License-Identifier: MIT */
/* test_shm_planted.c: issue 13.5 and 13.9 at the segment reader. What anyone can plant at
 * /dev/shm/mgprobe.<pid> is refused at once with -EPERM (a FIFO: opening it used to block for a
 * writer; a symlink; a file anyone may read; a file of another user, as root), while a good
 * segment (regular, our own, 0600) opens; and a segment that shrinks after it was opened gives
 * -ESTALE instead of killing the reader with SIGBUS. The segments are this test's own pid's. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mg_test.h"
#include "mgc_shm.h"

static char path[64];

/* A complete, valid, empty segment at path with the given mode; its descriptor. */
static int good_segment(mode_t mode)
{
	unlink(path);
	int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, mode);
	if (fd < 0 || fchmod(fd, mode) < 0 || ftruncate(fd, sizeof(struct mgc_shm)) < 0)
		return -1;
	struct mgc_shm_header h = {.version = MGC_SHM_VERSION, .header_size = sizeof h,
				   .total_size = sizeof(struct mgc_shm), .pid = (int32_t)getpid()};
	memcpy(h.magic, MGC_SHM_MAGIC, 8);
	if (pwrite(fd, &h, sizeof h, 0) != (ssize_t)sizeof h)
		return -1;
	return fd;
}

static int open_status(void)
{
	struct mgc_shm_map *m = NULL;
	char err[256] = "";
	int r = mgc_shm_open(getpid(), &m, err, sizeof err);
	if (m)
		mgc_shm_close(m);
	if (r == -EPERM)
		MG_TRUE(strstr(err, path) != NULL, "the reason names the file: %s", err);
	return r;
}

int main(void)
{
	mgc_shm_path(getpid(), path, sizeof path);
	struct mgc_shm *copy = malloc(sizeof *copy);
	MG_TRUE(copy != NULL);

	int fd = good_segment(0600);
	MG_TRUE(fd >= 0, "a good segment at %s", path);
	MG_EQ(open_status(), 0, "a good segment opens");

	/* It shrinks while it is mapped: the next read says so. */
	struct mgc_shm_map *m = NULL;
	char err[256];
	MG_EQ(mgc_shm_open(getpid(), &m, err, sizeof err), 0, "%s", err);
	MG_EQ(mgc_shm_read(m, copy, 0), 0, "read before it shrinks");
	MG_EQ(ftruncate(fd, 4096), 0);
	MG_EQ(mgc_shm_read(m, copy, 0), -ESTALE, "read after it shrank");
	mgc_shm_close(m);
	close(fd);

	unlink(path);
	MG_EQ(mkfifo(path, 0600), 0);
	MG_EQ(open_status(), -EPERM, "a FIFO (did not block)");
	unlink(path);
	MG_EQ(symlink("/etc/passwd", path), 0);
	MG_EQ(open_status(), -EPERM, "a symlink");
	close(good_segment(0644));
	MG_EQ(open_status(), -EPERM, "a segment of mode 0644");
	if (geteuid() == 0) {
		close(good_segment(0600));
		MG_EQ(chown(path, 65534, 65534), 0);
		MG_EQ(open_status(), -EPERM, "a segment of another user than the process's");
	}
	unlink(path);
	MG_EQ(open_status(), -ENOENT, "nothing there");
	free(copy);
	return mg_test_done("shm-planted");
}
