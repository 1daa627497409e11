/* SPDX-License-Identifier: MIT */
/* fuzz_shm.c: libFuzzer target for the live segment's reader: any bytes as the segment (cut or
 * zero-padded to its size) at /dev/shm/mgprobe.<our pid>, opened (mgc_shm_open), copied
 * (mgc_shm_read) and, when the copy checks out, analysed as mgmon analyses it (mgc_analyze_shm)
 * with module lookups and its Python frames decoded through its code objects. It writes only its own segment and removes it at exit. Passes when
 * nothing crashes and no sanitizer speaks. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "mgc_analysis.h"
#include "mgc_python.h"
#include "mgc_shm.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char name[32];

static void remove_segment(void)
{
	shm_unlink(name);
}

/* The segment, written in place: the input, then zeros to the full size. */
static int write_segment(const uint8_t *data, size_t size)
{
	static unsigned char *image;
	if (!image && !(image = malloc(sizeof(struct mgc_shm))))
		return -1;
	size_t n = size < sizeof(struct mgc_shm) ? size : sizeof(struct mgc_shm);
	memcpy(image, data, n);
	memset(image + n, 0, sizeof(struct mgc_shm) - n);
	int fd = shm_open(name, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (fd < 0)
		return -1;
	ssize_t w = write(fd, image, sizeof(struct mgc_shm));
	close(fd);
	return w == (ssize_t)sizeof(struct mgc_shm) ? 0 : -1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct mgc_shm *copy;
	if (!name[0]) {
		mgc_shm_name(getpid(), name, sizeof name);
		atexit(remove_segment);
	}
	if (!copy && !(copy = malloc(sizeof *copy)))
		return 0;
	struct mgc_shm_map *m = NULL;
	char err[256], path[256];
	if (write_segment(data, size) < 0 || mgc_shm_open(getpid(), &m, err, sizeof err) < 0)
		return 0;
	if (mgc_shm_read(m, copy, 3) == 0) {
		struct mgc_analysis a;
		struct mgc_analysis_opts o = {0};
		if (mgc_analyze_shm(copy, &o, &a) == 0)
			mgc_analysis_free(&a);
		struct mgc_pycodes *codes = NULL;
		mgc_shm_pycodes(copy, &codes);
		for (uint32_t i = 0; i < copy->h.nsites; i++) {
			const struct mgc_shm_site *e = &copy->sites[i];
			const struct mgc_shm_module *mod = mgc_shm_module_for(copy, e->ips[0] - 1);
			if (mod)
				mgc_shm_module_path(copy, mod, path, sizeof path);
			for (unsigned k = 0; k < e->nframes; k++) {
				struct mgc_pyframe pf;
				if (mgc_pyframe_is(e->ips[k]))
					mgc_pycodes_frame(codes, e->ips[k], &pf);
			}
		}
		mgc_pycodes_free(codes);
		(void)mgc_shm_is_stale(copy);
	}
	mgc_shm_close(m);
	return 0;
}
