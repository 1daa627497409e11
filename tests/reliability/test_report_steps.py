# SPDX-License-Identifier: MIT
# Issue 13.12: step numbers are u64 and may come from any counter. Near 2^64 (where a double no
# longer tells neighbouring steps apart), wrapping past 2^64 - 1, or reset to 1 halfway: a run
# flat for 200 points that then grows 1 MiB per step (a leak that begins after the run settled:
# issue 12's late onset, known in 200 steps) is a leak in text and JSON alike, and no step past 2^64 - 1 is
# printed. A step that goes backwards continues the axis as a new segment, with a notice.
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "probe"))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "report"))
import mgtrace  # noqa: E402
from probetest import Test  # noqa: E402
from reltest import valid_json  # noqa: E402

t = Test("report-steps", 0)
MB = 1 << 20


def mgreport(*args):
    return subprocess.run([t.mgreport, *args], capture_output=True, timeout=60)


TOP = 1 << 64


def step_trace(path, steps):
    with open(path, "wb") as f:
        w = mgtrace.TraceWriter(f)
        w.process()
        live = 0
        for i, s in enumerate(steps):
            live += MB if i >= 200 else 0
            w.step((i + 1) * 10**8, s)
            n = max(i - 199, 0)
            site = dict(id=2, live_bytes=live, live_count=n, allocs=n, alloc_bytes=live,
                        frees=0, peak_bytes=live, cohorts={0: live})
            w.snapshot((i + 1) * 10**8, s, 100 * MB + live, live, n, sites=[site],
                       flags=mgtrace.SNAP_STEP | (mgtrace.SNAP_FULL if i == 0 else 0))
        w.end(len(steps) * 10**8 + 1)


cases = {
    "steps up to 2^64 - 1": [TOP - 400 + i for i in range(400)],
    "steps that wrap past 2^64 - 1": [TOP - 200 + i for i in range(200)] + list(range(200)),
    "a counter reset halfway": list(range(1, 201)) + list(range(1, 201)),
}
for what, steps in cases.items():
    path = t.path("steps.mgt")
    step_trace(path, steps)
    rt, rj = mgreport(path), mgreport(path, "--json")
    t.eq(f"{what}: text exit 0", 0, rt.returncode)
    t.eq(f"{what}: json exit 0", 0, rj.returncode)
    rep = valid_json(t, what, rj.stdout)
    text = rt.stdout.decode(errors="replace")
    if not rep:
        continue
    verdict = {x["name"]: x["verdict"] for x in rep.get("series", [])}.get("rss")
    t.eq(f"{what}: 200 flat points, then 200 of 1 MiB per step: a leak in JSON", "leak", verdict)
    t.true(f"{what}: the text says leak too", text.startswith("leak") or "\nleak" in text,
           text[:300])
    t.true(f"{what}: no step printed past 2^64 - 1", "18446744073709551616" not in text and
           "1.8446744073709552e+19" not in text, text[:300])
    t.true(f"{what}: text does not say no data", "no data" not in text, text[:300])
t.done()
