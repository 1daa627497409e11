# SPDX-License-Identifier: MIT
# One snapshot per tick: the snapshot mgprobe_snapshot() takes is built once and handed to both
# outputs, so the live segment's newest ring entry (read back by the program itself) and the
# trace's point for that snapshot hold the same time and the same figures, field for field.
from probetest import Test

t = Test("snapshot", 1)
prog = t.progs[0]
plain = t.run([prog])
t.eq("plain run: no segment without the probe", b"no segment\n", plain.stdout)

out = t.path("snap.mgt")
r = t.probe([prog], out, ["--interval", "3600000"])  # no sampler tick in between
t.eq("probed run: exit status", 0, r.returncode)
seg = dict((k, int(v)) for k, v in (line.split() for line in r.stdout.decode().splitlines()
                                    if len(line.split()) == 2 and line.split()[1].isdigit()))
t.true("probed run: the segment was read", "t_ns" in seg, r.stdout.decode(errors="replace"))
rep = t.report(out)
if rep and "t_ns" in seg:
    pts = rep["points"]
    t.eq("trace: three snapshots (start, mgprobe_snapshot, exit)", 3, len(pts))
    p = pts[1] if len(pts) == 3 else {}
    t.eq("same snapshot: time", seg["t_ns"] / 1e9, p.get("time"))
    for key in ("heap", "heap_count", "mmap", "rss_anon", "rss_file", "rss_shmem", "free_kept"):
        t.eq(f"same snapshot: {key}", seg[key], p.get(key))
    t.true("the program's 10 blocks of 1000 bytes are live", seg["heap"] >= 10000, seg["heap"])
    t.true("its 3-page mapping is live", seg["mmap"] >= 3 * t.page, seg["mmap"])
    t.true("allocations counted", seg["allocs_total"] >= seg["heap_count"] + 1, seg)
t.done()
