#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# test_gpu_train.py: suite `gpu`: the bundled trainer on the GPU (mgtrain --device cuda) under the
# real probe, judged by mgreport: the device series levels off for `healthy` (the caching
# allocator's segments, reserved in the first steps) and is a leak for `leak`, whose leaking device
# site's stack names the collator's device cache; and the GPU's losses are the CPU's (same seed).
# Exits 77 (skipped) when mgtrain finds no usable GPU (exit 3), as on CI and machines without one.
#
# usage: test_gpu_train.py MGPROBE MGREPORT LIBMGPROBE MGTRAIN
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "probe"))
from probetest import Test, probe_lines  # noqa: E402

NO_GPU = 3                   # mgtrain's exit status for --device cuda without a usable GPU
CACHE = "mge_collate_device_cache"
# The leak's device series is a staircase (a 20 MiB segment every dozen steps): mgreport tells it
# from a slow warmup only with 200+ steps of it after epoch 0's size curriculum, so 500 steps.
STEPS = {"healthy": 300, "leak": 500}
DONE = re.compile(r"^done: steps=(\d+) loss=([0-9.]+) accuracy=([0-9.]+)$", re.M)
STEP = re.compile(r"^step (\d+) loss ([0-9.]+) acc [0-9.]+ rss [0-9.]+ tensors (\d+) dev ([0-9.]+)", re.M)

t = Test("gpu-train", 1)
mgtrain = t.progs[0]
first = t.run([mgtrain, "--device", "cuda", "--steps", "10"], timeout=300)
if first.returncode == NO_GPU:
    t.skip_all(first.stderr.decode(errors="replace").strip())
t.eq("mgtrain --device cuda --steps 10: exit status", 0, first.returncode)


def final(proc):
    m = DONE.search(proc.stdout.decode(errors="replace"))
    return (float(m.group(2)), float(m.group(3))) if m else (None, None)


def dev_column(proc):
    return {int(m.group(1)): (int(m.group(3)), float(m.group(4)))
            for m in STEP.finditer(proc.stdout.decode(errors="replace"))}


# The GPU's losses are the CPU's: the kernels mirror the CPU loops operation for operation (no
# FMA); only expf/logf may differ in the last bit, so the runs drift apart very slowly.
cpu = t.run([mgtrain, "--device", "cpu", "--steps", "100", "--seed", "3"], timeout=300)
gpu = t.run([mgtrain, "--device", "cuda", "--steps", "100", "--seed", "3"], timeout=300)
t.eq("cpu and cuda runs: exit status", (0, 0), (cpu.returncode, gpu.returncode))
(lc, ac), (lg, ag) = final(cpu), final(gpu)
t.true("cuda final loss within 1% of the cpu's", lc is not None and lg is not None
       and abs(lg - lc) <= 1e-2 * lc, f"cpu {lc} cuda {lg}")
t.true("cuda final accuracy within 0.02 of the cpu's", ac is not None and ag is not None
       and abs(ag - ac) <= 0.02, f"cpu {ac} cuda {ag}")


def series(rep, name):
    for s in (rep or {}).get("series", []):
        if s["name"] == name:
            return s
    return None


for scenario, want in (("healthy", ("plateau", "stable")), ("leak", ("leak",))):
    out = t.path(scenario + ".mgt")
    steps = STEPS[scenario]
    p = t.probe([mgtrain, "--device", "cuda", "--scenario", scenario, "--steps", str(steps)], out, timeout=600)
    t.eq(f"{scenario}: exit status under the probe", 0, p.returncode)
    t.eq(f"{scenario}: no CUPTI notice", [], [l for l in probe_lines(p.stderr) if "CUDA" in l])
    cols = dev_column(p)
    t.true(f"{scenario}: a dev column on every log line", len(cols) == steps // 10, f"{len(cols)} lines")
    t.true(f"{scenario}: device tensors stay 32", {v[0] for v in cols.values()} == {32}, str(cols)[:200])
    rep = t.report(out, top=30)
    dev = series(rep, "device")
    t.true(f"{scenario}: the report has a device series", dev is not None,
           [s["name"] for s in (rep or {}).get("series", [])])
    if dev is not None:
        t.true(f"{scenario}: device series verdict in {want}", dev["verdict"] in want,
               f"{dev['verdict']}: {dev.get('why')}")
    device_sites = [s for s in (rep or {}).get("sites", []) if s["kind"] == "device"]
    t.true(f"{scenario}: device sites (the allocator's segments)", device_sites)
    cache = [s for s in device_sites if any(f["function"] == CACHE for f in s["frames"])]
    leaking = sorted((s for s in device_sites if s["verdict"] == "leak"),
                     key=lambda s: s["growth_per_x"] or 0, reverse=True)
    if scenario == "healthy":
        t.eq("healthy: no leaking device site", [], [s["frames"][:3] for s in leaking])
        t.eq("healthy: no device site through the collator's device cache", [], cache)
        first_dev, last_dev = cols.get(10, (0, 0.0))[1], cols.get(steps, (0, 0.0))[1]
        t.true("healthy: reserved device memory flat from step 10 on", first_dev == last_dev,
               f"step 10 {first_dev} MiB, step {steps} {last_dev} MiB")
    else:
        top = leaking[0] if leaking else None
        t.true(f"leak: the top leaking device site's stack names {CACHE}",
               top is not None and any(f["function"] == CACHE for f in top["frames"]),
               top and [f["function"] for f in top["frames"][:8]])
        grow = cols.get(steps, (0, 0.0))[1] - cols.get(100, (0, 0.0))[1]
        # ~1.6 MiB of sources kept per step (docs/ENGINE.md): ~640 MiB over steps 100-500, in
        # 20 MiB segments; a wide band for the average source size.
        t.true("leak: reserved device memory grows 400-900 MiB from step 100 to 500", 400 <= grow <= 900,
               f"{grow:.1f} MiB")
t.done()
