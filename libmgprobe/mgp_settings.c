/* SPDX-License-Identifier: MIT */
/* mgp_settings.c: parses the MGPROBE_* variables with the table of mgp_settings.h. Runs once, in
 * the probe's constructor (and nowhere near a hook); never calls malloc or stdio: messages go
 * through mgp_log. */
#define _GNU_SOURCE
#include "mgp_settings.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mgp_os.h"

/* The table's names, comma-separated, into buf. */
static const char *known_names(char *buf, size_t cap)
{
	size_t n = 0;
	buf[0] = 0;
	for (size_t i = 0; i < MGP_SETTINGS_COUNT; i++)
		n += mgp_fmt(buf + n, cap - n, "%s%s", i ? ", " : "", mgp_setting_table[i].name);
	return buf;
}

/* The table entry for a "NAME=value" environment string, or NULL. */
static const struct mgp_setting *find(const char *env)
{
	size_t n = strcspn(env, "=");
	for (size_t i = 0; i < MGP_SETTINGS_COUNT; i++) {
		const char *name = mgp_setting_table[i].name;
		if (strlen(name) == n && strncmp(env, name, n) == 0)
			return &mgp_setting_table[i];
	}
	return NULL;
}

/* Every MGPROBE_ variable must be in the table: a misspelt one would otherwise be ignored. */
static int check_names(void)
{
	extern char **environ;
	for (char **e = environ; e && *e; e++) {
		if (strncmp(*e, "MGPROBE_", 8) != 0 || find(*e))
			continue;
		char names[512];
		mgp_log("unknown setting %.*s: the program runs unprofiled (known: %s)",
			(int)strcspn(*e, "="), *e, known_names(names, sizeof names));
		return -EINVAL;
	}
	return 0;
}

/* The index of v among the words before the ':' of help ("a|b|c: ..."); -1 if none. */
static int choice_of(const char *help, const char *v)
{
	size_t n = strlen(v);
	int i = 0;
	for (const char *w = help; *w && *w != ':'; i++) {
		size_t len = strcspn(w, "|:");
		if (len == n && strncmp(w, v, n) == 0)
			return i;
		w += len + (w[len] == '|');
	}
	return -1;
}

static int parse_one(const struct mgp_setting *t, const char *v, struct mgp_settings *s)
{
	char *at = (char *)s + t->off;
	uint64_t u;
	switch (t->kind) {
	case MGP_SETTING_PATH:
		if (strlen(v) + 16 >= t->cap) { /* room for ".<comm>.<pid>.<n>.mgt" after it */
			mgp_log("%s is too long: the program runs unprofiled", t->name);
			return -EINVAL;
		}
		memcpy(at, v, strlen(v) + 1);
		return 0;
	case MGP_SETTING_PID:
		*(int64_t *)(void *)at = mgp_parse_u64(v, &u) == 0 && u <= INT32_MAX ? (int64_t)u : 0;
		return 0;
	case MGP_SETTING_NUMBER:
		if (mgp_parse_u64(v, &u) < 0 || u < t->lo || u > t->hi) {
			mgp_log("bad %s=%s (expected a whole number from %u to %u): the program runs "
				"unprofiled", t->name, v, t->lo, t->hi);
			return -EINVAL;
		}
		*(uint32_t *)(void *)at = (uint32_t)u;
		return 0;
	case MGP_SETTING_FLAG:
		*(uint32_t *)(void *)at = *v && strcmp(v, "0") != 0;
		return 0;
	case MGP_SETTING_CHOICE: {
		int i = choice_of(t->help, v);
		if (i < 0) {
			mgp_log("bad %s=%s (expected %.*s): the program runs unprofiled", t->name, v,
				(int)strcspn(t->help, ":"), t->help);
			return -EINVAL;
		}
		*(uint32_t *)(void *)at = (uint32_t)i;
		return 0;
	}
	case MGP_SETTING_LAUNCHER:
		return 0;
	}
	return 0;
}

int mgp_settings_read(struct mgp_settings *s)
{
	memset(s, 0, sizeof *s);
	s->output_pid = -1;
	if (check_names() < 0)
		return -EINVAL;
	for (size_t i = 0; i < MGP_SETTINGS_COUNT; i++) {
		const struct mgp_setting *t = &mgp_setting_table[i];
		const char *v = getenv(t->name);
		if (t->kind == MGP_SETTING_NUMBER || t->kind == MGP_SETTING_FLAG ||
		    t->kind == MGP_SETTING_CHOICE)
			*(uint32_t *)(void *)((char *)s + t->off) = t->def;
		if (v && parse_one(t, v, s) < 0)
			return -EINVAL;
	}
	size_t n = strlen(s->output);
	if (n > 4 && strcmp(s->output + n - 4, ".mgt") == 0)
		s->output[n - 4] = 0;
	if (!s->dir[0] && !getcwd(s->dir, sizeof s->dir))
		mgp_fmt(s->dir, sizeof s->dir, ".");
	return 0;
}
