#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""mgreport on a 24-hour run: generates the trace of a run with one snapshot per second (the
probe's default interval) and a step marker each second for 24 hours, then times mgreport on it
(text and JSON) and reports its peak memory. Run twice with 1 and 4 hours to show memory does not
grow with the run's length.

usage: bench/bench_report.py BUILD_DIR [--hours H ...] [--sites N]
"""
import argparse
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("--hours", type=float, nargs="+", default=[1, 4, 24])
    ap.add_argument("--sites", type=int, default=200)
    a = ap.parse_args()
    mgreport = os.path.join(a.build, "mgreport", "mgreport")
    gen = os.path.join(HERE, "..", "tests", "report", "gen_run.py")
    print("%-7s %10s %10s %12s %12s %14s" % ("hours", "snapshots", "trace MB", "text s", "json s",
                                           "peak RSS MB"))
    with tempfile.TemporaryDirectory() as tmp:
        for h in a.hours:
            steps = int(h * 3600)
            path = os.path.join(tmp, "day.mgt")
            subprocess.run([sys.executable, gen, "--scenario", "day", "--steps", str(steps),
                            "--sites", str(a.sites), path], check=True)
            times = []
            peak = 0
            for args in ([path], ["--json", path]):
                t0 = time.perf_counter()
                proc = subprocess.Popen([mgreport] + args, stdout=subprocess.DEVNULL)
                _, status, ru = os.wait4(proc.pid, 0)
                times.append(time.perf_counter() - t0)
                if status != 0:
                    raise SystemExit("mgreport failed on %s" % path)
                peak = max(peak, ru.ru_maxrss / 1024)
            print("%-7g %10d %10.1f %12.2f %12.2f %14.1f" % (h, steps + 1, os.path.getsize(path) / 1e6,
                                                          times[0], times[1], peak))


if __name__ == "__main__":
    sys.exit(main())
