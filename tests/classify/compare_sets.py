#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Before and after on the crosscheck generators: keep every series' verdicts, then score or
compare saved runs (what a classifier change is judged by; see docs/CLASSIFIER.md).

usage:
  compare_sets.py run GENERATOR MGREPORT OUT.pkl --seed N [--seed N]... [--per-family K] [--issue12]
  compare_sets.py score RUN.pkl...
  compare_sets.py diff BEFORE.pkl AFTER.pkl
  compare_sets.py why RUN.pkl...

GENERATOR is a module beside this file (crosscheck, crosscheck_real, crosscheck_fresh,
crosscheck_warm); `run` draws its series exactly as the generator's own command line does
(all families, then keeps --issue12's), classifies every prefix through MGREPORT (2 at a
time), prints the generator's score and saves (label, series fields, verdicts) per series.
`score` prints the same score over several saved runs together (the ten sets, say); `diff`
prints each series whose verdicts changed, then the changes counted by family, phase (non-leak,
before the onset, growing, after the stop) and verdict before -> after. `why` reads the `why`
each prefix's verdict gave (runs saved since session 61 keep it): the false `leak`s on non-leak
prefixes counted by family and by the rule that decided (late onset, start horizon, limit
horizon, epoch; "held" when an earlier prefix's reading still stood), and the passed
`decidable_at` promises counted by the reading that made them (the why's first clause, its
numbers taken out), kept or broken. Needs numpy.
"""
import argparse
import collections
import concurrent.futures
import importlib
import os
import pickle
import re
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import crosscheck as cc  # noqa: E402

def run(a):
    gen = importlib.import_module(a.generator)
    per = a.per_family or gen.PER_FAMILY_DEFAULT
    only = set(getattr(gen, "ISSUE12", [])) if a.issue12 else set()
    score, saved = cc.Score(), []
    with tempfile.TemporaryDirectory() as tmp, concurrent.futures.ThreadPoolExecutor(2) as pool:
        for sd in a.seed:
            keep = cc.draw_set(gen.draw, gen.NONLEAK + gen.LEAK, sd, per, only)
            said = pool.map(lambda p: cc.classify(a.mgreport, p[1], tmp, p[0].replace(":", "-")), keep)
            for (label, d), s in zip(keep, said):
                score.add(d, s, label)
                saved.append((label, {k: v for k, v in d.items() if k not in ("y", "level")}, s))
    with open(a.out, "wb") as f:
        pickle.dump(saved, f)
    score.report()


def load(path):
    with open(path, "rb") as f:
        return pickle.load(f)


def score(a):
    s = cc.Score()
    for path in a.runs:
        for label, d, said in load(path):
            s.add(d, said, label)
    s.report()


def phase(d, step):
    if not d["leak"]:
        return "non-leak"
    if step < d["onset"]:
        return "before onset"
    return "after stop" if d["stop"] is not None and step >= d["stop"] else "growing"


def diff(a):
    before = {label: said for label, _, said in load(a.before)}
    kinds = collections.Counter()
    for label, d, said in load(a.after):
        if label not in before:
            sys.exit(f"compare_sets: {label} is not in {a.before}: not the same seeds")
        changed = [(s, v, w) for (s, v, *_), (_, w, *_) in zip(before[label], said) if v != w]
        for s, v, w in changed:
            kinds[(d["fam"], phase(d, s), v, w)] += 1
        if changed:
            print(f"{label:18s} onset {d['onset']} stop {d['stop']}: " +
                  ", ".join(f"{s} {v}->{w}" for s, v, w in changed))
    for (fam, ph, v, w), k in sorted(kinds.items()):
        print(f"  {fam:12s} {ph:13s} {v:8s} -> {w:8s} {k}")


RULES = [("a late onset", "late onset"), ("epoch, no cache", "epoch"),
         ("start horizon", "start horizon"), ("limit horizon", "limit horizon")]


def rule_of(why):
    """The rule a `leak` verdict's why names, and whether an earlier prefix's reading was held."""
    rule = next((name for key, name in RULES if key in why), "other")
    return rule + (", held" if "nothing has ended it" in why else "")


def reading_of(why):
    """The kind of a `growing` reading: its why's first clause, numbers and sizes taken out."""
    return re.sub(r"-?\d[\d.]*( [KMGT]iB| B)?", "#", why.split(";")[0].split(" (")[0])


def why(a):
    false, kept = collections.Counter(), collections.Counter()
    for path in a.runs:
        for label, d, said in load(path):
            if said and len(said[0]) < 6:
                sys.exit(f"compare_sets: {path} was saved without the why: run it again")
            false.update((d["fam"], rule_of(p[5])) for p in said if not d["leak"] and p[1] == "leak")
            kept.update((reading_of(p[5]), ok) for p, ok in cc.promises(said))
    print(f"false leak on non-leak prefixes by the rule that decided: {sum(false.values())}")
    for (fam, rule), k in sorted(false.items()):
        print(f"  {fam:12s} {rule:24s} {k}")
    print(f"decidable_at passed, by the reading that promised: {sum(kept.values())}, "
          f"kept {sum(k for (_, ok), k in kept.items() if ok)}")
    for reading in sorted({r for r, _ in kept}, key=lambda r: -kept[(r, True)] - kept[(r, False)]):
        print(f"  kept {kept[(reading, True)]:5d} broken {kept[(reading, False)]:4d}  {reading}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run", help="classify a generator's series and save the verdicts")
    r.add_argument("generator", choices=["crosscheck", "crosscheck_real", "crosscheck_fresh", "crosscheck_warm"])
    r.add_argument("mgreport")
    r.add_argument("out")
    r.add_argument("--seed", type=int, action="append", required=True)
    r.add_argument("--per-family", type=int)
    r.add_argument("--issue12", action="store_true", help="keep only the families issue 12 lists")
    s = sub.add_parser("score", help="score saved runs together")
    s.add_argument("runs", nargs="+")
    d = sub.add_parser("diff", help="verdicts that changed between two saved runs of the same seeds")
    d.add_argument("before")
    d.add_argument("after")
    w = sub.add_parser("why", help="false leaks by rule and promises by reading, from the saved why")
    w.add_argument("runs", nargs="+")
    a = ap.parse_args()
    if a.cmd == "run" and not os.access(a.mgreport, os.X_OK):
        ap.error(f"{a.mgreport}: not an executable (build mgreport first)")
    {"run": run, "score": score, "diff": diff, "why": why}[a.cmd](a)


if __name__ == "__main__":
    main()
