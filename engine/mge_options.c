/* SPDX-License-Identifier: MIT */
/* mge_options.c: parses mgtrain's command line into struct mge_options.
 * It must never exit, print or accept a value it cannot represent: bad input is -EINVAL plus one line. */
#include "mge_options.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const scenario_names[MGE_SCENARIO_COUNT] = {
	[MGE_SCENARIO_HEALTHY] = "healthy",
	[MGE_SCENARIO_LEAK] = "leak",
	[MGE_SCENARIO_SLOW_LEAK] = "slow-leak",
	[MGE_SCENARIO_LATE_LEAK] = "late-leak",
	[MGE_SCENARIO_VALIDATION] = "validation",
	[MGE_SCENARIO_RETENTION] = "retention",
};

const char *mge_scenario_name(enum mge_scenario s)
{
	return (unsigned)s < MGE_SCENARIO_COUNT ? scenario_names[s] : "?";
}

const char *mge_options_usage(void)
{
	return "usage: mgtrain [--steps N] [--batch B] [--threads T] [--scale X] [--seed S]\n"
	       "               [--scenario NAME] [--device cpu|cuda] [--malloc-stats]\n"
	       "               [--help] [--version]\n"
	       "\n"
	       "Trains a small CNN on a synthetic PNG image set and prints, every 10 steps,\n"
	       "  step N loss L acc A rss MB tensors T [dev MB]\n"
	       "and at the end\n"
	       "  done: steps=N loss=L accuracy=A\n"
	       "\n"
	       "  --steps N       training steps (default 300)\n"
	       "  --batch B       images per batch, 1..64 (default 32)\n"
	       "  --threads T     loader threads, 1..16 (default 2)\n"
	       "  --scale X       multiplies the memory effects, 0.25..16 (default 1)\n"
	       "  --seed S        seed of data, augmentation and weights (default 1)\n"
	       "  --scenario NAME memory behaviour (default healthy):\n"
	       "      healthy     warmup (allocator pools, optimizer state, prefetch) then plateau\n"
	       "      leak        the collator keeps every batch it decodes (mge_collate_batch)\n"
	       "      slow-leak   a small per-step leak under large step-to-step noise\n"
	       "      late-leak   healthy until epoch 2, then an unbounded mining buffer\n"
	       "      validation  a validation pass every 50 steps that allocates and frees a lot\n"
	       "      retention   live heap flat while glibc keeps freed loader memory\n"
	       "  --device D      cpu (default) or cuda: the model, its activations and AdamW on\n"
	       "                  the GPU through a caching allocator; 'dev MB' is its reserved\n"
	       "                  memory (scenarios healthy, leak, late-leak and retention)\n"
	       "  --malloc-stats  append 'heap H free F' (MiB, glibc mallinfo2) to each step line\n"
	       "\n"
	       "Exit status: 0 done, 1 runtime error, 2 bad option (or --device cuda in a build\n"
	       "without CUDA), 3 --device cuda and no usable GPU.\n"
	       "See docs/ENGINE.md for each scenario's mechanism and measured memory shape.\n";
}

__attribute__((format(printf, 3, 4)))
static int fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

/* Parses a whole decimal unsigned number in [lo, hi]; 0 or -EINVAL. */
static int parse_u64(const char *s, uint64_t lo, uint64_t hi, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (!s || !*s || *s == '-' || *s == '+')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end || v < lo || v > hi)
		return -EINVAL;
	*out = v;
	return 0;
}

static int parse_double(const char *s, double lo, double hi, double *out)
{
	char *end;
	double v;

	if (!s || !*s)
		return -EINVAL;
	errno = 0;
	v = strtod(s, &end);
	if (errno || *end || !isfinite(v) || v < lo || v > hi)
		return -EINVAL;
	*out = v;
	return 0;
}

/* Sets the option `name` (one that takes a value) from `val`: 0, or -EINVAL with the error in err. */
static int set_option(struct mge_options *o, const char *name, const char *val, char *err, size_t errlen)
{
	uint64_t u;

	if (!strcmp(name, "--steps")) {
		if (parse_u64(val, 1, 100000000, &o->steps))
			return fail(err, errlen, "bad --steps '%s': want an integer 1..100000000", val);
	} else if (!strcmp(name, "--batch")) {
		if (parse_u64(val, 1, 64, &u))
			return fail(err, errlen, "bad --batch '%s': want an integer 1..64", val);
		o->batch = (int)u;
	} else if (!strcmp(name, "--threads")) {
		if (parse_u64(val, 1, 16, &u))
			return fail(err, errlen, "bad --threads '%s': want an integer 1..16", val);
		o->threads = (int)u;
	} else if (!strcmp(name, "--scale")) {
		if (parse_double(val, 0.25, 16.0, &o->scale))
			return fail(err, errlen, "bad --scale '%s': want a number 0.25..16", val);
	} else if (!strcmp(name, "--seed")) {
		if (parse_u64(val, 0, UINT64_MAX, &o->seed))
			return fail(err, errlen, "bad --seed '%s': want an unsigned integer", val);
	} else if (!strcmp(name, "--device")) {
		if (!strcmp(val, "cpu"))
			o->device = MGE_DEVICE_CPU;
		else if (!strcmp(val, "cuda"))
			o->device = MGE_DEVICE_CUDA;
		else
			return fail(err, errlen, "bad --device '%s': want cpu or cuda", val);
	} else {
		int found = -1;
		for (int s = 0; s < MGE_SCENARIO_COUNT; s++)
			if (!strcmp(val, scenario_names[s]))
				found = s;
		if (found < 0)
			return fail(err, errlen,
				    "bad --scenario '%s': want healthy, leak, slow-leak, late-leak, "
				    "validation or retention", val);
		o->scenario = (enum mge_scenario)found;
	}
	return 0;
}

int mge_options_parse(struct mge_options *o, int argc, char **argv, char *err, size_t errlen)
{
	*o = (struct mge_options){
		.steps = 300, .batch = 32, .threads = 2, .scale = 1.0, .seed = 1,
		.scenario = MGE_SCENARIO_HEALTHY,
	};
	for (int i = 1; i < argc; i++) {
		const char *arg = argv[i];
		const char *val = NULL;
		char name[32];
		const char *eq = strchr(arg, '=');

		if (!strcmp(arg, "--help") || !strcmp(arg, "-h")) {
			o->help = 1;
			continue;
		}
		if (!strcmp(arg, "--malloc-stats")) {
			o->malloc_stats = 1;
			continue;
		}
		if (!strcmp(arg, "--version")) {
			o->version = 1;
			continue;
		}
		if (strncmp(arg, "--", 2) != 0)
			return fail(err, errlen, "unexpected argument '%s' (see --help)", arg);
		/* Accept both "--opt value" and "--opt=value". */
		if (eq) {
			size_t n = (size_t)(eq - arg);
			if (n >= sizeof(name))
				return fail(err, errlen, "unknown option '%s' (see --help)", arg);
			memcpy(name, arg, n);
			name[n] = '\0';
			val = eq + 1;
		} else {
			if (strlen(arg) >= sizeof(name))
				return fail(err, errlen, "unknown option '%s' (see --help)", arg);
			strcpy(name, arg);
		}
		if (strcmp(name, "--steps") && strcmp(name, "--batch") && strcmp(name, "--threads") &&
		    strcmp(name, "--scale") && strcmp(name, "--seed") && strcmp(name, "--scenario") &&
		    strcmp(name, "--device"))
			return fail(err, errlen, "unknown option '%s' (see --help)", name);
		if (!val) {
			if (i + 1 >= argc)
				return fail(err, errlen, "option %s needs a value", name);
			val = argv[++i];
		}
		int rc = set_option(o, name, val, err, errlen);
		if (rc)
			return rc;
	}
	/* slow-leak reads the weights and validation runs the model on the host: CPU only. */
	if (o->device == MGE_DEVICE_CUDA &&
	    (o->scenario == MGE_SCENARIO_SLOW_LEAK || o->scenario == MGE_SCENARIO_VALIDATION))
		return fail(err, errlen, "scenario %s is CPU-only (use --device cpu)", scenario_names[o->scenario]);
	return 0;
}
