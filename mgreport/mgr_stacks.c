/* SPDX-License-Identifier: MIT */
/* mgr_stacks.c: see mgr_stacks.h. */
#define _GNU_SOURCE
#include "mgr_stacks.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int push_frame(struct mgr_stack *s, const char *label, const char *file, int line)
{
	char *l = strdup(label);
	if (!l)
		return -ENOMEM;
	s->frames[s->nframes++] = (struct mgr_stack_frame){l, file, line};
	return 0;
}

/* One stack: the process frame when asked, then the site's frames from the outermost in. */
static int site_stack(const struct mgr_process *p, const struct mgr_pick *pk, int prefix, struct mgr_stack *out)
{
	char buf[512];
	const struct mgc_stack *st = pk->stack;
	out->weight = pk->weight;
	out->frames = calloc(st->n + 2, sizeof *out->frames);
	if (!out->frames)
		return -ENOMEM;
	if (prefix && push_frame(out, mgr_process_label(p, buf, sizeof buf), NULL, 0) < 0)
		return -ENOMEM;
	for (size_t j = st->n; j-- > 0;) {
		const struct mgc_frame *f = &st->frames[j];
		if (push_frame(out, mgr_frame_label(f, buf, sizeof buf), f->file, f->line) < 0)
			return -ENOMEM;
	}
	return st->n ? 0 : push_frame(out, "[no stack]", NULL, 0);
}

/* "[N other sites]": what the site limit left out, so the flame graph's total is the real one. */
static int rest_stack(const struct mgr_process *p, const struct mgr_picked *pk, int prefix,
		      struct mgr_stack *out)
{
	char buf[512];
	out->weight = pk->rest;
	out->frames = calloc(2, sizeof *out->frames);
	if (!out->frames)
		return -ENOMEM;
	if (prefix && push_frame(out, mgr_process_label(p, buf, sizeof buf), NULL, 0) < 0)
		return -ENOMEM;
	snprintf(buf, sizeof buf, "[%zu other site%s]", pk->rest_sites, pk->rest_sites == 1 ? "" : "s");
	return push_frame(out, buf, NULL, 0);
}

int mgr_stack_iter_open(struct mgr_stack_iter *it, const struct mgr_process *p, struct mgc_symbolizer *sym,
			const struct mgr_weight_spec *spec, size_t max, int prefix, struct mgr_stacks *info,
			char *err, size_t errlen, char *note, size_t notelen)
{
	struct mgr_weight w;
	memset(it, 0, sizeof *it);
	memset(info, 0, sizeof *info);
	it->p = p;
	it->prefix = prefix;
	note[0] = 0;
	int rc = mgr_view_open(&it->v, p, sym);
	if (rc == 0)
		rc = mgr_weight_resolve(&it->v, spec, &w, err, errlen, note, notelen);
	if (rc == 0)
		rc = mgr_view_choose(&it->v, &w, max, 0, &it->pk);
	if (rc == 0) {
		mgr_weight_describe(&it->v, &w, info->what, sizeof info->what);
		info->negative = it->pk.negative;
	}
	return rc;
}

int mgr_stack_iter_next(struct mgr_stack_iter *it, struct mgr_stack *out)
{
	if (it->next > it->pk.n || (it->next == it->pk.n && !it->pk.rest_sites))
		return 0;
	memset(out, 0, sizeof *out);
	int rc;
	if (it->next == it->pk.n) {
		rc = rest_stack(it->p, &it->pk, it->prefix, out);
	} else {
		struct mgr_pick pick;
		rc = mgr_pick_get(&it->v, &it->pk, it->next, &pick);
		if (rc == 0)
			rc = site_stack(it->p, &pick, it->prefix, out);
		mgr_pick_put(&pick);
	}
	it->next++;
	if (rc < 0)
		mgr_stack_free(out);
	return rc < 0 ? rc : 1;
}

void mgr_stack_iter_close(struct mgr_stack_iter *it)
{
	mgr_picked_free(&it->pk);
}

void mgr_stack_free(struct mgr_stack *s)
{
	for (size_t j = 0; s->frames && j < s->nframes; j++)
		free(s->frames[j].label);
	free(s->frames);
	memset(s, 0, sizeof *s);
}
