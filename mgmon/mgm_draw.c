/* SPDX-License-Identifier: MIT */
/* mgm_draw.c: draws an mgm_view with curses: header, verdict, breakdown, chart, series verdicts,
 * sites table, and the stack and help screens. Everything it prints comes from mgm_format.c, so
 * the screen and `--once` agree. It must never write outside the window (every line is cut to
 * its width), never put a control byte on the terminal (text goes through put() and bar(), which
 * escape it: mgc_escape.h), and must cope with any size, down to a "terminal too small" notice. */
#define _XOPEN_SOURCE_EXTENDED 1
#include "mgm_draw.h"

#include <curses.h>
#include <stdlib.h>
#include <string.h>

#include "mg_config.h"
#include "mgc_escape.h"
#include "mgc_units.h"
#include "mgm_format.h"

#define MIN_W 60
#define MIN_H 16

enum { C_LEAK = 1, C_GROWING, C_RETENTION, C_PLATEAU, C_STABLE, C_HEADER, C_DIM };

struct mgm_ui {
	int colors;
	char *cells;
	size_t cells_cap;
};

struct mgm_ui *mgm_ui_start(void)
{
	struct mgm_ui *ui = calloc(1, sizeof *ui);
	if (!ui)
		return NULL;
	if (!newterm(NULL, stdout, stdin)) {
		free(ui);
		return NULL;
	}
	cbreak();
	noecho();
	nonl();
	keypad(stdscr, TRUE);
	curs_set(0);
	set_escdelay(25);
	if (has_colors()) {
		start_color();
		use_default_colors();
		init_pair(C_LEAK, COLOR_RED, -1);
		init_pair(C_GROWING, COLOR_YELLOW, -1);
		init_pair(C_RETENTION, COLOR_MAGENTA, -1);
		init_pair(C_PLATEAU, COLOR_CYAN, -1);
		init_pair(C_STABLE, COLOR_GREEN, -1);
		init_pair(C_HEADER, COLOR_BLACK, COLOR_CYAN);
		init_pair(C_DIM, COLOR_BLUE, -1);
		ui->colors = 1;
	}
	return ui;
}

void mgm_ui_end(struct mgm_ui *ui)
{
	if (!ui)
		return;
	endwin();
	free(ui->cells);
	free(ui);
}

static attr_t verdict_attr(struct mgm_ui *ui, int ok, const struct mgc_fit *f)
{
	if (!ui->colors || !ok)
		return A_NORMAL;
	switch (f->verdict) {
	case MGC_VERDICT_LEAK:
		return COLOR_PAIR(C_LEAK) | A_BOLD;
	case MGC_VERDICT_GROWING:
		return COLOR_PAIR(C_GROWING) | A_BOLD;
	case MGC_VERDICT_RETENTION:
		return COLOR_PAIR(C_RETENTION) | A_BOLD;
	case MGC_VERDICT_PLATEAU:
		return COLOR_PAIR(C_PLATEAU);
	default:
		return COLOR_PAIR(C_STABLE);
	}
}

/* Text from the watched process (its name, symbols, paths) may hold terminal commands. */
static const char *shown(char *buf, size_t cap, const char *s)
{
	return mgc_escape(buf, cap, s, strlen(s));
}

/* Prints text at (row, col), escaped, cut to the window, with attributes; returns the column
 * after it. */
static int put(int row, int col, const char *text, attr_t a)
{
	char s[2048];
	shown(s, sizeof s, text);
	int w = COLS - col;
	if (w <= 0 || row < 0 || row >= LINES)
		return col;
	attron(a);
	mvaddnstr(row, col, s, w);
	attroff(a);
	int n = (int)strlen(s);
	return col + (n < w ? n : w);
}

static void bar(struct mgm_ui *ui, int row, const char *text)
{
	char s[2048];
	shown(s, sizeof s, text);
	attr_t a = ui->colors ? COLOR_PAIR(C_HEADER) : A_REVERSE;
	attron(a);
	mvhline(row, 0, ' ', COLS);
	mvaddnstr(row, 0, s, COLS);
	attroff(a);
}

static void footer(struct mgm_ui *ui, const struct mgm_ui_state *st, const char *keys)
{
	char buf[512];
	if (st->message[0])
		snprintf(buf, sizeof buf, " %s", st->message);
	else
		snprintf(buf, sizeof buf, " %s", keys);
	bar(ui, LINES - 1, buf);
}

static void draw_too_small(void)
{
	char buf[128];
	erase();
	snprintf(buf, sizeof buf, "terminal too small: %dx%d, mgmon needs %dx%d", COLS, LINES, MIN_W, MIN_H);
	mvaddnstr(LINES / 2, 0, buf, COLS);
	if (LINES / 2 + 1 < LINES)
		mvaddnstr(LINES / 2 + 1, 0, "enlarge the window, or press q to quit", COLS);
	refresh();
}

static void draw_help(struct mgm_ui *ui, const struct mgm_ui_state *st)
{
	static const char *lines[] = {
		"up/down, j/k      select a site",
		"PgUp/PgDn, g/G    page through the sites",
		"Enter             the selected site's whole symbolized stack",
		"s                 sort sites: growth, live bytes, allocations",
		"v, Tab            chart: rss, heap, mmap, free_kept, device, selected site",
		"c                 switch between the process and its children",
		"p, space          pause / resume refreshing",
		"r                 refresh now",
		"?                 this help",
		"q, Esc            back / quit",
		"",
		"verdicts: stable, plateau (warmup that levelled), leak (grows without bound),",
		"growing (cannot tell yet: see 'known by'), retention (RSS grows, live memory does not)",
		"chart: # data   - plateau level   | warmup end   . fitted leak slope",
	};
	char buf[256];
	erase();
	snprintf(buf, sizeof buf, " mgmon %s: keys", MG_VERSION);
	bar(ui, 0, buf);
	for (size_t i = 0; i < sizeof lines / sizeof lines[0] && (int)i + 2 < LINES - 1; i++)
		put((int)i + 2, 2, lines[i], A_NORMAL);
	footer(ui, st, "q/Esc/? back");
	refresh();
}

static void draw_stack(struct mgm_ui *ui, const struct mgm_view *v, struct mgm_ui_state *st)
{
	char buf[1024], live[32], sl[32];
	erase();
	if (st->selected >= v->nsites) {
		bar(ui, 0, " no site selected");
		footer(ui, st, "Enter/Esc/q back");
		refresh();
		return;
	}
	const struct mgm_site *s = &v->sites[st->selected];
	const struct mgc_site_result *r = s->r;
	const char *word = mgm_verdict_word(r->classified, &r->fit);
	char band[40] = "", bb[32];
	if (s->band > 0) /* a sampled estimate: +- two standard deviations */
		snprintf(band, sizeof band, " \u00b1 %s", mgc_human_bytes(s->band, bb, sizeof bb));
	snprintf(buf, sizeof buf, " site %u: %s  %s%s live, %s%s/%s", r->id, mgm_site_function(s),
		 mgc_human_bytes((double)r->counters.live_bytes, live, sizeof live), band,
		 r->classified && r->fit.slope >= 0 ? "+" : "", r->classified ? mgc_human_bytes(r->fit.slope, sl, sizeof sl) : "?",
		 v->a.x_is_steps ? "step" : "s");
	bar(ui, 0, buf);
	snprintf(buf, sizeof buf, "verdict: %s", word);
	put(1, 1, buf, verdict_attr(ui, r->classified, &r->fit));
	if (r->classified && r->fit.why[0]) {
		snprintf(buf, sizeof buf, "  %s", r->fit.why);
		put(1, 1 + 9 + (int)strlen(word), buf, A_NORMAL);
	}
	int row = 3;
	if (!s->stack) {
		put(row, 1, "(the stack could not be symbolized)", A_NORMAL);
	} else {
		const struct mgc_stack *stk = &s->stack->st;
		size_t rows = LINES - 1 > row ? (size_t)(LINES - 1 - row) : 0;
		if (st->stack_first + rows > stk->n)
			st->stack_first = stk->n > rows ? stk->n - rows : 0;
		for (size_t k = st->stack_first; k < stk->n && row < LINES - 1; k++, row++) {
			const struct mgc_frame *f = &stk->frames[k];
			const char *mb = f->module ? strrchr(f->module, '/') : NULL;
			char where[512];
			if (f->file)
				snprintf(where, sizeof where, "%s:%d", f->file, f->line);
			else
				snprintf(where, sizeof where, "[%s]", mb ? mb + 1 : f->module ? f->module : "??");
			snprintf(buf, sizeof buf, "#%-2zu %s%s  ", k, f->function, f->inlined ? " (inlined)" : "");
			int col = put(row, 1, buf, k == stk->named ? A_BOLD : A_NORMAL);
			put(row, col, where, ui->colors ? COLOR_PAIR(C_DIM) : A_DIM);
		}
		if (s->stack->truncated && row < LINES - 1)
			put(row, 1, "... (deeper frames were not kept by the probe)", A_DIM);
	}
	footer(ui, st, "Enter/Esc/q back   up/down scroll");
	refresh();
}

/* Rows 0-2: the header bar, the verdict, the breakdown (and the no-probe label). */
static void draw_top(struct mgm_ui *ui, const struct mgm_view *v, const struct mgm_ui_state *st)
{
	char buf[1024], hdr[512];
	mgm_fmt_header(v, hdr, sizeof hdr);
	snprintf(buf, sizeof buf, " mgmon  %s%s", hdr, st->paused ? "  [paused]" : "");
	bar(ui, 0, buf);
	mgm_fmt_verdict(v, buf, sizeof buf);
	put(1, 0, buf, v->a.have_verdict ? verdict_attr(ui, 1, &v->a.verdict) : A_NORMAL);
	mgm_fmt_breakdown(v, buf, sizeof buf);
	int col = put(2, 0, buf, A_NORMAL);
	if (v->note[0] || v->notice[0])
		put(2, col + 2 < COLS ? col + 2 : COLS, v->notice[0] ? v->notice : v->note, A_BOLD);
	if (!v->probe && !v->exited) /* always visible: it changes what every number means */
		put(2, COLS > 20 ? COLS - 20 : 0, " no probe: RSS only ", A_REVERSE);
}

/* What the chart shows: the chosen series, or the selected site (st->series == MGC_S_N). */
struct chart_source {
	const double *x, *y;
	size_t n;
	int ok;
	const struct mgc_fit *fit;
	char title[96];
	int series; /* the series shown, or MGC_S_N for a site */
};

static void chart_source(const struct mgm_view *v, const struct mgm_ui_state *st, struct chart_source *cs)
{
	int sel = st->series;
	if (!v->a.nseries) { /* nothing collected (out of memory) */
		*cs = (struct chart_source){.title = "rss", .series = MGC_S_RSS};
		return;
	}
	if (sel == MGC_S_N && st->selected < v->nsites) {
		const struct mgm_site *s = &v->sites[st->selected];
		*cs = (struct chart_source){v->a.series[MGC_S_RSS].x, s->y, v->a.n, s->r->classified, &s->r->fit,
					    "", MGC_S_N};
		snprintf(cs->title, sizeof cs->title, "site %u %s", s->r->id, mgm_site_function(s));
		return;
	}
	if (sel < 0 || sel >= MGC_S_N || !v->a.series[sel].present)
		sel = MGC_S_RSS;
	const struct mgc_series *s = &v->a.series[sel];
	*cs = (struct chart_source){s->x, s->y, s->n, s->classified, &s->fit, "", sel};
	snprintf(cs->title, sizeof cs->title, "%s", s->name);
}

static void draw_chart_cells(struct mgm_ui *ui, int row, int cw, int ch, attr_t va)
{
	for (int r = 0; r < ch; r++, row++) {
		for (int c = 0; c < cw; c++) {
			char cell = ui->cells[(size_t)r * cw + c];
			if (cell == ' ')
				continue;
			attr_t a = cell == '#' ? (ui->colors ? COLOR_PAIR(C_STABLE) : A_NORMAL)
				   : cell == '-' ? (ui->colors ? COLOR_PAIR(C_PLATEAU) | A_BOLD : A_BOLD)
				   : cell == '|' ? (ui->colors ? COLOR_PAIR(C_GROWING) | A_BOLD : A_BOLD)
						 : va | A_BOLD;
			attron(a);
			mvaddch(row, 11 + c, (chtype)cell);
			attroff(a);
		}
	}
}

/* The chart from row 3, its height chosen by the terminal's; returns the row after it. */
static int draw_chart(struct mgm_ui *ui, const struct mgm_view *v, const struct chart_source *cs)
{
	char buf[1024];
	int ch = LINES >= 34 ? 10 : LINES >= 28 ? 7 : LINES >= 22 ? 5 : 3, cw = COLS - 11, row = 3;
	struct mgm_chart lab;
	if ((size_t)cw * ch > ui->cells_cap) {
		char *nc = realloc(ui->cells, (size_t)cw * ch);
		if (nc) {
			ui->cells = nc;
			ui->cells_cap = (size_t)cw * ch;
		}
	}
	if (!ui->cells || (size_t)cw * ch > ui->cells_cap ||
	    mgm_chart_render(v, cs->x, cs->y, cs->n, cs->ok, cs->fit, cw, ch, ui->cells, &lab) < 0) {
		snprintf(buf, sizeof buf, "%s: no samples yet", cs->title);
		put(row, 0, buf, A_NORMAL);
		return row + ch + 2;
	}
	snprintf(buf, sizeof buf, "%s over %s   %s", cs->title, v->a.x_is_steps ? "steps" : "seconds", lab.legend);
	put(row++, 0, buf, A_BOLD);
	for (int r = 0; r < ch; r++) {
		snprintf(buf, sizeof buf, "%9s |", r == 0 ? lab.ytop : r == ch - 1 ? lab.ybot : "");
		put(row + r, 0, buf, A_NORMAL);
	}
	draw_chart_cells(ui, row, cw, ch, verdict_attr(ui, cs->ok, cs->fit));
	row += ch;
	snprintf(buf, sizeof buf, "%9s +%-*s%s", "", cw - (int)strlen(lab.xright) > 0 ? cw - (int)strlen(lab.xright) : 0,
		 lab.xleft, lab.xright);
	put(row++, 0, buf, A_NORMAL);
	return row;
}

/* One row per series with its verdict, '>' at the one charted; returns the row after them. */
static int draw_series(struct mgm_ui *ui, const struct mgm_view *v, int charted, int row)
{
	char buf[1024];
	for (size_t k = 0; k < v->a.nseries && row < LINES - 3; k++) {
		const struct mgc_series *s = &v->a.series[k];
		if (!s->present)
			continue;
		mgm_fmt_series(v, s, buf, sizeof buf);
		put(row, 0, (int)k == charted ? ">" : " ", A_BOLD);
		put(row++, 1, buf, verdict_attr(ui, s->classified, &s->fit));
	}
	return row;
}

static void draw_site_row(struct mgm_ui *ui, const struct mgm_view *v, size_t i, int row, int selected)
{
	char buf[1024];
	const struct mgc_site_result *r = v->sites[i].r;
	mgm_fmt_site_row(v, &v->sites[i], COLS - 1, buf, sizeof buf);
	if (selected) {
		attron(A_REVERSE);
		mvhline(row, 0, ' ', COLS);
		attroff(A_REVERSE);
	}
	put(row, 0, selected ? ">" : " ", selected ? A_REVERSE : A_NORMAL);
	/* the verdict word in its colour, the rest plain */
	const char *w = mgm_verdict_word(r->classified, &r->fit);
	size_t wl = strlen(w);
	put(row, 1, w, verdict_attr(ui, r->classified, &r->fit) | (selected ? A_REVERSE : A_NORMAL));
	put(row, 1 + (int)wl, buf + wl, selected ? A_REVERSE : A_NORMAL);
}

/* The sites table from `row` to the footer, keeping the selection visible; returns the rows. */
static int draw_sites(struct mgm_ui *ui, const struct mgm_view *v, struct mgm_ui_state *st, int row)
{
	char buf[1024], h2[256];
	mgm_fmt_site_header(v, COLS - 1, buf, sizeof buf);
	snprintf(h2, sizeof h2, "  [%s, %zu/%zu sites]", mgm_sort_name(st->sort), v->nsites, v->sites_total);
	attron(A_UNDERLINE);
	mvhline(row, 0, ' ', COLS);
	attroff(A_UNDERLINE);
	put(row, 1, buf, A_UNDERLINE | A_BOLD);
	if ((int)strlen(buf) + 1 + (int)strlen(h2) < COLS)
		put(row, COLS - (int)strlen(h2), h2, A_UNDERLINE);
	row++;
	int rows = LINES - 1 - row;
	if (st->selected >= v->nsites)
		st->selected = v->nsites ? v->nsites - 1 : 0;
	if (st->selected < st->first)
		st->first = st->selected;
	if (rows > 0 && st->selected >= st->first + (size_t)rows)
		st->first = st->selected - (size_t)rows + 1;
	if (v->nsites == 0)
		put(row, 1, "no allocation sites yet", A_NORMAL);
	for (size_t i = st->first; i < v->nsites && row < LINES - 1; i++, row++)
		draw_site_row(ui, v, i, row, i == st->selected);
	return rows;
}

int mgm_ui_draw(struct mgm_ui *ui, const struct mgm_view *v, struct mgm_ui_state *st)
{
	if (COLS < MIN_W || LINES < MIN_H) {
		draw_too_small();
		return 0;
	}
	if (st->screen == MGM_SCREEN_HELP) {
		draw_help(ui, st);
		return 0;
	}
	if (st->screen == MGM_SCREEN_STACK) {
		draw_stack(ui, v, st);
		return 0;
	}
	struct chart_source cs;
	erase();
	draw_top(ui, v, st);
	chart_source(v, st, &cs);
	int row = draw_chart(ui, v, &cs);
	row = draw_series(ui, v, cs.series, row);
	int rows = 0;
	if (v->probe && row < LINES - 2) {
		rows = draw_sites(ui, v, st, row);
	} else if (!v->probe && row < LINES - 2) {
		put(row + 1, 1, "no probe: RSS only. Sites, stacks and the heap breakdown need the program run", A_NORMAL);
		put(row + 2, 1, "under the probe: mgprobe run -- PROGRAM ARGS", A_NORMAL);
	}
	footer(ui, st, v->exited ? "process exited: final state.  q quit  Enter stack  ? help"
				 : "q quit  ? help  Enter stack  s sort  v chart  c child  p pause");
	refresh();
	return rows;
}

enum mgm_key mgm_ui_key(struct mgm_ui *ui, int timeout_ms)
{
	(void)ui;
	timeout(timeout_ms);
	int k = getch();
	switch (k) {
	case ERR:
		return MGM_KEY_NONE;
	case 'q':
	case 'Q':
		return MGM_KEY_QUIT;
	case 27:
		return MGM_KEY_BACK;
	case KEY_UP:
	case 'k':
		return MGM_KEY_UP;
	case KEY_DOWN:
	case 'j':
		return MGM_KEY_DOWN;
	case KEY_PPAGE:
		return MGM_KEY_PGUP;
	case KEY_NPAGE:
		return MGM_KEY_PGDN;
	case KEY_HOME:
	case 'g':
		return MGM_KEY_HOME;
	case KEY_END:
	case 'G':
		return MGM_KEY_END;
	case '\n':
	case '\r':
	case KEY_ENTER:
		return MGM_KEY_ENTER;
	case 's':
		return MGM_KEY_SORT;
	case 'v':
	case '\t':
		return MGM_KEY_SERIES;
	case 'c':
		return MGM_KEY_CHILD;
	case 'p':
	case ' ':
		return MGM_KEY_PAUSE;
	case '?':
	case 'h':
		return MGM_KEY_HELP;
	case 'r':
		return MGM_KEY_REFRESH;
	case KEY_RESIZE:
		return MGM_KEY_RESIZE;
	default:
		return MGM_KEY_NONE;
	}
}
