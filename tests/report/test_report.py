#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""mgreport end to end: golden JSON on committed traces, every kind of bad input and usage with
its exit code and one-line message, --fail-on gates, --series. Run with --update to rewrite the
golden files after a deliberate change (then review the diff)."""
import json
import os
import random
import struct
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "data")
failures = 0
checks = 0


def check(cond, what, expected=None, actual=None):
    global failures, checks
    checks += 1
    if cond:
        print("ok   %s" % what)
    else:
        failures += 1
        print("FAIL %s\n     expected: %r\n     actual:   %r" % (what, expected, actual))


def mgreport(args, cwd=None):
    p = subprocess.run([MGREPORT] + args, capture_output=True, text=True, cwd=cwd, timeout=60)
    return p.returncode, p.stdout, p.stderr


def golden(update):
    """Every committed trace against its expected JSON; and a run written in format version 2
    (NAME_v2.mgt) reads exactly as the same run in version 1 (NAME.mgt), file name aside."""
    docs = {}
    for name in sorted(os.listdir(DATA)):
        if not name.endswith(".mgt"):
            continue
        rc, out, err = mgreport(["--json", "--top", "0", name], cwd=DATA)
        check(rc == 0, "golden %s: exit 0" % name, 0, (rc, err))
        exp_path = os.path.join(DATA, name[:-4] + ".json")
        if update:
            with open(exp_path, "w") as f:
                f.write(out)
            print("updated %s" % exp_path)
            continue
        with open(exp_path) as f:
            expected = json.load(f)
        actual = json.loads(out)
        docs[name] = actual
        check(actual == expected, "golden %s: JSON equals %s" % (name, os.path.basename(exp_path)),
              "see file", first_difference(expected, actual))
    if update:
        return
    pairs = [(n, n[:-7] + ".mgt") for n in docs if n.endswith("_v2.mgt")]
    check(len(pairs) >= 2, "golden: version-2 traces are there", ">= 2", pairs)
    for v2, v1 in pairs:
        a, b = without_file(docs[v2]), without_file(docs.get(v1, {}))
        check(a == b, "golden %s reads as %s" % (v2, v1), "the same JSON", first_difference(b, a))


def without_file(doc):
    """The report without what names the file: "file" and the format version."""
    doc = json.loads(json.dumps(doc))
    for d in [doc] + doc.get("processes", []):
        d.pop("file", None)
        d.get("process", {}).pop("format_version", None)
    return doc


def first_difference(a, b, path="$"):
    if type(a) != type(b):
        return "%s: %r != %r" % (path, a, b)
    if isinstance(a, dict):
        for k in sorted(set(a) | set(b)):
            if k not in a or k not in b:
                return "%s.%s missing on one side" % (path, k)
            d = first_difference(a[k], b[k], path + "." + k)
            if d:
                return d
        return None
    if isinstance(a, list):
        if len(a) != len(b):
            return "%s: length %d != %d" % (path, len(a), len(b))
        for i, (x, y) in enumerate(zip(a, b)):
            d = first_difference(x, y, "%s[%d]" % (path, i))
            if d:
                return d
        return None
    return None if a == b else "%s: %r != %r" % (path, a, b)


def bad_inputs(tmp):
    good = os.path.join(DATA, "warmup.mgt")
    with open(good, "rb") as f:
        blob = f.read()

    def write(name, data):
        p = os.path.join(tmp, name)
        with open(p, "wb") as f:
            f.write(data)
        return p

    cases = [
        ("missing file", [os.path.join(tmp, "nope.mgt")], 1, "No such file"),
        ("empty file", [write("empty.mgt", b"")], 1, "empty"),
        ("not a trace", [write("text.mgt", b"step,rss\n1,2\n" * 4)], 1, "not an mg trace"),
        ("header cut short", [write("short.mgt", blob[:5])], 1, "cut short"),
        ("newer version", [write("v9.mgt", blob[:8] + struct.pack("<I", 9) + blob[12:])], 1, "newer"),
        ("no records", [write("hdr.mgt", blob[:16])], 1, "no records"),
        ("first record damaged", [write("dmg0.mgt", blob[:16] + b"\xff" * 64)], 1, "corrupt"),
        ("directory", [tmp], 1, ""),
    ]
    for what, args, want, msg in cases:
        rc, out, err = mgreport(args)
        check(rc == want and msg in err and err.count("\n") == 1,
              "bad input: %s -> exit %d, one line naming it" % (what, want), (want, msg), (rc, err))
    # A file cut in the middle of a record, and one damaged in the middle: read up to there.
    for what, data in (("cut mid-record", blob[: len(blob) * 2 // 3]),
                       ("damaged mid-file", blob[: len(blob) // 2] + b"\x00\x13" * 8 + blob[len(blob) // 2 + 16:])):
        p = write(what.replace(" ", "_") + ".mgt", data)
        rc, out, err = mgreport(["--json", p])
        ok = rc == 0
        doc = json.loads(out) if ok else {}
        check(ok and doc["process"]["truncated"] is True and "cut or damaged" in err,
              "bad input: %s -> exit 0, truncated, warned" % what, 0, (rc, err[:200]))
    # Every byte offset of a small trace: never a crash.
    small = os.path.join(DATA, "warmup.mgt")
    crashes = []
    for cut in range(0, 4096, 7):
        p = write("cut.mgt", blob[:cut])
        rc, _, _ = mgreport([p])
        if rc not in (0, 1):
            crashes.append((cut, rc))
    check(not crashes, "cut at 586 offsets: exit 0 or 1, never a signal", [], crashes[:5])


def record_ends(blob):
    """(offset after the record, record type) of each whole record of an uncompressed trace."""
    header = struct.unpack("<I", blob[12:16])[0]
    at, ends = header, []
    while at + 16 <= len(blob):
        rtype, length = struct.unpack("<II", blob[at:at + 8])
        at += 16 + length + (-length) % 8
        if at > len(blob):
            break
        ends.append((at, rtype))
    return ends


CUT_NOTES = ("; the trace was cut short (the process died?): read up to its last whole record",
             "; no end record (killed?)", " (cut short: read up to its last whole record)")


def cut_every_mode(tmp):
    """A trace cut inside a record at random offsets reads, in every output, what the same trace
    cut at the end of its last whole record reads: the same bytes, but for saying it was cut."""
    rnd = random.Random(16)
    modes = (["--no-color"], ["--json", "--top", "0"], ["--folded"], ["--speedscope", "out"],
             ["--html", "out"], ["--diff", "--no-color", os.path.join(DATA, "leak.mgt")])
    for name in ("warmup.mgt", "warmup_v2.mgt"):
        with open(os.path.join(DATA, name), "rb") as f:
            blob = f.read()
        ends = record_ends(blob)
        snaps = [e for e, t in ends if t in (5, 14)]
        bad = []
        for _ in range(6):
            k = rnd.randrange(1, len(ends) - 1)
            whole, cut = ends[k - 1][0], rnd.randrange(ends[k - 1][0] + 1, ends[k][0])
            outs, seen = [], None
            for d, data in (("cut", blob[:cut]), ("whole", blob[:whole])):
                os.makedirs(os.path.join(tmp, d), exist_ok=True)
                with open(os.path.join(tmp, d, "t.mgt"), "wb") as f:
                    f.write(data)
                got = {}
                for m in modes:
                    rc, out, err = mgreport(m + ["t.mgt"], cwd=os.path.join(tmp, d))
                    if "out" in m:
                        with open(os.path.join(tmp, d, "out"), encoding="utf-8", errors="replace") as f:
                            out = f.read()
                    for note in CUT_NOTES:
                        out = out.replace(note, "")
                    if m[0] == "--json" and rc == 0:
                        doc = json.loads(out)
                        seen = seen or (doc["process"]["truncated"], doc["process"]["snapshots"])
                        for pr in [doc] + doc["processes"]:
                            pr["process"]["truncated"] = None
                        out = json.dumps(doc)
                    got[m[0]] = (rc, out)
                outs.append(got)
            want = sum(1 for e in snaps if e <= cut)
            differ = [m for m in outs[0] if outs[0][m] != outs[1][m]]
            if seen != (True, want) or differ:
                bad.append((cut, whole, seen, want, differ))
        check(not bad, "%s cut inside a record at 6 random offsets: every output (text, --json, --folded, "
              "--speedscope, --html, --diff) reads up to the last whole record" % name, [], bad)


def usage_and_gates(tmp):
    for what, args in (("no file", []), ("unknown option", ["--bogus", "x.mgt"]),
                       ("--top not a number", ["--top", "x", "a.mgt"]),
                       ("--fail-on bad", ["--fail-on", "maybe", "a.mgt"]),
                       ("--limit bad", ["--limit", "12Q", "a.mgt"]),
                       ("trace and --series", ["--series", "a.csv", "a.mgt"]),
                       ("--series without value", ["--series"])):
        rc, out, err = mgreport(args)
        check(rc == 2 and err.startswith("mgreport: "), "usage: %s -> exit 2" % what, 2, (rc, err))
    rc, out, err = mgreport(["--help"])
    check(rc == 0 and "usage: mgreport" in out, "--help -> exit 0", 0, rc)
    rc, out, err = mgreport(["--version"])
    check(rc == 0 and out.startswith("mgreport "), "--version -> exit 0", 0, rc)
    leak = os.path.join(DATA, "leak.mgt")
    warm = os.path.join(DATA, "warmup.mgt")
    rc, _, _ = mgreport(["--fail-on", "leak", leak])
    check(rc == 3, "--fail-on leak on a leaking run -> exit 3", 3, rc)
    rc, _, _ = mgreport(["--fail-on", "leak", warm])
    check(rc == 0, "--fail-on leak on a warmup -> exit 0", 0, rc)
    rc, out, _ = mgreport(["--json", leak])
    doc = json.loads(out)
    by_id = {s["id"]: s["verdict"] for s in doc["sites"]}
    check(doc["verdict"] == "leak" and by_id.get(3) == "leak" and by_id.get(1) == "plateau"
          and by_id.get(2) != "leak",
          "leak run: process leak, cache site 3 leak, pool site 1 plateau, scratch site 2 not leak",
          ("leak", "leak", "plateau"), (doc["verdict"], by_id.get(3), by_id.get(1), by_id.get(2)))
    rc, out, _ = mgreport(["--json", warm])
    doc = json.loads(out)
    check(doc["verdict"] == "plateau" and not [s for s in doc["sites"] if s["verdict"] == "leak"],
          "warmup run: plateau and no leaking site", "plateau", doc["verdict"])
    csv = os.path.join(tmp, "s.csv")
    with open(csv, "w") as f:
        f.write("step,rss_mb\n" + "".join("%d,%d\n" % (s, 1000 + 40 * s) for s in range(0, 200)))
    rc, out, err = mgreport(["--json", "--series", csv])
    doc = json.loads(out) if rc == 0 else {}
    check(rc == 0 and doc["series"][0]["name"] == "rss_mb", "--series CSV -> exit 0, one series",
          0, (rc, err))
    rc, out, err = mgreport(["--series", os.path.join(tmp, "missing.csv")])
    check(rc == 1 and err.count("\n") == 1, "--series missing file -> exit 1", 1, (rc, err))


def perf_map(tmp):
    """A frame in generated code (outside every module) is named from the trace's perf map."""
    sys.path.insert(0, HERE)
    import mgtrace
    path = os.path.join(tmp, "jit.mgt")
    with open(path, "wb") as f:
        w = mgtrace.TraceWriter(f)
        w.process()
        w.module(1, 1, 0, 0x400000, 0x500000, b"/nonexistent/mg-golden/python3")
        # innermost: libc-ish frame in the module, then a trampoline in anonymous memory
        w.stack(1, [0x400100, 0x7f0000000150, 0x400200])
        w.snapshot(1000, 0, 100 << 20, 4096, 1, sites=[dict(id=1, live_bytes=4096, live_count=1,
                   allocs=1, alloc_bytes=4096, frees=0, peak_bytes=4096, cohorts={0: 4096})])
        w.perfmap(b"7f0000000100 80 py::train_step:/src/train.py\n7f0000000200 40 py::other:/x.py\n")
        w.end(2000)
    rc, out, err = mgreport(["--json", path])
    doc = json.loads(out) if rc == 0 else {"sites": [{"frames": []}]}
    names = [fr["function"] for fr in doc["sites"][0]["frames"]]
    check(rc == 0 and names[1:2] == ["py::train_step:/src/train.py"]
          and doc["sites"][0]["frames"][1]["module"] == "[perf-map]",
          "perf map names a frame in generated code", "py::train_step:/src/train.py", names)


def process_tree(tmp):
    """Given a parent's trace, mgreport also reports its forked children's traces found beside
    it (named <stem>.<comm>.<pid>.mgt by the probe); --no-children reports the parent alone."""
    sys.path.insert(0, HERE)
    import mgtrace
    d = os.path.join(tmp, "tree")
    os.mkdir(d)

    def write(name, pid, ppid, children=()):
        with open(os.path.join(d, name), "wb") as f:
            w = mgtrace.TraceWriter(f)
            w.process(pid=pid, ppid=ppid)
            for c in children:
                w.child(500, c)
            w.snapshot(1000, 0, 50 << 20, 0, 0)
            w.end(2000)

    write("run.mgt", 100, 1, children=(101, 102))
    write("run.python3.101.mgt", 101, 100)
    write("run.python3.102.1.mgt", 102, 100)
    write("run.python3.103.mgt", 103, 100)  # not a child of this run: not picked up
    rc, out, err = mgreport(["--json", os.path.join(d, "run.mgt")])
    pids = sorted(p["process"]["pid"] for p in json.loads(out)["processes"]) if rc == 0 else []
    check(pids == [100, 101, 102], "process tree: the parent and its two children", [100, 101, 102],
          (rc, pids, err))
    rc, out, err = mgreport(["--json", "--no-children", os.path.join(d, "run.mgt")])
    pids = [p["process"]["pid"] for p in json.loads(out)["processes"]] if rc == 0 else []
    check(pids == [100], "--no-children: the parent alone", [100], (rc, pids))
    rc, out, err = mgreport(["--no-color", os.path.join(d, "run.mgt")])
    check(rc == 0 and "Processes (3 traces)" in out and "└ pid 101" in out,
          "process tree in the text report", "Processes (3 traces)", out[:300])


def seeds():
    """The user's own tables (samples/seeds_run*.csv, from the seeds' report 002) through the CLI:
    run 1 (steps 10-70 of a straight climb) cannot be told from a leak yet, run 2 levels off."""
    samples = os.path.join(HERE, "..", "..", "samples")
    rc, out, err = mgreport(["--json", "--limit", "32G", "--series",
                             os.path.join(samples, "seeds_run1.csv")])
    s = json.loads(out)["series"][0] if rc == 0 else {}
    check(rc == 0 and s["verdict"] == "growing" and 60 < (s["steps_to_oom"] or 0) < 140,
          "seeds run 1: growing, 32 GiB reached in 60-140 more steps", "growing",
          (rc, s.get("verdict"), s.get("steps_to_oom"), err))
    rc, out, err = mgreport(["--limit", "32G", "--series", os.path.join(samples, "seeds_run1.csv")])
    want = "projected to reach the 32.0 GiB limit in %.0f steps." % (s.get("steps_to_oom") or 0)
    check(rc == 0 and want in out, "seeds run 1 in text: the projection its JSON gives", want,
          (rc, out[:400], err))
    rc, out, err = mgreport(["--json", "--limit", "32G", "--series",
                             os.path.join(samples, "seeds_run2.csv")])
    s = json.loads(out)["series"][0] if rc == 0 else {}
    mb = (s.get("plateau_level") or 0) / 2**20
    check(rc == 0 and s["verdict"] == "plateau" and 75 <= (s["plateau_at"] or 0) <= 95
          and 17000 < mb < 17800,
          "seeds run 2: plateau levelling at step 75-95 near 17.4 GB (MiB, as the log counts)",
          ("plateau", "75..95", "17000..17800"), (rc, s.get("verdict"), s.get("plateau_at"), mb, err))


def gpu_kinds(tmp):
    """CUDA memory by kind and device (DEVMEM cells after each snapshot) and what activity records
    said of a site (DEVSITE): the breakdown, the per-point cells, a pool that is destroyed (its
    cell drops to 0), the sites' kind, device and CUDA details, in JSON and text."""
    sys.path.insert(0, HERE)
    import gen_run
    import mgtrace
    MB = 1 << 20
    base = 0x400000
    path = os.path.join(tmp, "gpu_kinds.mgt")
    dev0, pinned, pool0 = mgtrace.kind(2, 0), mgtrace.kind(3), mgtrace.kind(5, 0)
    with open(path, "wb") as f:
        w = mgtrace.TraceWriter(f)
        w.process(cmdline=b"mgtrain\0--device\0cuda")
        w.module(1, 1, 0, base, base + 0x100000, b"/nonexistent/mg-golden/mgtrain")
        cache = gen_run.Site(3, [base + 0x3010, base + 0x300])
        pin = gen_run.Site(4, [base + 0x4010, base + 0x400])
        w.stack(3, cache.ips, kind=dev0)
        w.stack(4, pin.ips, kind=pinned)
        pin.alloc(16 * MB, 0)
        t = 0
        for step in range(300):
            t += 500_000_000
            cache.alloc(2 * MB, step)
            sites = [s.entry() for s in (cache, pin) if s.dirty and s.allocs]
            for s in (cache, pin):
                s.dirty = False
            w.step(t, step)
            w.snapshot(t, step, 300 * MB, 0, 0, sites=sites, flags=mgtrace.SNAP_STEP,
                       device=cache.live + pin.live)
            cells = [(dev0, cache.count, cache.live), (pinned, 1, pin.live)]
            if step < 200:  # the pool is destroyed at step 200: its cell is gone from DEVMEM
                cells.append((pool0, 1, (128 if step < 100 else 256) * MB))
            w.devmem(cells)
            if step == 5:
                w.devsite(3, stream=7, mem_kind=3, device=0, pool_type=1,
                          flags=mgtrace.DEVSITE_ASYNC | mgtrace.DEVSITE_POOL, pool_address=0x7f00000000,
                          records=6)
        w.end(t + 1000)
    rc, out, err = mgreport(["--json", "--top", "5", path])
    doc = json.loads(out) if rc == 0 else {}
    cells = doc.get("device_cells", [])
    check([(c["name"], c["kind"], c["device"], c["bytes"], c["count"], c["peak"]) for c in cells]
          == [("device:0", "device", 0, 600 * MB, 300, 600 * MB), ("pinned", "pinned", None, 16 * MB, 1, 16 * MB),
              ("pool:0", "pool", 0, 0, 0, 256 * MB)],
          "gpu kinds: device_cells by kind and device, a destroyed pool at 0 with its peak", None, (cells, err))
    pts = doc.get("points", [])
    by_step = {p["step"]: p.get("device_cells") for p in pts}
    check(pts and pts[-1].get("device_cells") == [600 * MB, 16 * MB, 0]
          and by_step.get(50) == [102 * MB, 16 * MB, 128 * MB] and by_step.get(150) == [302 * MB, 16 * MB, 256 * MB],
          "gpu kinds: each point carries its cells", None, [(p["step"], p.get("device_cells")) for p in pts[::60]])
    sites = {s["id"]: s for s in doc.get("sites", [])}
    c3, c4 = sites.get(3, {}), sites.get(4, {})
    check(c3.get("kind") == "device" and c3.get("device") == 0 and c3.get("verdict") == "leak"
          and c3.get("cuda") == {"device": 0, "stream": 7, "memory_kind": 3, "async": True, "pool": "0x7f00000000",
                                 "records": 6, "mismatch": False}
          and c4.get("kind") == "pinned" and c4.get("device") is None and "cuda" not in c4,
          "gpu kinds: sites carry kind, device and the activity records' details", None, (c3.get("cuda"), c4))
    rc, out, err = mgreport(["--no-color", "--top", "5", path])
    check(rc == 0 and "  device, GPU 0" in out and "  pinned host" in out and "  pool reserved, GPU 0" in out
          and "[device GPU 0]" in out and "[pinned]" in out
          and "cuda: stream 7, stream-ordered, pool 0x7f00000000, 6 records joined" in out,
          "gpu kinds: text breakdown by kind and device, site tags and details", None, out[:3000])


def write_gpu_run(tmp, name, leak, steps=300):
    """Writes tmp/name, mgtrain --device cuda: a pool's warmup, with leak a device cache's growth."""
    sys.path.insert(0, HERE)
    import gen_run
    import mgtrace
    MB = 1 << 20
    base = 0x400000
    path = os.path.join(tmp, name)
    with open(path, "wb") as f:
        w = mgtrace.TraceWriter(f)
        w.process(cmdline=b"mgtrain\0--device\0cuda")
        w.module(1, 1, 0, base, base + 0x100000, b"/nonexistent/mg-golden/mgtrain")
        host = gen_run.Site(1, [base + 0x1010, base + 0x100])
        pool = gen_run.Site(2, [base + 0x2010, base + 0x200])   # caching allocator segments
        cache = gen_run.Site(3, [base + 0x3010, base + 0x300])  # collator's device cache
        w.stack(1, host.ips)
        w.stack(2, pool.ips, kind=mgtrace.KIND_DEVICE)
        w.stack(3, cache.ips, kind=mgtrace.KIND_DEVICE)
        host.alloc(8 * MB, 0)
        t = 0
        for step in range(steps):
            t += 500_000_000
            # The pool reserves segments ever more rarely while the working set finds its size.
            if step in (0, 1, 2, 4, 7, 12, 20, 33, 50):
                pool.alloc(64 * MB, step)
            # Host scratch freed every step.
            host.alloc(MB, step)
            host.free_oldest()
            if leak:
                cache.alloc(2 * MB, step)
            sites = [s for s in (host, pool, cache) if s.dirty and s.allocs]
            for s in (host, pool, cache):
                s.dirty = False
            w.step(t, step)
            w.snapshot(t, step, 300 * MB + host.live + (step % 3) * 4096, host.live, host.count,
                       sites=[s.entry() for s in sites], rss_file=50 * MB,
                       flags=mgtrace.SNAP_STEP, device=pool.live + cache.live)
        w.end(t + 1000)
    return path


def check_gpu_run(path, name, leak, want):
    """One GPU run's report: its device series, host verdict, sites, points, text and gate."""
    MB = 1 << 20
    rc, out, err = mgreport(["--json", "--top", "0", path])
    doc = json.loads(out) if rc == 0 else {"series": [], "sites": [], "points": []}
    series = {s["name"]: s for s in doc["series"]}
    dev = series.get("device", {})
    check(rc == 0 and [s["name"] for s in doc["series"]] == ["rss", "heap", "mmap", "free_kept", "device"]
          and dev.get("verdict") == want,
          "gpu %s: device series %s" % (name, want), want, (rc, dev.get("verdict"), dev.get("why"), err))
    check(doc.get("verdict") in ("stable", "plateau"),
          "gpu %s: the host verdict is the host's" % name, "stable", doc.get("verdict"))
    kinds = {s["id"]: (s["kind"], s["verdict"]) for s in doc["sites"]}
    check(kinds.get(2, ("",))[0] == "device" and kinds[2][1] != "leak"
          and (kinds.get(3, ("", ""))[1] == "leak") == leak
          and (not leak or kinds[3][0] == "device") and kinds.get(1, ("",))[0] == "heap",
          "gpu %s: device sites listed with kind device (pool not leaking%s)"
          % (name, ", cache leaking" if leak else ""), "device", kinds)
    check({s.get("stack_role") for s in doc["sites"] if s["kind"] == "device"} == {"grew the cache"}
          and all("stack_role" not in s for s in doc["sites"] if s["kind"] == "heap"),
          "gpu %s: device sites' stacks are the ones that grew the cache" % name, "grew the cache",
          [(s["kind"], s.get("stack_role")) for s in doc["sites"]])
    check(doc["points"] and doc["points"][-1].get("device") == (9 * 64 + (600 if leak else 0)) * MB,
          "gpu %s: points carry device bytes" % name, "device", doc["points"][-1:])
    rc, out, err = mgreport(["--no-color", path])
    check(rc == 0 and "live CUDA" in out and "[device]" in out
          and "CUDA allocations at exit" in out and ("GPU leak" if leak else "GPU warmup") in out
          and (not leak or "the top one grew the cache:" in out)
          and "?? x2  [mgtrain]" in out  # two unnamed frames of one module: one line
          and "     device\n" in out,
          "gpu %s: text shows the device breakdown, series, column and sites" % name,
          "live CUDA", out[:2000])
    rc, _, _ = mgreport(["--fail-on", "leak", path])
    check(rc == (3 if leak else 0), "gpu %s: --fail-on leak -> exit %d" % (name, 3 if leak else 0),
          3 if leak else 0, rc)


def gpu(tmp):
    """GPU memory (device sites, snapshots' device_live_bytes) is its own series: a caching pool's
    warmup on the device is `plateau`, device buffers kept every step are `leak`; device sites are
    listed with kind device; the host's verdict stays the host's (RSS does not hold GPU memory)."""
    for name, leak, want in (("gpu_warmup.mgt", False, "plateau"), ("gpu_leak.mgt", True, "leak")):
        check_gpu_run(write_gpu_run(tmp, name, leak), name, leak, want)
    # Host-only traces have no device series and no device field.
    rc, out, _ = mgreport(["--json", os.path.join(DATA, "leak.mgt")])
    doc = json.loads(out)
    check("device" not in [s["name"] for s in doc["series"]] and "device" not in doc["points"][0],
          "host-only trace: no device series or field", None, [s["name"] for s in doc["series"]])
    rc, out, _ = mgreport(["--no-color", os.path.join(DATA, "leak.mgt")])
    check("device" not in out, "host-only trace: text never mentions device", None, out[:300])


def json_sites_in_place(tmp):
    """The JSON's sites are printed one at a time into the document: each process's own under
    "processes" (as many as it has, in the ranking's order), the first's mirrored at top level, a
    process without sites as []; a command line that spells the writer's place-holder
    ('"sites":<tab>"@mg-sites@1"') stays text."""
    sys.path.insert(0, HERE)
    import gen_run
    import mgtrace
    d = os.path.join(tmp, "inplace")
    os.mkdir(d)
    base = 0x400000

    def write(name, pid, ppid, nsites, cmdline=b"train", children=()):
        with open(os.path.join(d, name), "wb") as f:
            w = mgtrace.TraceWriter(f)
            w.process(pid=pid, ppid=ppid, cmdline=cmdline)
            w.module(1, 1, 0, base, base + 0x100000, b"/nonexistent/mg-golden/prog")
            for c in children:
                w.child(500, c)
            sites = [gen_run.Site(i + 1, [base + 0x1000 * (i + 1), base + 0x10]) for i in range(nsites)]
            for s in sites:
                w.stack(s.id, s.ips)
            for step in range(30):
                t = (step + 1) * 100_000_000
                for s in sites:
                    s.alloc((s.id << 10) * (1 + step % 3), step)
                w.step(t, step)
                w.snapshot(t, step, 300 << 20, sum(s.live for s in sites), 0,
                           sites=[s.entry() for s in sites], flags=mgtrace.SNAP_STEP)
            w.end(40 * 100_000_000)

    hostile = b'train\0"sites":\t"@mg-sites@1"\0x'
    write("run.mgt", 100, 1, 3, cmdline=hostile, children=(101, 102))
    write("run.python3.101.mgt", 101, 100, 5)
    write("run.python3.102.mgt", 102, 100, 0)
    rc, out, err = mgreport(["--json", "--top", "0", os.path.join(d, "run.mgt")])
    doc = json.loads(out) if rc == 0 else {}
    procs = doc.get("processes", [])
    ids = [[s["id"] for s in p["sites"]] for p in procs]
    check(ids == [[3, 2, 1], [5, 4, 3, 2, 1], []], "JSON: each process's sites in its place",
          [[3, 2, 1], [5, 4, 3, 2, 1], []], (rc, ids, err))
    check(procs and doc.get("sites") == procs[0]["sites"] and doc["process"]["command"].count("@mg-sites@1") == 1,
          "JSON: the first process's sites at top level, the command line kept as text", None,
          doc.get("process"))


def epochs(tmp):
    """mgprobe_label("epoch ...") reaches the classifier: RSS rising 2 MiB per step from the start
    for 1150 steps is a leak past the start horizon (1000 steps) in a run that marks no epochs, and
    still `growing` (a cache may fill all of epoch 1) in one whose first epoch is marked."""
    sys.path.insert(0, HERE)
    import mgtrace
    MB = 1 << 20

    def write(name, marked):
        path = os.path.join(tmp, name)
        with open(path, "wb") as f:
            w = mgtrace.TraceWriter(f)
            w.process(cmdline=b"train.py")
            t = 0
            for step in range(1150):
                t += 100_000_000
                w.step(t, step)
                if marked and step == 0:
                    w.label(t, step, b"epoch 1")
                w.snapshot(t, step, 2000 * MB + 2 * MB * step + (step % 5) * 4096, 0, 0,
                           flags=mgtrace.SNAP_STEP)
            w.end(t + 1000)
        return path

    for name, marked, want in (("no_epochs.mgt", False, "leak"), ("epoch1.mgt", True, "growing")):
        rc, out, err = mgreport(["--json", "--limit", "80G", write(name, marked)])
        rss = {s["name"]: s for s in json.loads(out)["series"]}.get("rss", {}) if rc == 0 else {}
        check(rss.get("verdict") == want, "epochs %s: rss %s" % (name, want), want,
              (rc, rss.get("verdict"), rss.get("why"), err))


def main():
    global MGREPORT
    MGREPORT = os.path.abspath(sys.argv[1])
    update = "--update" in sys.argv
    with tempfile.TemporaryDirectory() as tmp:
        golden(update)
        if not update:
            bad_inputs(tmp)
            cut_every_mode(tmp)
            usage_and_gates(tmp)
            perf_map(tmp)
            seeds()
            process_tree(tmp)
            json_sites_in_place(tmp)
            gpu(tmp)
            gpu_kinds(tmp)
            epochs(tmp)
    print("%d of %d checks failed" % (failures, checks))
    return 1 if failures or not checks else 0


if __name__ == "__main__":
    sys.exit(main())
