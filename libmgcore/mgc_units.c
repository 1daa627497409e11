/* SPDX-License-Identifier: MIT */
/* mgc_units.c: see mgc_units.h. */
#include "mgc_units.h"

#include <math.h>
#include <stdio.h>

const char *mgc_human_bytes(double b, char *buf, size_t cap)
{
	static const char *const u[] = {"B", "KB", "MB", "GB", "TB"};
	double a = fabs(b);
	int k = 0;
	while (a >= 1000 && k < 4) {
		a /= 1000;
		k++;
	}
	if (!isfinite(b))
		snprintf(buf, cap, "?");
	else if (k == 0)
		snprintf(buf, cap, "%s%.0f B", b < 0 ? "-" : "", a);
	else
		snprintf(buf, cap, "%s%.*f %s", b < 0 ? "-" : "", a < 10 ? 2 : a < 100 ? 1 : 0, a, u[k]);
	return buf;
}
