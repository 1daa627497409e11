/* SPDX-License-Identifier: MIT */
/* mg_test.h: the assertions every C test shares. A check that fails prints where it is, what was
 * compared and both values, counts the failure and lets the test go on, so one run shows every
 * failure; mg_test_done() then gives the exit status, and fails a test that checked nothing.
 * Test code only: never include it from the libraries or the tools.
 *
 *   MG_EQ(mgc_shm_read(m, copy, 0), -EBADMSG);         integers, compared as long long
 *   MG_EQ(f[0].line, 42, "frame 0 of %s", name);      an optional printf-style description
 *   MG_STR(f[0].function, "main");                    strings, NULL-safe
 *   MG_NEAR(fit.slope, 1048576.0, 1e-6 * 1048576.0);  doubles within a tolerance
 *   MG_TRUE(n >= 1 && n <= max, "frames returned");   anything else
 *   return mg_test_done("symbols-c");                 0, or 1 when a check failed or none ran */
#ifndef MG_TEST_H
#define MG_TEST_H

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static int mg_test_failures, mg_test_checks;
static char mg_test_mismatch[512]; /* what the last failed comparison found; checks are not thread-safe */

/* Counts a check; when `mismatch` is not NULL, prints "file:line: DESCRIPTION (EXPR): MISMATCH"
 * and counts a failure. fmt starts with a space (the macros prepend one, so a call without a
 * description still has a format). Returns 1 when the check passed. */
static inline __attribute__((format(printf, 5, 6))) int
mg_test_check(const char *file, int line, const char *expr, const char *mismatch, const char *fmt, ...)
{
	mg_test_checks++;
	if (!mismatch)
		return 1;
	mg_test_failures++;
	fprintf(stderr, "%s:%d: ", file, line);
	if (fmt[0] == ' ' && fmt[1]) {
		va_list ap;
		va_start(ap, fmt);
		vfprintf(stderr, fmt + 1, ap);
		va_end(ap);
		fprintf(stderr, " (%s): %s\n", expr, mismatch);
	} else {
		fprintf(stderr, "%s: %s\n", expr, mismatch);
	}
	return 0;
}

/* "-5", or "78187493520 (0x1234567890)" for values that read better in hex too. */
static inline const char *mg_test_int(long long v, char *buf, size_t cap)
{
	if (v > (1ll << 32) || v < -(1ll << 32))
		snprintf(buf, cap, "%lld (0x%llx)", v, (unsigned long long)v);
	else
		snprintf(buf, cap, "%lld", v);
	return buf;
}

/* The comparisons: NULL when they hold, else "expected ..., got ..." (in mg_test_mismatch). */
static inline const char *mg_test_eq(long long actual, long long expected)
{
	char a[64], e[64];
	if (actual == expected)
		return NULL;
	snprintf(mg_test_mismatch, sizeof mg_test_mismatch, "expected %s, got %s",
		 mg_test_int(expected, e, sizeof e), mg_test_int(actual, a, sizeof a));
	return mg_test_mismatch;
}

static inline const char *mg_test_str(const char *actual, const char *expected)
{
	if (actual == expected || (actual && expected && strcmp(actual, expected) == 0))
		return NULL;
	snprintf(mg_test_mismatch, sizeof mg_test_mismatch, "expected \"%.200s\", got \"%.200s\"",
		 expected ? expected : "(null)", actual ? actual : "(null)");
	return mg_test_mismatch;
}

static inline const char *mg_test_near(double actual, double expected, double tol)
{
	if (fabs(actual - expected) <= tol)
		return NULL;
	snprintf(mg_test_mismatch, sizeof mg_test_mismatch, "expected %.9g (within %.3g), got %.9g",
		 expected, tol, actual);
	return mg_test_mismatch;
}

#define MG_EQ(actual, expected, ...)                                                               \
	mg_test_check(__FILE__, __LINE__, #actual,                                                 \
		      mg_test_eq((long long)(actual), (long long)(expected)), " " __VA_ARGS__)
#define MG_STR(actual, expected, ...)                                                              \
	mg_test_check(__FILE__, __LINE__, #actual, mg_test_str((actual), (expected)), " " __VA_ARGS__)
#define MG_NEAR(actual, expected, tol, ...)                                                        \
	mg_test_check(__FILE__, __LINE__, #actual,                                                 \
		      mg_test_near((double)(actual), (double)(expected), (double)(tol)), " " __VA_ARGS__)
#define MG_TRUE(cond, ...)                                                                         \
	mg_test_check(__FILE__, __LINE__, #cond, (cond) ? NULL : "expected true", " " __VA_ARGS__)

/* A failure with a message only, for what the checks above cannot say. */
#define MG_FAIL(...)                                                                               \
	do {                                                                                       \
		fprintf(stderr, "%s:%d: ", __FILE__, __LINE__);                                    \
		fprintf(stderr, __VA_ARGS__);                                                      \
		fputc('\n', stderr);                                                               \
		mg_test_failures++;                                                                \
	} while (0)

/* The exit status of a test: 1 when a check failed or when nothing was checked, else 0. */
static inline int mg_test_done(const char *name)
{
	if (mg_test_failures) {
		fprintf(stderr, "%s: %d of %d checks failed\n", name, mg_test_failures, mg_test_checks);
		return 1;
	}
	if (mg_test_checks == 0) {
		fprintf(stderr, "%s: no check ran: nothing was tested\n", name);
		return 1;
	}
	printf("%s: all %d checks passed\n", name, mg_test_checks);
	return 0;
}

#endif /* MG_TEST_H */
