/* SPDX-License-Identifier: MIT */
/* mgm_main.c: the `mgmon` command: options, attaching to a process, the refresh loop and what
 * each key does; `--once` prints one frame (text or JSON) without curses. All state lives in one
 * context struct. Exit codes: 0 done, 1 runtime error (no such process, ...), 2 bad usage; it must
 * never leave the terminal in curses mode on any exit path. */
#define _GNU_SOURCE
#include <errno.h>
#include <locale.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "mg_config.h"
#include "mgm_collect.h"
#include "mgm_draw.h"
#include "mgm_text.h"

struct mgm_ctx {
	int pid;                  /* the process shown now */
	double delay;
	int once, json;
	struct mgm_collector *col;
	struct mgm_view view;
	struct mgm_ui_state st;
	struct mgm_ui *ui;
	int children[MGM_MAX_CHILDREN]; /* the root's children, as last seen */
	size_t nchildren;
	sigset_t stop_signals;
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: mgmon [-d SECONDS] PID\n"
		"       mgmon --once [--json] PID\n"
		"\n"
		"Watches a process's memory live: what grows (RSS, live heap, mmaps, memory freed but kept\n"
		"by malloc, GPU), where (allocation sites with symbolized stacks) and what kind of growth\n"
		"it is (stable, plateau, leak, growing, retention), with the time left before OOM.\n"
		"Full detail needs the program to run under the probe (mgprobe run -- PROGRAM); any other\n"
		"process is shown from /proc (RSS only).\n"
		"\n"
		"options:\n"
		"  -d, --delay SECONDS  refresh interval (default 1, from 0.1 to 3600)\n"
		"  --once               print one frame as plain text and exit\n"
		"  --json               with --once: the frame as JSON\n"
		"  -h, --help           this help\n"
		"  --version            the version\n"
		"\n"
		"keys: q quit, ? help, up/down select, Enter stack, s sort, v chart, c children, p pause\n"
		"exit status: 0 done, 1 runtime error (no such process, ...), 2 bad usage\n");
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int parse_pid(const char *s, int *out)
{
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (errno || end == s || *end || v <= 0 || v > 0x3fffffff)
		return -EINVAL;
	*out = (int)v;
	return 0;
}

/* 0 to run, 1 to exit 0 (help, version), 2 for bad usage (message printed). */
static int parse_args(struct mgm_ctx *c, int argc, char **argv)
{
	int have_pid = 0;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			usage(stdout);
			return 1;
		} else if (!strcmp(a, "--version")) {
			printf("mgmon %s\n", MG_VERSION);
			return 1;
		} else if (!strcmp(a, "--once")) {
			c->once = 1;
		} else if (!strcmp(a, "--json")) {
			c->json = 1;
		} else if (!strcmp(a, "-d") || !strcmp(a, "--delay") || !strncmp(a, "--delay=", 8) ||
			   (!strncmp(a, "-d", 2) && a[2])) {
			const char *v = !strncmp(a, "--delay=", 8) ? a + 8 : (a[1] == 'd' && a[2]) ? a + 2 : NULL;
			if (!v) {
				if (i + 1 >= argc) {
					fprintf(stderr, "mgmon: %s needs a number of seconds\n", a);
					return 2;
				}
				v = argv[++i];
			}
			char *end;
			errno = 0;
			double d = strtod(v, &end);
			if (errno || end == v || *end || !(d >= 0.1 && d <= 3600)) {
				fprintf(stderr, "mgmon: bad delay '%s': want seconds from 0.1 to 3600\n", v);
				return 2;
			}
			c->delay = d;
		} else if (a[0] == '-' && a[1]) {
			fprintf(stderr, "mgmon: unknown option '%s' (try 'mgmon --help')\n", a);
			return 2;
		} else {
			if (have_pid) {
				fprintf(stderr, "mgmon: one PID only ('%s' is extra)\n", a);
				return 2;
			}
			if (parse_pid(a, &c->pid) < 0) {
				fprintf(stderr, "mgmon: bad PID '%s': want a positive process id\n", a);
				return 2;
			}
			have_pid = 1;
		}
	}
	if (!have_pid) {
		fprintf(stderr, "mgmon: which process? (usage: mgmon [-d SECONDS] PID; try 'mgmon --help')\n");
		return 2;
	}
	if (c->json && !c->once)
		c->once = 1; /* JSON is a one-frame format */
	return 0;
}

static int run_once(struct mgm_ctx *c)
{
	if (mgm_collect(c->col, &c->view) < 0) {
		fprintf(stderr, "mgmon: out of memory\n");
		return 1;
	}
	if (c->json)
		return mgm_json_frame(stdout, &c->view) < 0 ? 1 : 0;
	int width = 100;
	struct winsize ws;
	if (isatty(1) && ioctl(1, TIOCGWINSZ, &ws) == 0 && ws.ws_col >= 60)
		width = ws.ws_col;
	mgm_text_frame(stdout, &c->view, width);
	return 0;
}

/* Switches to the next of: the root process, then each of its live children. */
static void next_process(struct mgm_ctx *c)
{
	int list[MGM_MAX_CHILDREN + 1];
	size_t n = 0;
	list[n++] = c->st.root_pid;
	for (size_t i = 0; i < c->nchildren; i++) {
		char path[64];
		snprintf(path, sizeof path, "/proc/%d", c->children[i]);
		if (access(path, F_OK) == 0)
			list[n++] = c->children[i];
	}
	if (n == 1) {
		snprintf(c->st.message, sizeof c->st.message, "no live children of %d to switch to", c->st.root_pid);
		return;
	}
	size_t cur = 0;
	for (size_t i = 0; i < n; i++)
		if (list[i] == c->pid)
			cur = i;
	int pid = list[(cur + 1) % n];
	char err[512];
	struct mgm_collector *nc;
	if (mgm_collector_open(pid, &nc, err, sizeof err) < 0) {
		snprintf(c->st.message, sizeof c->st.message, "cannot watch %d: %.120s", pid, err);
		return;
	}
	mgm_collector_free(c->col);
	c->col = nc;
	c->pid = pid;
	c->st.selected = c->st.first = 0;
	snprintf(c->st.message, sizeof c->st.message, "now watching %d%s", pid,
		 pid == c->st.root_pid ? " (the root process)" : " (a child)");
}

static void after_collect(struct mgm_ctx *c)
{
	mgm_sort_sites(&c->view, c->st.sort);
	if (c->pid == c->st.root_pid) {
		c->nchildren = c->view.nchildren;
		memcpy(c->children, c->view.children, c->nchildren * sizeof c->children[0]);
	}
}

/* A key on the stack or help screen: back, scroll, or help. */
static void key_on_subscreen(struct mgm_ctx *c, enum mgm_key k)
{
	if (k == MGM_KEY_QUIT || k == MGM_KEY_BACK || k == MGM_KEY_ENTER ||
	    (k == MGM_KEY_HELP && c->st.screen == MGM_SCREEN_HELP))
		c->st.screen = MGM_SCREEN_MAIN;
	else if (k == MGM_KEY_UP && c->st.stack_first > 0)
		c->st.stack_first--;
	else if (k == MGM_KEY_DOWN)
		c->st.stack_first++;
	else if (k == MGM_KEY_HELP)
		c->st.screen = MGM_SCREEN_HELP;
}

/* Moves the selection: up, down, a page (`rows` sites) either way, first, last. */
static void key_select(struct mgm_ctx *c, enum mgm_key k, int rows)
{
	size_t ns = c->view.nsites, page = (size_t)(rows > 1 ? rows : 1), *sel = &c->st.selected;
	if (k == MGM_KEY_UP && *sel > 0)
		(*sel)--;
	else if (k == MGM_KEY_DOWN && *sel + 1 < ns)
		(*sel)++;
	else if (k == MGM_KEY_PGUP)
		*sel = *sel > page ? *sel - page : 0;
	else if (k == MGM_KEY_PGDN)
		*sel = *sel + page < ns ? *sel + page : ns ? ns - 1 : 0;
	else if (k == MGM_KEY_HOME)
		*sel = 0;
	else if (k == MGM_KEY_END)
		*sel = ns ? ns - 1 : 0;
}

/* The next series to chart that the run has, then the selected site, then round again. */
static void next_chart(struct mgm_ctx *c)
{
	const struct mgc_analysis *a = &c->view.a;
	do {
		c->st.series = (c->st.series + 1) % (MGC_S_N + 1);
	} while (c->st.series < MGC_S_N && ((size_t)c->st.series >= a->nseries || !a->series[c->st.series].present));
	if (c->st.series == MGC_S_N && !c->view.nsites)
		c->st.series = MGC_S_RSS;
}

/* A key on the main screen; 1 when it quits. *next is the time of the next refresh. */
static int key_on_main(struct mgm_ctx *c, enum mgm_key k, int rows, double *next)
{
	switch (k) {
	case MGM_KEY_QUIT:
	case MGM_KEY_BACK:
		return 1;
	case MGM_KEY_ENTER:
		if (c->view.nsites) {
			c->st.screen = MGM_SCREEN_STACK;
			c->st.stack_first = 0;
		} else {
			snprintf(c->st.message, sizeof c->st.message,
				 c->view.probe ? "no site to show yet" : "no stacks without the probe (RSS only)");
		}
		break;
	case MGM_KEY_SORT:
		c->st.sort = (enum mgm_sort)((c->st.sort + 1) % MGM_SORT_N);
		mgm_sort_sites(&c->view, c->st.sort);
		snprintf(c->st.message, sizeof c->st.message, "sites sorted by %s", mgm_sort_name(c->st.sort));
		break;
	case MGM_KEY_SERIES:
		next_chart(c);
		break;
	case MGM_KEY_CHILD:
		next_process(c);
		*next = 0;
		break;
	case MGM_KEY_PAUSE:
		c->st.paused = !c->st.paused;
		if (!c->st.paused)
			*next = 0;
		break;
	case MGM_KEY_HELP:
		c->st.screen = MGM_SCREEN_HELP;
		break;
	case MGM_KEY_REFRESH:
		*next = 0;
		break;
	default:
		key_select(c, k, rows);
		break;
	}
	return 0;
}

/* 1 when SIGINT, SIGTERM or SIGHUP (blocked) is pending: time to leave cleanly. */
static int stop_pending(void)
{
	sigset_t pend;
	return sigpending(&pend) == 0 &&
	       (sigismember(&pend, SIGINT) || sigismember(&pend, SIGTERM) || sigismember(&pend, SIGHUP));
}

static int run_ui(struct mgm_ctx *c)
{
	c->ui = mgm_ui_start();
	if (!c->ui) {
		fprintf(stderr, "mgmon: cannot start the terminal screen (TERM=%s); try mgmon --once\n",
			getenv("TERM") ? getenv("TERM") : "unset");
		return 1;
	}
	double next = 0;
	int rows = 0, dirty = 1;
	while (!stop_pending()) {
		double t = now_s();
		if (!c->st.paused && t >= next && !(c->view.exited && c->view.pid == c->pid && next > 0)) {
			if (mgm_collect(c->col, &c->view) < 0)
				snprintf(c->st.message, sizeof c->st.message, "out of memory while collecting");
			after_collect(c);
			next = t + c->delay;
			dirty = 1;
		}
		if (dirty)
			rows = mgm_ui_draw(c->ui, &c->view, &c->st);
		dirty = 0;
		int wait = (int)((next - now_s()) * 1000);
		if (wait < 0 || wait > 250 || c->st.paused || c->view.exited)
			wait = 250; /* the signals are looked at between waits */
		enum mgm_key k = mgm_ui_key(c->ui, wait);
		if (k == MGM_KEY_NONE)
			continue;
		dirty = 1;
		if (k != MGM_KEY_RESIZE)
			c->st.message[0] = 0;
		if (c->st.screen != MGM_SCREEN_MAIN)
			key_on_subscreen(c, k);
		else if (key_on_main(c, k, rows, &next))
			break;
	}
	mgm_ui_end(c->ui);
	c->ui = NULL;
	return 0;
}

int main(int argc, char **argv)
{
	struct mgm_ctx c;
	memset(&c, 0, sizeof c);
	c.delay = 1.0;
	setlocale(LC_ALL, "");
	int r = parse_args(&c, argc, argv);
	if (r)
		return r == 1 ? 0 : 2;
	char err[512];
	if (mgm_collector_open(c.pid, &c.col, err, sizeof err) < 0) {
		fprintf(stderr, "mgmon: %s\n", err);
		return 1;
	}
	c.st.root_pid = c.pid;
	c.st.delay = c.delay;
	if (c.once) {
		r = run_once(&c);
	} else {
		if (!isatty(1) || !isatty(0)) {
			fprintf(stderr, "mgmon: not a terminal: use mgmon --once for a plain-text frame\n");
			mgm_collector_free(c.col);
			return 2;
		}
		/* Ctrl-C, kill and hang-up end the loop cleanly (curses restored) instead of killing us. */
		sigemptyset(&c.stop_signals);
		sigaddset(&c.stop_signals, SIGINT);
		sigaddset(&c.stop_signals, SIGTERM);
		sigaddset(&c.stop_signals, SIGHUP);
		sigprocmask(SIG_BLOCK, &c.stop_signals, NULL);
		r = run_ui(&c);
	}
	mgm_view_free(&c.view);
	mgm_collector_free(c.col);
	return r;
}
