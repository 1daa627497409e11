/* SPDX-License-Identifier: MIT */
/* mge_options.h: the command line of mgtrain, parsed into one plain struct.
 * Parsing never prints to stdout and never exits: it returns -EINVAL with a one-line message. */
#ifndef MGE_OPTIONS_H
#define MGE_OPTIONS_H

#include <stddef.h>
#include <stdint.h>

enum mge_scenario {
	MGE_SCENARIO_HEALTHY,
	MGE_SCENARIO_LEAK,
	MGE_SCENARIO_SLOW_LEAK,
	MGE_SCENARIO_LATE_LEAK,
	MGE_SCENARIO_VALIDATION,
	MGE_SCENARIO_RETENTION,
	MGE_SCENARIO_COUNT
};

enum mge_device {
	MGE_DEVICE_CPU,
	MGE_DEVICE_CUDA,   /* the model on the GPU (mge_devtrain.h); healthy, leak, late-leak, retention */
};

struct mge_options {
	uint64_t steps;            /* training steps, >= 1 */
	int batch;                 /* images per batch, 1..64 */
	int threads;               /* loader threads, 1..16 */
	double scale;              /* multiplies the memory effects (source image area), 0.25..16 */
	uint64_t seed;             /* everything random derives from it */
	enum mge_scenario scenario;
	enum mge_device device;
	int malloc_stats;          /* --malloc-stats: add glibc's live/free heap to each log line */
	int help;                  /* --help given: print usage, run nothing */
	int version;               /* --version given */
};

/* Fills `o` from argv. On a bad option or value returns -EINVAL and writes one line (no newline)
 * into err[0..errlen). Never allocates. */
int mge_options_parse(struct mge_options *o, int argc, char **argv, char *err, size_t errlen);

/* The usage text for --help (static storage). */
const char *mge_options_usage(void);

/* "healthy", "leak", ...: the CLI name of a scenario (static storage). */
const char *mge_scenario_name(enum mge_scenario s);

#endif /* MGE_OPTIONS_H */
