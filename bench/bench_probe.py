#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Cost of the probe per malloc+free pair, side by side in one run: native, mg's probe and
heaptrack, on bench/alloc_bench at 1 and 2 threads with ~15-frame stacks. Runs are interleaved
and repeated; the median of each is printed with its ratio to native. With --baseline LIB, a
second libmgprobe.so (an older build) runs interleaved too, so a change is measured against what it
replaces in the same run. With --instructions, the instructions per pair on one thread are counted
under valgrind's callgrind as well: a figure the machine's noise does not move; with --python PY,
the same for bench/alloc_bench.py (a Python loop under --py-depth calls of the frame evaluator: the
cost of a stack with Python frames). Never a pass/fail test.

usage: bench/bench_probe.py BUILD_DIR [--reps N] [--pairs N] [--depth N] [--baseline LIB]
                            [--instructions] [--python PY] [--py-depth N]
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


def instructions(cmd, env):
    """Instructions per malloc+free pair under callgrind: the difference between runs of 40000 and
    20000 pairs (cmd(pairs) is the command line), per pair, so start-up and exit cancel out."""
    counts = []
    with tempfile.TemporaryDirectory(prefix="mgbench-cg.") as tmp:
        for pairs in (20000, 40000):
            err = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=" +
                                  os.path.join(tmp, "cg.out"), *cmd(pairs)],
                                 env=env, capture_output=True, text=True, check=True).stderr
            counts += [int(l.split()[-1]) for l in err.splitlines() if "Collected :" in l]
    return (counts[1] - counts[0]) / 20000.0


def print_instructions(a, bench, lib, tmp):
    env = dict(os.environ, MGPROBE_OUTPUT=os.path.join(tmp, "i.mgt"))
    libs = [("mg", lib)] + ([("mg before", os.path.abspath(a.baseline))] if a.baseline else [])
    programs = [("alloc_bench, one thread, stack depth ~%d" % (a.depth + 3),
                 lambda pairs: [bench, "1", str(pairs), str(a.depth)])]
    if a.python:
        script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "alloc_bench.py")
        programs.append(("alloc_bench.py under %d evaluator calls (%s)" % (a.py_depth + 1, a.python),
                         lambda pairs: [a.python, script, str(pairs), str(a.py_depth)]))
    for what, cmd in programs:
        print("instructions per malloc+free pair, %s (callgrind):" % what)
        native = instructions(cmd, dict(os.environ))
        print("  %-10s %10.1f" % ("native", native))
        for name, path in libs:
            n = instructions(cmd, dict(env, LD_PRELOAD=path))
            print("  %-10s %10.1f   probe: %.1f" % (name, n, n - native))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("build")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--pairs", type=int, default=1000000)
    ap.add_argument("--depth", type=int, default=12, help="frames below the thread entry (~15 in all)")
    ap.add_argument("--baseline", help="another libmgprobe.so to run side by side, as 'mg before'")
    ap.add_argument("--instructions", action="store_true",
                    help="also count instructions (callgrind)")
    ap.add_argument("--python", help="with --instructions: also bench/alloc_bench.py under this python")
    ap.add_argument("--py-depth", type=int, default=8, help="alloc_bench.py's layers (default 8)")
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
    if a.instructions:
        print_instructions(a, bench, lib, tmp)
    shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
