#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""What mgreport's pictures and exports cost beside its text report, on real traces: mgtrain's
leak scenario and (when /usr/bin/python3 has torch) samples/torch_vision_train.py --leak, each run
once under the probe. Every output is timed on the same trace, interleaved with the text report,
REPS times; the table gives medians, the ratio to the text report's time in the same round, the
output's size and mgreport's peak RSS (from wait4).

usage: bench/bench_outputs.py BUILD_DIR [--reps N] [--torch-steps N]
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
OUTPUTS = [
    ("text", []),
    ("--json", ["--json"]),
    ("--html", ["--html", "{out}.html"]),
    ("--folded", ["--folded"]),
    ("--folded --top 5000", ["--folded", "--top", "5000"]),
    ("--speedscope", ["--speedscope", "{out}.json"]),
    ("--diff (itself)", ["--diff", "{trace}"]),
]


def timed(cmd, stdout_path):
    """(seconds, peak RSS MiB, exit status) of cmd, stdout to a file."""
    with open(stdout_path, "wb") as out:
        t0 = time.perf_counter()
        p = subprocess.Popen(cmd, stdout=out, stderr=subprocess.DEVNULL)
        _, status, ru = os.wait4(p.pid, 0)
        return time.perf_counter() - t0, ru.ru_maxrss / 1024, status


def bench_trace(mgreport, trace, reps, tmp):
    rows = {name: {"s": [], "ratio": [], "rss": 0, "bytes": 0} for name, _ in OUTPUTS}
    for _ in range(reps):
        base = None
        for name, args in OUTPUTS:
            out = os.path.join(tmp, "out")
            a = [x.format(out=out, trace=trace) for x in args]
            cmd = [mgreport] + (a[:1] + [trace] + a[1:] if name.startswith("--diff") else [trace] + a)
            s, rss, status = timed(cmd, out + ".stdout")
            if status != 0:
                raise SystemExit("%s failed (status %d)" % (" ".join(cmd), status))
            base = s if base is None else base
            r = rows[name]
            r["s"].append(s)
            r["ratio"].append(s / base)
            r["rss"] = max(r["rss"], rss)
            files = [out + ".stdout"] + [x for x in a if x.startswith(out)]
            r["bytes"] = max(os.path.getsize(f) for f in files)
    print("\n%s (%.1f MB trace), median of %d:" % (os.path.basename(trace), os.path.getsize(trace) / 1e6, reps))
    print("  %-22s %9s %9s %12s %12s" % ("output", "seconds", "x text", "output KiB", "peak RSS MiB"))
    for name, _ in OUTPUTS:
        r = rows[name]
        print("  %-22s %9.2f %9.2f %12.1f %12.0f" % (name, statistics.median(r["s"]), statistics.median(r["ratio"]),
                                                   r["bytes"] / 1024, r["rss"]))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--torch-steps", type=int, default=120)
    a = ap.parse_args()
    mgprobe = os.path.join(a.build, "libmgprobe", "mgprobe")
    mgreport = os.path.join(a.build, "mgreport", "mgreport")
    mgtrain = os.path.join(a.build, "engine", "mgtrain")
    sample = os.path.join(HERE, "..", "samples", "torch_vision_train.py")
    with tempfile.TemporaryDirectory() as tmp:
        runs = [("mgtrain-leak.mgt", [mgtrain, "--scenario", "leak"])]
        if subprocess.run(["/usr/bin/python3", "-c", "import torch, torchvision"], capture_output=True).returncode == 0:
            runs.append(("torch-leak.mgt", ["/usr/bin/python3", sample, "--leak", "--steps", str(a.torch_steps)]))
        else:
            print("(no torch for /usr/bin/python3: the PyTorch trace is left out)")
        for name, cmd in runs:
            trace = os.path.join(tmp, name)
            subprocess.run([mgprobe, "run", "-o", trace, "--"] + cmd, check=True, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
            bench_trace(mgreport, trace, a.reps, tmp)


if __name__ == "__main__":
    sys.exit(main())
