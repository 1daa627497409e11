#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Runs one libFuzzer target: over its committed seeds once (SECONDS 0: every seed must pass), or
for SECONDS of fuzzing from them (new inputs go to a scratch directory, never to the seeds). A
crash or a sanitizer report fails the test; the input that did it is kept in ARTIFACTS and
named in the output: fix the bug, then add the input to the seeds.

usage: run_fuzz.py FUZZER SEED_DIR SECONDS ARTIFACTS
"""
import os
import subprocess
import sys
import tempfile


def main():
    fuzzer, seeds, seconds, artifacts = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
    os.makedirs(artifacts, exist_ok=True)
    files = sorted(os.path.join(seeds, f) for f in os.listdir(seeds))
    if not files:
        print("no seeds in " + seeds)
        return 1
    common = ["-artifact_prefix=" + os.path.join(artifacts, ""), "-rss_limit_mb=4096", "-timeout=30"]
    with tempfile.TemporaryDirectory(prefix="mg-fuzz-") as corpus:
        if seconds == 0:
            cmd = [fuzzer] + common + files
        else:
            cmd = [fuzzer] + common + ["-max_total_time=%d" % seconds, "-print_final_stats=1",
                                       corpus, seeds]
        r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                           errors="replace")
    lines = r.stdout.splitlines()
    if r.returncode != 0:
        print("\n".join(lines[-80:]))
        print("FAIL: %s exited %d; the input is in %s" % (os.path.basename(fuzzer), r.returncode, artifacts))
        return 1
    stats = [l for l in lines if l.startswith(("stat::number_of_executed_units", "stat::peak_rss_mb"))]
    print("%s: %s" % (os.path.basename(fuzzer), "; ".join(stats) if stats else "%d seeds pass" % len(files)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
