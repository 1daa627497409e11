# SPDX-License-Identifier: MIT
"""bench_memray.py: mg with Python frames side by side with memray, in one interleaved run.

    python3 bench/bench_memray.py BUILD_DIR [--memray /work/wt/venv-memray/bin/memray] [--reps 3]
                                  [--steps 150] [--python /usr/bin/python3] [--only torch|loop]

Contenders: native; mg (Python frames, the default); mg --no-python (native frames only);
mg --python-objects (PYTHONMALLOC=malloc); memray run (its default, Python frames); memray run
--native. Workloads: samples/torch_vision_train.py (the median step time after warmup, the
sample's step_ms, and the wall time of the whole process) and an allocation-heavy pure-Python
loop (wall time). For each: the peak RSS of the process (getrusage of the child) and the trace
bytes. Runs are interleaved (every contender once per repetition) and medians are printed with
ratios to native. memray is an option (pip install memray, in a venv); without it its rows are
left out and the script says so. Not a test: this machine is noisy, compare ratios only.
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
LOOP = """
import sys
def work(n):
    keep = []
    for i in range(n):
        d = {"id": i, "name": "item%d" % i, "tags": [str(i), str(i * 2)]}
        keep.append(d)
        if len(keep) > 5000:
            keep = keep[2500:]
        if i % 64 == 0:
            keep.append(bytes(2048))
    return len(keep)
print(work(int(sys.argv[1])))
"""


def run(cmd, cwd, env):
    """Runs cmd; returns (the sample's step_ms or None, wall s, peak RSS bytes of the process)."""
    out_path = os.path.join(cwd, "..", "out.txt")
    with open(out_path, "w+b") as out:
        t0 = time.perf_counter()
        p = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT)
        _, status, ru = os.wait4(p.pid, 0)
        wall = time.perf_counter() - t0
        p.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        text = out.read().decode(errors="replace")
    if p.returncode != 0:
        sys.exit(f"{' '.join(cmd)}: exit {p.returncode}\n{text[-3000:]}")
    m = re.search(r"step_ms (\S+)", text)
    return (float(m.group(1)) if m else None), wall, ru.ru_maxrss * 1024


def contenders(mgprobe, memray):
    c = {"native": lambda job: job,
         "mg": lambda job: [mgprobe, "run", "-o", "run.mgt", "--", *job],
         "mg --no-python": lambda job: [mgprobe, "run", "-o", "run.mgt", "--no-python", "--", *job],
         "mg --python-objects": lambda job: [mgprobe, "run", "-o", "run.mgt", "--python-objects", "--", *job]}
    if memray:
        c["memray"] = lambda job: [memray, "run", "-q", "-f", "-o", "run.bin", *job[1:]]
        c["memray --native"] = lambda job: [memray, "run", "-q", "--native", "-f", "-o", "run.bin", *job[1:]]
    return c


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("build")
    ap.add_argument("--memray", default="/work/wt/venv-memray/bin/memray")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--steps", type=int, default=150)
    ap.add_argument("--loop", type=int, default=1_000_000, help="iterations of the pure-Python loop")
    ap.add_argument("--python", default="/usr/bin/python3")
    ap.add_argument("--only", choices=["torch", "loop"])
    a = ap.parse_args()
    mgprobe = os.path.abspath(os.path.join(a.build, "libmgprobe", "mgprobe"))
    memray = a.memray if os.access(a.memray, os.X_OK) else None
    if not memray:
        print(f"memray not found at {a.memray}: its rows are left out "
              "(python3 -m venv --system-site-packages V && V/bin/pip install memray)")
    tmp = tempfile.mkdtemp(prefix="mg-bench-memray-")
    loop_py = os.path.join(tmp, "loop.py")
    with open(loop_py, "w") as f:
        f.write(LOOP)
    env = dict(os.environ, OMP_NUM_THREADS="1")
    env.pop("PYTHONMALLOC", None)
    jobs = {"torch": [a.python, os.path.abspath(SAMPLE), "--steps", str(a.steps), "--seed", "0"],
            "loop": [a.python, loop_py, str(a.loop)]}
    if a.only:
        jobs = {a.only: jobs[a.only]}
    cs = contenders(mgprobe, memray)
    res = {(j, c): [] for j in jobs for c in cs}
    try:
        for rep in range(a.reps):
            for j, job in jobs.items():
                for who, mk in cs.items():
                    d = os.path.join(tmp, f"r{rep}")
                    os.makedirs(d, exist_ok=True)
                    step, wall, rss = run(mk(job), d, env)
                    size = sum(os.path.getsize(os.path.join(d, f)) for f in os.listdir(d))
                    res[(j, who)].append((step, wall, rss, size))
                    shutil.rmtree(d)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"median of {a.reps}, interleaved; load average at the end {os.getloadavg()[0]:.1f} "
          f"on {os.cpu_count()} CPUs")
    for j in jobs:
        print(f"\n{j}: {' '.join(os.path.basename(x) for x in jobs[j][1:])}")
        print(f"{'':20} {'step ms':>8} {'x':>5} {'wall s':>7} {'x':>5} {'max RSS':>9} {'trace':>9}")
        nat = res[(j, "native")]
        bs = statistics.median(r[0] for r in nat) if j == "torch" else None
        bw = statistics.median(r[1] for r in nat)
        for who in cs:
            v = res[(j, who)]
            s = statistics.median(r[0] for r in v) if j == "torch" else None
            w = statistics.median(r[1] for r in v)
            rss = [r[2] for r in v if r[2]]
            m = f"{statistics.median(rss) / 2**20:.0f} MiB" if rss else "-"
            sz = statistics.median(r[3] for r in v)
            st = f"{s:8.2f} {s / bs:5.2f}" if s else f"{'-':>8} {'':5}"
            print(f"{who:20} {st} {w:7.2f} {w / bw:5.2f} {m:>9} {sz / 2**20:7.2f} MiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
