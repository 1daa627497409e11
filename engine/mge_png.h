/* SPDX-License-Identifier: MIT */
/* mge_png.h: RGB8 images to and from PNG in memory, through libpng.
 * Decoding writes into a buffer the caller owns, so who allocates decoded pixels is always the caller. */
#ifndef MGE_PNG_H
#define MGE_PNG_H

#include <stddef.h>
#include <stdint.h>

/* Encodes w x h RGB8 pixels (row-major, 3 bytes per pixel) as PNG. On success *out is a malloc'd
 * buffer of *out_len bytes owned by the caller. Returns 0 or -ENOMEM / -EINVAL. */
int mge_png_encode(const uint8_t *rgb, int w, int h, uint8_t **out, size_t *out_len);

/* Decodes a PNG made by mge_png_encode into dst, which must hold w * h * 3 bytes; the PNG must be
 * exactly w x h RGB8. Returns 0 or -EINVAL (corrupt or mismatched input). Thread-safe. */
int mge_png_decode(const uint8_t *png, size_t len, uint8_t *dst, int w, int h);

#endif /* MGE_PNG_H */
