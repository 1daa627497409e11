#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""bench_marker.py: what one step marker costs the thread that calls it, side by side in one run.

    python3 bench/bench_marker.py BUILD_DIR [--baseline LIB] [--reps 3] [--steps 150]
                                  [--sample 512K] [--python /usr/bin/python3]

Runs samples/torch_vision_train.py --steps N under `mgprobe run` (exact, and sampled with
--sample), and again with the --baseline libmgprobe.so (through MGPROBE_LIB), interleaved, REPS
times each. The sample's `mgprobe_step` (called through ctypes) is wrapped in this process: each
call's thread CPU time (CLOCK_THREAD_CPUTIME_ID, which other processes' load inflates far less than
wall time) and wall time are summed, the first 10 markers (imports, warmup) left out. Prints the
mean per marker (and the median marker's wall time, which other processes' preemptions move
less), medians over the repetitions, in microseconds. The ctypes call itself (~1 us) is in every
row. Not a test.
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SAMPLE = os.path.join(HERE, "..", "samples", "torch_vision_train.py")
SKIP = 10

# Run inside the target (python3 -c): wraps CDLL's mgprobe_step, then runs the sample as __main__.
WRAPPER = r"""
import ctypes, os, runpy, sys, time
OUT = os.environ.pop("MGBENCH_MARKER_OUT")
SKIP = int(os.environ.pop("MGBENCH_MARKER_SKIP"))
got = []

class Timed:
    def __init__(self, f):
        object.__setattr__(self, "f", f)
    def __setattr__(self, k, v):
        setattr(self.f, k, v)
    def __call__(self, n):
        c0, w0 = time.thread_time_ns(), time.perf_counter_ns()
        self.f(n)
        got.append((time.thread_time_ns() - c0, time.perf_counter_ns() - w0))

class CDLL(ctypes.CDLL):
    def __getattr__(self, name):
        f = super().__getattr__(name)
        return Timed(f) if name == "mgprobe_step" else f

ctypes.CDLL = CDLL
sys.argv = sys.argv[1:]
try:
    runpy.run_path(sys.argv[0], run_name="__main__")
finally:
    g = got[SKIP:]
    with open(OUT, "w") as o:
        w = sorted(w for _, w in g)
        o.write("%d %d %d %d\n" % (len(g), sum(c for c, _ in g), sum(w), w[len(w) // 2]))
"""


def one(mgprobe, lib, sample, a, tmp):
    out = os.path.join(tmp, "marker.txt")
    env = dict(os.environ, MGBENCH_MARKER_OUT=out, MGBENCH_MARKER_SKIP=str(SKIP))
    cmd = ["env"] + (["MGPROBE_LIB=" + lib] if lib else []) + [mgprobe, "run"]
    cmd += (["--sample", sample] if sample else []) + ["-o", os.path.join(tmp, "t.mgt"), "--"]
    cmd += [a.python, "-c", WRAPPER, SAMPLE, "--steps", str(a.steps), "--seed", "0"]
    subprocess.run(cmd, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    with open(out) as f:
        n, cpu, wall, wmed = (int(x) for x in f.read().split())
    return cpu / n / 1000.0, wall / n / 1000.0, wmed / 1000.0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("--baseline", help="another libmgprobe.so, as 'before'")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--steps", type=int, default=150)
    ap.add_argument("--sample", default="512K")
    ap.add_argument("--python", default="/usr/bin/python3", help="an interpreter with torch")
    a = ap.parse_args()
    mgprobe = os.path.join(a.build, "libmgprobe", "mgprobe")
    rows = [("exact", None, None), ("sampled " + a.sample, None, a.sample)]
    if a.baseline:
        lib = os.path.abspath(a.baseline)
        rows += [("exact, before", lib, None), ("sampled " + a.sample + ", before", lib, a.sample)]
    res = {r[0]: [] for r in rows}
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(a.reps):
            for name, lib, sample in rows:
                res[name].append(one(mgprobe, lib, sample, a, tmp))
    print("per step marker, torch_vision_train.py --steps %d, median of %d (markers %d.. of each "
          "run):" % (a.steps, a.reps, SKIP))
    print("%-28s %14s %14s %16s" % ("", "thread CPU us", "wall us", "median wall us"))
    for name, _, _ in rows:
        cpu, wall, wmed = (statistics.median(r[i] for r in res[name]) for i in range(3))
        print("%-28s %14.1f %14.1f %16.1f" % (name, cpu, wall, wmed))
    print("load average: %.1f %.1f %.1f" % os.getloadavg())


if __name__ == "__main__":
    main()
