#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""mgreport stays bounded by what it must hold (issue 16): a synthetic trace of many sites with deep
stacks (a big program's import leaves hundreds of thousands), reported whole (`--top 0`: the text
report, the folded stacks, the HTML page and the speedscope export) under an address-space limit
that holding every symbolized stack at once would pass, and each output checked complete: every
site listed, the last one included. Memory is what is checked, never time.

usage: test_bounded.py MGREPORT"""
import json
import os
import resource
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mgtrace  # noqa: E402
import reportlib  # noqa: E402
from reportlib import Check  # noqa: E402

SITES = 40000
DEPTH = 64      # frames a site (the probe's default depth)
SHARED = 56     # outer frames every stack shares: the trace keeps them once (a prefix tree)
# The address-space limit. Measured: the report needs 72-80 MiB of address space here (76 MiB of
# RSS); holding every site's symbolized stack at once (DEPTH frames of 56 bytes, 40000 sites:
# ~140 MiB more, as mgreport did before) needs 200-240 MiB (213 MiB of RSS). The other outputs,
# written as they go: 76 MiB of RSS each; when they held every site at once (session 8), --folded
# peaked at 367 MiB of RSS (a string per site), --html at 559 MiB (the page's data as one tree)
# and --speedscope at 427 MiB. The limit sits between, with room on both sides.
LIMIT = 144 << 20


def write_trace(path):
    """SITES sites, each a distinct stack of DEPTH frames in a module no reader can open (every
    frame "??", the same on every machine); each site allocates (i + 1) KiB at step 0 and keeps it."""
    base = 0x400000
    with open(path, "wb") as f:
        w = mgtrace.TraceWriter(f, 2)
        w.process(cmdline=b"train\0--many-sites")
        w.module(1, 1, 0, base, base + 0x1000000, b"/nonexistent/mg-bounded/train")
        outer = [base + 0x100000 + 0x40 * k for k in range(SHARED)]
        for i in range(SITES):
            inner = [base + 0x10 * (i * (DEPTH - SHARED) + k) + 1 for k in range(DEPTH - SHARED)]
            w.stack(i + 1, inner + outer)
        entries = [dict(id=i + 1, live_bytes=(i + 1) << 10, live_count=1, allocs=1,
                        alloc_bytes=(i + 1) << 10, frees=0, peak_bytes=(i + 1) << 10, cohorts={0: (i + 1) << 10})
                   for i in range(SITES)]
        heap = sum(e["live_bytes"] for e in entries)
        rss = 200 << 20
        for step in range(4):
            t = (step + 1) * 500_000_000
            w.step(t, step)
            w.snapshot(t, step, rss + (heap if step else 0), heap if step else 0, SITES if step else 0,
                       sites=entries if step == 1 else (), rss_file=50 << 20, flags=mgtrace.SNAP_STEP)
        w.snapshot(t + 1000, 3, rss + heap, heap, SITES, sites=entries, rss_file=50 << 20,
                   flags=mgtrace.SNAP_FINAL | mgtrace.SNAP_FULL)
        w.end(t + 2000)


def limited():
    resource.setrlimit(resource.RLIMIT_AS, (LIMIT, LIMIT))


def report(c, mgreport, trace, out, args, what):
    """mgreport ARGS --top 0 TRACE under the limit, stdout into `out`; checks it exits 0."""
    with open(out, "wb") as f:
        p = subprocess.run([mgreport, "--top", "0"] + args + [trace], stdout=f,
                           stderr=subprocess.PIPE, preexec_fn=limited, timeout=600)
    err = p.stderr.decode(errors="replace")
    c.true("%s --top 0 on %d sites x %d frames within %d MiB of address space: exit 0"
           % (what, SITES, DEPTH, LIMIT >> 20), p.returncode == 0, 0,
           (p.returncode, err[-300:]))


def exports(c, mgreport, d, trace):
    """The folded stacks, the page and the speedscope export of every site, checked whole: each
    site's live bytes at the last step is (i + 1) KiB and every frame is "?? [train]", so the
    folded stacks are one line of DEPTH frames weighing them all."""
    total = SITES * (SITES + 1) // 2 * 1024
    out = os.path.join(d, "folded.txt")
    report(c, mgreport, trace, out, ["--folded"], "--folded")
    with open(out, encoding="utf-8", errors="replace") as f:
        lines = f.read().splitlines()
    want = ";".join(["?? [train]"] * DEPTH) + " %d" % total
    c.true("--folded: every site's stack merged into one line", lines == [want],
           "1 line: ?? [train] x%d %d" % (DEPTH, total), ("%d lines" % len(lines), [l[-60:] for l in lines[:2]]))
    page = os.path.join(d, "page.html")
    report(c, mgreport, trace, os.devnull, ["--html", page], "--html")
    try:
        with open(page, encoding="utf-8", errors="replace") as f:
            _, data = reportlib.page_data(f.read())
    except OSError:
        data = None
    sites = data["processes"][0]["sites"] if data else []
    c.equal("--html: every site in the page's data", SITES, len(sites))
    c.true("--html: the last site is the smallest (1 KiB), its stack whole",
           bool(sites) and sites[-1]["live_bytes_last_x"] == 1024 and len(sites[-1]["stack"]) == DEPTH,
           (1024, DEPTH), sites[-1:] and (sites[-1]["live_bytes_last_x"], len(sites[-1]["stack"])))
    scope = os.path.join(d, "scope.json")
    report(c, mgreport, trace, os.devnull, ["--speedscope", scope], "--speedscope")
    try:
        with open(scope, encoding="utf-8") as f:
            prof = json.load(f)["profiles"][0]
    except (OSError, ValueError, KeyError, IndexError):
        prof = {"samples": [], "weights": [0]}
    c.equal("--speedscope: a sample per site, weighing them all", (SITES, total),
            (len(prof["samples"]), sum(prof["weights"])))
    c.equal("--speedscope: the last sample is the smallest site's DEPTH frames", (1024, DEPTH),
            (prof["weights"][-1], len(prof["samples"][-1])) if prof["samples"] else None)


def main():
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    mgreport = os.path.abspath(sys.argv[1])
    c = Check()
    with tempfile.TemporaryDirectory(prefix="mg-bounded-") as d:
        trace = os.path.join(d, "many.mgt")
        write_trace(trace)
        out = os.path.join(d, "report.txt")
        report(c, mgreport, trace, out, ["--no-color"], "the text report")
        with open(out, encoding="utf-8", errors="replace") as f:
            text = f.read()
        head = "Top sites by growth (%d of %d):" % (SITES, SITES)
        c.true("the report lists every site", head in text, head,
               [l for l in text.splitlines() if l.startswith("Top sites")])
        listed = sum(1 for l in text.splitlines() if l.startswith("  #"))
        c.equal("every site is printed", SITES, listed)
        # the smallest site comes last: 1 KiB live, its stack one line of its 64 unnamed frames
        tail = text.rstrip("\n").splitlines()[-2:]
        c.true("the last site is the smallest (1 KiB)",
               len(tail) == 2 and tail[0].startswith("  #%d " % SITES) and "1.00 KiB live" in tail[0],
               "  #%d ... 1.00 KiB live" % SITES, tail[:1])
        c.true("its stack is printed whole", len(tail) == 2 and tail[1].strip() == "?? x%d  [train]" % DEPTH,
               "?? x%d  [train]" % DEPTH, tail[1:])
        exports(c, mgreport, d, trace)
    c.done()


if __name__ == "__main__":
    sys.exit(main())
