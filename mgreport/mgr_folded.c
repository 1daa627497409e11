/* SPDX-License-Identifier: MIT */
/* mgr_folded.c: see mgr_folded.h. */
#define _GNU_SOURCE
#include "mgr_folded.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

struct line {
	char *stack;
	double weight;
};

static int cmp_line(const void *a, const void *b)
{
	return strcmp(((const struct line *)a)->stack, ((const struct line *)b)->stack);
}

/* "a;b;c" for one stack, or NULL without memory. */
static char *join(const struct mgr_stack *s)
{
	size_t len = 1;
	for (size_t j = 0; j < s->nframes; j++)
		len += strlen(s->frames[j].label) + 1;
	char *out = malloc(len), *q = out;
	if (!out)
		return NULL;
	for (size_t j = 0; j < s->nframes; j++) {
		size_t l = strlen(s->frames[j].label);
		if (j)
			*q++ = ';';
		memcpy(q, s->frames[j].label, l);
		q += l;
	}
	*q = 0;
	return out;
}

int mgr_folded_write(FILE *f, const struct mgr_stacks *sets, size_t nsets)
{
	size_t total = 0, n = 0;
	int rc = 0;
	for (size_t k = 0; k < nsets; k++)
		total += sets[k].n;
	struct line *lines = calloc(total ? total : 1, sizeof *lines);
	if (!lines)
		return -ENOMEM;
	for (size_t k = 0; k < nsets && rc == 0; k++)
		for (size_t i = 0; i < sets[k].n && rc == 0; i++) {
			const struct mgr_stack *s = &sets[k].stacks[i];
			if (!(llround(s->weight) > 0))
				continue;
			lines[n].weight = s->weight;
			lines[n].stack = join(s);
			rc = lines[n++].stack ? 0 : -ENOMEM;
		}
	if (rc == 0) {
		qsort(lines, n, sizeof *lines, cmp_line);
		for (size_t i = 0; i < n;) {
			long long w = 0;
			size_t j = i;
			for (; j < n && strcmp(lines[j].stack, lines[i].stack) == 0; j++)
				w += llround(lines[j].weight);
			fprintf(f, "%s %lld\n", lines[i].stack, w);
			i = j;
		}
	}
	for (size_t i = 0; i < n; i++)
		free(lines[i].stack);
	free(lines);
	return rc;
}
