/* SPDX-License-Identifier: MIT */
/* mgc_shm.c: the reader of the probe's live segment (layout in mgc_shm.h). Maps read-only, copies
 * under the seqlock, checks every count before anyone indexes with it. It must never write to
 * the segment, never return a torn copy, and never abort on what it finds there. */
#define _GNU_SOURCE
#include "mgc_shm.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

struct mgc_shm_map {
	int pid;
	const struct mgc_shm *seg;
	size_t size;
};

void mgc_shm_path(int pid, char *buf, size_t cap)
{
	char name[32];
	mgc_shm_name(pid, name, sizeof name);
	snprintf(buf, cap, "/dev/shm%s", name);
}

int mgc_shm_open(int pid, struct mgc_shm_map **out, char *err, size_t errlen)
{
	char path[64], name[32];
	*out = NULL;
	mgc_shm_path(pid, path, sizeof path);
	mgc_shm_name(pid, name, sizeof name);
	int fd = shm_open(name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW, 0);
	if (fd < 0) {
		int e = errno;
		if (e == ENOENT)
			snprintf(err, errlen, "%s does not exist (the process runs without the probe)", path);
		else
			snprintf(err, errlen, "cannot open %s: %s", path, strerror(e));
		return -e;
	}
	struct stat st;
	if (fstat(fd, &st) < 0) {
		int e = errno;
		close(fd);
		snprintf(err, errlen, "cannot stat %s: %s", path, strerror(e));
		return -e;
	}
	if (st.st_uid != geteuid()) {
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
	void *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
	int e = errno;
	close(fd);
	if (p == MAP_FAILED) {
		snprintf(err, errlen, "cannot map %s: %s", path, strerror(e));
		return -e;
	}
	const struct mgc_shm_header *h = p;
	char magic[8];
	memcpy(magic, h->magic, 8);
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	int r = 0;
	static const char zero[8];
	if (memcmp(magic, zero, 8) == 0) {
		snprintf(err, errlen, "%s is being created", path);
		r = -EAGAIN;
	} else if (memcmp(magic, MGC_SHM_MAGIC, 8) != 0) {
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
	if (r < 0) {
		munmap(p, (size_t)st.st_size);
		return r;
	}
	struct mgc_shm_map *m = calloc(1, sizeof *m);
	if (!m) {
		munmap(p, (size_t)st.st_size);
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	m->pid = pid;
	m->seg = p;
	m->size = (size_t)st.st_size;
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

/* Copies what the header says is valid; the caller validates the sequence around it. */
static void copy_valid(const struct mgc_shm *src, struct mgc_shm *dst)
{
	memcpy(&dst->h, &src->h, sizeof dst->h);
	uint32_t gn = dst->h.grid_n < MGC_SHM_GRID ? dst->h.grid_n : MGC_SHM_GRID;
	uint32_t ns = dst->h.nsites < MGC_SHM_SITES ? dst->h.nsites : MGC_SHM_SITES;
	uint32_t nm = dst->h.nmodules < MGC_SHM_MODULES ? dst->h.nmodules : MGC_SHM_MODULES;
	uint32_t nn = dst->h.names_used < MGC_SHM_NAMES ? dst->h.names_used : MGC_SHM_NAMES;
	memcpy(dst->ring, src->ring, sizeof dst->ring);
	memcpy(dst->grid, src->grid, gn * sizeof dst->grid[0]);
	memcpy(dst->sites, src->sites, ns * sizeof dst->sites[0]);
	memcpy(dst->modules, src->modules, nm * sizeof dst->modules[0]);
	memcpy(dst->names, src->names, nn);
	uint32_t pc = src->py.ncodes < MGC_SHM_PYCODES ? src->py.ncodes : MGC_SHM_PYCODES;
	uint32_t pb = src->py.bytes_used < MGC_SHM_PYBYTES ? src->py.bytes_used : MGC_SHM_PYBYTES;
	dst->py.ncodes = pc;
	dst->py.bytes_used = pb;
	memcpy(dst->py.codes, src->py.codes, pc * sizeof dst->py.codes[0]);
	memcpy(dst->py.bytes, src->py.bytes, pb);
	dst->sampling.rate = src->sampling.rate;
	memcpy(dst->sampling.live_var, src->sampling.live_var, ns * sizeof dst->sampling.live_var[0]);
}

int mgc_shm_read(struct mgc_shm_map *m, struct mgc_shm *dst, unsigned tries)
{
	if (!m || !dst)
		return -EINVAL;
	if (tries == 0)
		tries = 1000;
	const struct mgc_shm *src = m->seg;
	for (unsigned t = 0; t < tries; t++) {
		uint64_t s1 = __atomic_load_n(&src->h.seq, __ATOMIC_ACQUIRE);
		if (s1 & 1) {
			sched_yield();
			continue;
		}
		copy_valid(src, dst);
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		uint64_t s2 = __atomic_load_n(&src->h.seq, __ATOMIC_RELAXED);
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
	munmap((void *)m->seg, m->size);
	free(m);
}
