# SPDX-License-Identifier: MIT
"""bench_torch.py: what the probe costs on a real PyTorch training run, side by side with heaptrack.

    python3 bench/bench_torch.py BUILD_DIR [--reps 3] [--steps 150] [--python /usr/bin/python3]

Runs samples/torch_vision_train.py (CPU, small CNN, batch 32, 32x32 FakeData) plainly, under
`mgprobe run` and under `heaptrack`, interleaved (plain, mg, heaptrack, plain, mg, ...), and prints
per contender the median step time after warmup (the sample's `step_ms`, steps 11..N), the median
wall time of the whole process (import and exit included) and the trace sizes. Writes
into a temporary directory and removes it. Not a test: this machine is noisy, compare ratios only.
"""
import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SAMPLE = os.path.join(HERE, "..", "samples", "torch_vision_train.py")


def run(cmd, cwd):
    t0 = time.perf_counter()
    r = subprocess.run(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    wall = time.perf_counter() - t0
    out = r.stdout.decode(errors="replace")
    m = re.search(r"^done: steps \d+ loss (\S+) .* step_ms (\S+)", out, re.M)
    if r.returncode != 0 or not m:
        sys.exit(f"{' '.join(cmd)}: exit {r.returncode}\n{out[-2000:]}{r.stderr.decode(errors='replace')[-2000:]}")
    return float(m.group(2)), wall, m.group(1)


def size_of(paths):
    return sum(os.path.getsize(p) for p in paths)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("build")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--steps", type=int, default=150)
    ap.add_argument("--python", default="/usr/bin/python3")
    a = ap.parse_args()
    mgprobe = os.path.abspath(os.path.join(a.build, "libmgprobe", "mgprobe"))
    heaptrack = shutil.which("heaptrack")
    job = [a.python, os.path.abspath(SAMPLE), "--steps", str(a.steps), "--seed", "0"]
    tmp = tempfile.mkdtemp(prefix="mg-bench-torch-")
    res = {"native": [], "mg": [], "heaptrack": []}
    sizes = {"mg": [], "heaptrack": []}
    losses = set()
    try:
        for rep in range(a.reps):
            for who in res:
                d = os.path.join(tmp, f"{who}{rep}")
                os.mkdir(d)
                if who == "native":
                    cmd = job
                elif who == "mg":
                    cmd = [mgprobe, "run", "-o", "run.mgt", "--", *job]
                else:
                    if not heaptrack:
                        continue
                    cmd = [heaptrack, "-o", os.path.join(d, "ht"), *job]
                step_ms, wall, loss = run(cmd, d)
                losses.add(loss)
                res[who].append((step_ms, wall))
                files = [os.path.join(d, f) for f in os.listdir(d)]
                if who != "native":
                    sizes[who].append(size_of(files))
                shutil.rmtree(d)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    base = statistics.median(s for s, _ in res["native"])
    base_wall = statistics.median(w for _, w in res["native"])
    print(f"samples/torch_vision_train.py --steps {a.steps} (batch 32, 32x32, small CNN, CPU), "
          f"median of {a.reps}, interleaved; final losses seen: {sorted(losses)}")
    print(f"{'':10} {'step ms':>8} {'x native':>8} {'wall s':>7} {'x native':>8} {'trace':>10}")
    for who, v in res.items():
        if not v:
            continue
        s = statistics.median(x for x, _ in v)
        w = statistics.median(x for _, x in v)
        sz = f"{statistics.median(sizes[who]) / 2**20:.1f} MiB" if sizes.get(who) else "-"
        print(f"{who:10} {s:8.2f} {s / base:8.2f} {w:7.2f} {w / base_wall:8.2f} {sz:>10}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
