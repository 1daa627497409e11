# SPDX-License-Identifier: MIT
# Retirement (issue 16): written sites that went quiet give their stacks back and keep their ids
# and totals. 4,096 sites holding 100 bytes each and one that held and freed 100 bytes retire
# while the program sleeps; then the one is seen again, half the others' blocks are freed, a new
# stack appears after the frame tree was compacted (its nodes defined again in the trace), and a
# forked child uses a retired site of its parent's and a new stack. Every number stays exact.
import glob
import os
import re

from probetest import Test

t = Test("retire", 1)
prog = t.progs[0]
comm = os.path.basename(prog)[:15]
N = 4096
ENV = {"MGPROBE_COMPRESS": "0", "MGPROBE_INTERVAL": "10", "MGPROBE_MAX_SITES": "16384"}

# The writer's passes must run while the program sleeps: a loaded machine may starve them, so
# the sleep grows until they did (what is checked does not depend on it).
for ms in (300, 1500, 6000):
    sub = t.path(f"sleep{ms}")
    os.mkdir(sub)
    out = os.path.join(sub, "retire.mgt")
    r = t.preload([prog, str(ms)], dict(ENV, MGPROBE_OUTPUT=out), timeout=120)
    o = t.overhead(out) if os.path.exists(out) else None
    if o and o[9] >= N + 1 and o[7] < N:
        break
t.eq("exit status", 0, r.returncode)
m = re.search(rb"blocks (\d+) child (\d+) status 0", r.stdout)
t.true("the program and its child ran", m, r.stdout)
if t.true("an OVERHEAD record", o is not None):
    t.true("every quiet site retired", o[9] >= N + 1, f"retired {o[9]}")
    t.true("the frame tree was compacted: node ids below the 8,191 the tree had",
           o[7] < N, f"nodes_high {o[7]}")

rep = t.report(out)
if rep:
    # A node defined again is read as such: a record the reader rejects would end the file here.
    t.eq("the trace reads to its END record", True, rep["process"]["ended"])
    # Retired, seen again, same id: one site, its totals going on from before.
    sites = t.check_site_numbers(rep, "site_a", dict(allocs=3, frees=2, live_bytes=100,
                                                     live_count=1, alloc_bytes=300))
    t.eq("site_a: one site", 1, len(sites or []))
    t.check_site_numbers(rep, "leaf", dict(allocs=N, frees=N // 2, live_bytes=N // 2 * 100,
                                           live_count=N // 2))
    leaves = t.sites_in(rep, "leaf")
    t.eq("leaf: one site per stack", N, len(leaves))
    depths = {len(s["frames"]) for s in leaves}
    t.true("leaf: every stack whole (leaf, 13 node frames, main and below)",
           len(depths) == 1 and min(depths) >= 15, sorted(depths)[:5])
    # A new stack after the compaction: its nodes, ids given again, read right.
    c = t.check_site_numbers(rep, "site_c", dict(allocs=1, live_bytes=300))
    if c:
        t.eq("site_c: its caller", "main", c[0]["frames"][1]["function"])

kids = glob.glob(os.path.join(os.path.dirname(out), f"retire.{comm}.*.mgt"))
t.eq("one child trace", 1, len(kids))
child = t.report(kids[0]) if kids else None
if child:
    t.eq("child: the trace reads to its END record", True, child["process"]["ended"])
    # The parent's retired site_a, at the fork (3 allocations, 2 frees) and one more in the child.
    t.check_site_numbers(child, "site_a", dict(allocs=4, frees=2, live_bytes=200, live_count=2),
                         what="child: ")
    b = t.check_site_numbers(child, "site_b", dict(allocs=1, live_bytes=200), what="child: ")
    if b:
        t.eq("child: site_b's caller", "main", b[0]["frames"][1]["function"])
    t.check_site_numbers(child, "leaf", dict(live_bytes=N // 2 * 100), what="child: ")
t.done()
