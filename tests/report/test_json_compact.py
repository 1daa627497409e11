#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""test_json_compact.py: `mgreport --json --top 0` on a real run under the probe with more sites
than the report writes in full (1000): prog_steps --kept-sites 1500 makes 1500 start-up sites that
keep 48 bytes each from before the first step on (flat on the axis: each a distinct stack of 12
calls of `level` from one of two lines, the lines spelling the site's number in binary), a scratch
block freed halfway (changed: ranked last, growth -256 KiB), its leak, and stdio's buffer made after
the loop (flat: 0 on the axis). Checked: the first 1000
sites in full ("frames"), every flat one past them in the compact form (report-json.md: "stack"
into "stack_nodes" / "stack_frames", "constant_on_x", no "frames"), every changed one in full
wherever it is ranked, and the compact stacks rebuilt exactly: the same outer frames as the full
ones and, read as binary, the 1500 numbers the program used, each once.

usage: test_json_compact.py MGPROBE MGREPORT PROG_STEPS"""
import json
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import reportlib as rl  # noqa: E402

KEPT = 1500
FULL = 1000    # sites the report always writes in full (mgr_json.c's MGR_JSON_FULL_SITES)
LEVELS = 12    # prog_steps' KEPT_LEVELS


def kept_number(frames, line_one):
    """The number a keep_block stack spells: the outermost `level` frame holds bit 0, a call from
    line_one a 1. None unless the stack is keep_block, 1 + LEVELS levels, main."""
    names = [f["function"] for f in frames]
    if names[:LEVELS + 3] != ["keep_block"] + ["level"] * (LEVELS + 1) + ["main"]:
        return None
    lines = [f["line"] for f in frames[2:LEVELS + 2]]  # the calls to the next level, depth 1..12
    return sum(1 << (LEVELS - 1 - d) for d, line in enumerate(lines) if line == line_one)


def check_forms(c, proc):
    sites = proc["sites"]
    c.equal("--top 0 lists every site", proc["sites_total"], len(sites))
    c.true("more than %d sites" % FULL, len(sites) > FULL + 400, "> %d" % (FULL + 400), len(sites))
    head = [s["id"] for s in sites[:FULL] if "frames" not in s or "stack" in s or "constant_on_x" in s]
    c.equal("the first %d sites are in full" % FULL, [], head)
    flat = [s for s in sites[FULL:] if s["growth"] == 0]  # here no site rises and falls back
    c.true("flat sites past the first %d" % FULL, len(flat) >= 400, ">= 400", len(flat))
    full_keys = set(sites[0]) - {"frames"}
    bad = [s["id"] for s in flat if set(s) != full_keys | {"constant_on_x", "stack"}
           or s["constant_on_x"] is not True or not isinstance(s["stack"], int)]
    c.equal("a flat site past them: the full site's fields but frames, with constant_on_x: true "
            "and stack (an index)", [], bad[:5])
    scratch = [s for s in sites if s["growth"] == -256 * 1024]
    c.equal("the scratch block freed halfway: one site, changed", 1, len(scratch))
    if scratch:
        s = scratch[0]
        c.true("the changed site is ranked past the first %d" % FULL, sites.index(s) >= FULL,
               ">= %d" % FULL, sites.index(s))
        c.true("the changed site is in full: frames from make_scratch, no stack, no constant_on_x",
               "stack" not in s and "constant_on_x" not in s and s["frames"]
               and s["frames"][0]["function"] == "make_scratch", "make_scratch", s.get("frames", [None])[:1])
    compact = [s for s in sites if "stack" in s]
    c.equal("every compact site is a flat one", sorted(s["id"] for s in flat), sorted(s["id"] for s in compact))
    nodes = proc.get("stack_nodes") or []
    c.true("stack_nodes: [parent, frame], a parent before its child, frames in the table",
           nodes and all(len(n) == 2 and (n[0] is None or 0 <= n[0] < k) and 0 <= n[1] < len(proc["stack_frames"])
                         for k, n in enumerate(nodes)), "well formed", nodes[:3])
    return compact


def check_stacks(c, proc, compact):
    """The compact stacks rebuilt: exactly the stacks the program made."""
    full = [s["frames"] for s in proc["sites"] if "frames" in s and s["frames"]
            and s["frames"][0]["function"] == "keep_block"]
    c.true("keep_block sites in full among the first %d" % FULL, len(full) > 100, "> 100", len(full))
    if not full:
        return
    lines = sorted({f["line"] for fr in full for f in fr[2:LEVELS + 2]})
    c.equal("the full stacks call level from two lines", 2, len(lines))
    if len(lines) != 2:
        return
    outer = full[0][LEVELS + 2:]
    rebuilt = [rl.stack_frames(proc, s) for s in compact]
    stacks = full + [fr for fr in rebuilt if fr and fr[0]["function"] == "keep_block"]
    c.true("compact keep_block sites", len(stacks) - len(full) >= 400, ">= 400", len(stacks) - len(full))
    c.equal("every stack, rebuilt or full, ends in the same outer frames (main and libc's)",
            [], [fr[LEVELS + 2:] for fr in stacks if fr[LEVELS + 2:] != outer][:2])
    numbers = [kept_number(fr, lines[0]) for fr in stacks]
    other = [kept_number(fr, lines[1]) for fr in stacks]  # the other reading of the lines
    ok = any(None not in n and sorted(n) == list(range(KEPT)) for n in (numbers, other))
    c.true("the %d stacks spell the numbers 0..%d, each once" % (KEPT, KEPT - 1), ok,
           "0..%d" % (KEPT - 1), sorted(n for n in numbers if n is not None)[:8])


def main():
    mgprobe, mgreport, prog = sys.argv[1:4]
    c = rl.Check()
    with tempfile.TemporaryDirectory(prefix="mg-compact-") as d:
        trace = os.path.join(d, "run.mgt")
        rc, out, err = rl.probe_run(mgprobe, trace, [prog, "--steps", "60", "--kept-sites", str(KEPT)])
        c.equal("prog_steps --kept-sites %d under the probe: exit 0" % KEPT, 0, rc)
        rc, out, err = rl.mgreport(mgreport, ["--json", "--top", "0", trace])
        c.equal("mgreport --json --top 0: exit 0", 0, rc)
        if rc != 0:
            print(err[-500:])
            c.done()
        doc = json.loads(out)
    proc = doc["processes"][0]
    c.true("the top level mirrors the first process's sites and stack table",
           all(k in proc and doc.get(k) == proc[k] for k in ("sites", "stack_frames", "stack_nodes")))
    compact = check_forms(c, proc)
    check_stacks(c, proc, compact)
    c.done()


if __name__ == "__main__":
    main()
