# SPDX-License-Identifier: MIT
# Every interposed function, edge cases included, returns the same results and errno with and
# without the probe (prog_interpose prints what it saw; the outputs must match byte for byte), and
# the trace holds exactly what each function kept: heap blocks at their requested sizes, anonymous
# private mappings page-rounded (split by a partial munmap), file and shared mappings not at all.
from probetest import Test

t = Test("interpose", 1)
prog = t.progs[0]
P = t.page

plain = t.run([prog])
t.eq("plain run: exit status", 0, plain.returncode)
out = t.path("interpose.mgt")
r = t.probe([prog], out)
t.same_run("prog_interpose", plain, r)
# Also with the probe preloaded by hand (no launcher).
r2 = t.preload([prog], {"MGPROBE_OUTPUT": t.path("interpose-preload.mgt")})
t.same_run("prog_interpose (LD_PRELOAD)", plain, r2)

seen = dict(l.split(": ", 1) for l in plain.stdout.decode().splitlines() if ": " in l)
# What glibc itself decided, read from the plain run: the trace must follow it.
odd_ok = seen.get("aligned_alloc(3, 16)", "").startswith("ptr")
zero_ptr = seen.get("realloc(p, 0)", "").startswith("ptr")
for line, want in [("calloc overflow", "NULL errno=12"), ("calloc overflow (swapped)", "NULL errno=12"),
                   ("reallocarray overflow", "NULL errno=12 intact=r"),
                   ("malloc(SIZE_MAX)", "NULL errno=12"),
                   ("realloc(p, SIZE_MAX)", "NULL errno=12 first=a last=a"),
                   ("posix_memalign(3, 16)", "ret=22 errno=1234 out_unchanged=1"),
                   ("posix_memalign(64, huge)", "ret=12 errno=1234 out_unchanged=1"),
                   ("munmap(middle 4 pages)", "ret=0 errno=0 ends=11")]:
    t.eq(f"plain run: {line}", want, seen.get(line))

rep = t.report(out)
heap = {
    "do_malloc": dict(allocs=2, frees=0, live_bytes=123, live_count=2, alloc_bytes=123),
    "do_calloc": dict(allocs=1, frees=0, live_bytes=120, live_count=1, alloc_bytes=120),
    "do_realloc": dict(allocs=2, frees=1, live_bytes=5000, live_count=1, alloc_bytes=5077),
    "do_realloc_zero": dict(allocs=1 + zero_ptr, frees=1, live_bytes=0, live_count=zero_ptr,
                            alloc_bytes=50),
    "do_reallocarray": dict(allocs=2, frees=1, live_bytes=160, live_count=1, alloc_bytes=240),
    "do_posix_memalign": dict(allocs=1, frees=0, live_bytes=100, live_count=1, alloc_bytes=100),
    "do_aligned_alloc": dict(allocs=1 + odd_ok, frees=odd_ok, live_bytes=256, live_count=1,
                             alloc_bytes=256 + 16 * odd_ok),
    "do_memalign": dict(allocs=1, frees=0, live_bytes=200, live_count=1, alloc_bytes=200),
    "do_valloc": dict(allocs=1, frees=0, live_bytes=300, live_count=1, alloc_bytes=300),
    "do_pvalloc": dict(allocs=1, frees=0, live_bytes=300, live_count=1, alloc_bytes=300),
}
for fn, ex in heap.items():
    t.check_site_numbers(rep, fn, ex, kind="heap")
mmap = {
    "do_mmap_split": dict(allocs=1, frees=0, live_bytes=12 * P, live_count=1,
                          alloc_bytes=16 * P, peak_bytes=16 * P),
    "do_mmap_pieces": dict(allocs=1, frees=1, live_bytes=0, live_count=0, alloc_bytes=8 * P,
                           peak_bytes=8 * P),
    "do_mmap_odd": dict(allocs=1, frees=0, live_bytes=2 * P, live_count=1, alloc_bytes=2 * P),
    "do_mremap": dict(allocs=2, frees=1, live_bytes=8 * P, live_count=1, alloc_bytes=12 * P),
    "do_mmap_reserve": dict(allocs=1, frees=0, live_bytes=3 * P, live_count=1, alloc_bytes=3 * P),
    "do_mmap_fixed": dict(allocs=2, frees=0, live_bytes=8 * P, live_count=2, alloc_bytes=10 * P),
}
for fn, ex in mmap.items():
    t.check_site_numbers(rep, fn, ex, kind="mmap")
for fn in ("do_file_mmap", "do_mmap_errors"):
    t.eq(f"{fn}: sites (file, shared and failed mappings are not allocations)", [],
         [(s["kind"], s["alloc_bytes"]) for s in t.sites_in(rep, fn)])
for fn in heap:
    t.eq(f"{fn}: no mmap site", [], t.sites_in(rep, fn, "mmap"))
if rep:
    last = rep["points"][-1]
    ours = sum(v["live_bytes"] for v in mmap.values())
    t.true("last point's mmap bytes include the program's mappings", last["mmap"] >= ours,
           f"mmap {last['mmap']} < {ours}")
    for kind in ("heap", "mmap"):
        t.eq(f"last point's {kind} = the sum of its sites' live bytes", last[kind],
             sum(s["live_bytes"] for s in rep["sites"] if s["kind"] == kind))
    t.eq("last point's heap_count = the sum of heap sites' live counts", last["heap_count"],
         sum(s["live_count"] for s in rep["sites"] if s["kind"] == "heap"))
    # No counter anywhere went below zero (a double-counted free would wrap).
    bad = [(s["id"], s["frames"][0]["function"] if s["frames"] else "?", s["live_count"])
           for s in rep["sites"] if s["live_count"] > s["allocs"] or s["frees"] > s["allocs"]]
    t.eq("sites with more frees than allocations", [], bad)
t.done()
