/* SPDX-License-Identifier: MIT */
/* fuzz_toolchain.c: the smallest libFuzzer target; meson builds it once to learn whether clang
 * and its fuzzer runtime (Debian's libclang-rt-14-dev) are installed. */
#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	(void)data;
	(void)size;
	return 0;
}
