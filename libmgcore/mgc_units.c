/* SPDX-License-Identifier: MIT */
/* mgc_units.c: see mgc_units.h. */
#include "mgc_units.h"

#include <math.h>
#include <stdio.h>

const char *mgc_human_bytes(double b, char *buf, size_t cap)
{
	static const char *const u[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
	double a = fabs(b);
	int k = 0;
	while (a >= 1024 && k < 6) {
		a /= 1024;
		k++;
	}
	if (!isfinite(b))
		snprintf(buf, cap, "?");
	else if (k == 0)
		snprintf(buf, cap, "%s%.0f B", b < 0 ? "-" : "", a);
	else
		snprintf(buf, cap, "%s%.*f %s", b < 0 ? "-" : "", a < 9.995 ? 2 : a < 99.95 ? 1 : 0, a, u[k]);
	return buf;
}

const char *mgc_human_x(double x, int x_is_steps, char *buf, size_t cap)
{
	if (!isfinite(x))
		snprintf(buf, cap, "?");
	else if (x_is_steps)
		snprintf(buf, cap, "step %.0f", x);
	else
		snprintf(buf, cap, "%.0f s", x);
	return buf;
}
