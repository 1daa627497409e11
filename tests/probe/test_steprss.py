# SPDX-License-Identifier: MIT
# A step marker's RSS is the RSS at the marker: the program touches 8 MiB of new anonymous memory
# before each of steps 1 to 6 (and, between 3 and 4, closes descriptors 3 to 63 and copies a file of
# its own, holding statm-like numbers, onto every one), then a forked child touches 16 MiB before
# each of steps 7 to 9. Each marker's rss_anon must be the previous one's plus that, to within
# 1 MiB (the program's other pages), in the parent's trace and in the child's own.
import glob
import os
import re

from probetest import Test

t = Test("steprss", 1)
prog = t.progs[0]
out = t.path("rss.mgt")
r = t.probe([prog, t.path("own-file")], out, ["--interval", "3600000"])  # no sampler ticks
t.eq("exit status", 0, r.returncode)
m = re.search(r"child (\d+) status 0", r.stdout.decode())
t.true("the child ran and exited 0", m, r.stdout.decode(errors="replace"))


def check(trace, steps, mib, who):
    rep = t.report(trace)
    if not rep:
        return
    rss = {pt["step"]: pt["rss_anon"] for pt in rep["points"]}
    t.true(f"{who}: a point for each step {steps}", all(s in rss for s in steps), sorted(rss))
    for a, b in zip(steps, steps[1:]):
        if a in rss and b in rss:
            grew = rss[b] - rss[a]
            t.true(f"{who}: step {b}'s rss_anon is step {a}'s + {mib} MiB (within 1 MiB)",
                   abs(grew - (mib << 20)) <= 1 << 20, f"grew by {grew / 2**20:.2f} MiB")


check(out, [1, 2, 3, 4, 5, 6], 8, "parent")
if m:
    kids = glob.glob(t.path(f"rss.*.{m.group(1)}.mgt"))
    t.eq("one trace for the child", 1, len(kids))
    if kids:
        check(kids[0], [7, 8, 9], 16, "child")

# Free bytes at a marker are the marker's: a snapshot taken just before (the 32 MiB in use) must
# not lend the marker its allocator reading once the 32 MiB are freed (mallinfo2 is reused between
# close markers only while the RSS and the live heap stay where they were).
kept = t.path("kept.mgt")
r = t.probe([prog, t.path("own-file-2"), "kept"], kept, ["--interval", "3600000"])
t.eq("kept: exit status", 0, r.returncode)
rep = t.report(kept)
if rep:
    first = {}
    for pt in rep["points"]:
        first.setdefault(pt["step"], pt)  # the marker's snapshot comes first in its step
    for s in (1, 2, 3, 4):
        fk = first[s]["free_kept"] if s in first else None
        t.true(f"kept: step {s}'s marker sees the 32 MiB just freed as kept (>= 30 MiB)",
               fk is not None and fk >= 30 << 20, fk)
t.done()
