#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""compare_sets.py against the generator's own command line: `run` on one seed scores exactly as
crosscheck_warm.py does (the same series drawn, the same verdicts), `score` of the saved run
prints that score again, `diff` of a run against itself finds no change, and `why` counts as many
false `leak`s and as many passed promises, as many kept, as the score does. The generators need
numpy: run under this interpreter if it has it, else Debian's (python3-numpy comes with the
README's python3-torch); skipped (77) when neither has it.

usage: test_compare_sets.py MGREPORT"""
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ARGS = ["--seed", "4242", "--per-family", "1"]


def with_numpy():
    for py in (sys.executable, "/usr/bin/python3"):
        if os.access(py, os.X_OK) and subprocess.run([py, "-c", "import numpy"], capture_output=True).returncode == 0:
            return py
    return None


PY = with_numpy()


def out(*cmd):
    p = subprocess.run([PY, *cmd], capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"test_compare_sets: {' '.join(cmd)} failed ({p.returncode}): {p.stderr.strip()}")
    return p.stdout


def counts(score, why):
    """(false leaks, promises, kept) as the score prints them, and as `why` does."""
    f = re.search(r"false leak on non-leak prefixes .*\((\d+) of", score)
    p = re.search(r"decidable_at passed and decided .*\((\d+) of (\d+)\)", score)
    wf = re.search(r"by the rule that decided: (\d+)", why)
    wp = re.search(r"by the reading that promised: (\d+), kept (\d+)", why)
    if not (f and p and wf and wp):
        return None, None
    return (f[1], p[2], p[1]), (wf[1], wp[1], wp[2])


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    if PY is None:
        print("test_compare_sets: no python3 with numpy here: skipped")
        return 77
    mgreport, tool = sys.argv[1], os.path.join(HERE, "compare_sets.py")
    with tempfile.TemporaryDirectory() as tmp:
        pkl = os.path.join(tmp, "warm.pkl")
        own = out(os.path.join(HERE, "crosscheck_warm.py"), mgreport, *ARGS)
        ran = out(tool, "run", "crosscheck_warm", mgreport, pkl, *ARGS)
        scored = out(tool, "score", pkl)
        same = out(tool, "diff", pkl, pkl)
        told = out(tool, "why", pkl)
    fails = []
    if "false leak on non-leak prefixes" not in own:
        fails.append("crosscheck_warm.py printed no score")
    if ran != own:
        fails.append(f"run scored otherwise than crosscheck_warm.py:\n{ran}\n---\n{own}")
    if scored != own:
        fails.append(f"score of the saved run differs:\n{scored}")
    if same:
        fails.append(f"diff of a run against itself found changes:\n{same}")
    scored_counts, why_counts = counts(own, told)
    if scored_counts is None or scored_counts != why_counts or scored_counts[1] == "0":
        fails.append(f"why counted otherwise than the score ({scored_counts} / {why_counts}):\n{told}")
    for f in fails:
        print("FAIL:", f)
    print(told, end="")
    print(f"compare_sets: {5 - len(fails)} of 5 checks passed")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
