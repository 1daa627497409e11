/* SPDX-License-Identifier: MIT */
/* mgc_json.c: see mgc_json.h. */
#include "mgc_json.h"

#include <math.h>

cJSON *mgc_json_number(double v)
{
	return isfinite(v) ? cJSON_CreateNumber(v) : cJSON_CreateNull();
}

void mgc_json_fit(cJSON *o, const struct mgc_fit *f, int ok, int x_is_steps)
{
	cJSON_AddStringToObject(o, "verdict", ok ? mgc_verdict_name(f->verdict) : "stable");
	cJSON_AddItemToObject(o, "confidence", mgc_json_number(ok ? f->confidence : NAN));
	cJSON_AddItemToObject(o, "slope_per_x", mgc_json_number(ok ? f->slope : NAN));
	cJSON *ci = cJSON_AddArrayToObject(o, "slope_ci");
	cJSON_AddItemToArray(ci, mgc_json_number(ok ? f->slope_lo : NAN));
	cJSON_AddItemToArray(ci, mgc_json_number(ok ? f->slope_hi : NAN));
	cJSON_AddItemToObject(o, "plateau_at", mgc_json_number(ok ? f->plateau_at : NAN));
	cJSON_AddItemToObject(o, "plateau_level", mgc_json_number(ok ? f->plateau_level : NAN));
	cJSON_AddItemToObject(o, "level", mgc_json_number(ok ? f->level : NAN));
	cJSON_AddItemToObject(o, "noise", mgc_json_number(ok ? f->noise : NAN));
	cJSON_AddItemToObject(o, "change_at", mgc_json_number(ok ? f->change_at : NAN));
	cJSON_AddItemToObject(o, x_is_steps ? "steps_to_oom" : "seconds_to_oom", mgc_json_number(ok ? f->x_to_oom : NAN));
	cJSON_AddItemToObject(o, "decidable_at", mgc_json_number(ok ? f->decidable_at : NAN));
	cJSON_AddStringToObject(o, "why", ok ? f->why : "");
}

void mgc_json_counters(cJSON *o, const struct mgc_site_counters *c)
{
	cJSON_AddNumberToObject(o, "live_bytes", (double)c->live_bytes);
	cJSON_AddNumberToObject(o, "live_count", (double)c->live_count);
	cJSON_AddNumberToObject(o, "allocs", (double)c->allocs);
	cJSON_AddNumberToObject(o, "alloc_bytes", (double)c->alloc_bytes);
	cJSON_AddNumberToObject(o, "frees", (double)c->frees);
	cJSON_AddNumberToObject(o, "peak_bytes", (double)c->peak_bytes);
}
