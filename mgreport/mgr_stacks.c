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

int mgr_stacks_build(const struct mgr_process *p, struct mgc_symbolizer *sym,
		     const struct mgr_weight_spec *spec, size_t max, int prefix, struct mgr_stacks *out,
		     char *err, size_t errlen, char *note, size_t notelen)
{
	struct mgr_view v;
	struct mgr_weight w;
	struct mgr_picked pk;
	memset(out, 0, sizeof *out);
	memset(&pk, 0, sizeof pk);
	note[0] = 0;
	int rc = mgr_view_open(&v, p, sym);
	if (rc < 0)
		return rc;
	rc = mgr_weight_resolve(&v, spec, &w, err, errlen, note, notelen);
	if (rc == 0)
		rc = mgr_view_pick(&v, &w, max, 0, &pk);
	if (rc == 0) {
		mgr_weight_describe(&v, &w, out->what, sizeof out->what);
		out->negative = pk.negative;
		out->stacks = calloc(pk.n + 1, sizeof *out->stacks);
		rc = out->stacks ? 0 : -ENOMEM;
	}
	for (size_t i = 0; rc == 0 && i < pk.n; i++, out->n++)
		rc = site_stack(p, &pk.sites[i], prefix, &out->stacks[i]);
	if (rc == 0 && pk.rest_sites) {
		rc = rest_stack(p, &pk, prefix, &out->stacks[out->n]);
		out->n++;
	}
	mgr_picked_free(&pk);
	if (rc < 0)
		mgr_stacks_free(out);
	return rc;
}

void mgr_stacks_free(struct mgr_stacks *st)
{
	for (size_t i = 0; st->stacks && i < st->n; i++) {
		for (size_t j = 0; j < st->stacks[i].nframes; j++)
			free(st->stacks[i].frames[j].label);
		free(st->stacks[i].frames);
	}
	free(st->stacks);
	memset(st, 0, sizeof *st);
}
