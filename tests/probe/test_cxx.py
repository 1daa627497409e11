# SPDX-License-Identifier: MIT
# C++: new, new[] and a template member's new are attributed to the demangled C++ functions that
# called them, at their source lines, below the libstdc++ operator new frames.
import os

from probetest import Test, marker_line

t = Test("cxx", 1)
prog = t.progs[0]
src = t.source("prog_cxx.cpp")
t.eq("output", "9 0 3\n", t.run([prog]).stdout.decode())
rep = t.plain_and_probed("prog_cxx", [prog], "cxx.mgt")


def caller(s):
    """The first frame that is not operator new itself (libstdc++'s or an inlined one)."""
    for i, f in enumerate(s["frames"]):
        if not f["function"].startswith("operator new"):
            return i, f
    return None, None


def sites_by_caller(name):
    return [s for s in (rep["sites"] if rep else []) if caller(s)[1] and
            caller(s)[1]["function"] == name]


expect = {
    "ns::Maker::build(int)": ("SITE:build", dict(allocs=10, frees=4, live_bytes=240,
                                                 live_count=6, alloc_bytes=400)),
    "ns::Maker::build_array(int)": ("SITE:build_array", dict(allocs=2, frees=1, live_bytes=100,
                                                             live_count=1, alloc_bytes=200)),
    "ns::Pool<ns::Widget>::grow(unsigned long)": ("SITE:grow", dict(
        allocs=3, frees=0, live_bytes=120, live_count=3, alloc_bytes=120)),
}
for fn, (marker, ex) in expect.items():
    sites = sites_by_caller(fn)
    if not sites:
        have = sorted({caller(s)[1]["function"] for s in (rep["sites"] if rep else [])
                       if caller(s)[1]})
        t.fail(f"no site called from {fn!r}; callers present: {have}")
        continue
    tot = t.totals(sites)
    for k, v in ex.items():
        t.eq(f"{fn}: {k}", v, tot[k])
    for s in sites:
        i, f = caller(s)
        t.true(f"{fn}: frames above it are operator new", i >= 1 and all(
            x["function"].startswith("operator new") for x in s["frames"][:i]),
            [x["function"] for x in s["frames"][:i + 1]])
        t.eq(f"{fn}: file", "prog_cxx.cpp", os.path.basename(f["file"] or ""))
        t.eq(f"{fn}: line", marker_line(src, marker), f["line"])
# No mangled names anywhere in the program's own frames.
mangled = sorted({f["function"] for s in (rep["sites"] if rep else []) for f in s["frames"]
                  if f["function"].startswith("_Z")})
t.eq("mangled function names in the report", [], mangled)
t.done()
