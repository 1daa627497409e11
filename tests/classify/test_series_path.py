#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The evaluation's verdicts are mgreport's: eval_classify writes prefixes of its training-like
series as CSV files with the verdicts it computed in process (the options mgreport --series
passes), and each file goes through the real `mgreport --series FILE --json --limit 80G`. The JSON
fields a user reads (verdict, confidence, steps_to_oom, decidable_at, why) must be the same.

usage: test_series_path.py EVAL_CLASSIFY MGREPORT
"""
import json
import math
import os
import subprocess
import sys
import tempfile


def same(expected, actual):
    """A number from expected.tsv (inf/nan for JSON's null) against the JSON value."""
    e = float(expected)
    if actual is None:
        return not math.isfinite(e)
    return math.isfinite(e) and abs(e - actual) <= 1e-9 * max(1.0, abs(e))


def main():
    evalc, mgreport = sys.argv[1:3]
    failures, checked = [], 0
    with tempfile.TemporaryDirectory() as tmp:
        p = subprocess.run([evalc, "--csv", tmp], capture_output=True, text=True, timeout=120)
        if p.returncode != 0:
            print("eval_classify --csv failed: %s" % p.stderr)
            return 1
        with open(os.path.join(tmp, "expected.tsv")) as f:
            rows = [line.rstrip("\n").split("\t") for line in f if line.strip()]
        for name, verdict, conf, oom, dec, why in rows:
            r = subprocess.run([mgreport, "--series", os.path.join(tmp, name), "--json", "--limit", "80G"],
                               capture_output=True, text=True, timeout=60)
            if r.returncode != 0:
                failures.append("%s: mgreport exit %d: %s" % (name, r.returncode, r.stderr.strip()))
                continue
            s = json.loads(r.stdout)["series"][0]
            checks = [("verdict", s["verdict"] == verdict, verdict, s["verdict"]),
                      ("confidence", same(conf, s["confidence"]), conf, s["confidence"]),
                      ("steps_to_oom", same(oom, s["steps_to_oom"]), oom, s["steps_to_oom"]),
                      ("decidable_at", same(dec, s["decidable_at"]), dec, s["decidable_at"]),
                      ("why", s["why"] == why, why, s["why"])]
            for what, ok, e, a in checks:
                checked += 1
                if not ok:
                    failures.append("%s: %s: expected %r, mgreport says %r" % (name, what, e, a))
            print("%-40s %-8s %s" % (name, s["verdict"], s["why"][:90]))
    for f in failures:
        print("FAIL " + f)
    print("%d checks on %d files, %d failed" % (checked, len(rows), len(failures)))
    return 1 if failures or checked == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
