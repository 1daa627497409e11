/* SPDX-License-Identifier: MIT */
/* mgprobe_main.c: the `mgprobe` launcher: `mgprobe run [options] -- CMD...` runs CMD with
 * libmgprobe.so preloaded and the settings passed as MGPROBE_* variables, returns CMD's exit
 * status unchanged, and says where the traces went. It never touches CMD's stdio. */
#define _GNU_SOURCE
#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <zstd.h>

#include "mg_config.h"
#include "mgc_format.h"
#include "mgp_settings.h"

#ifndef MGP_LIBDIR_REL
#define MGP_LIBDIR_REL "../lib"
#endif
#ifndef MGP_LIBDIR_ABS
#define MGP_LIBDIR_ABS "/usr/local/lib"
#endif

/* The table entry of an MGPROBE_* variable the launcher sets (always in the table). */
static const struct mgp_setting *setting(const char *name)
{
	size_t i = 0;
	while (i + 1 < MGP_SETTINGS_COUNT && strcmp(mgp_setting_table[i].name, name) != 0)
		i++;
	return &mgp_setting_table[i];
}

static void usage(FILE *f)
{
	const struct mgp_setting *iv = setting("MGPROBE_INTERVAL"), *dp = setting("MGPROBE_DEPTH");
	fprintf(f,
		"usage: mgprobe run [options] -- CMD [ARGS...]\n"
		"       mgprobe --help | --version\n"
		"\n"
		"Runs CMD under the mg allocation probe and writes a trace (*.mgt) of its memory:\n"
		"every heap and anonymous-mmap allocation with its call stack, per site and per step.\n"
		"Read it with `mgreport FILE.mgt`.\n"
		"\n"
		"options:\n"
		"  -o, --output FILE   trace file (default: ./mgprobe.<comm>.<pid>.mgt); child\n"
		"                      processes write FILE-without-.mgt.<comm>.<pid>.mgt\n"
		"  --interval MS       %s (default %u)\n"
		"  --depth N           %s, %u..%u (default %u; twice that in Python\n"
		"                      programs, where Python frames replace the interpreter's)\n"
		"  --no-children       do not trace forked or exec'd child processes\n"
		"  --no-cuda           do not trace CUDA memory (by default the CUDA driver loads the\n"
		"                      probe through CUDA_INJECTION64_PATH unless that is already set)\n"
		"  --no-python         stacks of Python programs show the interpreter's native frames\n"
		"                      instead of Python's (function, file, line)\n"
		"  --python-objects    charge Python's small objects to the lines that make them\n"
		"                      (PYTHONMALLOC=malloc) instead of to pymalloc's 1 MiB arenas\n"
		"  --sample BYTES      record one allocation per BYTES allocated on average (e.g.\n"
		"                      512K; K, M, G are KiB, MiB, GiB): sites show estimates with a\n"
		"                      +- band; allocations of 4 x BYTES and mappings always recorded\n"
		"  -h, --help          this help\n"
		"  --version           print the version\n"
		"\n"
		"The same settings work with plain LD_PRELOAD=libmgprobe.so, through these variables:\n",
		iv->help, iv->def, dp->help, dp->lo, dp->hi, dp->def);
	for (size_t i = 0; i < MGP_SETTINGS_COUNT; i++) {
		const struct mgp_setting *t = &mgp_setting_table[i];
		fprintf(f, "  %-20s %s", t->name, t->help);
		if (t->kind == MGP_SETTING_NUMBER)
			fprintf(f, ", %u..%u (default %u)", t->lo, t->hi, t->def);
		fputc('\n', f);
	}
	fprintf(f, "Exit status: CMD's own (128+N if it died of signal N); 125 on mgprobe's own "
		"errors.\n");
}

static int file_exists(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

/* Finds libmgprobe.so: $MGPROBE_LIB, beside this executable (build tree), then the install libdir. */
static int find_lib(char *out, size_t cap)
{
	const char *env = getenv("MGPROBE_LIB");
	if (env && *env) {
		if (!file_exists(env)) {
			fprintf(stderr, "mgprobe: MGPROBE_LIB=%s: no such file\n", env);
			return -1;
		}
		if (!realpath(env, out))
			return -1;
		return 0;
	}
	char exe[PATH_MAX], cand[2 * PATH_MAX], dir[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	if (n > 0) {
		exe[n] = 0;
		snprintf(dir, sizeof dir, "%s", exe);
		char *slash = strrchr(dir, '/');
		if (slash)
			*slash = 0;
		const char *tries[] = {"libmgprobe.so", MGP_LIBDIR_REL "/libmgprobe.so"};
		for (unsigned i = 0; i < 2; i++) {
			snprintf(cand, sizeof cand, "%s/%s", dir, tries[i]);
			if (file_exists(cand) && realpath(cand, out) && strlen(out) < cap)
				return 0;
		}
	}
	snprintf(cand, sizeof cand, "%s/libmgprobe.so", MGP_LIBDIR_ABS);
	if (file_exists(cand) && strlen(cand) < cap) {
		memcpy(out, cand, strlen(cand) + 1);
		return 0;
	}
	fprintf(stderr, "mgprobe: cannot find libmgprobe.so (looked beside %s and in %s); set MGPROBE_LIB\n",
		n > 0 ? exe : "mgprobe", MGP_LIBDIR_ABS);
	return -1;
}

/* The file execvp would run for cmd: itself when it has a '/', else the first executable in PATH.
 * 0, or -1 when there is none (execvp will say why). */
static int find_program(const char *cmd, char *out, size_t cap)
{
	if (strchr(cmd, '/'))
		return snprintf(out, cap, "%s", cmd) < (int)cap ? 0 : -1;
	const char *path = getenv("PATH");
	for (const char *p = path ? path : "/usr/local/bin:/usr/bin:/bin"; *p;) {
		size_t n = strcspn(p, ":");
		if (snprintf(out, cap, "%.*s/%s", (int)n, n ? p : ".", cmd) < (int)cap &&
		    file_exists(out) && access(out, X_OK) == 0)
			return 0;
		p += n + (p[n] == ':');
	}
	return -1;
}

/* 1 when the file is a 64-bit ELF program without a PT_INTERP header: statically linked, so no
 * dynamic loader will ever read LD_PRELOAD for it. 0 otherwise (dynamic, a script, unreadable). */
static int statically_linked(const char *file)
{
	Elf64_Ehdr eh;
	Elf64_Phdr ph;
	int fd = open(file, O_RDONLY | O_CLOEXEC), interp = 0;
	if (fd < 0)
		return 0;
	int elf = pread(fd, &eh, sizeof eh, 0) == sizeof eh && !memcmp(eh.e_ident, ELFMAG, SELFMAG) &&
		  eh.e_ident[EI_CLASS] == ELFCLASS64 && eh.e_phentsize == sizeof ph &&
		  (eh.e_type == ET_EXEC || eh.e_type == ET_DYN);
	for (unsigned i = 0; elf && i < eh.e_phnum; i++) {
		if (pread(fd, &ph, sizeof ph, (off_t)(eh.e_phoff + (uint64_t)i * sizeof ph)) != sizeof ph)
			elf = 0;
		else if (ph.p_type == PT_INTERP)
			interp = 1;
	}
	close(fd);
	return elf && !interp;
}

static int parse_uint(const char *opt, const char *s, unsigned long lo, unsigned long hi,
		      unsigned long *out)
{
	char *end;
	errno = 0;
	unsigned long v = strtoul(s, &end, 10);
	if (!*s || *end || errno || v < lo || v > hi || s[0] == '-') {
		fprintf(stderr, "mgprobe: %s: expected a whole number from %lu to %lu, got '%s'\n", opt, lo,
			hi, s);
		return -1;
	}
	*out = v;
	return 0;
}

/* A byte count with an optional IEC suffix (K, M, G: KiB, MiB, GiB) within lo..hi. 0, or -1 after
 * one line. */
static int parse_bytes(const char *opt, const char *s, unsigned long lo, unsigned long hi,
		       unsigned long *out)
{
	char *end;
	errno = 0;
	unsigned long v = strtoul(s, &end, 10);
	unsigned shift = !*end ? 0 : !strcmp(end, "K") ? 10 : !strcmp(end, "M") ? 20 : !strcmp(end, "G") ? 30 : 99;
	if (end == s || errno || s[0] == '-' || shift == 99 || v > (hi >> shift) || (v << shift) < lo) {
		fprintf(stderr, "mgprobe: %s: expected bytes from %lu to %lu (K, M, G suffixes allowed), "
			"got '%s'\n", opt, lo, hi, s);
		return -1;
	}
	*out = v << shift;
	return 0;
}

/* A file that may be one of this run's traces, as its PROCESS record names it. */
struct trace_id {
	char *path;
	int pid, ppid;
	uint64_t start_ns; /* CLOCK_REALTIME */
	int mine;
};

/* Reads the PROCESS record at the start of path: only from a regular file of our own user, opened
 * without following a symlink or waiting on a FIFO (anyone can plant files in a shared directory).
 * 0, or -1 when it is not such a trace. */
/* The record header and PROCESS record that follow a file header: read plainly (version 2), or
 * decompressed from the start of the zstd stream (version 3 with MGC_FILE_ZSTD). 0 or -1. */
static int read_head(int fd, const struct mgc_file_header3 *fh, void *out, size_t len)
{
	if (fh->h.header_size == sizeof fh->h)
		return pread(fd, out, len, sizeof fh->h) == (ssize_t)len ? 0 : -1;
	if (fh->h.header_size != sizeof *fh)
		return -1;
	if (!(fh->flags & MGC_FILE_ZSTD))
		return pread(fd, out, len, sizeof *fh) == (ssize_t)len ? 0 : -1;
	char in[4096];
	ssize_t got = pread(fd, in, sizeof in, sizeof *fh);
	ZSTD_DStream *z = got > 0 ? ZSTD_createDStream() : NULL;
	if (!z)
		return -1;
	ZSTD_inBuffer zi = {in, (size_t)got, 0};
	ZSTD_outBuffer zo = {out, len, 0};
	while (zo.pos < len && zi.pos < zi.size && !ZSTD_isError(ZSTD_decompressStream(z, &zo, &zi)))
		;
	ZSTD_freeDStream(z);
	return zo.pos == len ? 0 : -1;
}

static int read_trace_id(const char *path, struct trace_id *id)
{
	struct mgc_file_header3 fh = {0};
	struct {
		struct mgc_rec rh;
		struct mgc_rec_process pr;
	} head;
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return -1;
	int ok = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid() &&
		 pread(fd, &fh, sizeof fh.h, 0) == (ssize_t)sizeof fh.h &&
		 memcmp(fh.h.magic, MGC_TRACE_MAGIC, 8) == 0 &&
		 (fh.h.header_size == sizeof fh.h ||
		  pread(fd, &fh, sizeof fh, 0) == (ssize_t)sizeof fh) &&
		 read_head(fd, &fh, &head, sizeof head) == 0 && head.rh.type == MGC_REC_PROCESS &&
		 head.rh.len >= sizeof head.pr;
	close(fd);
	if (!ok)
		return -1;
	id->pid = head.pr.pid;
	id->ppid = head.pr.ppid;
	id->start_ns = head.pr.start_realtime_ns;
	id->mine = 0;
	return 0;
}

/* Marks the traces of root_pid's process tree started since t0_ns: the root's own (an exec keeps
 * its pid), then, until nothing changes, every trace whose pid or parent is a marked trace's
 * pid. */
static void mark_tree(struct trace_id *ids, size_t n, int root_pid, uint64_t t0_ns)
{
	for (int changed = 1; changed;) {
		changed = 0;
		for (size_t i = 0; i < n; i++) {
			if (ids[i].mine || ids[i].start_ns < t0_ns)
				continue;
			int in = ids[i].pid == root_pid;
			for (size_t j = 0; j < n && !in; j++)
				in = ids[j].mine && (ids[i].pid == ids[j].pid || ids[i].ppid == ids[j].pid);
			if (in)
				ids[i].mine = changed = 1;
		}
	}
}

static int by_start(const void *a, const void *b)
{
	const struct trace_id *x = a, *y = b;
	return x->start_ns < y->start_ns ? -1 : x->start_ns > y->start_ns;
}

/* The traces in dir named `prefix`*.mgt, each with its PROCESS record; *n of them. */
static struct trace_id *find_traces(const char *dir, const char *prefix, size_t *n)
{
	struct trace_id *ids = NULL;
	size_t cap = 0, pl = strlen(prefix);
	*n = 0;
	DIR *d = opendir(dir);
	if (!d)
		return NULL;
	struct dirent *e;
	while ((e = readdir(d))) {
		size_t len = strlen(e->d_name);
		if (strncmp(e->d_name, prefix, pl) != 0 || len < 4 ||
		    strcmp(e->d_name + len - 4, ".mgt") != 0)
			continue;
		struct trace_id id;
		if (asprintf(&id.path, "%s/%s", dir, e->d_name) < 0)
			break;
		if (read_trace_id(id.path, &id) < 0) {
			free(id.path);
			continue;
		}
		if (*n == cap) {
			struct trace_id *more = reallocarray(ids, cap ? 2 * cap : 64, sizeof *ids);
			if (!more) {
				free(id.path);
				break;
			}
			ids = more;
			cap = cap ? 2 * cap : 64;
		}
		ids[(*n)++] = id;
	}
	closedir(d);
	return ids;
}

#define MAX_LISTED 32

/* Says where this run's traces went: the -o file (root), then, oldest first and at most
 * MAX_LISTED lines, the other traces in dir/prefix*.mgt of the launched process's tree (root_pid,
 * started since t0_ns): never another run's, nor a file planted there. */
static void report_traces(const char *dir, const char *prefix, const char *root, int root_pid,
			  uint64_t t0_ns)
{
	struct stat st;
	if (root && lstat(root, &st) == 0 && S_ISREG(st.st_mode))
		fprintf(stderr, "mgprobe: trace written to %s\n", root);
	size_t n, listed = 0;
	struct trace_id *ids = find_traces(dir, prefix, &n);
	if (!ids)
		return;
	mark_tree(ids, n, root_pid, t0_ns);
	qsort(ids, n, sizeof *ids, by_start);
	for (size_t i = 0; i < n; i++) {
		if (ids[i].mine && !(root && strcmp(ids[i].path, root) == 0) && listed++ < MAX_LISTED)
			fprintf(stderr, "mgprobe: %s written to %s\n", root ? "child trace" : "trace",
				ids[i].path);
		free(ids[i].path);
	}
	if (listed > MAX_LISTED)
		fprintf(stderr, "mgprobe: and %zu more traces of this run in %s\n", listed - MAX_LISTED,
			dir);
	free(ids);
}

/* What `mgprobe run` was asked. */
struct run_opts {
	const char *output;           /* -o, or NULL */
	unsigned long interval, depth; /* 0: the probe's default */
	unsigned long sample;         /* --sample: bytes, 0: every allocation */
	int no_children, no_cuda, no_python, py_objects;
	int cmd;                      /* argv index of CMD */
};

/* Parses run's options (argv[2] on). 0 with o filled; otherwise the exit status to return (0
 * after --help, 2 after one line on a usage error). */
static int parse_run(int argc, char **argv, struct run_opts *o)
{
	int i;
	for (i = 2; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "--")) {
			i++;
			break;
		}
		if (a[0] != '-')
			break;
		if (!strcmp(a, "-o") || !strcmp(a, "--output")) {
			if (++i >= argc) {
				fprintf(stderr, "mgprobe: %s needs a file name\n", a);
				return 2;
			}
			o->output = argv[i];
		} else if (!strncmp(a, "--output=", 9)) {
			o->output = a + 9;
		} else if (!strcmp(a, "--interval") || !strcmp(a, "--depth")) {
			if (++i >= argc) {
				fprintf(stderr, "mgprobe: %s needs a number\n", a);
				return 2;
			}
			int iv = !strcmp(a, "--interval");
			const struct mgp_setting *t = setting(iv ? "MGPROBE_INTERVAL" : "MGPROBE_DEPTH");
			if (parse_uint(a, argv[i], t->lo, t->hi, iv ? &o->interval : &o->depth))
				return 2;
		} else if (!strcmp(a, "--sample")) {
			const struct mgp_setting *t = setting("MGPROBE_SAMPLE");
			if (++i >= argc) {
				fprintf(stderr, "mgprobe: %s needs a number of bytes\n", a);
				return 2;
			}
			if (parse_bytes(a, argv[i], 1, t->hi, &o->sample))
				return 2;
		} else if (!strcmp(a, "--no-children")) {
			o->no_children = 1;
		} else if (!strcmp(a, "--no-cuda")) {
			o->no_cuda = 1;
		} else if (!strcmp(a, "--no-python")) {
			o->no_python = 1;
		} else if (!strcmp(a, "--python-objects")) {
			o->py_objects = 1;
		} else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			usage(stdout);
			return 0;
		} else {
			fprintf(stderr, "mgprobe: unknown option '%s' (try 'mgprobe --help')\n", a);
			return 2;
		}
	}
	if (i >= argc) {
		fprintf(stderr, "mgprobe: no command to run (usage: mgprobe run [options] -- CMD [ARGS...])\n");
		return 2;
	}
	o->cmd = i;
	return 0;
}

/* Where this run's traces go. With -o: MGPROBE_OUTPUT, the absolute FILE.mgt in outabs (the
 * launched process claims it), its directory and the children's name prefix; else MGPROBE_DIR,
 * the working directory, and "mgprobe.". 0, or the exit status after one line. */
static int set_output(const char *output, const char *cmd, char *outabs, char *outdir, char *prefix)
{
	char cwd[PATH_MAX];
	if (!getcwd(cwd, sizeof cwd)) {
		fprintf(stderr, "mgprobe: cannot read the working directory: %s\n", strerror(errno));
		return 125;
	}
	if (!output) {
		snprintf(outdir, PATH_MAX, "%s", cwd);
		snprintf(prefix, PATH_MAX, "mgprobe.");
		setenv("MGPROBE_DIR", cwd, 1);
		unsetenv("MGPROBE_OUTPUT");
		return 0;
	}
	if (!*output) {
		fprintf(stderr, "mgprobe: empty output file name\n");
		return 2;
	}
	if (output[0] == '/')
		snprintf(outabs, PATH_MAX + 8, "%s", output);
	else
		snprintf(outabs, PATH_MAX + 8, "%s/%s", cwd, output);
	size_t n = strlen(outabs);
	if (n < 4 || strcmp(outabs + n - 4, ".mgt") != 0) {
		if (n + 4 >= PATH_MAX + 8) {
			fprintf(stderr, "mgprobe: output path too long\n");
			return 2;
		}
		strcat(outabs, ".mgt");
	}
	snprintf(outdir, PATH_MAX, "%s", outabs);
	char *slash = strrchr(outdir, '/');
	*slash = 0;
	snprintf(prefix, PATH_MAX, "%s", slash + 1);
	prefix[strlen(prefix) - 4] = '.'; /* "name.mgt" -> children "name.<comm>..." */
	prefix[strlen(prefix) - 3] = 0;
	if (access(outdir[0] ? outdir : "/", W_OK) != 0)
		fprintf(stderr, "mgprobe: warning: cannot write to %s (%s): %s will run unprofiled\n",
			outdir, strerror(errno), cmd);
	struct stat ost;
	if (lstat(outabs, &ost) == 0 && !S_ISREG(ost.st_mode)) {
		fprintf(stderr, "mgprobe: %s exists and is not a regular file: choose another -o\n", outabs);
		return 2;
	}
	unlink(outabs); /* the launched process claims the name with O_EXCL */
	setenv("MGPROBE_OUTPUT", outabs, 1);
	return 0;
}

/* The other settings, CUDA injection and the preload. 0, or 125. */
static int set_env(const struct run_opts *o, const char *lib)
{
	char num[32];
	if (o->interval) {
		snprintf(num, sizeof num, "%lu", o->interval);
		setenv("MGPROBE_INTERVAL", num, 1);
	}
	if (o->depth) {
		snprintf(num, sizeof num, "%lu", o->depth);
		setenv("MGPROBE_DEPTH", num, 1);
	}
	if (o->sample) {
		snprintf(num, sizeof num, "%lu", o->sample);
		setenv("MGPROBE_SAMPLE", num, 1);
	}
	if (o->no_children)
		setenv("MGPROBE_NO_CHILDREN", "1", 1);
	if (o->no_python)
		setenv("MGPROBE_PYTHON", "0", 1);
	if (o->py_objects)
		setenv("PYTHONMALLOC", "malloc", 1);
	/* CUDA: the driver loads the probe at cuInit; a user's own setting (even "none") wins. */
	if (MG_HAVE_CUPTI && !o->no_cuda && !getenv("CUDA_INJECTION64_PATH"))
		setenv("CUDA_INJECTION64_PATH", lib, 1);
	const char *old = getenv("LD_PRELOAD");
	size_t need = strlen(lib) + (old ? strlen(old) : 0) + 2;
	char *preload = malloc(need);
	if (!preload)
		return 125;
	snprintf(preload, need, "%s%s%s", lib, old && *old ? ":" : "", old && *old ? old : "");
	setenv("LD_PRELOAD", preload, 1);
	free(preload);
	return 0;
}

/* Runs CMD (MGPROBE_OUTPUT_PID names it: it writes the exact -o file) and waits. Its pid in
 * *child, its wait status in *st; 0, or 125 after one line. */
static int run_child(char **cmd, int *st, pid_t *child)
{
	pid_t pid = *child = fork();
	if (pid < 0) {
		fprintf(stderr, "mgprobe: fork: %s\n", strerror(errno));
		return 125;
	}
	if (pid == 0) {
		char num[32];
		snprintf(num, sizeof num, "%d", (int)getpid());
		setenv("MGPROBE_OUTPUT_PID", num, 1);
		execvp(cmd[0], cmd);
		int e = errno;
		fprintf(stderr, "mgprobe: cannot run %s: %s\n", cmd[0], strerror(e));
		_exit(e == ENOENT ? 127 : 126);
	}
	/* Ctrl-C and friends reach the child through the terminal; we only wait for it. */
	signal(SIGINT, SIG_IGN);
	signal(SIGQUIT, SIG_IGN);
	while (waitpid(pid, st, 0) < 0) {
		if (errno != EINTR) {
			fprintf(stderr, "mgprobe: waitpid: %s\n", strerror(errno));
			return 125;
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "--version")) {
		printf("mgprobe %s\n", MG_VERSION);
		return 0;
	}
	if (strcmp(argv[1], "run") != 0) {
		fprintf(stderr, "mgprobe: unknown command '%s' (try 'mgprobe --help')\n", argv[1]);
		return 2;
	}
	struct run_opts o = {0};
	int rc = parse_run(argc, argv, &o);
	if (rc != 0 || o.cmd == 0)
		return rc;
	char lib[PATH_MAX], outabs[PATH_MAX + 8], outdir[PATH_MAX], prefix[PATH_MAX];
	if (find_lib(lib, sizeof lib) < 0)
		return 125;
	if ((rc = set_output(o.output, argv[o.cmd], outabs, outdir, prefix)) != 0 ||
	    (rc = set_env(&o, lib)) != 0)
		return rc;
	char prog[PATH_MAX];
	if (find_program(argv[o.cmd], prog, sizeof prog) == 0 && statically_linked(prog))
		fprintf(stderr, "mgprobe: %s is statically linked: no dynamic loader will load the probe "
			"into it, so it runs unprofiled\n", prog);
	struct timespec t0;
	clock_gettime(CLOCK_REALTIME, &t0);
	int st;
	pid_t child;
	if ((rc = run_child(argv + o.cmd, &st, &child)) != 0)
		return rc;
	report_traces(outdir, prefix, o.output ? outabs : NULL, child,
		      (uint64_t)t0.tv_sec * 1000000000ull + (uint64_t)t0.tv_nsec);
	if (WIFSIGNALED(st))
		return 128 + WTERMSIG(st);
	return WEXITSTATUS(st);
}
