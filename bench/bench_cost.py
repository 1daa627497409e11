#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""bench_cost.py: what each memory profiler costs a training run, side by side in one interleaved run.

    python3 bench/bench_cost.py BUILD_DIR [--reps 3] [--steps 150] [--worker-steps 120]
                                [--sample 512K] [--only torch,workers,mgtrain]
                                [--memray /work/wt/venv-memray/bin/memray] [--baseline LIB]

Contenders: native; mg exact (`mgprobe run`); mg sampled (`mgprobe run --sample BYTES`, when this
mgprobe has it); with --baseline LIB, both again as "mg before" with that libmgprobe.so (an older
build, through MGPROBE_LIB), so a change is measured against what it replaces in the same run;
heaptrack; memray (Python mode); memray --native. Workloads:

  torch    samples/torch_vision_train.py --steps N (Debian's CPU PyTorch): the sample's own step
           time after warmup, the wall time of the whole process, its max RSS and the trace bytes;
  workers  the same with --workers 2 (forked DataLoader workers; memray with --follow-fork): the peak
           of the summed PSS of the process tree (sampled every 50 ms), the peak of its anonymous
           part (Pss_Anon + Pss_Shmem: not moved by other processes mapping the same libraries),
           each worker's peak private memory (Private_Clean + Private_Dirty of smaps_rollup), and
           every trace file's bytes;
  mgtrain  the bundled trainer's healthy run: ms per step from its "step N" lines, and trace bytes.

Every contender runs once per repetition, in turn; the medians are printed with ratios to native.
Not a test: the machine is shared, so the load average is printed and only ratios of one run mean
anything. memray and heaptrack are optional (their rows are left out when absent).
"""
import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SAMPLE = os.path.join(HERE, "..", "samples", "torch_vision_train.py")


def tree(root):
    """(pid, parent pid) of root and all its descendants (from /proc/PID/task/*/children)."""
    out, todo = [], [(root, 0)]
    while todo:
        pid, parent = todo.pop()
        out.append((pid, parent))
        try:
            for tid in os.listdir(f"/proc/{pid}/task"):
                with open(f"/proc/{pid}/task/{tid}/children") as f:
                    todo += [(int(c), pid) for c in f.read().split()]
        except OSError:
            pass
    return out


def rollup(pid):
    """(Pss, Private, anonymous Pss) of one process in bytes, or None when it is gone. The
    anonymous part (Pss_Anon + Pss_Shmem) is the processes' own: the file part also moves with
    other processes on the machine that map the same libraries (other PyTorch runs)."""
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            text = f.read()
    except OSError:
        return None
    kv = {m[0]: int(m[1]) * 1024 for m in re.findall(r"^(\w+):\s+(\d+) kB", text, re.M)}
    return (kv.get("Pss", 0), kv.get("Private_Clean", 0) + kv.get("Private_Dirty", 0),
            kv.get("Pss_Anon", 0) + kv.get("Pss_Shmem", 0))


class Watch(threading.Thread):
    """Samples the process tree's memory every 50 ms: the peaks of the summed PSS and of its
    anonymous part, and each process's peak private memory (keyed by pid) and its parent."""

    def __init__(self, pid):
        super().__init__(daemon=True)
        self.pid, self.stop, self.peak_pss, self.private, self.parent = pid, False, 0, {}, {}
        self.peak_anon = 0

    def run(self):
        while not self.stop:
            total = anon = 0
            for pid, parent in tree(self.pid):
                r = rollup(pid)
                if r:
                    total += r[0]
                    anon += r[2]
                    self.private[pid] = max(self.private.get(pid, 0), r[1])
                    self.parent[pid] = parent
            self.peak_pss = max(self.peak_pss, total)
            self.peak_anon = max(self.peak_anon, anon)
            time.sleep(0.05)


def workers(w, native):
    """The private peaks of the forked workers: the children of the program, which is the root
    natively and the root's (the launcher's: mgprobe, memray, heaptrack) child otherwise."""
    progs = {w.pid} if native else {p for p, parent in w.parent.items() if parent == w.pid}
    return [v for p, v in w.private.items() if w.parent.get(p) in progs]


def run(cmd, cwd, env, watch=False, native=False, timeout=240):
    """Runs cmd in cwd. Returns a dict: step_ms (the sample's, or ms per mgtrain step), wall s,
    max RSS (wait4), peak summed PSS and the workers' private peaks (watch), trace bytes; or None
    when it failed or ran past `timeout` seconds (its process group is killed), with one line."""
    marks = {}
    out_lines = []
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         text=True, errors="replace", start_new_session=True)
    killer = threading.Timer(timeout, lambda: os.killpg(p.pid, 9))
    killer.start()
    w = Watch(p.pid) if watch else None
    if w:
        w.start()
    for line in p.stdout:
        out_lines.append(line)
        m = re.match(r"step (\d+)", line)
        if m:
            marks[int(m.group(1))] = time.perf_counter()
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t0
    killer.cancel()
    if w:
        w.stop = True
        w.join()
    if os.waitstatus_to_exitcode(status) != 0:
        print(f"{' '.join(cmd)}: exit {os.waitstatus_to_exitcode(status)} after {wall:.0f} s"
              + (" (timed out)" if wall >= timeout else "") + ": left out", flush=True)
        return None
    text = "".join(out_lines)
    m = re.search(r"step_ms (\S+)", text)
    step = float(m.group(1)) if m else None
    if step is None and len(marks) > 2:  # mgtrain: from the arrival of its step lines
        s = sorted(marks)
        lo = s[min(len(s) - 2, 1)]
        step = (marks[s[-1]] - marks[lo]) / (s[-1] - lo) * 1000.0
    size = sum(os.path.getsize(os.path.join(cwd, f)) for f in os.listdir(cwd))
    r = {"step": step, "wall": wall, "rss": ru.ru_maxrss * 1024, "bytes": size,
         "files": len(os.listdir(cwd))}
    if w:
        r["pss"] = w.peak_pss
        r["anon"] = w.peak_anon
        ws = workers(w, native)
        r["worker_private"] = statistics.mean(ws) if ws else 0
        r["nworkers"] = len(ws)
    return r


def contenders(a, mgprobe, memray, heaptrack, workers):
    c = {"native": lambda job: job,
         "mg": lambda job: [mgprobe, "run", "-o", "run.mgt", "--", *job]}
    help_text = subprocess.run([mgprobe, "--help"], capture_output=True, text=True).stdout
    if "--sample" in help_text:
        c["mg --sample " + a.sample] = lambda job: [mgprobe, "run", "-o", "run.mgt", "--sample",
                                                    a.sample, "--", *job]
    if a.baseline:
        before = ["env", "MGPROBE_LIB=" + os.path.abspath(a.baseline), mgprobe]
        c["mg before"] = lambda job: [*before, "run", "-o", "run.mgt", "--", *job]
        c["mg before --sample " + a.sample] = lambda job: [*before, "run", "-o", "run.mgt", "--sample",
                                                           a.sample, "--", *job]
    if heaptrack:
        c["heaptrack"] = lambda job: [heaptrack, "-o", "ht", *job]
    if memray:
        fork = ["--follow-fork"] if workers else []
        py = lambda job: job[0].endswith("python3") or "python" in os.path.basename(job[0])
        c["memray"] = lambda job: ([memray, "run", "-q", *fork, "-f", "-o", "run.bin", *job[1:]]
                                   if py(job) else None)
        c["memray --native"] = lambda job: ([memray, "run", "-q", "--native", *fork, "-f", "-o",
                                             "run.bin", *job[1:]] if py(job) else None)
    return c


def mib(v):
    return f"{v / 2**20:.1f}"


def table(job, rows, keys):
    nat = rows["native"]
    print(f"\n{job}")
    head = f"{'':22} {'step ms':>8} {'x':>5} {'wall s':>7} {'x':>5}"
    for k, name in keys:
        head += f" {name:>13}"
    print(head)
    for who, r in rows.items():
        line = f"{who:22}"
        if r["step"] and nat["step"]:
            line += f" {r['step']:8.2f} {r['step'] / nat['step']:5.2f}"
        else:
            line += f" {'-':>8} {'':5}"
        line += f" {r['wall']:7.2f} {r['wall'] / nat['wall']:5.2f}"
        for k, _ in keys:
            if k == "bytes" and who == "native":
                line += f" {'-':>13}"
            elif k in r:
                line += f" {mib(r[k]) + ' MiB':>13}"
            else:
                line += f" {'-':>13}"
        print(line)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("build")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--steps", type=int, default=150)
    ap.add_argument("--worker-steps", type=int, default=120)
    ap.add_argument("--mgtrain-steps", type=int, default=300)
    ap.add_argument("--sample", default="512K")
    ap.add_argument("--only", default="torch,workers,mgtrain")
    ap.add_argument("--memray", default="/work/wt/venv-memray/bin/memray")
    ap.add_argument("--python", default="/usr/bin/python3")
    ap.add_argument("--timeout", type=float, default=240, help="seconds a run may take")
    ap.add_argument("--baseline", help="another libmgprobe.so to run side by side, as 'mg before'")
    a = ap.parse_args()
    mgprobe = os.path.abspath(os.path.join(a.build, "libmgprobe", "mgprobe"))
    mgtrain = os.path.abspath(os.path.join(a.build, "engine", "mgtrain"))
    memray = a.memray if os.access(a.memray, os.X_OK) else None
    heaptrack = shutil.which("heaptrack")
    if not memray:
        print(f"memray not found at {a.memray}: its rows are left out")
    sample = os.path.abspath(SAMPLE)
    jobs = {"torch": ([a.python, sample, "--steps", str(a.steps), "--seed", "0"], False),
            "workers": ([a.python, sample, "--steps", str(a.worker_steps), "--seed", "0",
                         "--workers", "2"], True),
            "mgtrain": ([mgtrain, "--scenario", "healthy", "--steps", str(a.mgtrain_steps)], False)}
    jobs = {k: v for k, v in jobs.items() if k in a.only.split(",")}
    env = dict(os.environ, OMP_NUM_THREADS="1")
    env.pop("PYTHONMALLOC", None)
    tmp = tempfile.mkdtemp(prefix="mg-bench-cost-")
    res = {}
    try:
        for rep in range(a.reps):
            for j, (job, watch) in jobs.items():
                for who, mk in contenders(a, mgprobe, memray, heaptrack, watch).items():
                    cmd = mk(job)
                    if cmd is None:
                        continue
                    d = os.path.join(tmp, f"r{rep}-{j}")
                    os.makedirs(d, exist_ok=True)
                    r = run(cmd, d, env, watch, who == "native", a.timeout)
                    if r:
                        res.setdefault((j, who), []).append(r)
                    shutil.rmtree(d)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"median of {a.reps}, interleaved; load average at the end "
          f"{' '.join('%.1f' % x for x in os.getloadavg())} on {os.cpu_count()} CPUs")
    for j, (job, watch) in jobs.items():
        rows = {}
        for (jj, who), v in res.items():
            if jj == j:
                rows[who] = {k: statistics.median(r[k] for r in v) if all(r[k] is not None for r in v)
                             else None for k in v[0]}
        keys = [("rss", "max RSS"), ("bytes", "trace")]
        if watch:
            keys = [("pss", "peak sum PSS"), ("anon", "peak anon PSS"), ("worker_private", "private/worker"),
                    ("bytes", "traces")]
        table(" ".join(os.path.basename(x) for x in job), rows, keys)
    return 0


if __name__ == "__main__":
    sys.exit(main())
