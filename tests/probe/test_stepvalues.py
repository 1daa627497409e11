# SPDX-License-Identifier: MIT
# A step marker's snapshot carries that step's values, not the next one's: before marker s the
# program keeps 1000 * s bytes (before_marker), right after it 100 + s bytes (after_marker), then
# sleeps 30 ms, so a snapshot whose figures were read after the marker returned (work left to the
# sampler thread, say) counts after_marker's block s into step s. Checked in the trace (the first
# point of each step, and each site's live bytes at each step) and in the live segment (the ring
# entry the marker wrote, read right after it returned, and the grid point of each step, whose
# sites the sampler thread publishes), with no sampler ticks and with one every 10 ms.
from probetest import Test

STEPS = 8
t = Test("stepvalues", 1)
prog = t.progs[0]


def want(s):
    """Live heap bytes and blocks at marker s: before_marker's s blocks, after_marker's s - 1."""
    return 1000 * s * (s + 1) // 2 + sum(100 + k for k in range(1, s)), 2 * s - 1


def folded_at(trace, step):
    """{innermost function: live bytes} of `mgreport --folded --at step`."""
    r = t.run([t.mgreport, trace, "--folded", "--at", str(step)])
    out = {}
    for line in r.stdout.decode(errors="replace").splitlines():
        stack, _, n = line.rpartition(" ")
        out[stack.split(";")[-1]] = out.get(stack.split(";")[-1], 0) + int(n)
    return out


for interval in ("3600000", "10"):
    what = f"--interval {interval}: "
    out = t.path(f"steps-{interval}.mgt")
    r = t.probe([prog], out, ["--interval", interval])
    t.eq(what + "exit status", 0, r.returncode)
    lines = [ln.split() for ln in r.stdout.decode(errors="replace").splitlines()]
    ring = {int(f[1]): (int(f[2]), int(f[3])) for f in lines if f[0] == "ring"}
    grid = {}
    for f in lines:
        if f[0] == "grid":
            grid.setdefault(int(f[1]), (int(f[2]), int(f[3])))  # a step's point is its first
    rep = t.report(out)
    first = {}
    for pt in rep["points"] if rep else []:
        first.setdefault(pt["step"], (pt["heap"], pt["heap_count"]))  # the marker's comes first
    for s in range(1, STEPS + 1):
        t.eq(f"{what}trace: step {s}'s live heap (bytes, blocks)", want(s), first.get(s))
    if interval != "3600000":
        continue  # with ticks a marker within 20 ms of one only updates the segment's step, and
        # --at's snapshot of a step may be a tick after after_marker()
    for s in range(1, STEPS + 1):
        t.eq(f"{what}segment ring: marker {s}'s entry", want(s), ring.get(s))
        t.eq(f"{what}segment grid: step {s}'s point", want(s), grid.get(s))
    for s in range(1, STEPS + 1):
        at = folded_at(out, s)
        t.eq(f"{what}step {s}: before_marker's live bytes", 1000 * s * (s + 1) // 2,
             at.get("before_marker"))
        t.eq(f"{what}step {s}: after_marker's live bytes",
             sum(100 + k for k in range(1, s)) or None, at.get("after_marker"))
t.done()
