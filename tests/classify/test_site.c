/* SPDX-License-Identifier: MIT */
/* test_site.c: the site classifier's cohort evidence at any current step. A site whose birth
 * buckets all keep survivors at the same rate is a leak, whether the run is at step 400 or the
 * step counter reads near 2^64 or beyond (a double out of an integer's range must never be
 * converted: run under the asan setup too). Never reads a file or a clock. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "mg_test.h"
#include "mgc_classify.h"
#include "mgc_format.h"

enum { N = 400 };
#define MIB (1024.0 * 1024.0)

/* A site leaking 1 MiB per step: live bytes rise by 1 MiB a step, and every birth bucket k keeps
 * 1 MiB for each of its 2^(k-1) steps. */
static void check_leak_at(double last_step, const char *since)
{
	static double x[N], live[N];
	uint64_t cohorts[MGC_COHORTS];
	for (size_t i = 0; i < N; i++) {
		x[i] = (double)(i + 1);
		live[i] = MIB * (double)(i + 1);
	}
	for (unsigned k = 0; k < MGC_COHORTS; k++)
		cohorts[k] = (uint64_t)MIB * mgc_cohort_first_step(k);
	struct mgc_site_evidence ev = {.x = x, .live = live, .n = N, .cohorts = cohorts,
				       .ncohorts = MGC_COHORTS, .last_step = last_step,
				       .allocs = N, .frees = 0, .live_count = N};
	struct mgc_classify_opts o = {.x_is_steps = 1};
	struct mgc_fit f;
	MG_EQ(mgc_classify_site(&ev, &o, &f), 0, "step %g", last_step);
	MG_STR(mgc_verdict_name(f.verdict), "leak", "step %g: %s", last_step, f.why);
	MG_NEAR(f.slope, MIB, 1e-9 * MIB, "step %g", last_step);
	MG_TRUE(strstr(f.why, since) != NULL, "step %g: \"%s\" names %s", last_step, f.why, since);
}

int main(void)
{
	check_leak_at(400, "born since step 32 ");
	check_leak_at(0x1p53, "born since step 134217728 ");
	check_leak_at(0x1p64, "born since step 134217728 "); /* just beyond uint64_t */
	check_leak_at(1e300, "born since step 134217728 ");
	check_leak_at(INFINITY, "born since step 134217728 ");
	return mg_test_done("classify-site");
}
