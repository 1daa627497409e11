/* SPDX-License-Identifier: MIT */
/* mgc_input.c: opening the readers' input (see mgc_input.h): O_NONBLOCK so that a FIFO named on
 * the command line cannot hang the open, then fstat decides. It must never read anything itself:
 * the callers' readers stream what it opens. */
#define _GNU_SOURCE
#include "mgc_input.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *file_type(mode_t m)
{
	return S_ISFIFO(m) ? "a FIFO" : S_ISCHR(m) ? "a character device" : S_ISBLK(m) ? "a block device"
	       : S_ISSOCK(m) ? "a socket" : S_ISDIR(m) ? "a directory" : "not a regular file";
}

int mgc_input_open(const char *path, FILE **out, char *err, size_t errlen)
{
	int stdin_ = strcmp(path, "-") == 0;
	*out = NULL;
	int fd = stdin_ ? fcntl(0, F_DUPFD_CLOEXEC, 3)
			: open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0) {
		int e = errno;
		if (fd >= 0)
			close(fd);
		snprintf(err, errlen, "%s: %s", stdin_ ? "standard input" : path, strerror(e));
		return -e;
	}
	if (stdin_ && isatty(fd)) {
		close(fd);
		snprintf(err, errlen, "standard input is a terminal: give a file, or redirect one "
			 "(- < FILE)");
		return -EINVAL;
	}
	if (!stdin_ && !S_ISREG(st.st_mode)) {
		close(fd);
		snprintf(err, errlen, "%s is %s, not a regular file: to read a stream, redirect it into - "
			 "(- < %s)", path, file_type(st.st_mode), path);
		return -EINVAL;
	}
	int fl = fcntl(fd, F_GETFL);
	if (!stdin_ && fl >= 0)
		fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
	*out = fdopen(fd, "rb");
	if (!*out) {
		int e = errno;
		close(fd);
		snprintf(err, errlen, "%s: %s", path, strerror(e));
		return -e;
	}
	return 0;
}
