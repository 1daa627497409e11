/* SPDX-License-Identifier: MIT */
/* mgc_json.h: the JSON that mgreport and mgmon both write, in one place: a verdict with its
 * numbers, and a site's counters (docs/report-json.md names the fields). cJSON objects only: no
 * I/O here. */
#ifndef MGC_JSON_H
#define MGC_JSON_H

#include <cjson/cJSON.h>

#include "mgc_classify.h"
#include "mgc_trace.h"

/* A number, or null when it is not finite. */
cJSON *mgc_json_number(double v);

/* Adds a verdict's fields to o: "verdict", "confidence", "slope_per_x", "slope_ci", "plateau_at",
 * "plateau_level", "level", "noise", "change_at", "steps_to_oom" (or "seconds_to_oom"),
 * "decidable_at", "why". Unjudged (ok == 0): "stable" with null numbers and an empty "why". */
void mgc_json_fit(cJSON *o, const struct mgc_fit *f, int ok, int x_is_steps);

/* Adds "live_bytes", "live_count", "allocs", "alloc_bytes", "frees", "peak_bytes" to o. */
void mgc_json_counters(cJSON *o, const struct mgc_site_counters *c);

#endif /* MGC_JSON_H */
