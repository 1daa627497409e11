/* SPDX-License-Identifier: MIT */
/* mge_mining.c: the replay buffer of hard examples (scenario `late-leak`).
 * The missing cap is the bug this scenario models: the buffer must keep growing by one batch-half
 * of full-resolution images per step once mining starts, and must never be trimmed. */
#include "mge_mining.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

__attribute__((noinline))
int mge_mining_append(struct mge_mining *m, const struct mge_batch *b, const float *losses)
{
	size_t img = (size_t)b->h * (size_t)b->w * 3;
	int order[MGE_MAX_BATCH], keep = b->n / 2 > 0 ? b->n / 2 : 1;
	unsigned char *nb;

	if (b->epoch < MGE_MINING_EPOCH)
		return 0;
	/* The `keep` largest losses, by selection (n <= 64). */
	for (int i = 0; i < b->n; i++)
		order[i] = i;
	for (int i = 0; i < keep; i++) {
		int best = i;
		for (int j = i + 1; j < b->n; j++)
			if (losses[order[j]] > losses[order[best]])
				best = j;
		int t = order[i];
		order[i] = order[best];
		order[best] = t;
	}
	nb = realloc(m->buf, m->len + (size_t)keep * img);
	if (!nb)
		return -ENOMEM;
	m->buf = nb;
	for (int i = 0; i < keep; i++) {
		memcpy(m->buf + m->len, b->src->pixels + (size_t)order[i] * img, img);
		m->len += img;
	}
	m->images += (size_t)keep;
	return 0;
}

void mge_mining_free(struct mge_mining *m)
{
	free(m->buf);
	memset(m, 0, sizeof(*m));
}
