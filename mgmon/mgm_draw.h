/* SPDX-License-Identifier: MIT */
/* mgm_draw.h: the curses screen of mgmon. The only module that includes curses: it draws a view
 * and turns key presses into mgm_key values; what a key does is mgm_main.c's business. It must
 * leave the terminal as it found it on every exit path that goes through mgm_ui_end. */
#ifndef MGM_DRAW_H
#define MGM_DRAW_H

#include "mgm_collect.h"

enum mgm_key {
	MGM_KEY_NONE, MGM_KEY_QUIT, MGM_KEY_UP, MGM_KEY_DOWN, MGM_KEY_PGUP, MGM_KEY_PGDN, MGM_KEY_HOME,
	MGM_KEY_END, MGM_KEY_ENTER, MGM_KEY_BACK, MGM_KEY_SORT, MGM_KEY_SERIES, MGM_KEY_CHILD,
	MGM_KEY_PAUSE, MGM_KEY_HELP, MGM_KEY_RESIZE, MGM_KEY_REFRESH,
};

enum mgm_screen { MGM_SCREEN_MAIN, MGM_SCREEN_STACK, MGM_SCREEN_HELP };

/* What the user chose; owned by mgm_main.c, read by the drawing. */
struct mgm_ui_state {
	enum mgm_screen screen;
	size_t selected;      /* index into the view's sites */
	size_t first;         /* first site row shown */
	size_t stack_first;   /* first frame shown on the stack screen */
	enum mgm_sort sort;
	int series;           /* chart: enum mgc_series_id, or MGC_S_N for the selected site */
	int paused;
	double delay;         /* seconds between refreshes */
	int root_pid;         /* the process mgmon was started on (children are switched to with c) */
	char message[160];    /* a transient line for the footer ("" when none) */
};

struct mgm_ui;

/* Starts curses on the terminal. NULL when stdout is not a terminal curses can drive. */
struct mgm_ui *mgm_ui_start(void);

/* Draws the whole screen for v (or the "terminal too small" notice). Returns how many site rows
 * fit, so the caller can keep the selection visible. */
int mgm_ui_draw(struct mgm_ui *ui, const struct mgm_view *v, struct mgm_ui_state *st);

/* Waits up to timeout_ms (negative: forever) for a key. */
enum mgm_key mgm_ui_key(struct mgm_ui *ui, int timeout_ms);

/* Restores the terminal. NULL is accepted. */
void mgm_ui_end(struct mgm_ui *ui);

#endif /* MGM_DRAW_H */
