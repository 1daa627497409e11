#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Step time of mgtrain natively, under mg's probe and under heaptrack, interleaved in one run,
plus mg's trace size per 1000 steps. Step time is read from the arrival times of the trainer's
"step N" lines (from step 10 to the last), so start-up (building the PNG set) is excluded.

usage: bench/bench_train.py BUILD_DIR [--reps N] [--steps N] [--scenario NAME]
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time


def step_time(cmd, env=None):
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env)
    marks = {}
    for line in p.stdout:
        if line.startswith("step "):
            marks[int(line.split()[1])] = time.perf_counter()
    if p.wait() != 0:
        raise SystemExit("failed: %s" % " ".join(cmd))
    steps = sorted(marks)
    first, last = steps[0], steps[-1]
    return (marks[last] - marks[first]) / (last - first) * 1000.0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--steps", type=int, default=300)
    ap.add_argument("--scenario", default="healthy")
    a = ap.parse_args()
    mgtrain = os.path.join(a.build, "engine", "mgtrain")
    mgprobe = os.path.join(a.build, "libmgprobe", "mgprobe")
    heaptrack = shutil.which("heaptrack")
    args = [mgtrain, "--steps", str(a.steps), "--scenario", a.scenario]
    res = {"native": [], "mg": [], "heaptrack": []}
    sizes = []
    with tempfile.TemporaryDirectory() as tmp:
        trace = os.path.join(tmp, "t.mgt")
        for _ in range(a.reps):
            res["native"].append(step_time(args))
            res["mg"].append(step_time([mgprobe, "run", "-o", trace, "--"] + args))
            sizes.append(os.path.getsize(trace))
            if heaptrack:
                res["heaptrack"].append(step_time([heaptrack, "-o", os.path.join(tmp, "ht")] + args))
                ht_files = [f for f in os.listdir(tmp) if f.startswith("ht")]
                ht_size = sum(os.path.getsize(os.path.join(tmp, f)) for f in ht_files)
    m = {k: statistics.median(v) for k, v in res.items() if v}
    print("mgtrain --scenario %s --steps %d, median of %d, ms per step:" % (a.scenario, a.steps, a.reps))
    print("  native %.2f   mg %.2f (%.2fx)   heaptrack %s" % (
        m["native"], m["mg"], m["mg"] / m["native"],
        "%.2f (%.2fx)" % (m["heaptrack"], m["heaptrack"] / m["native"]) if "heaptrack" in m else "-"))
    print("  mg trace: %d bytes, %.0f KB per 1000 steps%s" % (
        sizes[-1], sizes[-1] / a.steps * 1000 / 1000,
        "; heaptrack file: %d bytes" % ht_size if heaptrack else ""))


if __name__ == "__main__":
    sys.exit(main())
