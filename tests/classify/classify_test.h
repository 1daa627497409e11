/* SPDX-License-Identifier: MIT */
/* classify_test.h: the few assertion macros the classify tests share. Every failed check prints
 * the expression, the expected and the actual value, and counts the failure; none aborts. */
#ifndef CLASSIFY_TEST_H
#define CLASSIFY_TEST_H

#include <math.h>
#include <stdio.h>
#include <string.h>

/* Failures so far; each test program defines it once with CT_DEFINE_FAILURES. */
extern int ct_failures;
#define CT_DEFINE_FAILURES int ct_failures

#define CT_NEAR(actual, expected, tol)                                                              \
	do {                                                                                        \
		double ct_a = (actual), ct_e = (expected);                                          \
		if (!(fabs(ct_a - ct_e) <= (tol))) {                                                \
			fprintf(stderr, "%s:%d: %s: expected %.10g (+-%g), got %.10g\n", __FILE__,   \
				__LINE__, #actual, ct_e, (double)(tol), ct_a);                      \
			ct_failures++;                                                              \
		}                                                                                   \
	} while (0)

#define CT_INT(actual, expected)                                                                    \
	do {                                                                                        \
		long long ct_a = (long long)(actual), ct_e = (long long)(expected);                 \
		if (ct_a != ct_e) {                                                                 \
			fprintf(stderr, "%s:%d: %s: expected %lld, got %lld\n", __FILE__, __LINE__,  \
				#actual, ct_e, ct_a);                                               \
			ct_failures++;                                                              \
		}                                                                                   \
	} while (0)

#define CT_STR(actual, expected)                                                                    \
	do {                                                                                        \
		const char *ct_a = (actual), *ct_e = (expected);                                    \
		if (strcmp(ct_a, ct_e) != 0) {                                                      \
			fprintf(stderr, "%s:%d: %s: expected \"%s\", got \"%s\"\n", __FILE__,        \
				__LINE__, #actual, ct_e, ct_a);                                     \
			ct_failures++;                                                              \
		}                                                                                   \
	} while (0)

#define CT_TRUE(cond, ...)                                                                          \
	do {                                                                                        \
		if (!(cond)) {                                                                      \
			fprintf(stderr, "%s:%d: %s failed: ", __FILE__, __LINE__, #cond);            \
			fprintf(stderr, __VA_ARGS__);                                               \
			fputc('\n', stderr);                                                        \
			ct_failures++;                                                              \
		}                                                                                   \
	} while (0)

#endif /* CLASSIFY_TEST_H */
