/* SPDX-License-Identifier: MIT */
/* mge_png.c: in-memory PNG encode/decode of RGB8 images with libpng, for the engine's data set.
 * libpng reports errors by longjmp: every libpng call here runs under setjmp, and nothing else may
 * longjmp out of these functions or leave a png struct behind. */
#include "mge_png.h"

#include <errno.h>
#include <png.h>
#include <stdlib.h>
#include <string.h>

struct membuf {
	uint8_t *data;
	size_t len, cap;
	int oom;
};

static void write_mem(png_structp p, png_bytep data, png_size_t n)
{
	struct membuf *m = png_get_io_ptr(p);

	if (m->oom)
		return;
	if (m->len + n > m->cap) {
		size_t cap = m->cap ? m->cap * 2 : 4096;
		while (cap < m->len + n)
			cap *= 2;
		uint8_t *d = realloc(m->data, cap);
		if (!d) {
			m->oom = 1;
			return;
		}
		m->data = d;
		m->cap = cap;
	}
	memcpy(m->data + m->len, data, n);
	m->len += n;
}

static void flush_mem(png_structp p)
{
	(void)p;
}

int mge_png_encode(const uint8_t *rgb, int w, int h, uint8_t **out, size_t *out_len)
{
	struct membuf m = { 0 };
	png_structp p;
	png_infop info = NULL;

	if (w <= 0 || h <= 0)
		return -EINVAL;
	p = png_create_write_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
	if (!p)
		return -ENOMEM;
	info = png_create_info_struct(p);
	if (!info || setjmp(png_jmpbuf(p))) {
		png_destroy_write_struct(&p, &info);
		free(m.data);
		return -ENOMEM;
	}
	png_set_write_fn(p, &m, write_mem, flush_mem);
	/* Fast settings: the set is re-made at every start, and decode speed matters more than size. */
	png_set_compression_level(p, 1);
	png_set_filter(p, 0, PNG_FILTER_SUB);
	png_set_IHDR(p, info, (png_uint_32)w, (png_uint_32)h, 8, PNG_COLOR_TYPE_RGB, PNG_INTERLACE_NONE,
		     PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
	png_write_info(p, info);
	for (int y = 0; y < h; y++)
		png_write_row(p, (png_const_bytep)(rgb + (size_t)y * (size_t)w * 3));
	png_write_end(p, NULL);
	png_destroy_write_struct(&p, &info);
	if (m.oom) {
		free(m.data);
		return -ENOMEM;
	}
	*out = m.data;
	*out_len = m.len;
	return 0;
}

struct memsrc {
	const uint8_t *data;
	size_t len, pos;
};

static void read_mem(png_structp p, png_bytep dst, png_size_t n)
{
	struct memsrc *s = png_get_io_ptr(p);

	if (n > s->len - s->pos)
		png_error(p, "truncated PNG");
	memcpy(dst, s->data + s->pos, n);
	s->pos += n;
}

int mge_png_decode(const uint8_t *png, size_t len, uint8_t *dst, int w, int h)
{
	struct memsrc src = { png, len, 0 };
	png_structp p;
	png_infop info = NULL;
	png_uint_32 pw, ph;
	int depth, color;

	if (len < 8 || png_sig_cmp(png, 0, 8))
		return -EINVAL;
	p = png_create_read_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
	if (!p)
		return -EINVAL;
	info = png_create_info_struct(p);
	if (!info || setjmp(png_jmpbuf(p))) {
		png_destroy_read_struct(&p, &info, NULL);
		return -EINVAL;
	}
	png_set_read_fn(p, &src, read_mem);
	png_read_info(p, info);
	png_get_IHDR(p, info, &pw, &ph, &depth, &color, NULL, NULL, NULL);
	if ((int)pw != w || (int)ph != h || depth != 8 || color != PNG_COLOR_TYPE_RGB) {
		png_destroy_read_struct(&p, &info, NULL);
		return -EINVAL;
	}
	/* Row by row straight into the caller's buffer: no row-pointer array, no copy. */
	for (int y = 0; y < h; y++)
		png_read_row(p, dst + (size_t)y * (size_t)w * 3, NULL);
	png_read_end(p, NULL);
	png_destroy_read_struct(&p, &info, NULL);
	return 0;
}
