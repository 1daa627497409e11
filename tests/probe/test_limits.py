# SPDX-License-Identifier: MIT
# Limits: 50 allocations from 50 distinct stacks are 50 sites; with --depth 2 they are one site
# (stacks cut to two frames); with a site table of 16 the rest go to the overflow site (no frames)
# and the totals stay exact.
from probetest import Test

t = Test("limits", 1)
prog = t.progs[0]
plain = t.run([prog])

rep = t.plain_and_probed("default", [prog], "default.mgt")
sites = t.check_site_numbers(rep, "leaf_alloc", dict(allocs=50, live_bytes=5000, live_count=50),
                             what="default: ")
if sites:
    t.eq("default: one site per stack", 50, len(sites))
    t.eq("default: every site one block", [], [s["id"] for s in sites if s["allocs"] != 1])
    t.eq("default: stack depths (frames through descend)", list(range(1, 51)),
         sorted(sum(f["function"] == "descend" for f in s["frames"]) for s in sites))

rep = t.plain_and_probed("--depth 2", [prog], "depth2.mgt", ["--depth", "2"])
sites = t.check_site_numbers(rep, "leaf_alloc", dict(allocs=50, live_bytes=5000, live_count=50),
                             what="--depth 2: ")
if sites:
    t.eq("--depth 2: one site", 1, len(sites))
    t.eq("--depth 2: its frames", ["leaf_alloc", "descend"],
         [f["function"] for f in sites[0]["frames"]])
if rep:
    t.eq("--depth 2: no stack deeper than 2", [],
         [s["id"] for s in rep["sites"] if len([f for f in s["frames"] if not f.get("inlined")]) > 2])

out = t.path("max16.mgt")
t.same_run("MGPROBE_MAX_SITES=16", plain,
           t.preload([prog], {"MGPROBE_OUTPUT": out, "MGPROBE_MAX_SITES": "16"}))
rep = t.report(out)
if rep:
    t.true("max 16: at most 16 sites", len(rep["sites"]) <= 16, len(rep["sites"]))
    overflow = [s for s in rep["sites"] if not s["frames"]]
    t.eq("max 16: one overflow site without frames", 1, len(overflow))
    leaf = t.sites_in(rep, "leaf_alloc")
    t.true("max 16: the overflow site holds the blocks that found no site",
           overflow and overflow[0]["live_bytes"] >= 5000 - sum(s["live_bytes"] for s in leaf),
           f"overflow {overflow[0]['live_bytes'] if overflow else None}")
    t.eq("max 16: last point's heap = the sum of the sites' live bytes", rep["points"][-1]["heap"],
         sum(s["live_bytes"] for s in rep["sites"] if s["kind"] == "heap"))
t.done()
