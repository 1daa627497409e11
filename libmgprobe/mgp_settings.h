/* SPDX-License-Identifier: MIT */
/* mgp_settings.h: every MGPROBE_* variable, in one table that the probe parses them with and that
 * messages and `mgprobe --help` list them from, so no list can forget one. The table is data in
 * this header (the launcher includes it too); parsing is mgp_settings.c, at start-up only, never
 * inside a hook. */
#ifndef MGP_SETTINGS_H
#define MGP_SETTINGS_H

#include <stddef.h>
#include <stdint.h>

/* What the probe runs with. */
struct mgp_settings {
	char output[2048];   /* MGPROBE_OUTPUT without its ".mgt"; "" for default names */
	char dir[2048];      /* MGPROBE_DIR, else the working directory: where default names go */
	int64_t output_pid;  /* MGPROBE_OUTPUT_PID: the process that writes exactly `output`; -1 unset,
				0 unreadable (no process) */
	uint32_t interval_ms;
	uint32_t depth;
	uint32_t max_sites;
	uint32_t no_children;
	uint32_t python;     /* read Python frames (on unless MGPROBE_PYTHON is 0) */
	uint32_t cuda_activity; /* CUPTI activity records joined to CUDA allocations (on unless 0) */
	uint32_t compress;   /* zstd-compress the trace (on unless MGPROBE_COMPRESS is 0) */
	uint32_t sample;     /* MGPROBE_SAMPLE: mean bytes between recorded allocations; 0 = all */
	uint32_t sample_seed; /* MGPROBE_SAMPLE_SEED: the draws' seed; 0 = from the clock */
	uint32_t unwind;     /* MGPROBE_UNWIND: enum mgp_unwind_mode (probe, libunwind, check) */
};

enum mgp_setting_kind {
	MGP_SETTING_PATH,     /* a path; empty is unset; too long is an error */
	MGP_SETTING_PID,      /* a pid, set by the launcher; an unreadable one is no process */
	MGP_SETTING_NUMBER,   /* a whole number in [lo, hi]; anything else is an error */
	MGP_SETTING_FLAG,     /* on unless empty or "0"; `def` when unset */
	MGP_SETTING_CHOICE,   /* one of the words before the help's ':' ("a|b|c: ..."), as its
				 index; `def` when unset; anything else is an error */
	MGP_SETTING_LAUNCHER, /* read by `mgprobe` itself; the probe only knows the name */
};

struct mgp_setting {
	const char *name;
	enum mgp_setting_kind kind;
	size_t off;          /* where the value goes in struct mgp_settings (not LAUNCHER) */
	size_t cap;          /* PATH: the buffer's size */
	uint32_t lo, hi, def; /* NUMBER: the range and the default; FLAG: the default */
	const char *help;    /* one line for `mgprobe --help` */
};

#define MGP_SETTING_AT(field)                                                                      \
	offsetof(struct mgp_settings, field), sizeof(((struct mgp_settings *)0)->field)

static const struct mgp_setting mgp_setting_table[] = {
	{"MGPROBE_OUTPUT", MGP_SETTING_PATH, MGP_SETTING_AT(output), 0, 0, 0,
	 "trace file (FILE.mgt); other processes: FILE.<comm>.<pid>.mgt"},
	{"MGPROBE_DIR", MGP_SETTING_PATH, MGP_SETTING_AT(dir), 0, 0, 0,
	 "where traces go without MGPROBE_OUTPUT (default: the working directory)"},
	{"MGPROBE_INTERVAL", MGP_SETTING_NUMBER, MGP_SETTING_AT(interval_ms), 1, 3600000, 1000,
	 "snapshot interval in milliseconds"},
	{"MGPROBE_DEPTH", MGP_SETTING_NUMBER, MGP_SETTING_AT(depth), 1, 256, 64, "call-stack depth"},
	{"MGPROBE_MAX_SITES", MGP_SETTING_NUMBER, MGP_SETTING_AT(max_sites), 16, 1u << 24, 1u << 20,
	 "allocation sites kept"}, /* libtorch alone makes ~615,000 distinct stacks at import */
	{"MGPROBE_NO_CHILDREN", MGP_SETTING_FLAG, MGP_SETTING_AT(no_children), 0, 0, 0,
	 "1: do not trace forked or exec'd child processes"},
	{"MGPROBE_PYTHON", MGP_SETTING_FLAG, MGP_SETTING_AT(python), 0, 0, 1,
	 "0: native frames only in Python programs (default 1: Python frames)"},
	{"MGPROBE_CUDA_ACTIVITY", MGP_SETTING_FLAG, MGP_SETTING_AT(cuda_activity), 0, 0, 1,
	 "0: CUDA allocations through callbacks only, without CUPTI's activity records (streams, pools)"},
	{"MGPROBE_SAMPLE", MGP_SETTING_NUMBER, MGP_SETTING_AT(sample), 0, 1u << 30, 0,
	 "sample allocations by bytes, one per this many on average (e.g. 524288); 0: all"},
	{"MGPROBE_SAMPLE_SEED", MGP_SETTING_NUMBER, MGP_SETTING_AT(sample_seed), 0, UINT32_MAX, 0,
	 "seed of the sampling draws: a run that allocates alike samples alike; 0: a new seed each run"},
	{"MGPROBE_UNWIND", MGP_SETTING_CHOICE, MGP_SETTING_AT(unwind), 0, 0, 0,
	 "probe|libunwind|check: the probe's caching unwinder with libunwind where it cannot (default), "
	 "libunwind only, or both on every stack with mismatches counted on stderr"},
	{"MGPROBE_COMPRESS", MGP_SETTING_FLAG, MGP_SETTING_AT(compress), 0, 0, 1,
	 "0: write the trace uncompressed (default 1: zstd)"},
	{"MGPROBE_OUTPUT_PID", MGP_SETTING_PID, MGP_SETTING_AT(output_pid), 0, 0, 0,
	 "set by mgprobe run: the process that writes exactly MGPROBE_OUTPUT"},
	{"MGPROBE_LIB", MGP_SETTING_LAUNCHER, 0, 0, 0, 0, 0,
	 "for mgprobe run: the libmgprobe.so to preload"},
};

#define MGP_SETTINGS_COUNT (sizeof mgp_setting_table / sizeof mgp_setting_table[0])

/* Reads every MGPROBE_* variable of the environment into *s (defaults for the unset ones). An
 * unknown MGPROBE_ name or a bad value prints one line naming it (and, for an unknown name, every
 * known one) and returns -EINVAL: the program then runs unprofiled. Otherwise 0. */
int mgp_settings_read(struct mgp_settings *s);

#endif /* MGP_SETTINGS_H */
