# SPDX-License-Identifier: MIT
"""test_python.py: Python frames in the probe's stacks (issue 15), checked at exact file:line.

    test_python.py MODE MGPROBE MGREPORT PYTHON PYLEAK [SAMPLE | LIBPYDEEP]

MODE is one of
  pure, thread, fork   pyleak.py's leak of bytes(100_000) per step (main thread, a threading.Thread,
                       a forked child leaving through os._exit), run as a file with a non-ASCII
                       name: the top site's Python frames are exactly grow, loop, ... at their lines;
  preload              pure, under plain LD_PRELOAD=libmgprobe.so (beside MGPROBE) and
                       MGPROBE_OUTPUT, without mgprobe run: Python frames are on there too;
  dict                 a dict growing by one entry of 64 small strs per step: under
                       --python-objects the leaking site names remember()'s line; under the default
                       (pymalloc) the growth is in sites marked as pymalloc arenas;
  off                  --no-python: no Python frame, and the trace says why;
  old                  pyleak.py's pure leak on a CPython older than 3.11 (no Py_Version): it runs,
                       its stacks are native, and the trace says once why;
  deep                 pyleak.py's leak through ctypes under 61 native frames of LIBPYDEEP
                       (deeper than the probe's first unwind): all 61 stay, then the Python
                       frames, exactly;
  reuse                pyleak.py's fresh functions, whose code objects reuse freed ones' addresses:
                       each allocation is named by its own function, file and line;
  torch-ctypes, torch-history, torch-getitem
                       samples/torch_vision_train.py --leak / --leak-history / --leak-getitem
                       --workers 2 (in a worker's trace): the leaking site's Python frames name
                       the sample's lines.
Exits 77 (skip) when PYTHON is absent (or, for torch modes, cannot import torch). Stdlib only.
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


class Check:
    def __init__(self):
        self.failures = 0

    def true(self, what, ok, detail=""):
        print(("ok    " if ok else "FAIL  ") + what + (f"  ({detail})" if detail != "" else ""))
        if not ok:
            self.failures += 1
        return ok

    def finish(self, tmp):
        """The exit status: 0, with tmp removed, or 1, with tmp kept and named."""
        if self.failures == 0:
            shutil.rmtree(tmp, ignore_errors=True)
            return 0
        print(f"{self.failures} failures; files kept in {tmp}")
        return 1


def line_of(path, tag):
    """The 1-based line of `path` holding `tag` (a LINE-... comment or a code fragment)."""
    with open(path, encoding="utf-8") as f:
        for n, text in enumerate(f, 1):
            if tag in text:
                return n
    raise SystemExit(f"{path}: no line with {tag!r}")


def clean_env(**extra):
    """This environment without the probe's variables (a test sets its own), one OpenMP thread."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("MGPROBE_") and k not in ("LD_PRELOAD", "PYTHONMALLOC")}
    env.setdefault("OMP_NUM_THREADS", "1")
    env.update(extra)
    return env


def run(cmd, cwd, timeout=500, **extra_env):
    env = clean_env(**extra_env)
    r = subprocess.run(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout)
    return r.returncode, r.stdout.decode(errors="replace"), r.stderr.decode(errors="replace")


def report(mgreport, files, top=20):
    r = subprocess.run([mgreport, *files, "--json", "--top", str(top)], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=300)
    if r.returncode != 0:
        print(f"mgreport: exit {r.returncode}: {r.stderr.decode(errors='replace')}")
        return None
    return reportlib.with_frames(json.loads(r.stdout))  # flat sites past 1000 too


def pyframes(site):
    return [(f["function"], f["file"], f["line"]) for f in site["frames"] if f.get("kind") == "python"]


def show(site):
    return " | ".join(f"{f['function']} {os.path.basename(f['file'] or '?')}:{f['line']}"
                      if f.get("kind") == "python" else f"{f['function']} [{os.path.basename(f.get('module') or '?')}]"
                      for f in site["frames"][:14])


def top_growing(proc):
    sites = [s for s in proc["sites"] if (s["growth"] or 0) > 0]
    return sites[0] if sites else None


def check_pyleak(t, mode, mgprobe, mgreport, py, pyleak, tmp):
    """pure / thread / fork / preload: the script copied to a non-ASCII file name, 60 steps."""
    script = os.path.join(tmp, "fuite_données_Δ.py")
    shutil.copy(pyleak, script)
    trace = os.path.join(tmp, "t.mgt")
    if mode == "preload":  # the plain LD_PRELOAD route: no mgprobe run to set anything
        lib = os.path.join(os.path.dirname(os.path.abspath(mgprobe)), "libmgprobe.so")
        mode = "pure"
        rc, out, err = run([py, script, mode, "60"], tmp, LD_PRELOAD=lib, MGPROBE_OUTPUT=trace)
    else:
        rc, out, err = run([mgprobe, "run", "-o", trace, "--", py, script, mode, "60"], tmp)
    t.true("the program exits 0 under the probe", rc == 0, err[-1500:] if rc else "")
    files = [trace] + (sorted(glob.glob(os.path.join(tmp, "t.*.mgt"))) if mode == "fork" else [])
    rep = report(mgreport, files)
    if not t.true("mgreport --json exits 0", rep is not None):
        return
    proc = rep["processes"][-1]  # fork: the child (listed after the parent)
    if mode == "fork":
        t.true("the forked child has its own trace", len(rep["processes"]) == 2, len(rep["processes"]))
        t.true("the child's trace is complete (os._exit)", proc["process"]["ended"], proc["process"])
    site = top_growing(proc)
    if not t.true("a growing site", site is not None):
        return
    print("top site:", show(site))
    t.true("it grows by 100,000 bytes per step (within 2%)",
           abs((site["growth_per_x"] or 0) - 100_000) <= 2000, site["growth_per_x"])
    t.true("its verdict is leak or growing", site["verdict"] in ("leak", "growing"), site["verdict"])
    L = lambda tag: line_of(script, tag)
    want = [("grow", script, L("LINE-GROW")), ("loop", script, L("LINE-LOOP"))]
    if mode == "thread":
        got = pyframes(site)[:2]
        rest = pyframes(site)[2:]
        t.true("then the threading module's frames", bool(rest) and all(f[1].endswith("threading.py") for f in rest),
               rest)
    else:
        main_tag = {"pure": "LINE-MAIN-PURE", "fork": "LINE-MAIN-FORK"}[mode]
        want += [("main", script, L(main_tag)), ("<module>", script, L("LINE-MODULE"))]
        got = pyframes(site)
    t.true("its Python frames, exactly", got == want, f"got {got}, want {want}")
    t.true("interpreter frames below the innermost Python frame stay (the bytes allocation)",
           site["frames"][0].get("kind") != "python")


def check_deep(t, mgprobe, mgreport, py, pyleak, lib, tmp):
    """deep: the retry of mgp_capture_unwind. Were the first, short unwind kept, the site would hold
    fewer of pydeep_alloc's frames."""
    trace = os.path.join(tmp, "deep.mgt")
    rc, out, err = run([mgprobe, "run", "-o", trace, "--", py, pyleak, "deep", "40", lib], tmp)
    t.true("the program exits 0 under the probe", rc == 0, err[-1500:] if rc else "")
    rep = report(mgreport, [trace])
    if not t.true("mgreport --json exits 0", rep is not None):
        return
    site = top_growing(rep["processes"][-1])
    if not t.true("a growing site", site is not None):
        return
    print("top site:", show(site))
    t.true("it grows by 100,000 bytes per step (within 2%)",
           abs((site["growth_per_x"] or 0) - 100_000) <= 2000, site["growth_per_x"])
    names = [f.get("function") for f in site["frames"]]
    t.true("all 61 frames of pydeep_alloc stay", names.count("pydeep_alloc") == 61, names.count("pydeep_alloc"))
    first_py = next((i for i, f in enumerate(site["frames"]) if f.get("kind") == "python"), None)
    t.true("they come before the first Python frame", first_py is not None and
           max(i for i, n in enumerate(names) if n == "pydeep_alloc") < first_py, first_py)
    L = lambda tag: line_of(pyleak, tag)
    want = [("grow_deep", pyleak, L("LINE-GROW-DEEP")), ("loop", pyleak, L("LINE-LOOP")),
            ("main", pyleak, L("LINE-MAIN-DEEP")), ("<module>", pyleak, L("LINE-MODULE"))]
    t.true("its Python frames, exactly", pyframes(site) == want, f"got {pyframes(site)}, want {want}")


def check_reuse(t, mgprobe, mgreport, py, pyleak, tmp):
    """reuse: a code object at the address of a freed one is not taken for it (the registry's key,
    and each thread's memo of it in mgp_python.c, hold a fingerprint of the content)."""
    steps = 40
    trace = os.path.join(tmp, "reuse.mgt")
    rc, out, err = run([mgprobe, "run", "-o", trace, "--", py, pyleak, "reuse", str(steps)], tmp)
    t.true("the program exits 0 under the probe", rc == 0, err[-1500:] if rc else "")
    m = re.search(r"code-addresses (\d+)", out)
    t.true("code objects were made at addresses freed before (the case under test)",
           m is not None and int(m.group(1)) < steps, out[-300:])
    rep = report(mgreport, [trace], top=0)
    if not t.true("mgreport --json exits 0", rep is not None):
        return
    named = {}
    for s in rep["sites"]:
        py_ = pyframes(s)
        if py_ and re.fullmatch(r"f\d+", py_[0][0]):
            named.setdefault(py_[0], 0)
            named[py_[0]] += s["alloc_bytes"]
    want = {(f"f{k}", f"gen{k}.py", k + 1) for k in range(1, steps + 1)}
    t.true(f"{steps} sites, each named by its own function, file and line",
           set(named) == want, f"{len(named)} named; differing: {sorted(set(named) ^ want)[:6]}")
    t.true("each allocated one bytes(100_000) (its 100,000 bytes and the object's header)",
           all(100_000 <= b <= 100_100 for b in named.values()), sorted(set(named.values()))[:6])


def check_dict(t, mgprobe, mgreport, py, pyleak, tmp):
    line = line_of(pyleak, "LINE-REMEMBER")
    for objects in (True, False):
        trace = os.path.join(tmp, f"d{int(objects)}.mgt")
        opts = ["--python-objects"] if objects else []
        rc, out, err = run([mgprobe, "run", "-o", trace, *opts, "--", py, pyleak, "dict", "120"], tmp)
        t.true("the program exits 0 under the probe", rc == 0, err[-1500:] if rc else "")
        rep = report(mgreport, [trace], top=40)
        if not rep:
            return
        sites = [s for s in rep["sites"] if (s["growth"] or 0) > 0]
        mine = [s for s in sites if any(f[0] == "remember" and f[2] == line for f in pyframes(s))]
        if objects:
            top = mine[0] if mine else None
            t.true("--python-objects: a growing site at remember()'s line", top is not None,
                   "; ".join(show(s) for s in sites[:3]))
            if top:
                t.true("--python-objects: it is called a leak", top["verdict"] == "leak", top["verdict"])
                t.true("--python-objects: it is the top site by growth", sites[0] is top, show(sites[0]))
        else:
            arenas = [s for s in sites if s.get("pymalloc_arena")]
            t.true("pymalloc (default): the growth is in sites marked as arenas", bool(arenas),
                   "; ".join(show(s) for s in sites[:3]))
            t.true("pymalloc (default): arenas are 1 MiB mappings", all(s["kind"] == "mmap" for s in arenas))


def check_off(t, mgprobe, mgreport, py, pyleak, tmp):
    trace = os.path.join(tmp, "off.mgt")
    rc, out, err = run([mgprobe, "run", "-o", trace, "--no-python", "--", py, pyleak, "pure", "20"], tmp)
    t.true("the program exits 0 under the probe", rc == 0, err[-1500:] if rc else "")
    rep = report(mgreport, [trace])
    if not rep:
        return
    t.true("no Python frame in any site", all(not pyframes(s) for s in rep["sites"]))
    notes = rep["process"]["notices"]
    t.true("the trace says Python frames are off", any("Python frames are off" in n for n in notes), notes)


def check_old(t, mgprobe, mgreport, py, pyleak, tmp):
    trace = os.path.join(tmp, "old.mgt")
    rc, out, err = run([mgprobe, "run", "-o", trace, "--", py, pyleak, "pure", "20"], tmp)
    t.true("the program exits 0 under the probe", rc == 0, err[-1500:] if rc else "")
    rep = report(mgreport, [trace])
    if not rep:
        return
    site = top_growing(rep["processes"][-1])
    t.true("a growing site, of native frames only", site is not None and not pyframes(site),
           show(site) if site else None)
    notes = [n for n in rep["process"]["notices"] if "Python frames" in n]
    t.true("the trace says once that this CPython is not supported",
           len(notes) == 1 and "older than 3.11 is not supported" in notes[0], notes)


def check_torch(t, mode, mgprobe, mgreport, py, sample, tmp):
    args = {"torch-ctypes": ["--steps", "60", "--leak", "--leak-bytes", str(1 << 20)],
            "torch-history": ["--steps", "60", "--leak-history"],
            "torch-getitem": ["--steps", "60", "--leak-getitem", "--leak-bytes", str(1 << 20), "--workers", "2"]}[mode]
    trace = os.path.join(tmp, "torch.mgt")
    rc, out, err = run([mgprobe, "run", "-o", trace, "--", py, sample, "--seed", "3", *args], tmp)
    t.true("the sample exits 0 under the probe", rc == 0, err[-1500:] if rc else "")
    files = [trace] + sorted(glob.glob(os.path.join(tmp, "torch.*.mgt")))
    rep = report(mgreport, files, top=10)
    if not rep:
        return
    L = lambda tag: line_of(sample, tag)
    if mode == "torch-getitem":
        t.true("2 workers traced", len(rep["processes"]) == 3, len(rep["processes"]))
        procs = rep["processes"][1:]
        want = ("KeepingDataset.__getitem__", L("self.kept.append(bytes(self.keep_bytes))"))
    elif mode == "torch-ctypes":
        procs = rep["processes"][:1]
        want = ("leaky_collate", L("p = _libc.malloc(LEAK_BYTES)"))
    else:
        procs = rep["processes"][:1]
        want = ("main", L("    history.append(loss_fn(model(images), labels))"))
    for proc in procs:
        top = top_growing(proc)
        who = f"pid {proc['process']['pid']}"
        if not t.true(f"{who}: a growing site", top is not None):
            continue
        print(f"{who}: top site by growth ({top['verdict']}, {top['growth_per_x']:.0f} B per x): {show(top)}")
        got = [(f[0], f[2]) for f in pyframes(top) if f[1] == sample]
        t.true(f"{who}: its Python frames name {want[0]} at line {want[1]} of the sample", want in got, got)
        if mode == "torch-ctypes":
            t.true(f"{who}: the innermost Python frame is leaky_collate's line",
                   pyframes(top) and pyframes(top)[0][0] == "leaky_collate", pyframes(top)[:1])
            mods = " ".join(os.path.basename(f.get("module") or "") for f in top["frames"])
            t.true(f"{who}: the native frames below it stay (libffi, _ctypes)",
                   "libffi" in mods and "_ctypes" in mods, mods)


def find_python(spec):
    """PYTHON as given, or "pyenv:3.12.1": that version under `pyenv root`, ~/.pyenv or /root/.pyenv."""
    if not spec.startswith("pyenv:"):
        return spec
    version = spec[6:]
    roots = []
    try:
        roots.append(subprocess.run(["pyenv", "root"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                    timeout=30).stdout.decode().strip())
    except OSError:
        pass
    roots += [os.path.expanduser("~/.pyenv"), "/root/.pyenv"]
    short = ".".join(version.split(".")[:2])
    for r in roots:
        exe = os.path.join(r, "versions", version, "bin", "python" + short)
        if r and os.path.exists(exe):
            return exe
    return spec


def main():
    if len(sys.argv) not in (6, 7):
        print(__doc__)
        return 2
    mode, mgprobe, mgreport, py, pyleak = sys.argv[1:6]
    sample = os.path.abspath(sys.argv[6]) if len(sys.argv) == 7 else None
    pyleak = os.path.abspath(pyleak)
    py = find_python(py)
    if not os.path.exists(py):
        print(f"skip: {py} is not installed")
        return SKIP
    if mode.startswith("torch"):
        r = subprocess.run([py, "-c", "import torch, torchvision"], stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL, timeout=120)
        if r.returncode != 0:
            print(f"skip: {py} cannot import torch and torchvision")
            return SKIP
    t = Check()
    tmp = tempfile.mkdtemp(prefix=f"mg-python-{mode}-")
    if mode in ("pure", "thread", "fork", "preload"):
        check_pyleak(t, mode, mgprobe, mgreport, py, pyleak, tmp)
    elif mode == "dict":
        check_dict(t, mgprobe, mgreport, py, pyleak, tmp)
    elif mode == "off":
        check_off(t, mgprobe, mgreport, py, pyleak, tmp)
    elif mode == "old":
        check_old(t, mgprobe, mgreport, py, pyleak, tmp)
    elif mode == "reuse":
        check_reuse(t, mgprobe, mgreport, py, pyleak, tmp)
    elif mode == "deep":
        check_deep(t, mgprobe, mgreport, py, pyleak, sample, tmp)
    else:
        check_torch(t, mode, mgprobe, mgreport, py, sample, tmp)
    return t.finish(tmp)


if __name__ == "__main__":
    sys.exit(main())
