# SPDX-License-Identifier: MIT
# test_gpu.py: suite `gpu`: runs gpu_alloc under the real probe and checks every CUDA allocation
# came through CUPTI once, as a CUDA site of the right kind and device whose stack names the calling
# function, with the activity records joined to it; and the DEVMEM cells by kind. Exits 77
# (skipped) when gpu_alloc finds no GPU or driver, as on CI and machines without one.
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "probe"))
from probetest import Test, probe_lines  # noqa: E402

MIB = 1 << 20

t = Test("gpu", 1)
prog = t.progs[0]
plain = t.run([prog], timeout=120)
if plain.returncode == 77:
    t.skip_all(plain.stdout.decode(errors="replace").strip())
t.eq("gpu_alloc plain: exit status", 0, plain.returncode)
granule = int(plain.stdout.decode().split()[-1])

out = t.path("gpu.mgt")
probed = t.probe([prog], out, timeout=300)
t.eq("under the probe: exit status", 0, probed.returncode)
# One line: the fork after CUDA started (CUDA is not traced in the child); no CUPTI failure.
cuda_lines = [l for l in probe_lines(probed.stderr) if "CUDA" in l]
t.true("one CUDA notice on stderr, the fork's", len(cuda_lines) == 1 and "forked after CUDA" in cuda_lines[0],
       cuda_lines)
rep = t.report(out)
kids = [p for p in (rep or {}).get("processes", [])[1:]]
t.true("the forked child's trace says CUDA is not traced there, and it has no CUDA site",
       len(kids) == 1 and any("not traced in this forked child" in n for n in kids[0]["process"]["notices"])
       and not [s for s in kids[0]["sites"] if s["kind"] in ("device", "pinned", "managed")],
       [(k.get("process", {}).get("notices"), len(k.get("sites", []))) for k in kids])


CUDA_KINDS = ("device", "pinned", "managed")


def cuda_through(function):
    return [s for s in t.sites_through(rep, function) if s["kind"] in CUDA_KINDS]


# kind, device (None: host memory), counts; records: allocation records joined to the site
expect = {
    "do_malloc_loop": ("device", 0, {"allocs": 10, "frees": 7, "live_bytes": 3 * MIB}, 10),
    "do_async": ("device", 0, {"allocs": 4, "frees": 4, "live_bytes": 0}, 4),
    "do_host": ("pinned", None, {"allocs": 1, "frees": 0, "live_bytes": MIB}, 1),
    "do_managed": ("managed", 0, {"allocs": 1, "frees": 0, "live_bytes": 2 * MIB}, 1),
    "do_vmm": ("device", 0, {"allocs": 2, "frees": 1, "live_bytes": granule}, None),
}
for fn, (kind, device, want, records) in expect.items():
    sites = cuda_through(fn)
    if not t.true(f"{fn}: a CUDA site whose stack names it", sites):
        continue
    t.eq(f"{fn}: kind and device", [(kind, device)], sorted({(s["kind"], s["device"]) for s in sites}))
    got = t.totals(sites)
    for k, v in want.items():
        t.eq(f"{fn}: {k}", v, got[k])
    if records is not None:
        t.eq(f"{fn}: activity records joined", records, sum(s.get("cuda", {}).get("records", 0) for s in sites))
async_sites = cuda_through("do_async")
t.true("do_async: records say stream-ordered, from a pool",
       async_sites and all(s.get("cuda", {}).get("async") and s["cuda"].get("pool") for s in async_sites))

# DEVMEM: bytes by kind and device at exit.
cells = {c["name"]: c["bytes"] for c in (rep or {}).get("device_cells", [])}
t.eq("device_cells at exit", {"device:0": 3 * MIB + granule, "pinned": MIB, "managed:0": 2 * MIB},
     {k: v for k, v in cells.items() if not k.startswith("pool")})
notes = [n for n in (rep or {}).get("process", {}).get("notices", []) if n.startswith("CUDA activity")]
t.true("the join's cross-check is in the trace: no record without a call",
       len(notes) == 1 and " 0 records without a call" in notes[0])
print("\n".join(notes))

# Every CUDA site comes from one of those functions (nothing counted twice elsewhere).
stray = [s for s in (rep["sites"] if rep else []) if s["kind"] in CUDA_KINDS
         and not any(f["function"] in expect for f in s["frames"])]
t.eq("device sites outside the program's functions", [], [s["frames"][:3] for s in stray])

# --no-cuda: no device sites at all.
out2 = t.path("nocuda.mgt")
r = t.probe([prog], out2, opts=["--no-cuda"], timeout=300)
t.eq("--no-cuda: exit status", 0, r.returncode)
rep2 = t.report(out2)
t.eq("--no-cuda: CUDA sites", 0, len([s for s in (rep2["sites"] if rep2 else []) if s["kind"] in CUDA_KINDS]))
t.done()
