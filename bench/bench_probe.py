#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Cost of the probe per malloc+free pair, side by side in one run: native, mg's probe and
heaptrack, on bench/alloc_bench at 1 and 2 threads with ~15-frame stacks. Runs are interleaved
and repeated; the median of each is printed with its ratio to native. With --baseline LIB, a
second libmgprobe.so (an older build) runs interleaved too, so a change is measured against what it
replaces in the same run. Never a pass/fail test.

usage: bench/bench_probe.py BUILD_DIR [--reps N] [--pairs N] [--depth N] [--baseline LIB]
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile


def run(cmd, env=None):
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True).stdout
    for line in out.splitlines():
        if line.startswith("ns_per_pair"):
            return float(line.split()[1])
    raise RuntimeError("no ns_per_pair in output of %s" % cmd)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("build")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--pairs", type=int, default=1000000)
    ap.add_argument("--depth", type=int, default=12, help="frames below the thread entry (~15 in all)")
    ap.add_argument("--baseline", help="another libmgprobe.so to run side by side, as 'mg before'")
    a = ap.parse_args()
    bench = os.path.join(a.build, "bench", "alloc_bench")
    lib = os.path.abspath(os.path.join(a.build, "libmgprobe", "libmgprobe.so"))
    heaptrack = shutil.which("heaptrack")
    tmp = tempfile.mkdtemp(prefix="mgbench.")
    rows = []
    for threads in (1, 2):
        args = [bench, str(threads), str(a.pairs), str(a.depth)]
        res = {"native": [], "mg": [], "heaptrack": [], "before": []}
        for r in range(a.reps):
            res["native"].append(run(args))
            env = dict(os.environ, LD_PRELOAD=lib, MGPROBE_OUTPUT=os.path.join(tmp, "b.mgt"))
            res["mg"].append(run(args, env))
            if a.baseline:
                env["LD_PRELOAD"] = os.path.abspath(a.baseline)
                res["before"].append(run(args, env))
            if heaptrack:
                res["heaptrack"].append(run([heaptrack, "-o", os.path.join(tmp, "ht")] + args))
        rows.append((threads, {k: statistics.median(v) for k, v in res.items() if v}))
    print("ns per malloc+free pair (median of %d, %d pairs per thread, stack depth ~%d):"
          % (a.reps, a.pairs, a.depth + 3))
    before = " %10s %12s" % ("mg before", "mg/before") if a.baseline else ""
    print("%-8s %10s %10s %10s %12s %14s" % ("threads", "native", "mg", "heaptrack", "mg/native",
                                            "heaptrack/mg") + before)
    for threads, m in rows:
        ht = m.get("heaptrack")
        b = m.get("before")
        print("%-8d %10.1f %10.1f %10s %12.1f %14s" % (
            threads, m["native"], m["mg"], "%.1f" % ht if ht else "-", m["mg"] / m["native"],
            "%.2f" % (ht / m["mg"]) if ht else "-") +
            (" %10.1f %12.2f" % (b, m["mg"] / b) if b else ""))
    shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
