/* SPDX-License-Identifier: MIT */
/* What a damaged trace or a changed disk can hand the symbolizer: missing paths, directories,
 * devices, non-ELF files (argv[1]), another build's id, garbage addresses and bad arguments.
 * Each must give "??" with the right status (or -EINVAL), never a crash or a wrong name. */
#include <errno.h>
#include <stdio.h>

#include "symtest.h"

static volatile int sink;

int mg_sym_target(void);

__attribute__((noinline)) int mg_sym_target(void)
{
	symtest_capture(__LINE__);
	return sink;
}

/* Expects exactly one "??" frame for path with the given status. */
static void expect_unknown(struct mgc_symbolizer *s, const char *what, const char *path,
			   const uint8_t *id, size_t id_len, uint64_t bias, uint64_t ip,
			   enum mgc_frame_status status)
{
	struct mgc_frame f[4];
	int n = mgc_symbolize(s, path, id, id_len, bias, ip, f, 4);
	int before = mg_test_failures;

	MG_EQ(n, 1, "%s", what);
	if (n < 1)
		return;
	MG_STR(f[0].function, "??", "%s", what);
	MG_STR(f[0].file, NULL, "%s", what);
	MG_EQ(f[0].line, 0, "%s", what);
	MG_STR(f[0].module, path, "%s", what);
	MG_STR(mgc_frame_status_name(f[0].status), mgc_frame_status_name(status), "%s", what);
	MG_EQ(f[0].offset, ip - bias, "%s", what);
	if (mg_test_failures != before)
		symtest_dump(what, f, n);
}

int main(int argc, char **argv)
{
	struct mgc_symbolizer *s = mgc_symbolizer_new();
	struct mgc_frame f[4];
	struct symtest_module m;
	uint8_t other_id[64];
	int n;

	if (s == NULL) {
		perror("mgc_symbolizer_new");
		return 1;
	}
	mg_sym_target();
	if (symtest_find_module(symtest_cap.ip, &m) != 0 || m.build_id_len == 0) {
		fprintf(stderr, "cannot find this executable's module and build id\n");
		return 1;
	}
	uint64_t ip = symtest_cap.ip;

	/* Bad arguments. */
	MG_EQ(mgc_symbolize(NULL, m.path, NULL, 0, 0, ip, f, 4), -EINVAL, "NULL symbolizer");
	MG_EQ(mgc_symbolize(s, NULL, NULL, 0, 0, ip, f, 4), -EINVAL, "NULL path");
	MG_EQ(mgc_symbolize(s, m.path, NULL, 0, 0, ip, NULL, 4), -EINVAL, "NULL out");
	MG_EQ(mgc_symbolize(s, m.path, NULL, 0, 0, ip, f, 0), -EINVAL, "max 0");
	MG_EQ(mgc_symbolize(s, m.path, NULL, 0, 0, ip, f, -1), -EINVAL, "max -1");
	MG_EQ(mgc_symbolize(s, m.path, NULL, 20, 0, ip, f, 4), -EINVAL, "NULL build id with a length");
	mgc_symbolizer_free(NULL);

	/* Files that are not the module. */
	expect_unknown(s, "nonexistent path", "/nonexistent/mg/libgone.so.1", m.build_id,
		       m.build_id_len, m.bias, ip, MGC_FRAME_NO_FILE);
	expect_unknown(s, "empty path", "", NULL, 0, 0, ip, MGC_FRAME_NO_FILE);
	expect_unknown(s, "directory", "/", NULL, 0, 0, ip, MGC_FRAME_NO_FILE);
	expect_unknown(s, "character device", "/dev/null", NULL, 0, 0, ip, MGC_FRAME_NO_FILE);
	if (argc > 1)
		expect_unknown(s, "not an ELF file", argv[1], NULL, 0, 0, ip, MGC_FRAME_NO_FILE);

	/* Another build of the same path: one byte differs, or a different length. */
	memcpy(other_id, m.build_id, m.build_id_len);
	other_id[m.build_id_len / 2] ^= 0x5a;
	expect_unknown(s, "wrong build id", m.path, other_id, m.build_id_len, m.bias, ip,
		       MGC_FRAME_BUILD_ID_MISMATCH);
	expect_unknown(s, "short build id", m.path, m.build_id, m.build_id_len - 1, m.bias, ip,
		       MGC_FRAME_BUILD_ID_MISMATCH);
	/* ... asked again: still refused (the refusal is cached, not retried into a hit). */
	expect_unknown(s, "wrong build id again", m.path, other_id, m.build_id_len, m.bias, ip,
		       MGC_FRAME_BUILD_ID_MISMATCH);

	/* The right file, the right build id, addresses that are not in it. */
	expect_unknown(s, "ip 0", m.path, m.build_id, m.build_id_len, m.bias, 0, MGC_FRAME_NO_SYMBOL);
	expect_unknown(s, "ip = bias", m.path, m.build_id, m.build_id_len, m.bias, m.bias,
		       MGC_FRAME_NO_SYMBOL);
	expect_unknown(s, "ip below bias", m.path, m.build_id, m.build_id_len, m.bias, m.bias - 64,
		       MGC_FRAME_NO_SYMBOL);
	expect_unknown(s, "ip far above", m.path, m.build_id, m.build_id_len, m.bias,
		       m.bias + (1ULL << 40), MGC_FRAME_NO_SYMBOL);
	expect_unknown(s, "ip all ones", m.path, m.build_id, m.build_id_len, m.bias, UINT64_MAX,
		       MGC_FRAME_NO_SYMBOL);

	/* After all that, the real address still resolves in the same symbolizer. */
	n = mgc_symbolize(s, m.path, m.build_id, m.build_id_len, m.bias, ip, f, 4);
	MG_EQ(n, 1, "good address: frames");
	symtest_check_frame("good address", &f[0], "mg_sym_target", "test_symbols_bad.c",
			    symtest_cap.line, 0);

	mgc_symbolizer_free(s);
	return mg_test_done("test_symbols_bad");
}
