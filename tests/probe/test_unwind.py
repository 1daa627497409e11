# SPDX-License-Identifier: MIT
# The probe's own unwinder (mgp_unwind) against libunwind: every program runs with
# MGPROBE_UNWIND=check, which unwinds each stack both ways and prints how many it compared, how
# many differed and how many it left to libunwind. Required: none differ, and only the stacks
# through a signal frame or on another stack than the thread's (which the probe's unwinder does
# not follow) go to libunwind. Programs: prog_unwind.cpp with and without frame pointers (deep
# recursion, exceptions, a realigned frame, alloca, threads, a handler that allocates on the
# thread's stack and on an alternate stack, a coroutine), prog_threads.c, and Python (mixed
# Python and native stacks, threads) on Debian's python3 and pyenv's 3.12 and 3.13. Also:
# MGPROBE_UNWIND=libunwind and the default give the same sites, and a callee called in turn by two
# callers with the same frame (the thread's kept last stack must not lend one caller's frames to
# the other) gives each caller's site exactly its own allocations, and so do two callees called in
# turn from one call site.
import os
import re

from probetest import Test

t = Test("unwind", 3)
unwind_fp, unwind_nofp, threads = t.progs
SUMMARY = re.compile(r"^mgprobe: unwind check: (\d+) stacks compared, (\d+) mismatches, "
                     r"(\d+) left to libunwind; \d+ return addresses in the table; "
                     r"(\d+) of (\d+) frames followed from the thread's last stack$", re.M)
PY = r"""
import json, threading
def down(n):
    if n == 0:
        return [bytes(1000 + i) for i in range(300)]
    return down(n - 1)
for d in range(0, 60, 3):
    down(d)
ts = [threading.Thread(target=down, args=(20,)) for _ in range(3)]
[x.start() for x in ts]
[x.join() for x in ts]
print(len(json.dumps({str(i): list(range(20)) for i in range(3000)})))
"""


def checked(what, cmd, min_stacks, fallbacks=None):
    """Runs cmd plainly and under check mode; returns the summary's (stacks, mismatches, left)."""
    plain = t.run(cmd)
    r = t.preload(cmd, {"MGPROBE_UNWIND": "check", "MGPROBE_OUTPUT": t.path("check.mgt")},
                  timeout=300)
    t.same_run(what, plain, r)
    err = r.stderr.decode(errors="replace")
    sums = [tuple(map(int, m)) for m in SUMMARY.findall(err)]
    if not t.eq(f"{what}: one check summary", 1, len(sums)):
        print(err[-3000:])
        return
    stacks, mismatches, left, followed, frames = sums[0]
    print(f"{what}: {stacks} stacks compared, {mismatches} mismatches, {left} left to libunwind, "
          f"{followed} of {frames} frames followed from the thread's last stack")
    t.eq(f"{what}: stacks that differ", 0, mismatches)
    t.true(f"{what}: at least {min_stacks} stacks compared", stacks >= min_stacks, stacks)
    if fallbacks is not None:
        t.eq(f"{what}: stacks left to libunwind (signal frames, another stack)", fallbacks, left)
    else:
        t.true(f"{what}: under 1% of the stacks left to libunwind", left * 100 < stacks, left)
    if mismatches:
        print(err[-3000:])


# 10 handler calls on the thread's stack and 10 on an alternate one (20 stacks through a signal
# frame) and 5 allocations on a coroutine's stack; every other stack is unwound by the probe's
# unwinder.
checked("prog_unwind (frame pointers)", [unwind_fp], 3000, 25)
checked("prog_unwind (-fomit-frame-pointer -O2)", [unwind_nofp], 3000, 25)
checked("prog_threads", [threads], 800000, 0)
checked("python3 (Debian)", ["/usr/bin/python3", "-c", PY], 5000)
for v in ("3.12.1", "3.13.0"):
    exe = os.path.expanduser(f"~/.pyenv/versions/{v}/bin/python3")
    if os.path.exists(exe):
        checked(f"python {v}", [exe, "-c", PY], 5000)
    else:
        t.skip(f"python {v}", f"{exe} is not installed")

# The default (the probe's unwinder) and libunwind alone find the same sites with the same counts.
def sites(mode):
    out = t.path(f"{mode}.mgt")
    t.preload([unwind_nofp], {"MGPROBE_UNWIND": mode, "MGPROBE_OUTPUT": out})
    rep = t.report(out)
    return sorted((tuple(f["function"] for f in s["frames"]), s["allocs"], s["alloc_bytes"])
                  for s in (rep["sites"] if rep else []))


by_probe, by_libunwind = sites("probe"), sites("libunwind")
t.true("sites found", len(by_probe) > 10, len(by_probe))
t.eq("the same sites and counts with MGPROBE_UNWIND=probe and =libunwind", by_libunwind, by_probe)

# One callee called in turn from two callers with the same frame: each stack is the last one up to
# the callee's caller, so only the caller's return address tells them apart. Each caller's site
# holds exactly its own allocations (a kept stack reused past a changed caller would give all
# 1,000 to one of them). And two callees of different frame sizes called in turn from one call
# site: the unwinder follows the last stack from that call site out, at the same index, so only
# the frames it stepped before tell the stacks apart (mgp_unwind_stack_id must change).
for prog, name in ((unwind_fp, "frame pointers"), (unwind_nofp, "-fomit-frame-pointer")):
    out = t.path("same.mgt")
    t.preload([prog], {"MGPROBE_OUTPUT": out})
    rep = t.report(out) or {"sites": []}
    for caller, count, size in (("same_caller_a", 700, 4099), ("same_caller_b", 300, 4099),
                                ("diff_callee_big", 400, 4101), ("diff_callee_small", 600, 4101)):
        got = [(s["allocs"], s["alloc_bytes"]) for s in rep["sites"]
               if any(caller in (f["function"] or "") for f in s["frames"])]
        t.eq(f"{name}: {caller}'s site: allocations and bytes", [(count, count * size)], got)
bad = t.preload([unwind_fp], {"MGPROBE_UNWIND": "fast", "MGPROBE_OUTPUT": t.path("bad.mgt")})
t.true("MGPROBE_UNWIND=fast: one line naming the choices",
       b"bad MGPROBE_UNWIND=fast (expected probe|libunwind|check)" in bad.stderr, bad.stderr)
t.done()
