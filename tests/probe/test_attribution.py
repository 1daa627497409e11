# SPDX-License-Identifier: MIT
# Exact attribution: prog_attrib allocates from three named functions with known counts and sizes;
# the trace must show exactly those counters, cohorts and source lines under those function names.
import os

from probetest import Test, marker_line

t = Test("attribution", 1)
prog = t.progs[0]
src = t.source("prog_attrib.c")
rep = t.plain_and_probed("prog_attrib", [prog], "attrib.mgt")

expect = {
    # function: allocs, frees, live_bytes, live_count, alloc_bytes, peak_bytes, cohorts
    "make_small": dict(allocs=10, frees=6, live_bytes=400, live_count=4, alloc_bytes=1000,
                       peak_bytes=1000),
    "make_zeroed": dict(allocs=7, frees=0, live_bytes=1680, live_count=7, alloc_bytes=1680,
                        peak_bytes=1680),
    "grow_buffer": dict(allocs=10, frees=9, live_bytes=1024, live_count=1,
                        alloc_bytes=2 * (64 + 128 + 256 + 512 + 1024), peak_bytes=2048),
}
cohorts = {
    "make_small": [{"first_step": 0, "live_bytes": 400}],
    "make_zeroed": [{"first_step": 1, "live_bytes": 1680}],
    "grow_buffer": [{"first_step": 4, "live_bytes": 1024}],  # step 5 is in bucket [4, 8)
}
for fn, ex in expect.items():
    sites = t.check_site_numbers(rep, fn, ex)
    if not sites:
        continue
    t.eq(f"{fn}: number of sites", 1, len(sites))
    s = sites[0]
    t.eq(f"{fn}: kind", "heap", s["kind"])
    t.eq(f"{fn}: cohorts", cohorts[fn], s["cohorts"])
    f0 = s["frames"][0]
    t.eq(f"{fn}: frames[0].file", "prog_attrib.c", os.path.basename(f0["file"] or ""))
    t.eq(f"{fn}: frames[0].line", marker_line(src, "SITE:" + fn), f0["line"])
    t.eq(f"{fn}: frames[0].module", os.path.realpath(prog), os.path.realpath(f0["module"]))
    t.eq(f"{fn}: frames[1].function", "main", s["frames"][1]["function"] if len(s["frames"]) > 1
         else None)

if rep:
    p = rep["process"]
    t.eq("process.ended", True, p["ended"])
    t.eq("process.truncated", False, p["truncated"])
    t.eq("process.steps", 2, p["steps"])
    t.eq("process.children", [], p["children"])
    t.eq("x_axis", "step", rep["x_axis"])
    steps = sorted({pt["step"] for pt in rep["points"]})
    t.eq("steps seen in points", [0, 1, 5], steps)
    last = rep["points"][-1]
    ours = sum(expect[f]["live_bytes"] for f in expect)
    t.true("last point's heap includes the program's live bytes", last["heap"] >= ours,
           f"heap {last['heap']} < {ours}")
    t.eq("last point's heap = the sum of the sites' live bytes", last["heap"],
         sum(s["live_bytes"] for s in rep["sites"] if s["kind"] == "heap"))
    t.eq("last point's label", "validation", last.get("label"))
    t.eq("first point's label", None, rep["points"][0].get("label"))
    # The probe's own frames never appear in a stack.
    lib = os.path.realpath(t.lib)
    inside = [s["id"] for s in rep["sites"] for f in s["frames"]
              if os.path.realpath(f["module"]) == lib]
    t.eq("sites with a frame inside libmgprobe.so", [], inside)

t.done()
