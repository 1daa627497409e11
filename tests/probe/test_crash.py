# SPDX-License-Identifier: MIT
# Sudden death: after SIGKILL or abort() the trace still reads back (mgreport exits 0, the process
# is marked not ended) with every site as of the last snapshot; after _exit the final snapshot is
# there too. mgprobe returns the program's own status (128+signal for a signal).
from probetest import Test

t = Test("crash", 1)
prog = t.progs[0]
before = dict(allocs=5, frees=0, live_bytes=5 * 1111, live_count=5)
after = dict(allocs=3, frees=0, live_bytes=3 * 2222, live_count=3)

cases = [
    # mode, signal (or exit status), interval, the last snapshot has after_marker's blocks
    ("kill", 9, "60000", False),      # last snapshot: the step marker
    ("abort", 6, "60000", False),
    ("sampler", 9, "20", True),       # the sampler snapshotted after after_marker()
    ("_exit", None, "60000", True),   # _exit writes the final snapshot
]
for mode, sig, interval, has_after in cases:
    plain = t.run([prog, mode])
    want = -sig if sig else 3
    t.eq(f"{mode}: plain exit status", want, plain.returncode)
    out = t.path(f"crash-{mode}.mgt")
    r = t.probe([prog, mode], out, ["--interval", interval])
    t.eq(f"{mode}: mgprobe exit status", 128 + sig if sig else 3, r.returncode)
    t.eq(f"{mode}: stdout", plain.stdout, r.stdout)
    rep = t.report(out)
    if not rep:
        continue
    p = rep["process"]
    t.eq(f"{mode}: process.ended", not sig, p["ended"])
    t.eq(f"{mode}: process.truncated", False, p["truncated"])
    t.eq(f"{mode}: process.steps", 1, p["steps"])
    t.eq(f"{mode}: last point's step", 1, rep["points"][-1]["step"] if rep["points"] else None)
    t.check_site_numbers(rep, "before_marker", before, what=f"{mode}: ")
    if has_after:
        t.check_site_numbers(rep, "after_marker", after, what=f"{mode}: ")
    else:
        t.eq(f"{mode}: sites of after_marker (no snapshot after it)", [],
             t.sites_in(rep, "after_marker"))
t.done()
