/* SPDX-License-Identifier: MIT */
/* test_process.c: the process verdict from RSS, live allocations and the allocator's free bytes,
 * on two recorded runs of mgtrain's retention scenario sampled at 512 KiB (tests/classify/data):
 * RSS steps up while glibc keeps the freed memory, so both are `retention`. In the first, the last
 * step's snapshot read mallinfo2 in the middle of a burst (free bytes 12 MiB, not 70); in the
 * second, the live total's estimate wanders up 8 MiB, within its sampling band. The same wander in
 * an exact run would be live growth, and a rise well past the band is too. Two exact runs step up
 * once (one is trimmed back for a few steps): `retention` at every prefix once RSS has stepped up,
 * however RSS alone reads it. Reads only its data. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "mg_test.h"
#include "mgc_classify.h"

enum { CAP = 400 };
#define MIB (1024.0 * 1024.0)
#define RATE (512.0 * 1024.0)

static double x[CAP], rss[CAP], live[CAP], kept[CAP];

/* "step rss live free_kept" per line after '#' comments; returns the number of rows. */
static size_t load(const char *dir, const char *name)
{
	char path[512], line[256];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	FILE *f = fopen(path, "r");
	size_t n = 0;
	MG_TRUE(f != NULL, "open %s", path);
	while (f && n < CAP && fgets(line, sizeof line, f))
		if (line[0] != '#' && sscanf(line, "%lf %lf %lf %lf", &x[n], &rss[n], &live[n], &kept[n]) == 4)
			n++;
	if (f)
		fclose(f);
	MG_EQ(n, 300, "rows of %s", name);
	return n;
}

static const char *verdict(size_t n, double sample_rate, const char *what)
{
	struct mgc_classify_opts o = {.x_is_steps = 1, .min_growth = MGC_PROCESS_MIN_GROWTH_STEP,
				      .sample_rate = sample_rate};
	static struct mgc_fit f;
	MG_EQ(mgc_classify_process(x, rss, live, kept, n, &o, &f), 0, "%s", what);
	printf("%s: %s: %s\n", what, mgc_verdict_name(f.verdict), f.why);
	return mgc_verdict_name(f.verdict);
}

/* Exact runs whose RSS steps up once are `retention` at every prefix from rows `from` on, except
 * those that end in steps skip_a..skip_b. retention-dip.txt steps up 58 MiB at step 158 and is
 * trimmed back for steps 234-239 (skipped: the newest points stand in the dip). RSS alone reads it
 * `growing, flat since 158` (184-199), `growing since step 1` with a recent slope whose interval
 * holds 0, or `stable` as the dip's points drag its floor: the rise and what the allocator keeps
 * decide, not whether RSS still climbs (65 of its 111 prefixes read otherwise before the rule).
 * CI read the scenario `growing` at step 300 once ("flat since step 172 but not for long enough to
 * call it a plateau"); retention-mmap.txt, the same run with a fixed mmap threshold (one 55 MiB
 * step at step 207), read so at all its 91 prefixes from 210 before the rule. */
static void retention_every_prefix(const char *dir, const char *name, size_t from, double skip_a, double skip_b)
{
	size_t n = load(dir, name), wrong = 0;
	for (size_t m = from; m <= n; m++) {
		if (x[m - 1] >= skip_a && x[m - 1] <= skip_b)
			continue;
		struct mgc_classify_opts o = {.x_is_steps = 1, .min_growth = MGC_PROCESS_MIN_GROWTH_STEP};
		struct mgc_fit f;
		MG_EQ(mgc_classify_process(x, rss, live, kept, m, &o, &f), 0, "prefix %zu", m);
		if (f.verdict != MGC_VERDICT_RETENTION) {
			printf("prefix to step %g: %s: %s\n", x[m - 1], mgc_verdict_name(f.verdict), f.why);
			wrong++;
		}
	}
	MG_EQ(wrong, 0, "prefixes of %s from row %zu not read `retention`", name, from);
}

int main(int argc, char **argv)
{
	const char *dir = argc > 1 ? argv[1] : "tests/classify/data";
	size_t n = load(dir, "retention-midburst.txt");
	MG_TRUE(kept[n - 1] < 16 * MIB && kept[n - 2] > 64 * MIB, "the data: the last free bytes read mid-burst");
	MG_STR(verdict(n, RATE, "mid-burst"), "retention", "the last point's free bytes do not decide");
	MG_STR(verdict(n, 0, "mid-burst, as exact"), "retention", "nor in an exact reading");

	n = load(dir, "retention-sampled.txt");
	MG_STR(verdict(n, RATE, "sampled"), "retention", "live wanders within its band at 512 KiB");
	MG_TRUE(strcmp(verdict(n, 0, "sampled, read as exact"), "retention") != 0,
		"the same live series, exact, grows: not retention");
	for (size_t i = n / 2; i < n; i++)
		live[i] += 40 * MIB * (double)(i - n / 2) / (double)(n - n / 2);
	MG_TRUE(strcmp(verdict(n, RATE, "sampled, live +40 MiB"), "retention") != 0,
		"live rising 40 MiB, past its band: not retention");
	retention_every_prefix(dir, "retention-dip.txt", 184, 236, 241);
	retention_every_prefix(dir, "retention-mmap.txt", 210, 0, -1);
	return mg_test_done("classify-process");
}
