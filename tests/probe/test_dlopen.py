# SPDX-License-Identifier: MIT
# dlopen: a block allocated inside a dlopen'ed library (loaded, used and dlclosed twice, the blocks
# staying live) is attributed to the library's function, file, line and module in the report.
import os

from probetest import Test, marker_line

t = Test("dlopen", 2)
prog, lib = t.progs
src = t.source("prog_dllib.c")
line = marker_line(src, "SITE:lib_alloc_block")

plain = t.run([prog, lib])
t.eq("plain run: exit status", 0, plain.returncode)
for interval in ("1000", "1"):  # 1 ms: the sampler may write stacks at any moment
    out = t.path(f"dlopen-{interval}.mgt")
    r = t.probe([prog, lib], out, ["--interval", interval])
    t.same_run(f"interval {interval}", plain, r)
    rep = t.report(out)
    sites = t.check_site_numbers(rep, "lib_alloc_block", dict(
        allocs=2, frees=0, live_bytes=4321 + 999, live_count=2, alloc_bytes=4321 + 999),
        what=f"interval {interval}: ")
    for s in sites or []:
        what = f"interval {interval}: site {s['id']} ({s['live_bytes']} bytes)"
        f0 = s["frames"][0]
        t.eq(f"{what}: frames[0].file", "prog_dllib.c", os.path.basename(f0["file"] or ""))
        t.eq(f"{what}: frames[0].line", line, f0["line"])
        t.eq(f"{what}: frames[0].module", os.path.realpath(lib), os.path.realpath(f0["module"]))
        fns = [f["function"] for f in s["frames"]]
        t.eq(f"{what}: callers", ["lib_alloc_block", "lib_make", "round_trip", "main"], fns[:4])
    if sites:
        t.eq(f"interval {interval}: one site per load (two loads)", 2, len(sites))
        t.eq(f"interval {interval}: sizes", [999, 4321], sorted(s["live_bytes"] for s in sites))
t.done()
