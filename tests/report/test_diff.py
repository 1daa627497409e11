#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""test_diff.py: `mgreport --diff BEFORE AFTER` on real runs under the probe.

    test_diff.py MGPROBE MGREPORT MGTRAIN PROG_STEPS_A PROG_STEPS_B PROG_STEPS_C

prog_steps (tests/report/prog_steps.c) is built three ways, each copied to `prog_steps` in a
folder of its own (two builds of one program): A at -O0, B at -O2 with an extra function (other
addresses: checked with nm), C with the leak's code moved down its file (other line numbers).
  A vs B, both leaking: the leak is matched by its symbolized stack and leaks in both runs;
  A vs B --fixed: it stopped leaking, and --fail-on leak exits 0;
  B --fixed vs A: it started leaking, and --fail-on leak exits 3 (0 without it);
  A vs C: matched without line numbers, naming where it moved;
  mgtrain healthy vs leak: mge_collate_batch started leaking, exit 3 with --fail-on leak;
  text and --json agree; bad usage exits 2 with one line.
Stdlib only."""
import json
import os
import shutil
import subprocess
import sys
import tempfile

import reportlib as rl


def build_dirs(tmp, progs):
    """Each build as <tmp>/<a|b|c>/prog_steps: one program's name, three builds."""
    out = {}
    for name, path in zip("abc", progs):
        d = os.path.join(tmp, name)
        os.makedirs(d)
        out[name] = os.path.join(d, "prog_steps")
        shutil.copy2(path, out[name])
    return out


def symbol_address(prog, name):
    p = subprocess.run(["nm", prog], capture_output=True, text=True)
    for line in p.stdout.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[2] == name:
            return parts[0]
    return None


def diff(t, mgreport, before, after, extra=()):
    rc, out, err = rl.mgreport(mgreport, ["--diff", before, after, "--json"] + list(extra))
    doc = json.loads(out) if out.strip() else None
    return rc, doc, err


def fn_of(row):
    return row["frames"][0]["function"] if row["frames"] else "??"


def check_builds(t, mgreport, traces):
    rc, d, err = diff(t, mgreport, traces["a_leak"], traces["b_leak"], ["--fail-on", "leak"])
    t.true("A vs B (both leak): exit 0 with --fail-on leak (no new leak)", rc == 0 and d, 0, (rc, err))
    still = d["sites"]["still"]
    t.true("A vs B: the leak (train_step's batch) leaks in both runs, matched by the whole stack",
           len(still) == 1 and fn_of(still[0]) == "train_step" and still[0]["matched"] == "stack",
           "train_step, stack", [(fn_of(r), r["matched"]) for r in still])
    t.true("A vs B: nothing stopped or started", not d["sites"]["stopped"] and not d["sites"]["started"],
           [], (d["sites"]["stopped"], d["sites"]["started"]))
    pool = [r for r in d["sites"]["other"] if fn_of(r) == "warm_pool"]
    t.true("A vs B: the warm-up pool is matched too, with its growth before and after (2.5 MiB each)",
           len(pool) == 1 and pool[0]["before"]["growth"] == pool[0]["after"]["growth"] == 40 * 64 * 1024,
           40 * 64 * 1024, pool)
    if still:
        s = still[0]
        t.true("A vs B: the leak's growth per step is 32 KiB before and after (within 1%)",
               all(abs(s[k]["growth_per_x"] - 32768) <= 328 for k in ("before", "after")), 32768,
               (s["before"]["growth_per_x"], s["after"]["growth_per_x"]))

    rc, d, err = diff(t, mgreport, traces["a_leak"], traces["b_fixed"], ["--fail-on", "leak"])
    stopped = d["sites"]["stopped"] if d else []
    t.true("A vs B --fixed: train_step stopped leaking, exit 0 with --fail-on leak",
           rc == 0 and len(stopped) == 1 and fn_of(stopped[0]) == "train_step" and not d["sites"]["started"],
           "stopped train_step, rc 0", (rc, [fn_of(r) for r in stopped]))
    t.true("A vs B --fixed: the answer says the fix worked", d and d["answer"].startswith("The fix worked"),
           "The fix worked...", d and d["answer"])
    t.true("A vs B --fixed: new_leak false", d and d["new_leak"] is False)

    rc, d, err = diff(t, mgreport, traces["b_fixed"], traces["a_leak"], ["--fail-on", "leak"])
    started = d["sites"]["started"] if d else []
    t.true("B --fixed vs A: train_step started leaking, exit 3 with --fail-on leak",
           rc == 3 and len(started) == 1 and fn_of(started[0]) == "train_step",
           "started train_step, rc 3", (rc, [fn_of(r) for r in started]))
    t.true("B --fixed vs A: new_leak true, the answer names the new leak",
           d and d["new_leak"] is True and d["answer"].startswith("A new leak") and "train_step" in d["answer"],
           "A new leak ... train_step", d and d["answer"])
    rc, out, err = rl.mgreport(mgreport, ["--diff", traces["b_fixed"], traces["a_leak"]])
    t.true("B --fixed vs A, text: exit 0 without --fail-on, the answer and the started site",
           rc == 0 and "A new leak: 1 site started leaking" in out and
           "Sites that started leaking (1):\n  train_step prog_steps.c:" in out, "text", (rc, out[:600]))

    rc, d, err = diff(t, mgreport, traces["a_leak"], traces["c_leak"])
    still = d["sites"]["still"] if d else []
    t.true("A vs C (lines moved): the leak is matched without line numbers, and says where it is now",
           len(still) == 1 and still[0]["matched"] == "stack without line numbers" and
           still[0]["where"] != still[0].get("where_after") and
           still[0].get("where_after", "").startswith("train_step prog_steps.c:"),
           "matched without lines", still)


def check_mgtrain(t, mgreport, healthy, leak):
    rc, d, err = diff(t, mgreport, healthy, leak, ["--fail-on", "leak"])
    started = d["sites"]["started"] if d else []
    t.true("mgtrain healthy vs leak: mge_collate_batch started leaking, exit 3 with --fail-on leak",
           rc == 3 and any(fn_of(r) == "mge_collate_batch" for r in started), 3,
           (rc, [fn_of(r) for r in started], err))
    t.true("mgtrain healthy vs leak: per series, both verdicts",
           d and [s["name"] for s in d["series"]] == ["rss", "heap", "mmap", "free_kept"] and
           all(s["before"]["verdict"] and s["after"]["verdict"] for s in d["series"]), "4 series", d and d["series"])
    t.equal("mgtrain healthy vs leak: the process verdict after is leak", "leak",
            d and d["process_verdict"]["after"]["verdict"])
    rc, d, err = diff(t, mgreport, leak, healthy, ["--fail-on", "leak"])
    stopped = d["sites"]["stopped"] if d else []
    t.true("mgtrain leak vs healthy: mge_collate_batch stopped leaking, exit 0 with --fail-on leak",
           rc == 0 and any(fn_of(r) == "mge_collate_batch" for r in stopped), 0, (rc, [fn_of(r) for r in stopped]))


def check_usage(t, mgreport, trace):
    for args in (["--diff", trace], ["--diff", trace, trace, trace], ["--diff", trace, trace, "--html", "x.html"],
                 ["--diff", trace, trace, "--folded"]):
        rc, out, err = rl.mgreport(mgreport, args)
        t.true("mgreport %s: usage error, exit 2 with one line" % " ".join(a if a != trace else "T.mgt" for a in args),
               rc == 2 and out == "" and len(err.strip().splitlines()) == 1, 2, (rc, err))


def main():
    mgprobe, mgreport, mgtrain = sys.argv[1:4]
    t = rl.Check()
    with tempfile.TemporaryDirectory() as tmp:
        progs = build_dirs(tmp, sys.argv[4:7])
        a, b = symbol_address(progs["a"], "remember_batch"), symbol_address(progs["b"], "remember_batch")
        t.true("the builds differ: remember_batch is at %s in A and %s in B" % (a, b), a and b and a != b)
        runs = {"a_leak": [progs["a"]], "b_leak": [progs["b"]], "b_fixed": [progs["b"], "--fixed"],
                "c_leak": [progs["c"]],
                "healthy": [mgtrain, "--scenario", "healthy", "--batch", "8"],
                "leak": [mgtrain, "--scenario", "leak", "--batch", "8"]}
        traces = {k: os.path.join(tmp, k + ".mgt") for k in runs}
        results = rl.parallel([lambda k=k: rl.probe_run(mgprobe, traces[k], runs[k]) for k in runs])
        for k, (rc, out, err) in zip(runs, results):
            t.true("%s runs under the probe" % k, rc == 0, 0, (rc, err[-300:]))
        check_builds(t, mgreport, traces)
        check_mgtrain(t, mgreport, traces["healthy"], traces["leak"])
        check_usage(t, mgreport, traces["a_leak"])
    t.done()


if __name__ == "__main__":
    main()
