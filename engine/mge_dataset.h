/* SPDX-License-Identifier: MIT */
/* mge_dataset.h: the synthetic image set, kept encoded as PNG like a real data set on disk.
 * Images come in MGE_SHAPES source sizes (MGE_SIDES x MGE_SIDES heights and widths) and
 * MGE_CLASSES classes; every (size, class) pair has the same number of images. */
#ifndef MGE_DATASET_H
#define MGE_DATASET_H

#include <stddef.h>
#include <stdint.h>

#define MGE_CLASSES 8
#define MGE_SIDES 5
#define MGE_SHAPES (MGE_SIDES * MGE_SIDES)
/* Images per source size: a multiple of MGE_CLASSES; 64 gives 1600 images and, at --batch 32,
 * exactly 50 steps per epoch. */
#define MGE_PER_SHAPE 64

struct mge_image {
	uint8_t *png;   /* encoded bytes, owned by the data set */
	size_t png_len;
	int w, h;
	int shape;      /* index of (h, w) in 0..MGE_SHAPES-1 */
	int label;      /* 0..MGE_CLASSES-1 */
};

struct mge_dataset {
	struct mge_image *images;
	int count;
	int sides[MGE_SIDES];  /* the source side lengths, ascending */
	size_t png_bytes;      /* sum of png_len */
};

/* Makes `count_per_shape` images for each of the MGE_SHAPES sizes, deterministically from `seed`
 * and `stream` (0: training set, 1: validation set). Side lengths are 96..160 pixels times
 * sqrt(scale). Returns 0 or -ENOMEM; on failure nothing is left allocated. */
int mge_dataset_make(struct mge_dataset *d, uint64_t seed, uint64_t stream, int count_per_shape,
		     double scale);

/* Frees everything mge_dataset_make allocated; safe on a zeroed struct. */
void mge_dataset_free(struct mge_dataset *d);

/* The class names, for messages. */
const char *mge_dataset_class_name(int label);

#endif /* MGE_DATASET_H */
