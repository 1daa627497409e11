# SPDX-License-Identifier: MIT
# test_gpu.py: suite `gpu`: runs gpu_alloc under the real probe and checks every CUDA allocation
# came through CUPTI once, as a device site whose stack names the calling function. Exits 77
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
    print(plain.stdout.decode(errors="replace").strip())
    sys.exit(77)
t.eq("gpu_alloc plain: exit status", 0, plain.returncode)
granule = int(plain.stdout.decode().split()[-1])

out = t.path("gpu.mgt")
probed = t.probe([prog], out, timeout=300)
t.eq("under the probe: exit status", 0, probed.returncode)
t.eq("no CUPTI notice", [], [l for l in probe_lines(probed.stderr) if "CUDA" in l])
rep = t.report(out)


def device_through(function):
    return [s for s in t.sites_through(rep, function) if s["kind"] == "device"]


expect = {
    "do_malloc_loop": {"allocs": 10, "frees": 7, "live_bytes": 3 * MIB},
    "do_async": {"allocs": 4, "frees": 4, "live_bytes": 0},
    "do_host": {"allocs": 1, "frees": 0, "live_bytes": MIB},
    "do_managed": {"allocs": 1, "frees": 0, "live_bytes": 2 * MIB},
    "do_vmm": {"allocs": 2, "frees": 1, "live_bytes": granule},
}
for fn, want in expect.items():
    sites = device_through(fn)
    if not t.true(f"{fn}: a device site whose stack names it", sites):
        continue
    got = t.totals(sites)
    for k, v in want.items():
        t.eq(f"{fn}: {k}", v, got[k])

# Every device site comes from one of those functions (nothing counted twice elsewhere).
stray = [s for s in (rep["sites"] if rep else []) if s["kind"] == "device"
         and not any(f["function"] in expect for f in s["frames"])]
t.eq("device sites outside the program's functions", [], [s["frames"][:3] for s in stray])

# --no-cuda: no device sites at all.
out2 = t.path("nocuda.mgt")
r = t.probe([prog], out2, opts=["--no-cuda"], timeout=300)
t.eq("--no-cuda: exit status", 0, r.returncode)
rep2 = t.report(out2)
t.eq("--no-cuda: device sites", 0, len([s for s in (rep2["sites"] if rep2 else []) if s["kind"] == "device"]))
t.done()
