/* SPDX-License-Identifier: MIT */
/* mge_augment.h: image transforms shared by the loader and the validation pass:
 * RGB8 to normalised planar float, RandomResizedCrop + flip parameters, bilinear resampling. */
#ifndef MGE_AUGMENT_H
#define MGE_AUGMENT_H

#include <stdint.h>

#include "mge_rng.h"

struct mge_crop {
	float x0, y0, cw, ch;   /* crop rectangle in source pixels */
	int flip;               /* mirror horizontally */
};

/* RGB8 interleaved [h, w, 3] -> planar float [3, h, w], scaled to about [-2, 2]. */
void mge_augment_to_planar(const uint8_t *px, int w, int h, float *dst);

/* RandomResizedCrop (area 0.55..1, aspect 3/4..4/3) and a flip with probability 1/2. */
struct mge_crop mge_augment_random_crop(struct mge_rng *r, int w, int h);

/* The whole image, no flip (validation). */
struct mge_crop mge_augment_full_crop(int w, int h);

/* Bilinear resample of crop c of planar float img [3, h, w] into dst [3, side, side]. */
void mge_augment_resample(const float *img, int w, int h, const struct mge_crop *c, float *dst, int side);

#endif /* MGE_AUGMENT_H */
