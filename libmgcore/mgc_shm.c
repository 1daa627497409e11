/* SPDX-License-Identifier: MIT */
/* mgc_shm.c: the reader of the probe's live segment (layout in mgc_shm.h). Reads the segment's file
 * with pread, never through a mapping (a file cut under a mapping raises SIGBUS in the reader; a
 * cut file is a short read), copies under the seqlock, checks every count before anyone indexes
 * with it. It must never write to the segment, never return a torn copy, and never abort on what
 * it finds there. */
#define _GNU_SOURCE
#include "mgc_shm.h"

#include "mgc_proc.h"
#include "mgc_python.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct mgc_shm_map {
	int pid;
	int fd; /* kept open: every copy is read from it */
};

/* len bytes at offset off of the segment's file into dst: 0, or -ESTALE when the file is shorter
 * now (it was cut: the segment changed under the reader) or cannot be read. */
static int read_at(int fd, void *dst, size_t len, size_t off)
{
	size_t got = 0;
	while (got < len) {
		ssize_t r = pread(fd, (char *)dst + got, len - got, (off_t)(off + got));
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -ESTALE;
		got += (size_t)r;
	}
	return 0;
}

void mgc_shm_path(int pid, char *buf, size_t cap)
{
	char name[32];
	mgc_shm_name(pid, name, sizeof name);
	snprintf(buf, cap, "/dev/shm%s", name);
}

/* The uid the process creates files with (the fourth, filesystem, uid of /proc/PID/status's
 * "Uid:" line); -1 when unknown. */
static long proc_fsuid(int pid)
{
	char path[40], text[4096];
	snprintf(path, sizeof path, "/proc/%d/status", pid);
	if (mgc_read_file(path, text, sizeof text) <= 0)
		return -1;
	const char *u = strstr(text, "\nUid:");
	unsigned long id[4];
	if (!u || sscanf(u + 5, "%lu %lu %lu %lu", &id[0], &id[1], &id[2], &id[3]) != 4)
		return -1;
	return (long)id[3];
}

/* Opens the segment's name without following a symlink or waiting on a FIFO, and accepts only
 * what the probe makes: a regular file of the target process's own user, mode 0600. Anyone can
 * plant that name in /dev/shm. The descriptor, or -errno with err filled: -ENOENT (none),
 * -EPERM (something else is there). */
static int open_checked(int pid, const char *path, struct stat *st, char *err, size_t errlen)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
	if (fd < 0) {
		int e = errno;
		if (e == ENOENT)
			snprintf(err, errlen, "%s does not exist (the process runs without the probe)", path);
		else if (e == ELOOP)
			snprintf(err, errlen, "%s is a symbolic link, not the probe's segment", path);
		else
			snprintf(err, errlen, "cannot open %s: %s", path, strerror(e));
		return e == ELOOP || e == ENXIO ? -EPERM : -e;
	}
	long owner = proc_fsuid(pid);
	const char *why = NULL;
	if (fstat(fd, st) < 0)
		why = strerror(errno);
	else if (!S_ISREG(st->st_mode))
		why = "not a regular file";
	else if (owner >= 0 && st->st_uid != (uid_t)owner)
		why = "owned by another user than the process's";
	else if ((st->st_mode & 07777) != 0600)
		why = "readable or writable by other users (mode is not 0600)";
	if (why) {
		close(fd);
		snprintf(err, errlen, "%s is %s: not the probe's segment", path, why);
		return -EPERM;
	}
	return fd;
}

int mgc_shm_open(int pid, struct mgc_shm_map **out, char *err, size_t errlen)
{
	char path[64];
	*out = NULL;
	mgc_shm_path(pid, path, sizeof path);
	struct stat st;
	int fd = open_checked(pid, path, &st, err, errlen);
	if (fd < 0)
		return fd;
	if (st.st_uid != geteuid() && geteuid() != 0) {
		close(fd);
		snprintf(err, errlen, "%s belongs to another user (uid %u)", path, (unsigned)st.st_uid);
		return -EACCES;
	}
	if ((size_t)st.st_size < sizeof(struct mgc_shm_header)) {
		close(fd);
		if (st.st_size == 0) {
			snprintf(err, errlen, "%s is being created", path);
			return -EAGAIN;
		}
		snprintf(err, errlen, "%s is too small to be an mgprobe segment", path);
		return -EINVAL;
	}
	struct mgc_shm_header hd;
	const struct mgc_shm_header *h = &hd;
	int r = read_at(fd, &hd, sizeof hd, 0);
	static const char zero[8];
	if (r < 0) {
		snprintf(err, errlen, "%s is being created", path);
		r = -EAGAIN;
	} else if (memcmp(h->magic, zero, 8) == 0) {
		snprintf(err, errlen, "%s is being created", path);
		r = -EAGAIN;
	} else if (memcmp(h->magic, MGC_SHM_MAGIC, 8) != 0) {
		snprintf(err, errlen, "%s is not an mgprobe segment", path);
		r = -EINVAL;
	} else if (h->version != MGC_SHM_VERSION) {
		snprintf(err, errlen, "%s has format version %u, this reader knows version %u%s", path,
			 h->version, MGC_SHM_VERSION,
			 h->version > MGC_SHM_VERSION ? ": update mgmon" : ": the probe is older");
		r = -EPROTO;
	} else if (h->header_size != sizeof(struct mgc_shm_header) ||
		   h->total_size != sizeof(struct mgc_shm) || (size_t)st.st_size < sizeof(struct mgc_shm)) {
		snprintf(err, errlen, "%s has an unexpected size", path);
		r = -EINVAL;
	}
	struct mgc_shm_map *m = r < 0 ? NULL : calloc(1, sizeof *m);
	if (!m) {
		close(fd);
		if (r == 0)
			snprintf(err, errlen, "out of memory");
		return r < 0 ? r : -ENOMEM;
	}
	m->pid = pid;
	m->fd = fd;
	*out = m;
	return 0;
}

static int check(const struct mgc_shm *s)
{
	const struct mgc_shm_header *h = &s->h;
	if (h->grid_n > MGC_SHM_GRID || h->nsites > MGC_SHM_SITES || h->nchildren > MGC_SHM_CHILDREN ||
	    h->nmodules > MGC_SHM_MODULES || h->names_used > MGC_SHM_NAMES)
		return -EBADMSG;
	for (uint32_t i = 0; i < h->nmodules; i++) {
		const struct mgc_shm_module *m = &s->modules[i];
		if ((uint64_t)m->path_off + m->path_len > h->names_used || m->build_id_len > sizeof m->build_id)
			return -EBADMSG;
	}
	for (uint32_t i = 0; i < h->nsites; i++)
		if (s->sites[i].nframes > MGC_SHM_FRAMES)
			return -EBADMSG;
	if (s->py.ncodes > MGC_SHM_PYCODES || s->py.bytes_used > MGC_SHM_PYBYTES)
		return -EBADMSG;
	for (uint32_t i = 0; i < s->py.ncodes; i++) {
		const struct mgc_shm_pycode *c = &s->py.codes[i];
		if ((uint64_t)c->off + c->qualname_len + c->file_len + c->linetable_len > s->py.bytes_used)
			return -EBADMSG;
	}
	return 0;
}

#define AT(field) offsetof(struct mgc_shm, field)

/* Copies what the header says is valid from the file; the caller validates the sequence around
 * it. 0, or -ESTALE (the file was cut). */
static int copy_valid(int fd, struct mgc_shm *dst)
{
	int r = read_at(fd, &dst->h, sizeof dst->h, AT(h));
	if (r < 0)
		return r;
	if (memcmp(dst->h.magic, MGC_SHM_MAGIC, 8) != 0)
		return -ESTALE; /* cut and grown again: zeros where the segment was */
	uint32_t gn = dst->h.grid_n < MGC_SHM_GRID ? dst->h.grid_n : MGC_SHM_GRID;
	uint32_t ns = dst->h.nsites < MGC_SHM_SITES ? dst->h.nsites : MGC_SHM_SITES;
	uint32_t nm = dst->h.nmodules < MGC_SHM_MODULES ? dst->h.nmodules : MGC_SHM_MODULES;
	uint32_t nn = dst->h.names_used < MGC_SHM_NAMES ? dst->h.names_used : MGC_SHM_NAMES;
	uint32_t counts[2]; /* py.ncodes, py.bytes_used */
	_Static_assert(AT(py.bytes_used) == AT(py.ncodes) + 4, "py counts are adjacent");
	r = read_at(fd, counts, sizeof counts, AT(py.ncodes));
	if (r < 0)
		return r;
	uint32_t pc = counts[0] < MGC_SHM_PYCODES ? counts[0] : MGC_SHM_PYCODES;
	uint32_t pb = counts[1] < MGC_SHM_PYBYTES ? counts[1] : MGC_SHM_PYBYTES;
	dst->py.ncodes = pc;
	dst->py.bytes_used = pb;
	const struct {
		void *to;
		size_t off, len;
	} parts[] = {
		{dst->ring, AT(ring), sizeof dst->ring},
		{dst->grid, AT(grid), gn * sizeof dst->grid[0]},
		{dst->sites, AT(sites), ns * sizeof dst->sites[0]},
		{dst->modules, AT(modules), nm * sizeof dst->modules[0]},
		{dst->names, AT(names), nn},
		{dst->py.codes, AT(py.codes), pc * sizeof dst->py.codes[0]},
		{dst->py.bytes, AT(py.bytes), pb},
		{&dst->sampling.rate, AT(sampling.rate), sizeof dst->sampling.rate},
		{dst->sampling.live_var, AT(sampling.live_var), ns * sizeof dst->sampling.live_var[0]},
	};
	for (size_t i = 0; i < sizeof parts / sizeof parts[0] && r == 0; i++)
		r = read_at(fd, parts[i].to, parts[i].len, parts[i].off);
	return r;
}

/* The writer's sequence number now: 0, or -ESTALE. */
static int read_seq(int fd, uint64_t *seq)
{
	return read_at(fd, seq, sizeof *seq, AT(h.seq));
}

int mgc_shm_read(struct mgc_shm_map *m, struct mgc_shm *dst, unsigned tries)
{
	if (!m || !dst)
		return -EINVAL;
	if (tries == 0)
		tries = 1000;
	for (unsigned t = 0; t < tries; t++) {
		/* A file cut while it is read is a short read (-ESTALE), never a signal. */
		struct stat st;
		uint64_t s1, s2;
		if (fstat(m->fd, &st) < 0 || (size_t)st.st_size < sizeof(struct mgc_shm) ||
		    read_seq(m->fd, &s1) < 0)
			return -ESTALE;
		if (s1 & 1) {
			sched_yield();
			continue;
		}
		if (copy_valid(m->fd, dst) < 0 || read_seq(m->fd, &s2) < 0)
			return -ESTALE;
		if (s1 != s2) {
			sched_yield();
			continue;
		}
		dst->h.seq = s1;
		return check(dst);
	}
	return -EAGAIN;
}

int mgc_shm_is_stale(const struct mgc_shm *s)
{
	uint64_t t = mgc_proc_start_ticks(s->h.pid);
	if (t == 0)
		return 1;
	return s->h.start_ticks && t != s->h.start_ticks;
}

const struct mgc_shm_module *mgc_shm_module_for(const struct mgc_shm *s, uint64_t ip)
{
	uint32_t n = s->h.nmodules < MGC_SHM_MODULES ? s->h.nmodules : MGC_SHM_MODULES;
	for (uint32_t i = 0; i < n; i++)
		if (ip >= s->modules[i].start && ip < s->modules[i].end)
			return &s->modules[i];
	return NULL;
}

const char *mgc_shm_module_path(const struct mgc_shm *s, const struct mgc_shm_module *m, char *buf,
				size_t cap)
{
	size_t n = m->path_len;
	if (cap == 0)
		return buf;
	if ((uint64_t)m->path_off + n > MGC_SHM_NAMES)
		n = 0;
	if (n >= cap)
		n = cap - 1;
	memcpy(buf, s->names + m->path_off, n);
	buf[n] = 0;
	return buf;
}

void mgc_shm_close(struct mgc_shm_map *m)
{
	if (!m)
		return;
	close(m->fd);
	free(m);
}

int mgc_shm_pycodes(const struct mgc_shm *s, struct mgc_pycodes **codes)
{
	const struct mgc_shm_py *py = &s->py;
	for (uint32_t i = 0; i < py->ncodes && i < MGC_SHM_PYCODES; i++) {
		const struct mgc_shm_pycode *pc = &py->codes[i];
		const char *b = py->bytes + pc->off; /* lengths checked by mgc_shm_read */
		if (!mgc_pycodes_has(*codes, pc->id) &&
		    mgc_pycodes_put(codes, pc->id, pc->firstlineno, b, pc->qualname_len, b + pc->qualname_len,
				    pc->file_len, b + pc->qualname_len + pc->file_len, pc->linetable_len) < 0)
			return -ENOMEM;
	}
	return 0;
}
