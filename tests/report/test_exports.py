#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""test_exports.py: mgreport's flame-graph exports on real traces of real runs under the probe.

    test_exports.py MGPROBE MGREPORT MGTRAIN PROG_STEPS HOSTILE_TRACE

mgtrain's leak scenario, and prog_steps with two forked workers, run under the probe; then
  --folded      every line is the folded form of `--json --top 0`'s sites grouped by stack, with
                their exact live bytes at the last step (so the totals agree to the byte); --top N
                keeps N sites and one "[K other sites]" line with the rest; --at and --growth agree
                with each other (growth = live at TO - live at FROM, positive only); bad values
                exit 2; several processes get their own root frame;
  --speedscope  the fields of speedscope's file-format schema, stacks root first, the same stacks
                and weights as --folded;
and a trace whose strings hold terminal escapes and bytes that are not UTF-8: every output shows
them escaped, as the text report does.
Stdlib only."""
import json
import os
import re
import subprocess
import sys
import tempfile

import reportlib as rl

def label(f):
    """A native JSON frame as the exports name it (mgr_frame_label; mgtrain has no Python frames)."""
    if f["function"] and f["function"] != "??":
        s = f["function"]
    else:
        s = "?? [%s]" % os.path.basename(f["module"] or "??")
    return "".join(" " if ord(c) < 0x20 else "," if c == ";" else c for c in s)


def folded_of_json(doc):
    """{stack: bytes} that --folded must print for a one-process --json --top 0 document."""
    out = {}
    for s in doc["sites"]:
        w = round(s["live_bytes_last_x"])
        if w <= 0:
            continue
        stack = ";".join(label(f) for f in reversed(s["frames"])) or "[no stack]"
        out[stack] = out.get(stack, 0) + w
    return out


def parse_folded(t, text):
    lines = text.splitlines()
    ok = all(re.fullmatch(r"[^ ;][^;]*(;[^;]+)* \d+", l) for l in lines)
    t.true("--folded: every line is 'frame;frame;... WEIGHT' with an integer weight", ok and lines != [],
           "folded lines", [l for l in lines if not re.fullmatch(r"[^ ;][^;]*(;[^;]+)* \d+", l)][:3])
    out = {}
    for l in lines:
        stack, w = l.rsplit(" ", 1)
        out[stack] = out.get(stack, 0) + int(w)
    t.equal("--folded: each stack on one line (equal stacks merged)", len(lines), len(out))
    t.equal("--folded: lines sorted by stack", sorted(l.rsplit(" ", 1)[0] for l in lines),
            [l.rsplit(" ", 1)[0] for l in lines])
    return out


def check_folded(t, mgreport, trace, doc):
    rc, out, err = rl.mgreport(mgreport, [trace, "--folded"])
    t.equal("--folded exits 0", 0, rc)
    got = parse_folded(t, out)
    want = folded_of_json(doc)
    t.equal("--folded = the --json sites grouped by stack, weighted by live bytes at the last step",
            want, got)
    leak = [s for s in got if s.endswith(";mge_collate_batch") and "worker_main" in s]
    t.true("--folded: the leak's stack is root first (... worker_main;mge_collate_batch)", len(leak) == 1, 1, leak)
    total = sum(got.values())
    rc, out5, _ = rl.mgreport(mgreport, [trace, "--folded", "--top", "5"])
    top5 = parse_folded(t, out5)
    other = [s for s in top5 if re.fullmatch(r"\[\d+ other sites\]", s)]
    t.true("--top 5: one '[N other sites]' line", len(other) == 1, 1, other)
    t.equal("--top 5: the same total, the rest in that line", total, sum(top5.values()))
    return got


def speedscope_sites(t, mgreport, trace, tmp, args):
    """{stack with files and lines: weight} of a --speedscope profile: one entry per site (a
    site's frames with their lines), where --folded merges sites by function names."""
    out = os.path.join(tmp, "w.json")
    rc, _, err = rl.mgreport(mgreport, [trace, "--speedscope", out] + args)
    with open(out) as f:
        doc = json.load(f)
    frames = doc["shared"]["frames"]
    sites = {}
    for smp, w in zip(doc["profiles"][0]["samples"], doc["profiles"][0]["weights"]):
        key = tuple((frames[i]["name"], frames[i].get("file"), frames[i].get("line")) for i in smp)
        sites[key] = sites.get(key, 0) + w
    return sites


def check_weights(t, mgreport, trace, whole, tmp):
    _, at_end, _ = rl.mgreport(mgreport, [trace, "--folded", "--at", "300"])
    t.equal("--at 300 (the last step) = the default", whole, parse_folded(t, at_end))
    rc, grow, err = rl.mgreport(mgreport, [trace, "--folded", "--growth", "100:250"])
    g = parse_folded(t, grow)
    leak = [s for s in g if s.endswith("worker_main;mge_collate_batch")]
    t.true("--growth 100:250 keeps the leak", len(leak) == 1, 1, leak)
    t.true("--growth: the leak grows (> 100 KiB over 150 steps)", leak and g[leak[0]] > 100 * 1024, "> 102400",
           leak and g[leak[0]])
    t.true("--growth: only positive weights", all(w > 0 for w in g.values()), "all > 0", min(g.values() or [0]))
    a, b = (speedscope_sites(t, mgreport, trace, tmp, ["--at", x]) for x in ("100", "250"))
    gs = speedscope_sites(t, mgreport, trace, tmp, ["--growth", "100:250"])
    want = {k: b.get(k, 0) - a.get(k, 0) for k in set(a) | set(b) if b.get(k, 0) - a.get(k, 0) > 0}
    t.equal("--growth 100:250: each site's weight is live(250) - live(100) to the byte, the shrinking "
            "ones left out", want, {k: w for k, w in gs.items() if not k[0][0].startswith("[")})
    t.true("--growth: a note on stderr says how much the shrinking sites gave back",
           rc == 0 and ("shrank" in err) == any(b.get(k, 0) < a.get(k, 0) for k in set(a) | set(b)), "note", err)
    rc, _, err = rl.mgreport(mgreport, [trace, "--folded", "--at", "1000"])
    t.true("--at past the end: the last step, with one line saying so",
           rc == 0 and "no snapshot at step 1000" in err, "rc 0 + note", (rc, err))
    for bad in (["--at", "x"], ["--growth", "250:100"], ["--growth", "100"], ["--at", "5"]):
        rc, out, err = rl.mgreport(mgreport, [trace] + bad)
        t.true("%s without --folded/--speedscope, or a bad value, is a usage error (exit 2, one line)" % " ".join(bad),
               rc == 2 and out == "" and len(err.strip().splitlines()) == 1, 2, (rc, err))


def check_schema(t, doc):
    problems = rl.speedscope_problems(doc)
    t.true("speedscope: the file has every field of speedscope's file-format schema, with its type "
           "($schema, shared.frames, sampled profiles in bytes with samples and weights)", not problems, [], problems)
    broken = json.loads(json.dumps(doc))
    broken["profiles"][0]["weights"].pop()
    del broken["shared"]["frames"][0]["name"]
    t.true("speedscope: the schema check itself catches a broken file", len(rl.speedscope_problems(broken)) >= 2)
    t.true("speedscope: name, activeProfileIndex, exporter",
           isinstance(doc.get("name"), str) and doc.get("activeProfileIndex") == 0 and
           str(doc.get("exporter", "")).startswith("mgreport "))


def check_speedscope(t, mgreport, trace, whole, tmp):
    out = os.path.join(tmp, "leak.speedscope.json")
    rc, stdout, err = rl.mgreport(mgreport, [trace, "--speedscope", out])
    t.true("--speedscope exits 0, writes the file and prints nothing on stdout",
           rc == 0 and stdout == "" and os.path.exists(out), 0, (rc, err))
    with open(out) as f:
        doc = json.load(f)
    check_schema(t, doc)
    frames = doc["shared"]["frames"]
    stacks = {}
    for s, w in zip(doc["profiles"][0]["samples"], doc["profiles"][0]["weights"]):
        key = ";".join(frames[i]["name"] for i in s)
        stacks[key] = stacks.get(key, 0) + w
    t.equal("speedscope: the same stacks (root first) and weights as --folded", whole, stacks)
    t.true("speedscope: the profile says what it weighs",
           doc["profiles"][0]["name"].endswith("live bytes at step 300"), "...live bytes at step 300",
           doc["profiles"][0]["name"])
    named = [f for f in frames if f["name"] == "mge_collate_batch"]
    t.true("speedscope: frames carry file and line", named and all(
        f.get("file", "").endswith("mge_loader.c") and f.get("line", 0) > 0 for f in named), "mge_loader.c:N", named)


def check_family(t, mgprobe, mgreport, prog, tmp):
    trace = os.path.join(tmp, "family.mgt")
    rc, out, err = rl.probe_run(mgprobe, trace, [prog, "--workers", "2", "--steps", "120"], cwd=tmp)
    t.equal("prog_steps --workers 2 runs under the probe", 0, rc)
    rc, out, err = rl.mgreport(mgreport, [trace, "--folded"])
    roots = sorted({l.split(";", 1)[0] for l in out.splitlines()})
    t.true("several processes: each stack starts with its process ('report-steps-a [pid N]')",
           rc == 0 and len(roots) == 3 and all(re.fullmatch(r"report-steps-a \[pid \d+\]", r) for r in roots),
           "3 roots", roots)


def check_hostile(t, mgreport, trace, tmp):
    """A trace whose command line and symbols hold terminal escapes and bytes that are not UTF-8
    (tests/fuzz/seeds-trace/strings-hostile.mgt): every output shows them escaped (\\xHH) or,
    in JSON, as valid UTF-8, as the text report does."""
    def clean_text(b):
        try:
            b.decode("utf-8")
        except UnicodeDecodeError:
            return False
        return not any(c < 0x20 and c not in (9, 10, 13) or c == 0x7f for c in b) and b"\xc2\x9b" not in b
    p = subprocess.run([mgreport, trace, "--folded"], capture_output=True)
    t.true("hostile strings: --folded is UTF-8 without control bytes, and shows them as \\xHH",
           p.returncode == 0 and clean_text(p.stdout) and b"\\x1b" in p.stdout, "escaped", p.stdout[:120])
    p = subprocess.run([mgreport, "--diff", trace, trace], capture_output=True)
    t.true("hostile strings: --diff's text is UTF-8 without control bytes",
           p.returncode == 0 and clean_text(p.stdout), "escaped", p.stdout[:200])
    for args, path in ((["--speedscope"], os.path.join(tmp, "h.json")), (["--html"], os.path.join(tmp, "h.html"))):
        p = subprocess.run([mgreport, trace] + args + [path], capture_output=True)
        with open(path, "rb") as f:
            body = f.read()
        t.true("hostile strings: %s writes valid UTF-8 without control bytes" % args[0],
               p.returncode == 0 and clean_text(body), "clean", body[:120])


def main():
    mgprobe, mgreport, mgtrain, prog, hostile = sys.argv[1:6]
    t = rl.Check()
    with tempfile.TemporaryDirectory() as tmp:
        trace = os.path.join(tmp, "leak.mgt")
        rc, out, err = rl.probe_run(mgprobe, trace, [mgtrain, "--scenario", "leak", "--batch", "8"])
        t.true("mgtrain --scenario leak runs under the probe", rc == 0 and "done: steps=300" in out, 0, (rc, err[-300:]))
        rc, out, err = rl.mgreport(mgreport, [trace, "--json", "--top", "0"])
        doc = rl.with_frames(json.loads(out))
        whole = check_folded(t, mgreport, trace, doc)
        check_weights(t, mgreport, trace, whole, tmp)
        check_speedscope(t, mgreport, trace, whole, tmp)
        check_family(t, mgprobe, mgreport, prog, tmp)
        check_hostile(t, mgreport, hostile, tmp)
    t.done()


if __name__ == "__main__":
    main()
