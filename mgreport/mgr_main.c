/* SPDX-License-Identifier: MIT */
/* mgr_main.c: the `mgreport` command: options, loading traces or a CSV of series, and exit codes
 * that scripts can use (0 ok, 1 bad input, 2 bad usage, 3 a --fail-on verdict was found). Every
 * error is one line on stderr; no input may crash it. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mg_config.h"
#include "mgc_csv.h"
#include "mgc_units.h"
#include "mgr_analyze.h"
#include "mgr_diff.h"
#include "mgr_folded.h"
#include "mgr_html.h"
#include "mgr_output.h"
#include "mgr_speedscope.h"

#define MGR_HTML_TABLE_SITES 50 /* sites in the HTML report's table, unless --top */
#define MGR_DIFF_RANKED 200     /* sites of each run a diff judges, at least */
#define MGR_EXPORT_SITES 1000   /* sites in --folded and --speedscope, unless --top */

struct mgr_ctx {
	int json;
	int color;
	int fail_leak, fail_growing;
	int no_children;
	const char *series_csv;
	struct mgr_options opt;
	int top_given;
	size_t print_top;              /* --top as given (default 20): rows a diff prints */
	const char *html, *speedscope; /* files to write */
	int folded, diff;
	struct mgr_weight_spec weight; /* of --folded and --speedscope: --at, --growth */
	int weight_given;
	const char **files;
	size_t nfiles;
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: mgreport [options] FILE.mgt [FILE.mgt...]\n"
		"       mgreport [options] --series FILE.csv\n"
		"       mgreport [options] --diff BEFORE.mgt AFTER.mgt\n"
		"\n"
		"Reports what a traced run's memory did: which memory grew, where (allocation sites\n"
		"with their call stacks), and what kind of growth it is: stable, plateau (warmup),\n"
		"leak, growing (cannot tell yet) or retention (freed memory kept by the allocator).\n"
		"\n"
		"options:\n"
		"  --json               machine-readable output (docs/report-json.md)\n"
		"  --series FILE.csv    classify external series: first column steps or seconds,\n"
		"                       each further column bytes (_kb/_mb/_gb in its name: KiB,\n"
		"                       MiB, GiB); a column named epoch gives each row's epoch\n"
		"  --top N              sites to report (default 20; 0 = all). In --json, a site\n"
		"                       past the first 1000 whose live bytes were the same at\n"
		"                       every point of the x axis gives its stack as an index\n"
		"                       into a shared table (\"stack\"), not inline (\"frames\")\n"
		"  --limit SIZE         memory limit for time-to-OOM, in binary units (32G = 32 GiB,\n"
		"                       512M = 512 MiB; default: the trace's cgroup limit, else the\n"
		"                       machine's memory)\n"
		"  --fail-on leak|growing  exit 3 when such a verdict is found (growing includes\n"
		"                       leak); with --diff: when AFTER has one BEFORE had not\n"
		"  --html OUT.html      write a self-contained HTML page: the answer, charts, a\n"
		"                       sortable site table, a flame graph (docs/report-html.md)\n"
		"  --folded             print folded stacks (flamegraph.pl, inferno, speedscope),\n"
		"                       weighted by live bytes at the last step\n"
		"  --speedscope OUT.json  write the same stacks in speedscope's file format\n"
		"  --at STEP            weigh them by live bytes at STEP instead (seconds when\n"
		"                       the run has no step markers)\n"
		"  --growth FROM:TO     weigh them by growth from step FROM to TO (either may be\n"
		"                       left out: first, last); shrinking sites are left out\n"
		"  --diff BEFORE.mgt AFTER.mgt  did the fix work? Verdicts before and after,\n"
		"                       sites matched by their symbolized stacks\n"
		"  --no-children        report only the traces given, not also those of their\n"
		"                       forked children found beside them\n"
		"  --color / --no-color colour in the text report (default: on a terminal)\n"
		"  -h, --help, --version\n"
		"\n"
		"Exit status: 0 success, 1 bad input, 2 bad usage, 3 --fail-on verdict found.\n");
}

static int parse_size(const char *s, double *out)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (end == s || errno || !isfinite(v) || v <= 0)
		return -1;
	double mult = 1;
	switch (*end) {
	case 0:
		break;
	case 'k': case 'K':
		mult = 1024.0;
		end++;
		break;
	case 'm': case 'M':
		mult = 1024.0 * 1024;
		end++;
		break;
	case 'g': case 'G':
		mult = 1024.0 * 1024 * 1024;
		end++;
		break;
	case 't': case 'T':
		mult = 1024.0 * 1024 * 1024 * 1024;
		end++;
		break;
	default:
		return -1;
	}
	if (*end == 'i')
		end++;
	if (*end == 'B' || *end == 'b')
		end++;
	if (*end)
		return -1;
	*out = v * mult;
	return 0;
}

/* A step (or second) for --at and --growth: a finite number >= 0; "" is NAN (the first or the
 * last point). */
static int parse_x(const char *s, size_t len, double *out)
{
	char buf[64], *end;
	if (len == 0) {
		*out = NAN;
		return 0;
	}
	if (len >= sizeof buf)
		return -1;
	memcpy(buf, s, len);
	buf[len] = 0;
	errno = 0;
	*out = strtod(buf, &end);
	return *end || errno || !isfinite(*out) || *out < 0 ? -1 : 0;
}

/* --at STEP, --growth FROM:TO. */
static int parse_weight(struct mgr_ctx *c, const char *opt, const char *v)
{
	c->weight_given = 1;
	if (!strcmp(opt, "--at")) {
		c->weight.growth = 0;
		if (*v && parse_x(v, strlen(v), &c->weight.at) == 0)
			return 0;
		fprintf(stderr, "mgreport: --at: expected a step (a number >= 0), got '%s'\n", v);
		return -1;
	}
	const char *colon = strchr(v, ':');
	c->weight.growth = 1;
	if (colon && parse_x(v, (size_t)(colon - v), &c->weight.from) == 0 &&
	    parse_x(colon + 1, strlen(colon + 1), &c->weight.to) == 0 &&
	    !(c->weight.from >= c->weight.to))
		return 0;
	fprintf(stderr, "mgreport: --growth: expected FROM:TO, two steps with FROM before TO "
			"(either may be empty: the first, the last), got '%s'\n", v);
	return -1;
}

/* The options of the pictures and exports: 1 when argv[*i] was one (its value consumed), 0 when
 * it is not, -1 after printing an error. */
static int parse_output_option(struct mgr_ctx *c, int argc, char **argv, int *i)
{
	const char *a = argv[*i];
	if (!strcmp(a, "--folded")) {
		c->folded = 1;
		return 1;
	}
	if (!strcmp(a, "--diff")) {
		c->diff = 1;
		return 1;
	}
	if (strcmp(a, "--html") && strcmp(a, "--speedscope") && strcmp(a, "--at") && strcmp(a, "--growth"))
		return 0;
	if (*i + 1 >= argc) {
		fprintf(stderr, "mgreport: %s needs a value\n", a);
		return -1;
	}
	const char *v = argv[++*i];
	if (!strcmp(a, "--html"))
		c->html = v;
	else if (!strcmp(a, "--speedscope"))
		c->speedscope = v;
	else if (parse_weight(c, a, v) < 0)
		return -1;
	return 1;
}

/* Which outputs go together: one on stdout (text, --json, --folded or the diff), any files. */
static int check_outputs(const struct mgr_ctx *c)
{
	const char *why = NULL;
	if (c->folded && c->json)
		why = "--folded and --json both print to stdout: choose one";
	else if (c->weight_given && !c->folded && !c->speedscope)
		why = "--at and --growth weigh the stacks of --folded and --speedscope: give one of them";
	else if (c->series_csv && (c->folded || c->speedscope || c->diff))
		why = "a CSV of series has no allocation sites: --folded, --speedscope and --diff need traces";
	else if (c->diff && (c->html || c->folded || c->speedscope))
		why = "--diff prints its own report (text or --json): not with --html, --folded or --speedscope";
	else if (c->diff && c->nfiles != 2)
		why = "--diff compares two traces: mgreport --diff BEFORE.mgt AFTER.mgt";
	if (!why)
		return 0;
	fprintf(stderr, "mgreport: %s\n", why);
	return -1;
}

/* One of --series, --top, --limit, --fail-on and its value v; -1 (said why) when v is bad. */
static int parse_valued(struct mgr_ctx *c, const char *a, const char *v)
{
	if (!strcmp(a, "--series")) {
		c->series_csv = v;
	} else if (!strcmp(a, "--top")) {
		char *end;
		errno = 0;
		long n = strtol(v, &end, 10);
		if (*v == 0 || *end || errno || n < 0 || n > 1000000) {
			fprintf(stderr, "mgreport: --top: expected a whole number >= 0, got '%s'\n", v);
			return -1;
		}
		c->opt.top = (size_t)n;
		c->top_given = 1;
	} else if (!strcmp(a, "--limit")) {
		if (parse_size(v, &c->opt.limit) < 0) {
			fprintf(stderr, "mgreport: --limit: expected a size like 32G or 512M, got '%s'\n", v);
			return -1;
		}
	} else if (!strcmp(v, "leak")) {
		c->fail_leak = 1;
	} else if (!strcmp(v, "growing")) {
		c->fail_leak = c->fail_growing = 1;
	} else {
		fprintf(stderr, "mgreport: --fail-on: expected 'leak' or 'growing', got '%s'\n", v);
		return -1;
	}
	return 0;
}

static int parse_args(int argc, char **argv, struct mgr_ctx *c)
{
	c->opt.top = 20;
	c->weight.at = c->weight.from = c->weight.to = NAN;
	c->color = isatty(1);
	c->files = calloc((size_t)argc, sizeof *c->files);
	if (!c->files)
		return -1;
	int only_files = 0;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (only_files || a[0] != '-' || !strcmp(a, "-")) {
			c->files[c->nfiles++] = a;
			continue;
		}
		if (!strcmp(a, "--")) {
			only_files = 1;
		} else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			usage(stdout);
			exit(0);
		} else if (!strcmp(a, "--version")) {
			printf("mgreport %s\n", MG_VERSION);
			exit(0);
		} else if (!strcmp(a, "--json")) {
			c->json = 1;
		} else if (!strcmp(a, "--color")) {
			c->color = 1;
		} else if (!strcmp(a, "--no-color")) {
			c->color = 0;
		} else if (!strcmp(a, "--no-children")) {
			c->no_children = 1;
		} else if (!strcmp(a, "--series") || !strcmp(a, "--top") || !strcmp(a, "--limit") ||
			   !strcmp(a, "--fail-on")) {
			if (i + 1 >= argc) {
				fprintf(stderr, "mgreport: %s needs a value\n", a);
				return -1;
			}
			if (parse_valued(c, a, argv[++i]) < 0)
				return -1;
		} else {
			int r = parse_output_option(c, argc, argv, &i);
			if (r < 0)
				return -1;
			if (r == 0) {
				fprintf(stderr, "mgreport: unknown option '%s' (try 'mgreport --help')\n", a);
				return -1;
			}
		}
	}
	if (check_outputs(c) < 0)
		return -1;
	if (c->series_csv && c->nfiles) {
		fprintf(stderr, "mgreport: give either trace files or --series FILE.csv, not both\n");
		return -1;
	}
	if (!c->series_csv && !c->nfiles) {
		fprintf(stderr, "mgreport: no trace file given (try 'mgreport --help')\n");
		return -1;
	}
	return 0;
}

static int verdict_fails(const struct mgr_ctx *c, enum mgc_verdict v)
{
	return (c->fail_leak && v == MGC_VERDICT_LEAK) || (c->fail_growing && v == MGC_VERDICT_GROWING);
}

static int gate(const struct mgr_ctx *c, const struct mgr_process *procs, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const struct mgr_process *p = &procs[i];
		if (p->a.have_verdict && verdict_fails(c, p->a.verdict.verdict))
			return 3;
		for (size_t k = 0; k < p->a.nseries; k++)
			if (p->a.series[k].classified && verdict_fails(c, p->a.series[k].fit.verdict))
				return 3;
		for (size_t k = 0; k < p->nshown; k++)
			if (p->a.sites[k].classified && verdict_fails(c, p->a.sites[k].fit.verdict))
				return 3;
	}
	return 0;
}

struct writer {
	const struct mgr_ctx *c;
	struct mgr_process *procs;
	size_t n;
	struct mgc_symbolizer *sym;
};

/* Writes a file through fn; 0, or 1 after one line on stderr. */
static int write_file(const char *path, int (*fn)(FILE *, const struct writer *), const struct writer *w)
{
	FILE *f = fopen(path, "w");
	if (!f) {
		fprintf(stderr, "mgreport: cannot write %s: %s\n", path, strerror(errno));
		return 1;
	}
	int rc = fn(f, w);
	if (rc == -ERANGE) {
		fclose(f);
		unlink(path);
		return 2;
	}
	int bad = rc < 0 || ferror(f);
	int err = rc < 0 ? -rc : errno;
	if (fclose(f) != 0 && !bad) {
		bad = 1;
		err = errno;
	}
	if (bad) {
		fprintf(stderr, "mgreport: cannot write %s: %s\n", path, strerror(err));
		unlink(path);
		return 1;
	}
	return 0;
}

static int html_writer(FILE *f, const struct writer *w)
{
	return mgr_html_write(f, w->procs, w->n, w->sym);
}

/* The stacks of every process for --folded and --speedscope (its[i] for procs[i], opened, none
 * read yet). 0, -ERANGE after one line on stderr (a step outside a run), or -ENOMEM. */
static int open_stacks(const struct writer *w, struct mgr_stack_iter *its, struct mgr_stacks *infos)
{
	size_t max = w->c->top_given ? w->c->opt.top : MGR_EXPORT_SITES;
	for (size_t i = 0; i < w->n; i++) {
		char err[256], note[256];
		int rc = mgr_stack_iter_open(&its[i], &w->procs[i], w->sym, &w->c->weight, max, w->n > 1,
					     &infos[i], err, sizeof err, note, sizeof note);
		if (rc == -ERANGE)
			fprintf(stderr, "mgreport: %s\n", err);
		if (rc < 0)
			return rc;
		if (note[0])
			fprintf(stderr, "mgreport: %s\n", note);
		char b[32];
		if (infos[i].negative < 0)
			fprintf(stderr, "mgreport: pid %d: sites that shrank (%s in all) are left out of the growth "
					"stacks\n", w->procs[i].t->proc.pid, mgc_human_bytes(-infos[i].negative, b, sizeof b));
	}
	return 0;
}

/* --speedscope: every process's profile, named by its process. */
static int speedscope_from(FILE *f, const struct writer *w, struct mgr_stack_iter *its, const struct mgr_stacks *infos)
{
	const char **names = calloc(w->n ? w->n : 1, sizeof *names);
	char (*labels)[512] = calloc(w->n ? w->n : 1, sizeof *labels);
	int rc = names && labels ? 0 : -ENOMEM;
	for (size_t i = 0; rc == 0 && i < w->n; i++)
		names[i] = mgr_process_label(&w->procs[i], labels[i], sizeof labels[i]);
	if (rc == 0)
		rc = mgr_speedscope_write(f, w->procs[0].origin, its, infos, names, w->n);
	free(names);
	free(labels);
	return rc;
}

/* --folded or --speedscope (to f), each stack read once and dropped. */
static int stacks_writer(FILE *f, const struct writer *w, int speedscope)
{
	struct mgr_stack_iter *its = calloc(w->n ? w->n : 1, sizeof *its);
	struct mgr_stacks *infos = calloc(w->n ? w->n : 1, sizeof *infos);
	int rc = its && infos ? open_stacks(w, its, infos) : -ENOMEM;
	if (rc == 0 && speedscope)
		rc = speedscope_from(f, w, its, infos);
	else if (rc == 0)
		rc = mgr_folded_write(f, its, w->n);
	for (size_t i = 0; its && i < w->n; i++)
		mgr_stack_iter_close(&its[i]);
	free(its);
	free(infos);
	return rc;
}

static int speedscope_writer(FILE *f, const struct writer *w)
{
	return stacks_writer(f, w, 1);
}

/* Every output asked for: the files, then stdout (text unless a file or --json/--folded was
 * asked for), then the --fail-on gate. */
static int emit(const struct mgr_ctx *c, struct mgr_process *procs, size_t n, struct mgc_symbolizer *sym)
{
	struct writer w = {c, procs, n, sym};
	int rc = 0;
	if (c->html && (rc = write_file(c->html, html_writer, &w)) == 0)
		fprintf(stderr, "mgreport: HTML report written to %s\n", c->html);
	if (rc == 0 && c->speedscope && (rc = write_file(c->speedscope, speedscope_writer, &w)) == 0)
		fprintf(stderr, "mgreport: speedscope profile written to %s\n", c->speedscope);
	if (rc == 0 && c->folded) {
		int r = stacks_writer(stdout, &w, 0);
		rc = r == -ERANGE ? 2 : r < 0 ? 1 : 0;
		if (r == -ENOMEM)
			fprintf(stderr, "mgreport: out of memory\n");
	} else if (rc == 0 && (c->json || (!c->html && !c->speedscope))) {
		int r = c->json ? mgr_print_json(stdout, procs, n) : mgr_print_text(stdout, procs, n, c->color);
		rc = r < 0 ? 1 : 0;
		if (r < 0)
			fprintf(stderr, "mgreport: out of memory\n");
	}
	return rc ? rc : gate(c, procs, n);
}

static int emit_diff(const struct mgr_ctx *c, struct mgr_process *procs, struct mgc_symbolizer *sym)
{
	struct mgr_diff *d;
	size_t top = c->print_top;
	if (mgr_diff_build(&procs[0], &procs[1], sym, &d) < 0) {
		fprintf(stderr, "mgreport: out of memory\n");
		return 1;
	}
	int rc = 0;
	if (c->json)
		rc = mgr_diff_print_json(stdout, d, top) < 0 ? 1 : 0;
	else
		mgr_diff_print_text(stdout, d, top);
	if (rc == 0 && (c->fail_leak || c->fail_growing) && mgr_diff_new_leak(d, c->fail_growing))
		rc = 3;
	mgr_diff_free(d);
	return rc;
}

static int run_series(struct mgr_ctx *c)
{
	struct mgc_csv csv;
	char err[512];
	memset(&csv, 0, sizeof csv);
	if (mgc_csv_load(c->series_csv, &csv, err, sizeof err) < 0) {
		fprintf(stderr, "mgreport: %s\n", err);
		mgc_csv_free(&csv);
		return 1;
	}
	const char **names = calloc(csv.nseries, sizeof *names);
	const double **ys = calloc(csv.nseries, sizeof *ys);
	struct mgr_process p;
	int rc = 1;
	if (!names || !ys)
		goto out;
	for (size_t i = 0; i < csv.nseries; i++) {
		names[i] = csv.series[i].name;
		ys[i] = csv.series[i].y;
	}
	c->opt.epochs = csv.has_epochs ? csv.epochs : NULL;
	c->opt.nepochs = csv.nepochs;
	if (mgr_analyze_series(c->series_csv, csv.x, csv.nrows, csv.x_is_steps, names, ys, csv.nseries,
			       &c->opt, &p) < 0) {
		fprintf(stderr, "mgreport: out of memory\n");
		mgr_process_free(&p);
		goto out;
	}
	rc = emit(c, &p, 1, NULL);
	mgr_process_free(&p);
out:
	free(names);
	free(ys);
	mgc_csv_free(&csv);
	return rc;
}

/* Finds the trace files of `t`'s forked children beside `path`: the probe names them
 * "<stem>.<comm>.<pid>.mgt" (or "mgprobe.<comm>.<pid>.mgt" without -o), a ".<n>" before ".mgt"
 * when the name was taken. Appends new paths to *list (owned strings). */
static int find_children(const char *path, const struct mgc_trace *t, char ***list, size_t *n,
			 size_t *cap)
{
	if (!t->nchildren || strcmp(path, "-") == 0) /* a stream has no directory to look in */
		return 0;
	char dir[4096];
	snprintf(dir, sizeof dir, "%s", path);
	char *slash = strrchr(dir, '/');
	const char *base = slash ? slash + 1 : dir;
	char stem[4096];
	snprintf(stem, sizeof stem, "%s", base);
	size_t sl = strlen(stem);
	if (sl > 4 && strcmp(stem + sl - 4, ".mgt") == 0)
		stem[sl - 4] = 0;
	if (slash)
		*slash = 0;
	DIR *d = opendir(slash ? (dir[0] ? dir : "/") : ".");
	if (!d)
		return 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		const char *nm = e->d_name;
		size_t len = strlen(nm);
		if (len < 5 || strcmp(nm + len - 4, ".mgt") != 0)
			continue;
		if (strncmp(nm, stem, strlen(stem)) != 0 && strncmp(nm, "mgprobe.", 8) != 0)
			continue;
		for (size_t k = 0; k < t->nchildren; k++) {
			char a[32], b[32];
			snprintf(a, sizeof a, ".%d.mgt", t->children[k].pid);
			snprintf(b, sizeof b, ".%d.", t->children[k].pid);
			if (!(len > strlen(a) && strcmp(nm + len - strlen(a), a) == 0) && !strstr(nm, b))
				continue;
			char full[8192];
			snprintf(full, sizeof full, "%s%s%s", slash ? (dir[0] ? dir : "") : "", slash ? "/" : "", nm);
			int dup = 0;
			for (size_t j = 0; j < *n && !dup; j++)
				dup = strcmp((*list)[j], full) == 0;
			if (dup)
				break;
			if (*n == *cap) {
				size_t ncap = *cap * 2 + 4;
				char **nl = realloc(*list, ncap * sizeof *nl);
				if (!nl) {
					closedir(d);
					return -ENOMEM;
				}
				*list = nl;
				*cap = ncap;
			}
			(*list)[(*n)++] = strdup(full);
			break;
		}
	}
	closedir(d);
	return 0;
}

static int run_traces(struct mgr_ctx *c)
{
	size_t nfiles = c->nfiles, fcap = c->nfiles + 4;
	char **files = calloc(fcap, sizeof *files);
	struct mgc_trace **traces = NULL;
	struct mgr_process *procs = NULL;
	struct mgc_symbolizer *sym = mgc_symbolizer_new();
	int rc = 0;
	size_t loaded = 0;
	if (!files || !sym) {
		fprintf(stderr, "mgreport: out of memory\n");
		rc = 1;
		goto out;
	}
	for (size_t i = 0; i < nfiles; i++)
		files[i] = strdup(c->files[i]);
	/* Load the given traces and, unless --no-children, those of their forked children (which
	 * may add grandchildren: the list grows while it is walked). */
	for (size_t i = 0; i < nfiles; i++) {
		char err[512];
		struct mgc_trace **nt = realloc(traces, (i + 1) * sizeof *nt);
		if (!nt) {
			fprintf(stderr, "mgreport: out of memory\n");
			rc = 1;
			goto out;
		}
		traces = nt;
		if (mgc_trace_load(files[i], &traces[loaded], err, sizeof err) < 0) {
			fprintf(stderr, "mgreport: %s\n", err);
			rc = 1;
			goto out;
		}
		if (traces[loaded]->truncated)
			fprintf(stderr, "mgreport: %s: the trace ends in a cut or damaged record after byte %llu; "
					"reporting what was written before it\n",
				files[i], (unsigned long long)traces[loaded]->bytes_ok);
		loaded++;
		if (!c->no_children && find_children(files[i], traces[loaded - 1], &files, &nfiles, &fcap) < 0) {
			fprintf(stderr, "mgreport: out of memory\n");
			rc = 1;
			goto out;
		}
	}
	procs = calloc(loaded ? loaded : 1, sizeof *procs);
	if (!procs) {
		fprintf(stderr, "mgreport: out of memory\n");
		rc = 1;
		goto out;
	}
	for (size_t i = 0; i < loaded; i++) {
		if (mgr_analyze_trace(traces[i], &c->opt, sym, &procs[i]) < 0) {
			fprintf(stderr, "mgreport: out of memory\n");
			rc = 1;
			goto out;
		}
	}
	rc = c->diff ? emit_diff(c, procs, sym) : emit(c, procs, loaded, sym);
out:
	for (size_t i = 0; procs && i < loaded; i++)
		mgr_process_free(&procs[i]);
	for (size_t i = 0; traces && i < loaded; i++)
		mgc_trace_free(traces[i]);
	for (size_t i = 0; files && i < nfiles; i++)
		free(files[i]);
	free(files);
	free(traces);
	free(procs);
	mgc_symbolizer_free(sym);
	return rc;
}

/* How many sites the analysis ranks (classifies and symbolizes): the HTML table shows 50 unless
 * --top says otherwise; a diff judges at least MGR_DIFF_RANKED of each run, whatever it prints. */
static void ranking(struct mgr_ctx *c)
{
	c->print_top = c->opt.top;
	if (c->html && !c->top_given)
		c->opt.top = MGR_HTML_TABLE_SITES;
	if (c->diff) {
		c->no_children = 1;
		if (c->opt.top == 0 || c->opt.top < MGR_DIFF_RANKED)
			c->opt.top = MGR_DIFF_RANKED;
	}
}

int main(int argc, char **argv)
{
	struct mgr_ctx c;
	memset(&c, 0, sizeof c);
	if (parse_args(argc, argv, &c) < 0) {
		free(c.files);
		return 2;
	}
	ranking(&c);
	int rc = c.series_csv ? run_series(&c) : run_traces(&c);
	free(c.files);
	if (fflush(stdout) != 0 || ferror(stdout)) {
		fprintf(stderr, "mgreport: cannot write the report: %s\n", strerror(errno));
		return 1;
	}
	return rc;
}
