# SPDX-License-Identifier: MIT
"""test_shapes.py: Python frames checked against tracemalloc, on programs of many shapes (issue 15).

    test_shapes.py PROGRAM MGPROBE MGREPORT PYTHON [ARG...]

PROGRAM (one of tests/python/shapes, or "longfunc", written here: a function past line 1,000 whose
line table needs the long entry forms) runs twice in a copy of the shapes folder: under `mgprobe
run`, and plainly with tracemalloc (from the import of pyshape, 25 frames; pyshape.checkpoint()
snapshots every process where it holds its memory, and marks a step under the probe). The lines
holding the most live memory at the checkpoint must be the same, summed over all processes, by the
innermost Python frame and by the first frame in the user's own code (not the standard library,
site-packages or `<...>`): the same file and line, bytes within 10%, and the probe's functions code
objects whose line table holds that line (for the innermost frame, the function holding most of its
bytes the most deeply nested of them: a lambda's, a comprehension's). Every line marked HOLD must be
among them. With MGMON set (the path of mgmon), the program is held at its checkpoint under the
probe and `mgmon --once --json` must show the same lines in its site column (the first frame in the
user's code), single-process programs only. Allocations of pymalloc's size (512 bytes or less) are
left out on both sides, but for cache.py, run with --python-objects: all of them are compared.
Exits 77 when PYTHON is absent or cannot import what the program imports (numpy, torch).
Stdlib only.
"""
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

from test_python import Check, clean_env, find_python, report, run, show

SKIP = 77
ONE_PROCESS_NOT = ("workers", "loader")  # checkpoints in child processes: no mgmon check
OBJECTS = ("cache",)  # run with --python-objects, small objects compared too
SHAPES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "shapes")
BIG = 2 << 20  # a line holding this much is compared
# Programs run under another file name: non-ASCII, and not UTF-8 at all (the byte 0xE9, which Python
# names with the lone surrogate U+DCE9: the probe must give back the byte).
NAMES = {"unicode_names": ("unicode_names", "ünïcödé_名前.py"),
         "unicode_bytes": ("unicode_names", "donn\udce9es_λ.py")}
LIBRARY = ("/site-packages/", "/dist-packages/", "/lib/python3", "/lib64/python3", "/lib/pypy")


def is_library(file):
    """mgc_pyfile_is_library's rule."""
    return not file or file.startswith("<") or any(p in file for p in LIBRARY)


def longfunc(path):
    """A function whose allocations sit past line 1,000, after a 300-line gap and in a line wider
    than 127 columns: entries past the line table's short forms."""
    body = [f"    x{i} = x{i - 1} + {i}" for i in range(1, 1100)]
    gap = ["    # a gap of comment lines"] * 300
    wide = "        kept.append(bytearray(110_000 + 0 * (" + " + ".join(f"x{i}" for i in range(40)) + ")))  # HOLD"
    src = ["# SPDX-License-Identifier: MIT", "import pyshape", "", "kept = []", "", "",
           "def long_function(n):", "    x0 = n", *body, *gap,
           "    for _ in range(n):",
           "        kept.append(bytes(100_000))  # HOLD",
           *gap, "    for _ in range(n):", wide,
           "    kept.append([", "        bytes(120_000 + k)", "        for k in range(n)])",
           "", "", "long_function(40)", "pyshape.checkpoint()"]
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(src) + "\n")


def keys(frames):
    """(innermost, first in the user's code) of frames [(function, file, line)], innermost first."""
    if not frames:
        return None, None
    user = next((f for f in frames if not is_library(f[1])), None)
    return frames[0], user


def shown(file):
    """A file name as the report's JSON shows it: its bytes, each one not part of UTF-8 as U+FFFD."""
    return os.fsencode(file).decode("utf-8", "replace")


def oracle_sums(directory):
    """By key kind: {(file, line): bytes} from the oracle's files, and the names of each line."""
    sums = {"inner": {}, "user": {}}
    names = {}
    for path in glob.glob(os.path.join(directory, "*.json")):
        with open(path, encoding="utf-8") as f:
            d = json.load(f)
        for size, frames in d["held"]:
            inner, user = keys([(None, shown(fl[0]), fl[1]) for fl in frames])
            for kind, k in (("inner", inner), ("user", user)):
                if k:
                    sums[kind][k[1:]] = sums[kind].get(k[1:], 0) + size
        for k, v in d["names"].items():
            names.setdefault(shown(k), set()).update(v)
    return sums, names


def probe_sums(rep):
    """The same from the probe's report, with the function the probe names for each line."""
    sums = {"inner": {}, "user": {}}
    funcs = {"inner": {}, "user": {}}
    for proc in rep["processes"]:
        for s in proc["sites"]:
            live = s.get("live_bytes_last_x") or 0
            if not live or s.get("pymalloc_arena"):
                continue
            py = [(f["function"], f["file"], f["line"]) for f in s["frames"] if f.get("kind") == "python"]
            inner, user = keys(py)
            for kind, k in (("inner", inner), ("user", user)):
                if k:
                    sums[kind][k[1:]] = sums[kind].get(k[1:], 0) + live
                    by = funcs[kind].setdefault(k[1:], {})
                    by[k[0]] = by.get(k[0], 0) + live
    return sums, funcs


def depth(qualname):
    return len([p for p in qualname.split(".") if p != "<locals>"])


def is_import(fl):
    """Whether fl is an import statement's line: importing a C extension allocates memory
    tracemalloc does not see (numpy's, torch's), all of it named by that line under the probe."""
    try:
        with open(fl[0], encoding="utf-8") as f:
            text = f.read().splitlines()[fl[1] - 1].strip()
    except (OSError, IndexError, UnicodeDecodeError):
        return False
    return text.startswith(("import ", "from "))


def compare(t, kind, want, got, names, funcs, program_dir):
    big = {k: v for k, v in want.items() if v >= BIG and not is_import(k)}
    print(f"{kind}: oracle lines holding 2 MiB or more:")
    for k, v in sorted(big.items(), key=lambda kv: -kv[1]):
        print(f"   {v:>10}  {os.path.basename(k[0])}:{k[1]}   probe {got.get(k, 0)} {funcs.get(k, {})}")
    for k, v in big.items():
        ok = abs(got.get(k, 0) - v) <= v / 10
        t.true(f"{kind}: {os.path.basename(k[0])}:{k[1]} holds {v} bytes under the probe too", ok, got.get(k, 0))
        cands = names.get(f"{k[0]}:{k[1]}")
        if ok and cands:
            by = funcs.get(k, {})
            t.true(f"{kind}: {os.path.basename(k[0])}:{k[1]} is named by code objects of that line {sorted(cands)}",
                   set(by) <= cands, sorted(by))
            if kind == "inner":  # a line of two code objects (a lambda, a comprehension): the bulk in the inner
                deepest = {c for c in cands if depth(c) == max(map(depth, cands))}
                t.true(f"inner: most of its bytes are named {sorted(deepest)}",
                       max(by, key=by.get, default=None) in deepest, by)
    extra = {k: v for k, v in got.items() if v >= BIG and want.get(k, 0) < BIG / 2 and
             k[0].startswith(program_dir) and not is_import(k)}
    t.true(f"{kind}: no line of the program holds 2 MiB under the probe alone", not extra, extra)


def needs(program):
    with open(program, encoding="utf-8") as f:
        text = f.read()
    return [m for m in ("numpy", "torch") if f"import {m}" in text]


def hold_lines(program, args):
    """The lines marked `# HOLD` (or `# HOLD WORD...`: when one of the program's arguments is a WORD)."""
    out = []
    with open(program, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if "# HOLD" in line:
                words = line.split("# HOLD", 1)[1].split()
                if not words or set(words) & set(args):
                    out.append((shown(program), n))
    return out


def run_held(t, cmd, cwd, mgmon, odir):
    """run() with the program held at its checkpoint for check_mgmon: (exit status, stderr)."""
    hold = os.path.join(os.path.dirname(odir), "hold")
    env = clean_env(PYSHAPE_HOLD=hold)
    with open(os.path.join(cwd, "..", "err.txt"), "w+b") as err:
        proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=err)
        try:
            check_mgmon(t, mgmon, hold, proc, oracle_sums(odir)[0]["user"])
        finally:
            if os.path.exists(hold):
                os.remove(hold)
            rc = proc.wait(timeout=500)
        err.seek(0)
        return rc, err.read().decode(errors="replace")


def mgmon_sums(doc):
    """By the frame mgmon's site column names: {(file, line): live bytes}, and the sites whose
    column names another frame than the first Python frame in the user's code."""
    sums, wrong = {}, []
    for s in doc.get("sites", []):
        arena = s["kind"] == "mmap" and s.get("allocs") and s.get("alloc_bytes") == s["allocs"] << 20 \
            and s["stack"] and s["stack"][0].get("module", "").rsplit("/", 1)[-1].startswith(("python3", "libpython3"))
        if bool(s.get("pymalloc_arena")) != bool(arena):
            wrong.append(f"site {s['site']}: pymalloc_arena {s.get('pymalloc_arena')}, expected {bool(arena)}")
        if arena:
            continue  # a pymalloc arena: charged to whichever line grew it
        py = [f for f in s["stack"] if "file" in f and "module" not in f]
        user = next((f for f in py if not is_library(f["file"])), None)
        if not user:
            continue
        if s["function"] != user["function"]:
            wrong.append((s["function"], user["function"], user["file"], user["line"]))
        k = (user["file"], user["line"])
        sums[k] = sums.get(k, 0) + (s.get("live_bytes_last_x") or 0)
    return sums, wrong


def check_mgmon(t, mgmon, hold, proc, want):
    """The running program, held at its checkpoint, seen by `mgmon --once --json`: its site column
    names the first frame in the user's code, holding what the oracle says. mgmon is asked again
    (the probe publishes its sites every so often) until it does, or for 120 s at most."""
    deadline = time.monotonic() + 120
    while not os.path.exists(hold) and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.1)
    if not t.true("the program reaches its checkpoint under the probe", os.path.exists(hold)):
        return
    with open(hold, encoding="utf-8") as f:
        pid = f.read().strip()
    big = {k: v for k, v in want.items() if v >= BIG and not is_import(k) and not k[0].startswith("<")}
    sums, wrong = {}, []
    while time.monotonic() < deadline:
        r = subprocess.run([mgmon, "--once", "--json", pid], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           timeout=120)
        if r.returncode == 0:
            sums, wrong = mgmon_sums(json.loads(r.stdout))
            if all(abs(sums.get(k, 0) - v) <= v / 10 for k, v in big.items()):
                break
        time.sleep(0.5)
    os.remove(hold)
    for k, v in big.items():
        t.true(f"mgmon: a site column names {os.path.basename(k[0])}:{k[1]}, holding {v} bytes",
               abs(sums.get(k, 0) - v) <= v / 10, sums.get(k, 0))
    t.true("mgmon: every site column names the first frame in the user's code", not wrong, wrong[:4])


def main():
    if len(sys.argv) < 5:
        print(__doc__)
        return 2
    name, mgprobe, mgreport, py = sys.argv[1:5]
    args = sys.argv[5:]
    py = find_python(py)
    if not os.path.exists(py):
        print(f"skip: {py} is not installed")
        return SKIP
    tmp = tempfile.mkdtemp(prefix=f"mg-shapes-{name}-")
    work = os.path.join(tmp, "prog")
    shutil.copytree(SHAPES, work)
    source, file = NAMES.get(name, (name, name + ".py"))
    program = os.path.join(work, file)
    if name == "longfunc":
        longfunc(program)
    elif name in NAMES:
        shutil.copy(os.path.join(work, source + ".py"), program)
    mods = needs(program)
    if mods and subprocess.run([py, "-c", "import " + ", ".join(mods)], stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL, timeout=300).returncode != 0:
        print(f"skip: {py} cannot import {', '.join(mods)}")
        shutil.rmtree(tmp, ignore_errors=True)
        return SKIP
    t = Check()
    odir = os.path.join(tmp, "oracle")
    os.mkdir(odir)
    os.environ["PYSHAPE_ORACLE"] = odir
    os.environ["PYSHAPE_SMALL"] = "1" if name in OBJECTS else "0"
    rc, out, err = run([py, program, *args], work)
    del os.environ["PYSHAPE_ORACLE"], os.environ["PYSHAPE_SMALL"]
    t.true("the program exits 0 with tracemalloc", rc == 0, err[-1500:] if rc else "")
    trace = os.path.join(tmp, "t.mgt")
    mgmon = os.environ.get("MGMON")
    cmd = [mgprobe, "run", "-o", trace, *(["--python-objects"] if name in OBJECTS else []), "--", py, program, *args]
    if mgmon and name not in ONE_PROCESS_NOT:
        rc, err = run_held(t, cmd, work, mgmon, odir)
    else:
        rc, out, err = run(cmd, work)
    t.true("the program exits 0 under the probe", rc == 0, err[-1500:] if rc else "")
    rep = report(mgreport, [trace] + sorted(glob.glob(os.path.join(tmp, "t.*.mgt"))), top=300)
    if t.true("mgreport --json exits 0", rep is not None):
        for proc in rep["processes"]:
            for n in proc["process"]["notices"]:
                t.true(f"pid {proc['process']['pid']}: no Python validation notice", "Python frames" not in n, n)
        want, names = oracle_sums(odir)
        got, funcs = probe_sums(rep)
        for kind in ("inner", "user"):
            compare(t, kind, want[kind], got[kind], names, funcs[kind], work)
        if name == "unicode_bytes":
            r = subprocess.run([mgreport, trace, "--top", "3"], stdout=subprocess.PIPE, timeout=300)
            t.true("the text report names the file by its own bytes", b"/donn\\xe9es_\xce\xbb.py:" in r.stdout,
                   r.stdout[-600:])
        holds = hold_lines(program, args)
        t.true("every HOLD line of the program holds 2 MiB in the oracle",
               all(want["inner"].get(k, 0) >= BIG for k in holds),
               [k[1] for k in holds if want["inner"].get(k, 0) < BIG])
    return t.finish(tmp)


if __name__ == "__main__":
    sys.exit(main())
