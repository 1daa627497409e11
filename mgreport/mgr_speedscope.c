/* SPDX-License-Identifier: MIT */
/* mgr_speedscope.c: see mgr_speedscope.h. Frames are shared between profiles, each distinct
 * (name, file, line) once, in the order first met, so the same input gives the same bytes. The
 * document is printed by cJSON with its samples and weights left empty, and those written into
 * it after: they are numbers only. */
#define _GNU_SOURCE
#include "mgr_speedscope.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "mg_config.h"
#include "mgc_escape.h"
#include "mgr_stacktree.h"
#include "mgr_strtab.h"

/* The distinct frames (by name, file and line), numbered in the order first met. */
struct frame_set {
	struct mgr_strtab keys;
	struct mgr_stack_frame *firsts; /* each one's first occurrence (label owned), for shared.frames */
	size_t cap;
};

/* A profile's samples: the tree's leaf of each (its stack, keyed by frame index) and its weight. */
struct samples {
	uint32_t *leaf;
	double *w;
	size_t n;
	double total;
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
		struct mgr_stack_frame *nf = realloc(fs->firsts, ncap * sizeof *nf);
		if (!nf)
			return -1;
		fs->firsts = nf;
		fs->cap = ncap;
	}
	fs->firsts[id] = (struct mgr_stack_frame){strdup(f->label), f->file, f->line};
	return fs->firsts[id].label ? id : -1;
}

/* Reads every stack of `it` into the frames, the tree and s. 0 or -ENOMEM. */
static int read_samples(struct mgr_stack_iter *it, struct frame_set *fs, struct mgr_stacktree *t,
			struct samples *s)
{
	size_t cap = it->pk.n + 1;
	struct mgr_stack st;
	int rc;
	s->leaf = malloc(cap * sizeof *s->leaf);
	s->w = malloc(cap * sizeof *s->w);
	if (!s->leaf || !s->w)
		return -ENOMEM;
	while ((rc = mgr_stack_iter_next(it, &st)) == 1) {
		double w = (double)llround(st.weight);
		uint32_t at = 0;
		for (size_t j = 0; w > 0 && j < st.nframes && rc == 1; j++) {
			long id = frame_index(fs, &st.frames[j]);
			if (id < 0 || !(at = mgr_stacktree_child(t, at, (uint32_t)id)))
				rc = -ENOMEM;
		}
		mgr_stack_free(&st);
		if (rc < 0)
			return rc;
		if (!(w > 0))
			continue;
		s->leaf[s->n] = at;
		s->w[s->n++] = w;
		s->total += w;
	}
	return rc;
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

static cJSON *profile_json(const struct mgr_stacks *info, const struct samples *s, const char *name)
{
	cJSON *p = cJSON_CreateObject();
	char title[512];
	snprintf(title, sizeof title, "%s: %s", name, info->what);
	cJSON_AddStringToObject(p, "type", "sampled");
	cJSON_AddStringToObject(p, "name", title);
	cJSON_AddStringToObject(p, "unit", "bytes");
	cJSON_AddNumberToObject(p, "startValue", 0);
	cJSON_AddArrayToObject(p, "samples");
	cJSON_AddArrayToObject(p, "weights");
	cJSON_AddNumberToObject(p, "endValue", s->total);
	return p;
}

/* The document without samples and weights, as cJSON prints it, valid UTF-8. NULL without memory. */
static char *document(const char *title, const struct frame_set *fs, const struct mgr_stacks *infos,
		      const struct samples *s, const char *const *names, size_t nsets)
{
	cJSON *root = cJSON_CreateObject();
	if (!root)
		return NULL;
	cJSON_AddStringToObject(root, "$schema", "https://www.speedscope.app/file-format-schema.json");
	cJSON *shared = cJSON_AddObjectToObject(root, "shared");
	cJSON *profiles = cJSON_AddArrayToObject(root, "profiles");
	for (size_t k = 0; k < nsets; k++)
		cJSON_AddItemToArray(profiles, profile_json(&infos[k], &s[k], names[k]));
	cJSON *frames = cJSON_AddArrayToObject(shared, "frames");
	for (size_t i = 0; i < fs->keys.n; i++)
		cJSON_AddItemToArray(frames, frame_json(&fs->firsts[i]));
	cJSON_AddStringToObject(root, "name", title);
	cJSON_AddNumberToObject(root, "activeProfileIndex", 0);
	cJSON_AddStringToObject(root, "exporter", "mgreport " MG_VERSION);
	char *raw = cJSON_PrintUnformatted(root);
	cJSON_Delete(root);
	char *doc = raw ? mgc_json_clean(raw) : NULL;
	free(raw);
	return doc;
}

/* A profile's samples (frame indices, root first) and, after `between`, its weights, as cJSON
 * prints numbers. */
static int write_samples(FILE *f, const struct mgr_stacktree *t, const struct samples *s, const char *between)
{
	char num[64];
	uint32_t *path = NULL;
	size_t cap = 0;
	for (size_t i = 0; i < s->n; i++) {
		size_t d = 0;
		for (uint32_t at = s->leaf[i]; at; at = t->nodes[at].parent, d++) {
			if (d == cap) {
				uint32_t *np = realloc(path, (cap = cap ? 2 * cap : 256) * sizeof *np);
				if (!np) {
					free(path);
					return -ENOMEM;
				}
				path = np;
			}
			path[d] = t->nodes[at].key;
		}
		fputs(i ? ",[" : "[", f);
		while (d-- > 0)
			fprintf(f, "%u%s", path[d], d ? "," : "");
		fputc(']', f);
	}
	free(path);
	fputs(between, f);
	for (size_t i = 0; i < s->n; i++) {
		cJSON *w = cJSON_CreateNumber(s->w[i]);
		int ok = w && cJSON_PrintPreallocated(w, num, sizeof num, 0);
		cJSON_Delete(w);
		if (!ok)
			return -ENOMEM;
		fprintf(f, "%s%s", i ? "," : "", num);
	}
	return 0;
}

/* The document, each profile's samples and weights written into their empty arrays. */
static int write_document(FILE *f, const char *doc, const struct mgr_stacktree *t, const struct samples *s,
			  size_t nsets)
{
	static const char sk[] = "\"samples\":[", wk[] = "],\"weights\":[";
	const char *at = doc;
	for (size_t k = 0; k < nsets; k++) {
		const char *m = strstr(at, "\"samples\":[],\"weights\":[]");
		if (!m)
			return -EINVAL;
		fwrite(at, 1, (size_t)(m - at) + strlen(sk), f);
		if (write_samples(f, t, &s[k], wk) < 0)
			return -ENOMEM;
		at = m + strlen(sk) + strlen(wk);
	}
	fputs(at, f);
	fputc('\n', f);
	return 0;
}

int mgr_speedscope_write(FILE *f, const char *title, struct mgr_stack_iter *its, const struct mgr_stacks *infos,
			 const char *const *names, size_t nsets)
{
	struct frame_set fs = {0};
	struct mgr_stacktree t;
	struct samples *s = calloc(nsets ? nsets : 1, sizeof *s);
	char *doc = NULL;
	int rc = mgr_stacktree_init(&t);
	if (!s)
		rc = -ENOMEM;
	for (size_t k = 0; k < nsets && rc == 0; k++)
		rc = read_samples(&its[k], &fs, &t, &s[k]);
	if (rc == 0)
		rc = (doc = document(title, &fs, infos, s, names, nsets)) ? 0 : -ENOMEM;
	if (rc == 0)
		rc = write_document(f, doc, &t, s, nsets);
	free(doc);
	for (size_t k = 0; s && k < nsets; k++) {
		free(s[k].leaf);
		free(s[k].w);
	}
	free(s);
	for (size_t i = 0; i < fs.keys.n && i < fs.cap; i++)
		free(fs.firsts[i].label);
	free(fs.firsts);
	mgr_strtab_free(&fs.keys);
	mgr_stacktree_free(&t);
	return rc;
}
