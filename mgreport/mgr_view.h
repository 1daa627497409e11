/* SPDX-License-Identifier: MIT */
/* mgr_view.h: how mgreport's pictures and exports (HTML, folded stacks, speedscope, diff) read a
 * process's analysis (libmgcore's mgc_analysis, through mgr_analyze.h): its axis, a site's live
 * bytes at any axis point, sites beyond the shown ones (picked by a weight and symbolized on
 * demand), and how frames are named. It decides no verdict and prints nothing. */
#ifndef MGR_VIEW_H
#define MGR_VIEW_H

#include <stddef.h>

#include "mgr_analyze.h"

struct mgr_view {
	const struct mgr_process *p;
	const struct mgc_trace *t;
	const struct mgc_analysis *a;
	struct mgc_symbolizer *sym;
	size_t n;           /* axis points */
	const double *x;    /* their x (steps, or seconds without step markers) */
};

/* Opens a view of p (a trace's analysis: p->t set). sym symbolizes the sites picked later and must
 * outlive the view. 0, or -EINVAL (no trace). */
int mgr_view_open(struct mgr_view *v, const struct mgr_process *p, struct mgc_symbolizer *sym);

/* Bytes the probe tracks at axis point i: live heap + live mmap + CUDA memory, which is what the
 * sites' live bytes add up to. */
double mgr_view_tracked(const struct mgr_view *v, size_t i);

/* The axis point at x: the last one at or before x. Returns 0 and *i, or -ERANGE when x lies
 * before the first point (or the axis is empty). */
int mgr_view_point_at(const struct mgr_view *v, double x, size_t *i);

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

/* The weight of site s of the analysis. */
double mgr_weight_of(const struct mgr_view *v, const struct mgr_weight *w, const struct mgc_site *s);

/* A site picked for a picture: the analysis's result, the trace's record, its stack. */
struct mgr_pick {
	const struct mgc_site_result *r; /* the analysis's judged one, or `result` */
	struct mgc_site_result result;   /* a site the analysis did not judge: no verdict */
	const struct mgc_site *s;
	const struct mgc_stack *stack; /* the shown site's own, or `own` */
	struct mgc_stack own;          /* symbolized here for a site that is not shown */
	int shown;                     /* one of the process's shown sites (the text report's) */
	int pyarena;                   /* a pymalloc arena site */
	double weight;
};

/* A chosen site before its stack is read: its rank in the analysis and its weight. */
struct mgr_choice {
	size_t rank;
	double w;
};

/* Sites picked by weight, the heaviest first (ties by rank). */
struct mgr_picked {
	struct mgr_pick *sites; /* mgr_view_pick's: n of them, symbolized; NULL from mgr_view_choose */
	struct mgr_choice *chosen; /* n of them, in the same order */
	size_t n;
	size_t rest_sites;   /* sites with a positive weight left out by `max` */
	double rest;         /* their summed weight */
	double negative;     /* summed weight below zero (shrinking sites), left out */
};

/* Chooses, out of every site of the run, at most `max` (0 = all) with a weight above zero, plus
 * every shown site when `with_shown`; symbolizes nothing (out->sites stays NULL): the outputs that
 * may write every site take them one at a time with mgr_pick_get. 0 or -ENOMEM (out is then
 * empty). */
int mgr_view_choose(const struct mgr_view *v, const struct mgr_weight *w, size_t max, int with_shown,
		    struct mgr_picked *out);

/* Choice i of pk as a pick, its stack the shown site's own or symbolized into out->own (freed by
 * mgr_pick_put). 0 or -ENOMEM. */
int mgr_pick_get(const struct mgr_view *v, const struct mgr_picked *pk, size_t i, struct mgr_pick *out);
void mgr_pick_put(struct mgr_pick *pk);

/* mgr_view_choose, then every choice symbolized into out->sites (outputs of a bounded number of
 * sites that read them more than once). 0 or -ENOMEM (out is then empty). */
int mgr_view_pick(const struct mgr_view *v, const struct mgr_weight *w, size_t max, int with_shown,
		  struct mgr_picked *out);
void mgr_picked_free(struct mgr_picked *pk);

/* The frame that names a site (mgc_stack.named: the first frame in the user's own code), or NULL
 * for an empty stack. */
const struct mgc_frame *mgr_named_frame(const struct mgc_stack *st);

/* The name a frame has in stacks people read and in flame graphs: the function ("mge_collate_batch",
 * "operator new(unsigned long)"), "?? [libffi.so.8]" when only the module is known, and
 * "train_step train.py:41" for a Python frame (mgr_pyfile_name). Escaped as all text from a trace
 * is (mgc_escape.h: no control byte, valid UTF-8), and no ';' (folded stacks split on it). Writes
 * into buf and returns it. */
const char *mgr_frame_label(const struct mgc_frame *f, char *buf, size_t cap);

/* A Python file as frame names show it: library code from its package on
 * ("torch/nn/modules/module.py"), the user's own files by their name ("train.py"). */
const char *mgr_pyfile_name(const char *file);

/* "python3 [pid 1234]": a process as a flame graph's root frame names it (escaped, no ';'). */
const char *mgr_process_label(const struct mgr_process *p, char *buf, size_t cap);

/* The file name of a path ("mge_loader.c" for "/src/engine/mge_loader.c"); "" for NULL. */
const char *mgr_basename(const char *path);

#endif /* MGR_VIEW_H */
