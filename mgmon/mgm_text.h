/* SPDX-License-Identifier: MIT */
/* mgm_text.h: the non-curses frames of mgmon: `--once` as plain text and `--once --json`. They
 * write to a FILE and never touch the terminal's modes. */
#ifndef MGM_TEXT_H
#define MGM_TEXT_H

#include <stdio.h>

#include "mgm_collect.h"

/* One frame as plain text, `width` columns wide (80 is a good default). */
void mgm_text_frame(FILE *out, const struct mgm_view *v, int width);

/* One frame as a JSON object (per series and per site a "verdict" from the DESIGN vocabulary).
 * 0, or -ENOMEM. */
int mgm_json_frame(FILE *out, const struct mgm_view *v);

#endif /* MGM_TEXT_H */
