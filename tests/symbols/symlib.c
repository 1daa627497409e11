/* SPDX-License-Identifier: MIT */
/* A shared library for the symbolizer tests, loaded with dlopen: symlib_call calls back into the
 * test at a line the test learns from the callback's argument. Keep it free of other work. */
int symlib_call(void (*cb)(int line));

static volatile int symlib_sink;

__attribute__((noinline)) int symlib_call(void (*cb)(int line))
{
	cb(__LINE__);
	return symlib_sink++;
}
