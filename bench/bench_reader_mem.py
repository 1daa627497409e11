#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""mgreport's peak memory and time on big traces, this build beside another: each output (text,
--json, --html, --folded, and --diff of the first trace against the second) runs with both builds,
interleaved, REPS times; the table gives median seconds, peak RSS (from wait4) and this build over
the baseline. Make the traces once, e.g. with
  mgprobe run -o torch.mgt -- /usr/bin/python3 samples/torch_vision_train.py --steps 120
(and --leak into another file). --top0 adds every output with `--top 0` (every site: GBs of JSON
on PyTorch); --only NAME,... runs only the outputs named as the table names them.

usage: bench/bench_reader_mem.py BUILD_DIR --baseline BUILD_DIR TRACE [TRACE2] [--reps N] [--top0]
       [--only NAMES]
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time


def timed(mgreport, args):
    """Seconds and peak RSS (MiB) of one mgreport run; None when it failed (killed for memory)."""
    t0 = time.perf_counter()
    proc = subprocess.Popen([mgreport] + args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, ru = os.wait4(proc.pid, 0)
    if status != 0:
        return None
    return time.perf_counter() - t0, ru.ru_maxrss / 1024


def outputs(traces, tmp, top0):
    """(name, arguments) of each output measured."""
    out = [("text", [traces[0]]), ("--json", ["--json", traces[0]]),
           ("--html", ["--html", os.path.join(tmp, "page.html"), traces[0]]),
           ("--folded", ["--folded", traces[0]]),
           ("--speedscope", ["--speedscope", os.path.join(tmp, "profile.json"), traces[0]]),
           ("--top 3000", ["--top", "3000", traces[0]]),
           ("--json --top 3000", ["--json", "--top", "3000", traces[0]])]
    if len(traces) > 1:
        out.append(("--diff", ["--diff", traces[0], traces[1]]))
        out.append(("--diff --json", ["--diff", "--json", traces[0], traces[1]]))
    if top0:
        out.append(("--top 0", ["--top", "0", traces[0]]))
        out.append(("--json --top 0", ["--json", "--top", "0", traces[0]]))
        out += [(n + " --top 0", a[:-1] + ["--top", "0", traces[0]]) for n, a in out[2:5]]
    return out


def cell(runs):
    """Median seconds and peak MiB, or None when any run failed."""
    if not runs or None in runs:
        return None
    return statistics.median(r[0] for r in runs), max(r[1] for r in runs)


def fmt(c, w1, w2):
    """Seconds and MiB in columns w1 and w2 wide, or "failed"."""
    if not c:
        return "%*s %*s" % (w1, "failed", w2, "-")
    return "%*.2f %*.0f" % (w1, c[0], w2, c[1])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("--baseline", required=True)
    ap.add_argument("traces", nargs="+")
    ap.add_argument("--reps", type=int, default=1)
    ap.add_argument("--top0", action="store_true")
    ap.add_argument("--only", default="")
    a = ap.parse_args()
    tools = [os.path.join(b, "mgreport", "mgreport") for b in (a.build, a.baseline)]
    print("%-22s %8s %9s %10s %11s %8s %8s" % ("output", "s", "peak MiB", "base s", "base MiB",
                                               "s ratio", "MiB ratio"))
    with tempfile.TemporaryDirectory() as tmp:
        for name, args in outputs(a.traces, tmp, a.top0):
            if a.only and name not in a.only.split(","):
                continue
            runs = {t: [] for t in tools}
            for _ in range(a.reps):
                for t in tools:
                    runs[t].append(timed(t, args))
            new, base = cell(runs[tools[0]]), cell(runs[tools[1]])
            line = "%-22s %s %s" % (name, fmt(new, 8, 9), fmt(base, 10, 11))
            if new and base:
                line += " %8.2f %8.2f" % (new[0] / base[0], new[1] / base[1])
            print(line, flush=True)


if __name__ == "__main__":
    sys.exit(main())
