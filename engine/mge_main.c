/* SPDX-License-Identifier: MIT */
/* mge_main.c: mgtrain's entry point: options, --help/--version, exit status.
 * It must print one line per error and exit 2 for bad usage (--device cuda in a build without CUDA
 * included), 3 for --device cuda without a usable GPU, 1 for a failed run, 0 otherwise. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "mg_config.h"
#include "mge_devtrain.h"
#include "mge_options.h"
#include "mge_train.h"

int main(int argc, char **argv)
{
	struct mge_options o;
	char err[256];
	const char *what;
	int rc;

	if (mge_options_parse(&o, argc, argv, err, sizeof(err))) {
		fprintf(stderr, "mgtrain: %s\n", err);
		return 2;
	}
	if (o.help) {
		fputs(mge_options_usage(), stdout);
		return 0;
	}
	if (o.version) {
		printf("mgtrain %s\n", MG_VERSION);
		return 0;
	}
	if (o.device == MGE_DEVICE_CUDA) {
		rc = mge_devtrain_probe(err, sizeof(err));
		if (rc) {
			fprintf(stderr, "mgtrain: %s\n", err);
			return rc == -ENOSYS ? 2 : 3;
		}
	}
	rc = mge_train_run(&o, stdout, &what);
	if (rc) {
		fprintf(stderr, "mgtrain: %s: %s\n", what, strerror(-rc));
		return 1;
	}
	return 0;
}
