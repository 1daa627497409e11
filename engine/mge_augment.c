/* SPDX-License-Identifier: MIT */
/* mge_augment.c: the pixel transforms of the data pipeline. Pure functions on caller buffers:
 * they must never allocate, so every byte of pipeline memory is owned by the loader's code. */
#include "mge_augment.h"

#include <math.h>
#include <stddef.h>

void mge_augment_to_planar(const uint8_t *px, int w, int h, float *dst)
{
	size_t plane = (size_t)w * (size_t)h;

	for (size_t i = 0; i < plane; i++)
		for (int c = 0; c < 3; c++)
			dst[(size_t)c * plane + i] = ((float)px[i * 3 + (size_t)c] * (1.0f / 255.0f) - 0.5f) * 4.0f;
}

struct mge_crop mge_augment_random_crop(struct mge_rng *r, int w, int h)
{
	struct mge_crop c;
	float area = mge_rng_range(r, 0.55f, 1.0f);
	float aspect = expf(mge_rng_range(r, logf(0.75f), logf(4.0f / 3.0f)));

	c.cw = fminf((float)w, sqrtf(area * aspect) * (float)w);
	c.ch = fminf((float)h, sqrtf(area / aspect) * (float)h);
	c.x0 = mge_rng_range(r, 0.0f, (float)w - c.cw + 1e-3f);
	c.y0 = mge_rng_range(r, 0.0f, (float)h - c.ch + 1e-3f);
	c.flip = (int)(mge_rng_u64(r) & 1);
	return c;
}

struct mge_crop mge_augment_full_crop(int w, int h)
{
	struct mge_crop c = { 0.0f, 0.0f, (float)w, (float)h, 0 };
	return c;
}

static int clampi(int v, int lo, int hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

void mge_augment_resample(const float *img, int w, int h, const struct mge_crop *c, float *dst, int side)
{
	size_t plane = (size_t)w * (size_t)h, oplane = (size_t)side * (size_t)side;

	for (int oy = 0; oy < side; oy++) {
		float sy = c->y0 + ((float)oy + 0.5f) * c->ch / (float)side - 0.5f;
		int y0 = (int)floorf(sy);
		float fy = sy - (float)y0;
		int ya = clampi(y0, 0, h - 1), yb = clampi(y0 + 1, 0, h - 1);
		for (int ox = 0; ox < side; ox++) {
			float sx = c->x0 + ((float)ox + 0.5f) * c->cw / (float)side - 0.5f;
			int x0 = (int)floorf(sx);
			float fx = sx - (float)x0;
			int xa = clampi(x0, 0, w - 1), xb = clampi(x0 + 1, 0, w - 1);
			int dx = c->flip ? side - 1 - ox : ox;
			for (int ch = 0; ch < 3; ch++) {
				const float *p = img + (size_t)ch * plane;
				float top = p[ya * w + xa] * (1 - fx) + p[ya * w + xb] * fx;
				float bot = p[yb * w + xa] * (1 - fx) + p[yb * w + xb] * fx;
				dst[(size_t)ch * oplane + (size_t)oy * (size_t)side + (size_t)dx] = top * (1 - fy) + bot * fy;
			}
		}
	}
}
