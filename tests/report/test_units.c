/* SPDX-License-Identifier: MIT */
/* test_units.c: the one way both tools print memory and the x axis (mgc_units.h): binary units
 * labelled KiB, MiB, GiB, three significant digits. */
#include <math.h>

#include "mg_test.h"
#include "mgc_units.h"

static void bytes(double b, const char *want)
{
	char buf[32];
	MG_STR(mgc_human_bytes(b, buf, sizeof buf), want, "%.17g bytes", b);
}

int main(void)
{
	bytes(0, "0 B");
	bytes(1023, "1023 B");
	bytes(1024, "1.00 KiB");
	bytes(1536, "1.50 KiB");
	bytes(512 * 1024.0, "512 KiB");
	bytes(1048576, "1.00 MiB");
	bytes(1.05e6, "1.00 MiB");
	bytes(99.96 * 1048576, "100 MiB");
	bytes(17.4 * 1073741824, "17.4 GiB");
	bytes(32.0 * 1073741824, "32.0 GiB");
	bytes(3.0 * 1099511627776, "3.00 TiB");
	bytes(-2.5 * 1048576, "-2.50 MiB");
	bytes(NAN, "?");
	bytes(INFINITY, "?");
	char buf[32];
	MG_STR(mgc_human_x(40, 1, buf, sizeof buf), "step 40");
	MG_STR(mgc_human_x(12.4, 0, buf, sizeof buf), "12 s");
	MG_STR(mgc_human_x(NAN, 1, buf, sizeof buf), "?");
	return mg_test_done("units");
}
