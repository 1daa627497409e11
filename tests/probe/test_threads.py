# SPDX-License-Identifier: MIT
# Threads: 8 threads x 100k malloc/free under the probe (with a 10 ms sampler racing them): exact
# totals per site, the same output as without the probe, and an exit within the timeout; then 20
# forks while the threads allocate, each child's trace exact.
import glob
import os

from probetest import Test

t = Test("threads", 1)
prog = t.progs[0]
THREADS, PAIRS, KEEP_EVERY = 8, 100000, 1000
kept = PAIRS // KEEP_EVERY

plain = t.run([prog], timeout=60)
out = t.path("threads.mgt")
r = t.probe([prog], out, ["--interval", "10"], timeout=60)
t.same_run("prog_threads", plain, r)
rep = t.report(out)

churn_bytes = THREADS * sum(16 + i % 64 for i in range(PAIRS))
t.check_site_numbers(rep, "churn", dict(allocs=THREADS * PAIRS, frees=THREADS * PAIRS,
                                        live_bytes=0, live_count=0, alloc_bytes=churn_bytes))
sites = t.check_site_numbers(rep, "keep_one", dict(
    allocs=THREADS * kept, frees=(THREADS // 2) * kept, live_bytes=(THREADS // 2) * kept * 48,
    live_count=(THREADS // 2) * kept, alloc_bytes=THREADS * kept * 48))
if sites:
    t.eq("keep_one: one site (same stack in every thread)", 1, len(sites))
    t.true("keep_one: peak within [live, all kept]",
           (THREADS // 2) * kept * 48 <= sites[0]["peak_bytes"] <= THREADS * kept * 48,
           f"peak {sites[0]['peak_bytes']}")
churn = t.sites_in(rep, "churn")
if churn:
    t.eq("churn: one site", 1, len(churn))
    t.true("churn: peak at most 8 blocks of 79 bytes", churn[0]["peak_bytes"] <= THREADS * 79,
           f"peak {churn[0]['peak_bytes']}")
if rep:
    t.eq("process.ended", True, rep["process"]["ended"])
    t.true("the sampler took snapshots while the threads ran", rep["process"]["snapshots"] >= 2,
           f"snapshots {rep['process']['snapshots']}")

# fork x 20 while the threads allocate: no deadlock, every child's trace reads back exact.
sub = t.path("fork")
os.mkdir(sub)
r = t.probe([prog, "fork"], os.path.join(sub, "threads.mgt"), ["--interval", "10"], timeout=60)
t.eq("fork under load: exit status", 0, r.returncode)
t.eq("fork under load: children ok", "20 children ok", r.stdout.decode().splitlines()[0]
     if r.stdout else "")
kids = sorted(glob.glob(os.path.join(sub, "threads.*.mgt")))
t.eq("fork under load: child traces", 20, len(kids))
for k in kids:
    rep = t.report(k, top=0)
    if not rep:
        continue
    t.check_site_numbers(rep, "in_child", dict(allocs=1, live_bytes=4242),
                         what=f"{os.path.basename(k)}: ")
    t.eq(f"{os.path.basename(k)}: ended", True, rep["process"]["ended"])
t.done()
