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
#include "mgr_analyze.h"
#include "mgr_output.h"

struct mgr_ctx {
	int json;
	int color;
	int fail_leak, fail_growing;
	int no_children;
	const char *series_csv;
	struct mgr_options opt;
	const char **files;
	size_t nfiles;
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: mgreport [options] FILE.mgt [FILE.mgt...]\n"
		"       mgreport [options] --series FILE.csv\n"
		"\n"
		"Reports what a traced run's memory did: which memory grew, where (allocation sites\n"
		"with their call stacks), and what kind of growth it is: stable, plateau (warmup),\n"
		"leak, growing (cannot tell yet) or retention (freed memory kept by the allocator).\n"
		"\n"
		"options:\n"
		"  --json               machine-readable output (docs/report-json.md)\n"
		"  --series FILE.csv    classify external series: first column steps or seconds,\n"
		"                       each further column bytes (or _kb/_mb/_gb in its name);\n"
		"                       a column named epoch gives each row's training epoch\n"
		"  --top N              sites to report (default 20; 0 = all)\n"
		"  --limit SIZE         memory limit for time-to-OOM (e.g. 32G, 512M; default: the\n"
		"                       trace's cgroup limit, else available memory at start)\n"
		"  --fail-on leak|growing  exit 3 when such a verdict is found (growing includes leak)\n"
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

static int parse_args(int argc, char **argv, struct mgr_ctx *c)
{
	c->opt.top = 20;
	c->opt.symbolize = 1;
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
			const char *v = argv[++i];
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
			} else if (!strcmp(a, "--limit")) {
				if (parse_size(v, &c->opt.limit) < 0) {
					fprintf(stderr, "mgreport: --limit: expected a size like 32G or 512M, got '%s'\n", v);
					return -1;
				}
			} else {
				if (!strcmp(v, "leak"))
					c->fail_leak = 1;
				else if (!strcmp(v, "growing"))
					c->fail_leak = c->fail_growing = 1;
				else {
					fprintf(stderr, "mgreport: --fail-on: expected 'leak' or 'growing', got '%s'\n", v);
					return -1;
				}
			}
		} else {
			fprintf(stderr, "mgreport: unknown option '%s' (try 'mgreport --help')\n", a);
			return -1;
		}
	}
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
		if (p->have_verdict && verdict_fails(c, p->verdict.verdict))
			return 3;
		for (size_t k = 0; k < p->nseries; k++)
			if (p->series[k].ok && verdict_fails(c, p->series[k].fit.verdict))
				return 3;
		for (size_t k = 0; k < p->nsites; k++)
			if (p->sites[k].classified && verdict_fails(c, p->sites[k].fit.verdict))
				return 3;
	}
	return 0;
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
	if (c->json)
		mgr_print_json(stdout, &p, 1);
	else
		mgr_print_text(stdout, &p, 1, c->color);
	rc = gate(c, &p, 1);
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
	if (!t->nchildren)
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
	if (c->json)
		rc = mgr_print_json(stdout, procs, loaded) < 0 ? 1 : 0;
	else
		mgr_print_text(stdout, procs, loaded, c->color);
	if (rc == 0)
		rc = gate(c, procs, loaded);
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

int main(int argc, char **argv)
{
	struct mgr_ctx c;
	memset(&c, 0, sizeof c);
	if (parse_args(argc, argv, &c) < 0) {
		free(c.files);
		return 2;
	}
	int rc = c.series_csv ? run_series(&c) : run_traces(&c);
	free(c.files);
	if (fflush(stdout) != 0 || ferror(stdout)) {
		fprintf(stderr, "mgreport: cannot write the report: %s\n", strerror(errno));
		return 1;
	}
	return rc;
}
