/* SPDX-License-Identifier: MIT */
/* mge_dataset.c: draws the synthetic shapes and textures and stores them PNG-encoded.
 * It must stay deterministic (a function of seed, stream and index only) and must never keep the
 * raw pixels: decoding is the loader's job, as with a real data set. */
#include "mge_dataset.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mge_png.h"
#include "mge_rng.h"

static const char *const class_names[MGE_CLASSES] = {
	"disc", "square", "triangle", "ring", "cross", "hstripes", "vstripes", "checker",
};

const char *mge_dataset_class_name(int label)
{
	return label >= 0 && label < MGE_CLASSES ? class_names[label] : "?";
}

static uint8_t clamp_u8(int v)
{
	return (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
}

/* Is pixel (x, y) inside the figure of class `label`? Coordinates relative to the figure centre,
 * in units of its radius; (u, v) are the raw pixel coordinates for the textures. */
static int inside(int label, float dx, float dy, int x, int y, float period)
{
	float r2 = dx * dx + dy * dy;

	switch (label) {
	case 0: return r2 <= 1.0f;
	case 1: return fabsf(dx) <= 0.8f && fabsf(dy) <= 0.8f;
	case 2: return dy <= 0.8f && dy >= -0.9f && fabsf(dx) <= (dy + 0.9f) * 0.55f;
	case 3: return r2 <= 1.0f && r2 >= 0.36f;
	case 4: return (fabsf(dx) <= 0.28f && fabsf(dy) <= 1.0f) || (fabsf(dy) <= 0.28f && fabsf(dx) <= 1.0f);
	case 5: return ((int)((float)y / period) & 1) == 0;
	case 6: return ((int)((float)x / period) & 1) == 0;
	default: return (((int)((float)x / period) + (int)((float)y / period)) & 1) == 0;
	}
}

static void draw(uint8_t *rgb, int w, int h, int label, struct mge_rng *r)
{
	int bg[3], fg[3];
	int base = (int)mge_rng_below(r, 256);
	float side = (float)(w < h ? w : h);
	float rad = side * mge_rng_range(r, 0.26f, 0.38f);
	float cx = (float)w * 0.5f + mge_rng_range(r, -0.08f, 0.08f) * (float)w;
	float cy = (float)h * 0.5f + mge_rng_range(r, -0.08f, 0.08f) * (float)h;
	float period = side * mge_rng_range(r, 0.09f, 0.14f);

	/* Foreground and background differ clearly in brightness, so colour never decides the class. */
	for (int c = 0; c < 3; c++) {
		bg[c] = (int)mge_rng_below(r, 90) + (base < 128 ? 0 : 150);
		fg[c] = (int)mge_rng_below(r, 90) + (base < 128 ? 150 : 0);
	}
	for (int y = 0; y < h; y++) {
		for (int x = 0; x < w; x++) {
			float dx = ((float)x + 0.5f - cx) / rad, dy = ((float)y + 0.5f - cy) / rad;
			const int *col = inside(label, dx, dy, x, y, period) ? fg : bg;
			uint64_t n = mge_rng_u64(r);
			uint8_t *px = rgb + ((size_t)y * (size_t)w + (size_t)x) * 3;
			for (int c = 0; c < 3; c++)
				px[c] = clamp_u8(col[c] + (int)((n >> (c * 8)) & 15) - 8);
		}
	}
}

int mge_dataset_make(struct mge_dataset *d, uint64_t seed, uint64_t stream, int count_per_shape,
		     double scale)
{
	static const int base_sides[MGE_SIDES] = { 96, 112, 128, 144, 160 };
	int count = count_per_shape * MGE_SHAPES;
	uint8_t *rgb = NULL;
	int maxside;

	memset(d, 0, sizeof(*d));
	for (int i = 0; i < MGE_SIDES; i++) {
		int s = (int)lround(base_sides[i] * sqrt(scale) / 8.0) * 8;
		d->sides[i] = s < 24 ? 24 : s;
	}
	maxside = d->sides[MGE_SIDES - 1];
	d->images = calloc((size_t)count, sizeof(*d->images));
	rgb = malloc((size_t)maxside * (size_t)maxside * 3);
	if (!d->images || !rgb)
		goto fail;
	d->count = count;
	for (int i = 0; i < count; i++) {
		struct mge_image *im = &d->images[i];
		struct mge_rng r;
		int err;

		/* Index i -> size i % MGE_SHAPES, class (i / MGE_SHAPES) % MGE_CLASSES: balanced. */
		im->shape = i % MGE_SHAPES;
		im->label = (i / MGE_SHAPES) % MGE_CLASSES;
		im->h = d->sides[im->shape / MGE_SIDES];
		im->w = d->sides[im->shape % MGE_SIDES];
		mge_rng_init(&r, seed, 0xda7a, stream, (uint64_t)i);
		draw(rgb, im->w, im->h, im->label, &r);
		err = mge_png_encode(rgb, im->w, im->h, &im->png, &im->png_len);
		if (err)
			goto fail;
		d->png_bytes += im->png_len;
	}
	free(rgb);
	return 0;
fail:
	free(rgb);
	mge_dataset_free(d);
	return -ENOMEM;
}

void mge_dataset_free(struct mge_dataset *d)
{
	if (d->images)
		for (int i = 0; i < d->count; i++)
			free(d->images[i].png);
	free(d->images);
	memset(d, 0, sizeof(*d));
}
