/* SPDX-License-Identifier: MIT */
/* mgr_speedscope.c: see mgr_speedscope.h. Frames are shared between profiles, each distinct
 * (name, file, line) once, in the order first met, so the same input gives the same bytes. */
#define _GNU_SOURCE
#include "mgr_speedscope.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "mg_config.h"
#include "mgc_escape.h"
#include "mgr_strtab.h"

/* The distinct frames (by name, file and line), numbered in the order first met. */
struct frame_set {
	struct mgr_strtab keys;
	const struct mgr_stack_frame **firsts; /* each one's first occurrence, for shared.frames */
	size_t cap;
};

/* The index of f, added when new; -1 without memory. */
static long frame_index(struct frame_set *fs, const struct mgr_stack_frame *f)
{
	char *key;
	if (asprintf(&key, "%s\x1f%s\x1f%d", f->label, f->file ? f->file : "", f->line) < 0)
		return -1;
	size_t before = fs->keys.n;
	long id = mgr_strtab_add(&fs->keys, key);
	free(key);
	if (id < 0 || fs->keys.n == before)
		return id;
	if (fs->keys.n > fs->cap) {
		size_t ncap = fs->cap ? fs->cap * 2 : 1024;
		const struct mgr_stack_frame **nf = realloc(fs->firsts, ncap * sizeof *nf);
		if (!nf)
			return -1;
		fs->firsts = nf;
		fs->cap = ncap;
	}
	fs->firsts[id] = f;
	return id;
}

static cJSON *frame_json(const struct mgr_stack_frame *f)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "name", f->label);
	if (f->file)
		cJSON_AddStringToObject(o, "file", f->file);
	if (f->line > 0)
		cJSON_AddNumberToObject(o, "line", f->line);
	return o;
}

static cJSON *profile_json(struct frame_set *fs, const struct mgr_stacks *st, const char *name)
{
	cJSON *p = cJSON_CreateObject();
	char title[512];
	snprintf(title, sizeof title, "%s: %s", name, st->what);
	cJSON_AddStringToObject(p, "type", "sampled");
	cJSON_AddStringToObject(p, "name", title);
	cJSON_AddStringToObject(p, "unit", "bytes");
	cJSON_AddNumberToObject(p, "startValue", 0);
	cJSON *samples = cJSON_AddArrayToObject(p, "samples");
	cJSON *weights = cJSON_AddArrayToObject(p, "weights");
	double total = 0;
	for (size_t i = 0; i < st->n; i++) {
		const struct mgr_stack *s = &st->stacks[i];
		double w = (double)llround(s->weight);
		if (!(w > 0))
			continue;
		cJSON *stack = cJSON_CreateArray();
		for (size_t j = 0; j < s->nframes; j++)
			cJSON_AddItemToArray(stack, cJSON_CreateNumber((double)frame_index(fs, &s->frames[j])));
		cJSON_AddItemToArray(samples, stack);
		cJSON_AddItemToArray(weights, cJSON_CreateNumber(w));
		total += w;
	}
	cJSON_AddNumberToObject(p, "endValue", total);
	return p;
}

int mgr_speedscope_write(FILE *f, const char *title, const struct mgr_stacks *sets, const char *const *names,
			 size_t nsets)
{
	struct frame_set fs = {0};
	cJSON *root = cJSON_CreateObject();
	int rc = -ENOMEM;
	if (!root)
		goto out;
	cJSON_AddStringToObject(root, "$schema", "https://www.speedscope.app/file-format-schema.json");
	cJSON *shared = cJSON_AddObjectToObject(root, "shared");
	cJSON *profiles = cJSON_AddArrayToObject(root, "profiles");
	for (size_t k = 0; k < nsets; k++)
		cJSON_AddItemToArray(profiles, profile_json(&fs, &sets[k], names[k]));
	cJSON *frames = cJSON_AddArrayToObject(shared, "frames");
	for (size_t i = 0; i < fs.keys.n; i++)
		cJSON_AddItemToArray(frames, frame_json(fs.firsts[i]));
	cJSON_AddStringToObject(root, "name", title);
	cJSON_AddNumberToObject(root, "activeProfileIndex", 0);
	cJSON_AddStringToObject(root, "exporter", "mgreport " MG_VERSION);
	char *raw = cJSON_PrintUnformatted(root);
	char *s = raw ? mgc_json_clean(raw) : NULL; /* valid UTF-8 whatever the trace held */
	free(raw);
	if (s) {
		fputs(s, f);
		fputc('\n', f);
		free(s);
		rc = 0;
	}
out:
	cJSON_Delete(root);
	mgr_strtab_free(&fs.keys);
	free(fs.firsts);
	return rc;
}
