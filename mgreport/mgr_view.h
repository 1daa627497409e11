/* SPDX-License-Identifier: MIT */
/* mgr_view.h: the one layer through which mgreport's pictures and exports (HTML, folded stacks,
 * speedscope, diff) read the analysis (mgr_analyze.h): the axis points, a site's live bytes at any
 * of them, sites beyond the ones the analysis ranked (picked by a weight and symbolized on
 * demand), and how frames are named. When the analysis moves, only this module is re-pointed.
 * It decides no verdict and prints nothing. */
#ifndef MGR_VIEW_H
#define MGR_VIEW_H

#include <stddef.h>

#include "mgr_analyze.h"

struct mgr_view {
	const struct mgr_process *p;
	const struct mgc_trace *t;
	struct mgc_symbolizer *sym;
	size_t *idx;        /* grid point of each axis point */
	size_t n;           /* axis points: p->main->n */
	size_t *analyzed;   /* site id -> index in p->sites + 1; 0 when the analysis did not rank it */
};

/* Opens a view of p (a trace's analysis: p->t set). sym symbolizes the sites picked later and must
 * outlive the view. 0, -EINVAL (no trace) or -ENOMEM. */
int mgr_view_open(struct mgr_view *v, const struct mgr_process *p, struct mgc_symbolizer *sym);
void mgr_view_close(struct mgr_view *v);

/* x (step, or seconds without step markers) of axis point i. */
double mgr_view_x(const struct mgr_view *v, size_t i);

/* Live bytes of site s at axis point i. */
double mgr_view_live(const struct mgr_view *v, const struct mgc_site *s, size_t i);

/* Bytes the probe tracks at axis point i: live heap + live mmap + CUDA memory, which is what the
 * sites' live bytes add up to. */
double mgr_view_tracked(const struct mgr_view *v, size_t i);

/* The axis point at x: the last one at or before x. Returns 0 and *i, or -ERANGE when x lies
 * before the first point (or the axis is empty). */
int mgr_view_point_at(const struct mgr_view *v, double x, size_t *i);

/* The analysis's own entry for s (verdict, frames), or NULL when it did not rank s. */
const struct mgr_site *mgr_view_analyzed(const struct mgr_view *v, const struct mgc_site *s);

/* What a site is weighted by: live bytes at one axis point, the growth between two (a flame
 * graph leaves negative growth out: it has no negative widths), or its highest live bytes at any
 * axis point (the sites that matter at some point of the run). */
enum mgr_weight_mode { MGR_WEIGHT_LIVE, MGR_WEIGHT_GROWTH, MGR_WEIGHT_PEAK };

struct mgr_weight {
	enum mgr_weight_mode mode;
	size_t at, from, to; /* axis points: `at` for LIVE, `from` and `to` for GROWTH */
};

/* What the user asked for, in x units (steps, or seconds without step markers): `at` for live
 * bytes, `from` and `to` for growth; NAN means the last point (`at`, `to`) or the first (`from`). */
struct mgr_weight_spec {
	int growth;
	double at, from, to;
};

/* Resolves spec on v's axis: each x to the last axis point at or before it. 0, or -ERANGE with a
 * one-line reason in err (an x before the run's first point, `from` not before `to`). When a
 * point's x differs from the one asked for, note says so ("" otherwise). */
int mgr_weight_resolve(const struct mgr_view *v, const struct mgr_weight_spec *spec, struct mgr_weight *w,
		       char *err, size_t errlen, char *note, size_t notelen);

/* "live bytes at step 300", "growth from step 0 to step 300" ("at 12 s" without step markers). */
const char *mgr_weight_describe(const struct mgr_view *v, const struct mgr_weight *w, char *buf, size_t cap);

/* The weight of site s. */
double mgr_weight_of(const struct mgr_view *v, const struct mgr_weight *w, const struct mgc_site *s);

/* Sites picked by weight: the heaviest first (ties by site id), symbolized. Each entry is a
 * struct mgr_site of its own (frames owned here), with the analysis's verdict when it ranked the
 * site (classified = 0 otherwise). `weight[i]` is site i's weight. */
struct mgr_picked {
	struct mgr_site *sites;
	double *weight;
	size_t n;
	size_t rest_sites;   /* sites with a positive weight left out by `max` */
	double rest;         /* their summed weight */
	double negative;     /* summed weight below zero (shrinking sites), left out */
};

/* Picks, out of every site of the trace, at most `max` (0 = all) with a weight above zero, and
 * symbolizes them. `extra` (may be NULL) names sites to include whatever their weight, n_extra of
 * them (e.g. the analysis's ranked sites). 0 or -ENOMEM (out is then empty). */
int mgr_view_pick(const struct mgr_view *v, const struct mgr_weight *w, size_t max,
		  const struct mgc_site *const *extra, size_t n_extra, struct mgr_picked *out);
void mgr_picked_free(struct mgr_picked *pk);

/* 1 for a frame of Python code (the interpreter's frame: function, file and line, no module). */
int mgr_frame_is_python(const struct mgr_frame *f);

/* The name a frame has in stacks people read and in flame graphs: the function ("mge_collate_batch",
 * "operator new(unsigned long)"), "?? [libffi.so.8]" when only the module is known, and
 * "train_step train.py:41" for a Python frame (mgr_pyfile_name). No ';' or newline (folded stacks
 * split on them). Writes into buf and returns it. */
const char *mgr_frame_label(const struct mgr_frame *f, char *buf, size_t cap);

/* A Python file as frame names show it: library code from its package on
 * ("torch/nn/modules/module.py"), the user's own files by their name ("train.py"). */
const char *mgr_pyfile_name(const char *file);

/* The first frame in the user's own code, which the site table names: the first Python frame of
 * the user's own files (not the standard library or site-packages), else the first Python frame,
 * else the first named frame of a module outside the system's directories (/usr/lib, /lib,
 * /usr/local/lib, /usr/bin, /bin: libc, libstdc++, the interpreter, pip's native packages), else
 * the first named frame, else the first frame. NULL without frames. */
const struct mgr_frame *mgr_user_frame(const struct mgr_site *ms);

/* "python3 [pid 1234]": a process as a flame graph's root frame names it. */
const char *mgr_process_label(const struct mgr_process *p, char *buf, size_t cap);

/* The file name of a path ("mge_loader.c" for "/src/engine/mge_loader.c"); "" for NULL. */
const char *mgr_basename(const char *path);

#endif /* MGR_VIEW_H */
