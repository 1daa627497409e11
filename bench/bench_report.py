#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""mgreport on a 24-hour run: generates the trace of a run with one snapshot per second (the
probe's default interval) and a step marker each second for 24 hours, then times mgreport on it
(text and JSON) and reports its peak memory. Run with 1 and 24 hours to show memory does not grow
with the run's length. With --baseline, another build's mgreport runs on the same traces,
interleaved with this one, and the ratios are printed side by side (this / baseline).

usage: bench/bench_report.py BUILD_DIR [--baseline BUILD_DIR] [--hours H ...] [--sites N]
                             [--version 1|2] [--reps N]
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def timed(mgreport, args):
    """Seconds and peak RSS (MB) of one mgreport run."""
    t0 = time.perf_counter()
    proc = subprocess.Popen([mgreport] + args, stdout=subprocess.DEVNULL)
    _, status, ru = os.wait4(proc.pid, 0)
    if status != 0:
        raise SystemExit("%s failed on %s" % (mgreport, args[-1]))
    return time.perf_counter() - t0, ru.ru_maxrss / 1024


def measure(tools, path, reps):
    """Per tool: median text seconds, median JSON seconds, peak RSS; runs interleaved."""
    runs = {t: {"text": [], "json": [], "rss": 0} for t in tools}
    for _ in range(reps):
        for t in tools:
            for kind, args in (("text", [path]), ("json", ["--json", path])):
                s, rss = timed(t, args)
                runs[t][kind].append(s)
                runs[t]["rss"] = max(runs[t]["rss"], rss)
    return {t: (statistics.median(r["text"]), statistics.median(r["json"]), r["rss"]) for t, r in runs.items()}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("--baseline")
    ap.add_argument("--hours", type=float, nargs="+", default=[1, 4, 24])
    ap.add_argument("--sites", type=int, default=200)
    ap.add_argument("--version", type=int, choices=(1, 2), default=2, help="trace format (the probe writes 2)")
    ap.add_argument("--reps", type=int, default=3)
    a = ap.parse_args()
    tools = [os.path.join(a.build, "mgreport", "mgreport")]
    if a.baseline:
        tools.append(os.path.join(a.baseline, "mgreport", "mgreport"))
    gen = os.path.join(HERE, "..", "tests", "report", "gen_run.py")
    head = "%-7s %10s %9s %8s %8s %9s" % ("hours", "snapshots", "trace MB", "text s", "json s", "peak MB")
    if a.baseline:
        head += " %10s %10s %11s %11s" % ("base txt s", "base json", "text ratio", "json ratio")
    print(head)
    with tempfile.TemporaryDirectory() as tmp:
        for h in a.hours:
            steps = int(h * 3600)
            path = os.path.join(tmp, "day.mgt")
            subprocess.run([sys.executable, gen, "--scenario", "day", "--steps", str(steps), "--sites",
                            str(a.sites), "--version", str(a.version), path], check=True)
            m = measure(tools, path, a.reps)
            text, js, rss = m[tools[0]]
            line = "%-7g %10d %9.1f %8.2f %8.2f %9.1f" % (h, steps + 1, os.path.getsize(path) / 1e6, text, js, rss)
            if a.baseline:
                bt, bj, _ = m[tools[1]]
                line += " %10.2f %10.2f %11.2f %11.2f" % (bt, bj, text / bt, js / bj)
            print(line, flush=True)


if __name__ == "__main__":
    sys.exit(main())
