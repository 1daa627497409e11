# SPDX-License-Identifier: MIT
"""test_torch.py: PyTorch training runs under the real probe (issue 7).

    test_torch.py {healthy|leak|leak-sampled|workers|unwind-check} MGPROBE MGREPORT SAMPLE TORCH_PYTHON

Runs samples/torch_vision_train.py with TORCH_PYTHON (Debian's /usr/bin/python3 with python3-torch)
plainly and under `mgprobe run`, then checks through `mgreport --json`:
  healthy  no leaking site, process verdict plateau or stable, same losses as without the probe;
  leak     process verdict leak, a leaking site whose stack reaches libffi/ctypes (the malloc call
           made through ctypes) growing by the bytes leaked per step, same losses;
  leak-sampled  the same under `--sample 512K` (issue 16): the site's estimated live bytes within
           10% of what leaked (300 steps: 10% is ~4 standard deviations of the estimate), and its
           +- band reported;
  workers  2 forked DataLoader workers, each with its own trace listed as a child of the parent,
           mgreport reporting all 3 processes, no worker called a heap leak, same losses;
  unwind-check  with 2 workers under MGPROBE_UNWIND=check: every stack of all 3 processes
           unwound by the probe's unwinder and by libunwind, none different (issue 16).
Exits 77 (skip) when TORCH_PYTHON cannot import torch and torchvision. Stdlib only.
"""
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "report"))
import reportlib  # noqa: E402

SKIP = 77
LEAK_BYTES = 1 << 20


class Check:
    def __init__(self):
        self.failures = 0

    def true(self, what, ok, detail=""):
        print(("ok    " if ok else "FAIL  ") + what + (f"  ({detail})" if detail != "" else ""))
        if not ok:
            self.failures += 1
        return ok


SAMPLE_SEED = "1"  # MGPROBE_SAMPLE_SEED of the sampled run: any seed; the draws repeat


def run(cmd, cwd, timeout=400):
    env = {k: v for k, v in os.environ.items() if not k.startswith("MGPROBE_") and k != "LD_PRELOAD"}
    env.setdefault("OMP_NUM_THREADS", "1")
    r = subprocess.run(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       timeout=timeout)
    return r.returncode, r.stdout.decode(errors="replace"), r.stderr.decode(errors="replace")


def losses(out):
    """The printed losses: every `step N loss L` line and the `done:` line."""
    return re.findall(r"^step (\d+) loss (\S+)", out, re.M) + re.findall(r"^done: steps (\d+) loss (\S+)", out, re.M)


def report(mgreport, files, top=10):
    r = subprocess.run([mgreport, *files, "--json", "--top", str(top)], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=300)
    if r.returncode != 0:
        print(f"mgreport {' '.join(files)}: exit {r.returncode}: {r.stderr.decode(errors='replace')}")
        return None
    return reportlib.with_frames(json.loads(r.stdout))  # flat sites past 1000 too


def series(proc, name):
    return next((s for s in proc["series"] if s["name"] == name), {})


def frames_text(site):
    return " | ".join(f"{f.get('function') or '??'} [{os.path.basename(f.get('module') or '?')}]"
                      for f in site["frames"][:10])


def unwind_checked(t, err, tmp):
    """The check summaries of the parent and its 2 workers: none with a mismatch."""
    sums = [tuple(map(int, m)) for m in re.findall(
        r"^mgprobe: unwind check: (\d+) stacks compared, (\d+) mismatches, (\d+) left to libunwind; "
        r"\d+ return addresses in the table; (\d+) of (\d+) frames followed from the thread's "
        r"last stack$",
        err, re.M)]
    for s in sums:
        print(f"{s[0]} stacks compared, {s[1]} mismatches, {s[2]} left to libunwind, {s[3]} of "
              f"{s[4]} frames followed from the thread's last stack")
    t.true("a check summary from the parent and each worker", len(sums) == 3, len(sums))
    t.true("no stack differs", sums and all(s[1] == 0 for s in sums), sums)
    t.true("the parent's stacks compared: over 500,000", sums and max(s[0] for s in sums) > 500000,
           sums)
    t.true("under 1% of the stacks left to libunwind",
           sums and sum(s[2] for s in sums) * 100 < sum(s[0] for s in sums), sums)
    if t.failures == 0:
        shutil.rmtree(tmp, ignore_errors=True)
    else:
        print(err[-3000:])
    return 1 if t.failures else 0


def torch_importable(py):
    """Whether the Python py imports torch and torchvision."""
    try:
        return subprocess.run([py, "-c", "import torch, torchvision"], stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL, timeout=120).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def run_both(t, mode, mgprobe, sample, py, tmp, trace):
    """The sample's run for mode plainly and under the probe, each checked to exit 0: their outputs."""
    args = {"healthy": ["--steps", "120"],
            "leak": ["--steps", "120", "--leak", "--leak-bytes", str(LEAK_BYTES)],
            "leak-sampled": ["--steps", "300", "--leak", "--leak-bytes", str(LEAK_BYTES)],
            "workers": ["--steps", "100", "--workers", "2"],
            "unwind-check": ["--steps", "20", "--workers", "2"]}[mode]
    cmd = [py, sample, "--seed", "3", *args]

    rc0, out0, err0 = run(cmd, tmp)
    t.true("plain run exits 0", rc0 == 0, f"exit {rc0}: {err0[-2000:]}" if rc0 else "")
    sampled = mode == "leak-sampled"
    opts = ["--sample", "512K"] if sampled else []
    env = ["env", "MGPROBE_UNWIND=check"] if mode == "unwind-check" else []
    if sampled:  # seeded, so that a failure repeats (the estimate's spread: below)
        env = ["env", "MGPROBE_SAMPLE_SEED=" + SAMPLE_SEED]
    rc1, out1, err1 = run([*env, mgprobe, "run", "-o", trace, *opts, "--", *cmd], tmp)
    t.true("run under the probe exits 0", rc1 == 0, f"exit {rc1}: {err1[-2000:]}" if rc1 else "")
    return out0, out1, err1


def check_quiet(t, main_proc, pv, leaking):
    """healthy and workers: the main process neither leaks nor has a leaking site."""
    t.true("main process: verdict plateau or stable", pv["verdict"] in ("plateau", "stable"),
           pv["verdict"])
    t.true("main process: no leaking site", not leaking,
           "; ".join(frames_text(s) for s in leaking[:3]))
    t.true("main process: heap not called a leak", series(main_proc, "heap").get("verdict") != "leak",
           series(main_proc, "heap").get("verdict"))


def check_leaking_site(t, main_proc, s, sampled):
    """The top leaking site: reached through ctypes, growing by the bytes leaked per step."""
    print(f"top leaking site: {s['growth_per_x']} B/step, {s['live_bytes_last_x']} B live; "
          f"{frames_text(s)}")
    mods = " ".join(os.path.basename(f.get("module") or "") for f in s["frames"])
    t.true("its stack reaches the allocating call through libffi and ctypes",
           "libffi" in mods and "_ctypes" in mods, mods)
    # Sampled: each 1 MiB block is recorded with p = 1 - e^-2 and counts 1/p, so the
    # sum has a standard deviation of ~2.3% at 300 steps; the growth per step is the
    # survivors per step born in steps 64-255 (session 40, MGPROBE_SAMPLE_SEED 1-16:
    # 0.96-1.05 of the truth; the live series' slope read before spread 0.67-1.16).
    per, tol = s["growth_per_x"] or 0, 0.10 if sampled else 0.05
    t.true(f"its growth per step is the bytes leaked per step (within {tol:.0%})",
           abs(per - LEAK_BYTES) <= tol * LEAK_BYTES, f"{per} vs {LEAK_BYTES}")
    steps, tol = main_proc["process"]["steps"], 0.10 if sampled else 0.05
    t.true(f"its live bytes at the last step = steps x bytes per step (within {tol:.0%})",
           abs(s["live_bytes_last_x"] - steps * LEAK_BYTES) <= tol * steps * LEAK_BYTES,
           f"{s['live_bytes_last_x']} vs {steps} x {LEAK_BYTES}")
    if sampled:
        t.true("its live bytes carry a +- band", (s.get("live_bytes_band") or 0) > 0,
               s.get("live_bytes_band"))
    # RSS from step 10 to the last step (not the classifier's recent-segment slope).
    pts = [p for p in main_proc["points"] if p.get("step", 0) >= 10]
    rise = ((pts[-1]["rss"] - pts[0]["rss"]) / max(pts[-1]["step"] - pts[0]["step"], 1)
            if len(pts) >= 2 else 0)
    t.true("RSS rises by the bytes leaked per step (within 25%)",
           abs(rise - LEAK_BYTES) <= 0.25 * LEAK_BYTES, f"{rise:.0f}")


def check_workers(t, rep, main_proc, files):
    """workers: one trace per worker, each a child of the parent, none leaking."""
    children = main_proc["process"].get("children") or []
    t.true("the parent's trace lists 2 children", len(children) == 2, children)
    t.true("one trace per worker", len(files) == 3, files)
    t.true("mgreport reports every process", len(rep["processes"]) == len(files),
           len(rep["processes"]))
    pids = sorted(p["process"]["pid"] for p in rep["processes"][1:])
    t.true("the reported workers are the parent's children", pids == sorted(children),
           f"{pids} vs {children}")
    for p in rep["processes"][1:]:
        pid = p["process"]["pid"]
        t.true(f"worker {pid}: a child of the parent", p["process"]["ppid"] == main_proc["process"]["pid"])
        t.true(f"worker {pid}: recorded to its end", p["process"]["ended"], p["process"]["ended"])
        v = p["process_verdict"]["verdict"]
        hv = series(p, "heap").get("verdict")
        print(f"worker {pid}: process {v} ({p['process_verdict'].get('why')}); heap {hv}")
        t.true(f"worker {pid}: not called a leak", v != "leak", v)
        t.true(f"worker {pid}: heap not called a leak", hv != "leak", hv)
        wl = [s for s in p["sites"] if s["verdict"] == "leak"]
        t.true(f"worker {pid}: no leaking site", not wl, "; ".join(frames_text(s) for s in wl[:3]))


def main():
    if len(sys.argv) != 6:
        print(__doc__)
        return 2
    mode, mgprobe, mgreport, sample, py = sys.argv[1:]
    sample = os.path.abspath(sample)
    if not torch_importable(py):
        print(f"skip: {py} cannot import torch and torchvision (apt-get install python3-torch python3-torchvision)")
        return SKIP

    t = Check()
    tmp = tempfile.mkdtemp(prefix=f"mg-torch-{mode}-")
    trace = os.path.join(tmp, f"{mode}.mgt")
    out0, out1, err1 = run_both(t, mode, mgprobe, sample, py, tmp, trace)
    if mode == "unwind-check":
        return unwind_checked(t, err1, tmp)
    l0, l1 = losses(out0), losses(out1)
    t.true("losses printed", len(l0) >= 10, len(l0))
    t.true("same losses with and without the probe", l0 == l1,
           "" if l0 == l1 else f"plain {l0[:4]}... probe {l1[:4]}...")
    t.true("the probe wrote the trace", os.path.exists(trace))
    if not os.path.exists(trace):
        return 1

    if mode == "workers":
        files = [trace] + sorted(glob.glob(os.path.join(tmp, f"{mode}.*.mgt")))
    else:
        files = [trace]
    rep = report(mgreport, files)
    t.true("mgreport --json exits 0", rep is not None)
    if rep is None:
        return 1
    main_proc = rep["processes"][0]
    pv = main_proc["process_verdict"]
    leaking = [s for s in main_proc["sites"] if s["verdict"] == "leak"]
    print(f"process verdict {pv['verdict']}: {pv.get('why')}")

    if mode in ("healthy", "workers"):
        check_quiet(t, main_proc, pv, leaking)
    if mode in ("leak", "leak-sampled"):
        t.true("process verdict leak", pv["verdict"] == "leak", pv["verdict"])
        t.true("a leaking site", bool(leaking))
        if leaking:
            check_leaking_site(t, main_proc, leaking[0], mode == "leak-sampled")
    if mode == "workers":
        check_workers(t, rep, main_proc, files)

    if t.failures == 0:
        shutil.rmtree(tmp, ignore_errors=True)
    else:
        print(f"{t.failures} failures; traces kept in {tmp}")
    return 1 if t.failures else 0


if __name__ == "__main__":
    sys.exit(main())
