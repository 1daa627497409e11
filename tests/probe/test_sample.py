# SPDX-License-Identifier: MIT
# Sampled mode (--sample 64K) on prog_sample.c, beside exact mode: exact mode's numbers are the
# program's own; sampled, the 100,000 kept blocks are an estimate whose band holds the truth,
# blocks over 4R (grown by realloc) and anonymous mappings are exact, and realloc across recorded
# and unrecorded blocks leaves nothing behind. With MGPROBE_SAMPLE_SEED the same program samples
# the same blocks run after run (another seed, others), and a forked child draws its own.
import glob

from probetest import Test

t = Test("sample", 1)
prog = t.progs[0]
R = 64 << 10
SMALL = dict(allocs=100000, live_bytes=25600000, live_count=100000)
GROWN = dict(allocs=200, frees=200, live_bytes=0, live_count=0)
MAPS = dict(allocs=8, live_bytes=8 * 65536, live_count=8)

rep = t.plain_and_probed("exact", [prog], "exact.mgt")
t.check_site_numbers(rep, "keep_small", SMALL, what="exact: ")
t.check_site_numbers(rep, "start_small", dict(allocs=200, frees=200, live_bytes=0), what="exact: ")
t.check_site_numbers(rep, "grow_big", GROWN, what="exact: ")
t.check_site_numbers(rep, "shrink_back", dict(allocs=100, live_bytes=6400, live_count=100), what="exact: ")
t.check_site_numbers(rep, "map_some", MAPS, kind="mmap", what="exact: ")
if rep:
    t.eq("exact: no sample_bytes", None, rep["process"].get("sample_bytes"))
    t.eq("exact: no band", [], [s["id"] for s in rep["sites"] if "live_bytes_band" in s])

rep = t.plain_and_probed("sampled", [prog], "sampled.mgt", ["--sample", "64K"])
if rep:
    t.eq("sampled: sample_bytes", R, rep["process"].get("sample_bytes"))
    small = t.sites_in(rep, "keep_small")
    if t.eq("sampled: one keep_small site", 1, len(small)):
        s = small[0]
        err = abs(s["live_bytes"] - SMALL["live_bytes"])
        # The band is two standard deviations; the truth is within twice that but for 1 run in 10^4.
        t.true("sampled: keep_small's estimate within twice its band of 25,600,000",
               0 < s["live_bytes_band"] < 0.3 * SMALL["live_bytes"] and err <= 2 * s["live_bytes_band"],
               f"estimate {s['live_bytes']} +- {s['live_bytes_band']:.0f}")
        t.true("sampled: the estimated count near 100,000", abs(s["live_count"] - 100000) < 30000,
               s["live_count"])
    t.check_site_numbers(rep, "grow_big", GROWN, what="sampled: ")
    t.eq("sampled: grow_big's band (always recorded)", [0],
         [s["live_bytes_band"] for s in t.sites_in(rep, "grow_big")])
    t.check_site_numbers(rep, "map_some", MAPS, kind="mmap", what="sampled: ")
    t.eq("sampled: map_some's band (mappings are never sampled)", [0],
         [s["live_bytes_band"] for s in t.sites_in(rep, "map_some", "mmap")])
    t.true("sampled: start_small holds nothing (its recorded blocks moved on)",
           all(s["live_bytes"] == 0 for s in t.sites_in(rep, "start_small")))
    t.true("sampled: shrink_back holds at most the blocks it made",
           all(s["live_count"] <= 100 * 1100 for s in t.sites_in(rep, "shrink_back")))
    t.eq("sampled: last point's heap = the sum of the sites' live bytes", rep["points"][-1]["heap"],
         sum(s["live_bytes"] for s in rep["sites"] if s["kind"] == "heap"))


def keep_small_of(trace):
    """keep_small's estimated (live bytes, live count) in a trace, or None."""
    rep = t.report(trace)
    small = t.sites_in(rep, "keep_small") if rep else []
    return (small[0]["live_bytes"], small[0]["live_count"]) if len(small) == 1 else None


def seeded(seed, name):
    """keep_small's estimate in a run sampled with MGPROBE_SAMPLE_SEED=seed, or None."""
    out = t.path(name)
    r = t.probe([prog], out, ["--sample", "64K"], extra_env={"MGPROBE_SAMPLE_SEED": str(seed)})
    t.eq("seed %d: the program exits 0" % seed, 0, r.returncode)
    return keep_small_of(out)


first, again, other = seeded(5, "seed5a.mgt"), seeded(5, "seed5b.mgt"), seeded(6, "seed6.mgt")
t.true("seeded: the same seed samples the same blocks", first is not None and first == again,
       (first, again))
t.true("seeded: another seed samples others", other is not None and other != first, (first, other))


def twins(seed, name):
    """keep_small_of the parent and of the forked child of `prog_sample twins`."""
    out = t.path(name + ".mgt")
    env = {"MGPROBE_SAMPLE_SEED": str(seed)} if seed else {}
    r = t.probe([prog, "twins"], out, ["--sample", "64K"], extra_env=env)
    t.eq("twins (seed %d): the program exits 0" % seed, 0, r.returncode)
    kids = glob.glob(t.path(name + ".*.mgt"))
    t.eq("twins (seed %d): one child trace" % seed, 1, len(kids))
    return keep_small_of(out), keep_small_of(kids[0]) if kids else None


for seed in (0, 7):
    parent, child = twins(seed, "twins-loop%d" % seed)
    t.true("twins (seed %d): the child samples other blocks than its parent" % seed,
           None not in (parent, child) and parent != child, (parent, child))
t.eq("twins: with a seed, parent and child repeat", twins(7, "twins7"), twins(7, "twins7b"))
t.done()
