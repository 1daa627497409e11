#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A second, independent opinion on the classifier: training-like RSS series drawn by a generator
written apart from eval_train.c (its own families, parameters and noise), every series cut into
50 prefixes, each prefix classified by the real `mgreport --series FILE --json --limit 80G` (or
the limit a generator set for a run it cut at its OOM), and scored as issue 12 scores: false
`leak` on non-leak prefixes, recall once knowable (onset + max(200 steps, 20 samples, the steps
the rise takes to reach 5 noise sigmas); a staircase from its 4th step), knowable leaks called
`plateau`/`stable` (and so at confidence 0.9 or more), leak series that said `leak` and later
something else while still growing, finite steps_to_oom on settled non-leak prefixes,
whether a `growing` prefix's decidable_at, once a later scored prefix passes it, finds it decided,
and, on runs cut at their OOM, the error of steps_to_oom on `leak` verdicts after the onset.

eval_classify is what the classifier was built against; this script is a check against
over-fitting to it: run it with seeds never used while changing the classifier.

usage: crosscheck.py MGREPORT [--seed N]... [--jobs N] [--per-family K] [--family F]... [-v]
Needs numpy (Debian: python3-numpy). Exit status: 0, or 2 on bad usage or a failed mgreport run.
"""
import argparse
import collections
import concurrent.futures
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

MiB, GiB = float(1 << 20), float(1 << 30)
NONLEAK = ["ramp", "doubling", "cache", "runmax", "pinned", "shift", "flat"]
LEAK = ["late", "slow", "stair", "under-spikes", "fixed", "fast", "plain"]
PREFIXES = 50


def noise(rng, n, kind, sigma):
    """Gaussian, heavy-tailed (Student t, 2.5 degrees of freedom, cut at 10) or AR(1) noise of sd sigma."""
    if kind == "gauss":
        return rng.normal(0, sigma, n)
    if kind == "t":
        return np.clip(rng.standard_t(2.5, n), -10, 10) * sigma * 0.6
    phi = 0.9 if kind == "ar0.9" else 0.95
    e = rng.normal(0, sigma * np.sqrt(1 - phi * phi), n)
    x = np.zeros(n)
    for i in range(1, n):
        x[i] = phi * x[i - 1] + e[i]
    return x


def spikes(rng, n, kind):
    """Validation spikes every N steps, checkpoint saves, irregular evals, or an accumulation saw."""
    y = np.zeros(n)
    if kind == "val":
        per, dur, amp = rng.integers(300, 1200), rng.integers(10, 60), rng.uniform(1, 6) * GiB
        for s in range(per, n, per):
            y[s:s + dur] += amp
    elif kind == "ckpt":
        per, amp = rng.integers(500, 2000), rng.uniform(2, 10) * GiB
        for s in range(per, n, per):
            y[s:s + rng.integers(2, 8)] += amp
    elif kind == "irregular":
        s = 0
        while True:
            s += int(rng.exponential(600)) + 50
            if s >= n:
                break
            y[s:s + rng.integers(5, 40)] += rng.uniform(1, 8) * GiB
    elif kind == "saw":
        per, amp = rng.integers(4, 17), rng.uniform(0.3, 2) * GiB
        y += (np.arange(n) % per) / per * amp
    return y


def warmup(rng, fam, n):
    """The non-leak shapes: what a healthy run's memory does on top of its base."""
    x = np.arange(n, dtype=float)
    t = np.zeros(n)
    if fam == "ramp":  # the seeds' shape: a ramp of 60-320 steps, then flat
        t = np.minimum(x / rng.integers(60, 321), 1) * rng.uniform(2, 15) * GiB
    elif fam == "doubling":  # an allocator pool that doubles, more rarely each time
        p, k = rng.uniform(0.1, 1) * GiB, 1
        while k < min(2048, n) and p <= 16 * GiB:
            t[k:] += p
            p, k = 2 * p, 2 * k
    elif fam == "cache":  # a dataset cache filling during a first epoch of 1000-2000 steps
        t = np.minimum(x / rng.integers(1000, 2001), 1) * rng.uniform(3, 20) * GiB
    elif fam == "runmax":  # the running maximum of bucketed sequence lengths
        t = np.maximum.accumulate(rng.integers(64, 4097, n)) / 4096 * rng.uniform(2, 12) * GiB
    elif fam == "pinned":  # pinned-memory pools grabbed in a few chunks early on
        for _ in range(rng.integers(2, 6)):
            t[rng.integers(0, 400):] += rng.uniform(0.2, 2) * GiB
    elif fam == "shift":  # one level shift, then flat
        t[rng.integers(200, n // 2):] += rng.uniform(1, 8) * GiB
    return t


def leak(rng, fam, n):
    """The leak shapes: (trend, onset, stop, steps) with stop None while it goes on and steps the
    staircase's (empty for other shapes)."""
    x = np.arange(n, dtype=float)
    t = np.zeros(n)
    onset = int(rng.integers(100, n // 2)) if fam in ("late", "under-spikes") else int(rng.integers(0, 300))
    rate = {"slow": rng.uniform(0.1, 1), "fast": rng.uniform(50, 150)}.get(fam, rng.uniform(1, 20)) * MiB
    stop, steps = None, []
    if fam == "stair":  # irregular steps: exponential or log-normal gaps
        s = onset
        while s < n:
            steps.append(s)
            t[s:] += rng.uniform(100, 600) * MiB
            s += int(rng.choice([rng.exponential(150), rng.lognormal(4.5, 1.0)])) + 5
    else:
        t = np.clip(x - onset, 0, None) * rate
        if fam == "fixed":
            stop = int(rng.integers(onset + 800, max(onset + 801, n - 500)))
            t[stop:] = t[stop]
    return t, onset, stop, steps


def draw(rng, fam):
    """One series: the bytes at every step and what is true of it."""
    n = int(rng.integers(3000, 9000))
    base = rng.uniform(4, 60) * GiB
    sigma = rng.uniform(20, 400) * MiB
    nk = str(rng.choice(["gauss", "t", "ar0.9", "ar0.95"]))
    sk = str(rng.choice(["none", "val", "ckpt", "irregular", "saw"]))
    d = dict(fam=fam, leak=fam in LEAK, sigma=sigma, noise=nk, onset=None, stop=None, steps=[],
             every=int(rng.choice([1, 10])))
    if fam in LEAK:
        if fam == "slow":
            base = rng.uniform(20, 60) * GiB
        t, d["onset"], d["stop"], d["steps"] = leak(rng, fam, n)
        if fam == "fast":  # cut where it has leaked 60 GiB
            n = min(n, d["onset"] + int(60 * GiB / (t[d["onset"] + 1] - t[d["onset"]])))
            t = t[:n]
        if fam == "under-spikes":
            sk = str(rng.choice(["val", "ckpt", "irregular"]))
        end = d["stop"] or n
        d["rate"] = (t[end - 1] - t[d["onset"]]) / max(1, end - 1 - d["onset"])
    else:
        t = warmup(rng, fam, n)
        rises = np.nonzero(np.diff(t) > 0)[0]
        end = float(rises[-1] + 1) if len(rises) else 0.0
        d["settled"] = end + max(200.0, 20.0 * d["every"], 0.25 * end)
    d.update(spikes=sk, n=n)
    d["y"] = base + t + noise(rng, n, nk, sigma) + spikes(rng, n, sk)
    return d


def ar1(rng, n, phi, sigma):
    """AR(1) noise with stationary standard deviation sigma, its first point drawn from that."""
    e = rng.normal(0.0, sigma * np.sqrt(1 - phi * phi), n)
    x = np.empty(n)
    x[0] = rng.normal(0.0, sigma)
    for i in range(1, n):
        x[i] = phi * x[i - 1] + e[i]
    return x


def knowable(d):
    """The step from which issue 12 counts a leak as knowable."""
    if d["fam"] == "stair":
        return d["steps"][3] if len(d["steps"]) > 3 else d["n"]
    return d["onset"] + max(200, 20 * d["every"], int(5 * d["sigma"] / max(d["rate"], 1.0)))


def classify(mgreport, d, tmp, name):
    """(step, verdict, steps_to_oom, decidable_at, confidence, why) at each of PREFIXES cuts of
    series d."""
    rows = list(range(0, d["n"], d["every"]))
    out = []
    for c in sorted(set(int(k) for k in np.linspace(12, len(rows), PREFIXES))):
        path = os.path.join(tmp, f"{name}-{c}.csv")
        with open(path, "w") as f:
            f.write("step,rss\n")
            f.writelines(f"{rows[k]},{int(d['y'][rows[k]])}\n" for k in range(c))
        p = subprocess.run([mgreport, "--series", path, "--json", "--limit", str(d.get("limit", "80G"))],
                           capture_output=True, text=True)
        os.unlink(path)
        if p.returncode != 0:
            sys.exit(f"crosscheck: mgreport failed on {name} at {c} rows: {p.stderr.strip()}")
        j = json.loads(p.stdout)["series"][0]
        out.append((rows[c - 1], j["verdict"], j["steps_to_oom"], j["decidable_at"], j["confidence"],
                    j["why"]))
    return out


def promises(said):
    """decidable_at: each `growing` prefix whose promise has passed (within the prefixes scored),
    and whether the first prefix at or after it is decided: (prefix, kept)."""
    for p in said:
        if p[1] != "growing" or p[3] is None or p[3] > said[-1][0]:
            continue
        later = next(w for s, w, *_ in said if s >= p[3])
        yield p, later != "growing"


class Score:
    def __init__(self):
        self.c = collections.Counter()
        self.misses = []
        self.fam = collections.defaultdict(lambda: [0, 0])  # knowable, recalled
        self.oom_err = []  # |projected - true| / true steps to the OOM, leak verdicts

    def add(self, d, said, label):
        c, k, was_leak, flipped = self.c, None, False, False
        if d["leak"]:
            k = knowable(d)
            c["leak series"] += 1
        self.honesty(said)
        for step, v, oom, _, *conf in said:  # runs saved before the confidence have none (nor the why)
            if not d["leak"]:
                c["non-leak prefixes"] += 1
                c["false leak"] += v == "leak"
                settled = step >= d["settled"]
                c["settled"] += settled
                c["settled oom"] += settled and oom is not None
                if v == "leak":
                    self.misses.append((label, step, "false leak"))
                continue
            growing = d["stop"] is None or step < d["stop"]
            if step < d["onset"]:
                c["pre-onset"] += 1
                c["pre-onset leak"] += v == "leak"
            if v == "leak" and oom is not None and d.get("oom_at", 0) > step >= d["onset"]:
                self.oom_err.append(abs(oom - (d["oom_at"] - step)) / (d["oom_at"] - step))
            if growing and step >= k:
                c["knowable"] += 1
                c["recall"] += v == "leak"
                self.fam[d["fam"]][0] += 1
                self.fam[d["fam"]][1] += v == "leak"
                c["flat"] += v in ("plateau", "stable")
                c["with confidence"] += bool(conf)
                c["sure flat"] += v in ("plateau", "stable") and bool(conf) and conf[0] >= 0.9
                if v in ("plateau", "stable"):
                    self.misses.append((label, step, v))
            flipped |= growing and was_leak and v != "leak"
            was_leak |= v == "leak"
        if d["leak"] and "bg" in d:
            c["bare leak series"] += d["bg"] is None
            c["bare leak then not"] += flipped and d["bg"] is None
        if flipped:
            c["leak then not"] += 1
            self.misses.append((label, None, "leak, then not leak"))

    def honesty(self, said):
        for _, kept in promises(said):
            self.c["promises"] += 1
            self.c["kept"] += kept

    def report(self):
        c = self.c
        pct = lambda a, b: f"{100.0 * c[a] / max(c[b], 1):6.2f}% ({c[a]} of {c[b]})"
        print(f"false leak on non-leak prefixes     {pct('false leak', 'non-leak prefixes')}")
        print(f"leak recall once knowable           {pct('recall', 'knowable')}")
        print(f"knowable leaks plateau or stable    {pct('flat', 'knowable')}")
        if c["with confidence"]:
            print(f"  ... at confidence >= 0.9           {pct('sure flat', 'knowable')}")
        print(f"leak, then not leak while growing   {c['leak then not']} of {c['leak series']} leak series")
        if c["bare leak series"]:
            print(f"  ... of those on no allocator growth {c['bare leak then not']} of {c['bare leak series']}")
        print(f"false leak before a leak's onset    {pct('pre-onset leak', 'pre-onset')}")
        print(f"finite steps_to_oom, settled non-leak {pct('settled oom', 'settled')}")
        print(f"decidable_at passed and decided     {pct('kept', 'promises')}")
        if self.oom_err:
            print(f"OOM error on leak verdicts          median {100 * np.median(self.oom_err):.1f}%, "
                  f"p90 {100 * np.percentile(self.oom_err, 90):.1f}% ({len(self.oom_err)} verdicts)")
        print("recall by family: " + ", ".join(f"{f} {100.0 * r / max(k, 1):.1f}% ({r}/{k})" for f, (k, r) in
                                              sorted(self.fam.items())))
        kinds = collections.Counter((label.split(":")[0], what) for label, _, what in self.misses)
        for (fam, what), k in sorted(kinds.items()):
            print(f"  {fam:14s} {what:22s} {k}")


def draw_set(draw, families, seed, per, only=()):
    """[(label, series)] of one seed: families * per series drawn with draw(rng, family) in order,
    then those of the families in `only` kept (all when it is empty), labelled family:seed:index."""
    rng = np.random.default_rng(seed)
    series = [draw(rng, f) for f in families * per]
    return [(f"{d['fam']}:{seed}:{i}", d) for i, d in enumerate(series) if not only or d["fam"] in only]


def run_sets(doc, draw, families, seed, per, jobs, groups=None):
    """The command line every crosscheck generator shares: MGREPORT [--seed N]... [--per-family K]
    [--jobs N] [--family F]... [--GROUP]... [-v]; draws families * per-family series per seed with
    draw(rng, family), classifies every prefix through MGREPORT and prints the score. `groups`
    names family lists that a flag of that name scores alone."""
    ap = argparse.ArgumentParser(description=doc.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("mgreport")
    ap.add_argument("--seed", type=int, action="append", help=f"generator seed (repeatable; default {seed})")
    ap.add_argument("--per-family", type=int, default=per, help=f"series per family per seed (default {per})")
    ap.add_argument("--jobs", type=int, default=jobs)
    ap.add_argument("--family", action="append",
                    help="score only these families (all are drawn, so the series match a full run's)")
    for name, fams in (groups or {}).items():
        ap.add_argument(f"--{name}", action="store_true", help=f"score only {', '.join(fams)}")
    ap.add_argument("-v", action="store_true", help="print every verdict sequence")
    a = ap.parse_args()
    if not os.access(a.mgreport, os.X_OK):
        ap.error(f"{a.mgreport}: not an executable (build mgreport first)")
    only = set(a.family or []).union(*[f for g, f in (groups or {}).items() if getattr(a, g)])
    score = Score()
    with tempfile.TemporaryDirectory() as tmp, concurrent.futures.ThreadPoolExecutor(a.jobs) as pool:
        for sd in a.seed or [seed]:
            keep = draw_set(draw, families, sd, a.per_family, only)
            runs = pool.map(lambda p: classify(a.mgreport, p[1], tmp, p[0].replace(":", "-")), keep)
            for (label, d), said in zip(keep, runs):
                score.add(d, said, label)
                if a.v:
                    seq = "".join(v[0] if v != "leak" else "L" for _, v, *_ in said)
                    print(f"{label:18s} dx {d['every']:2d} onset {d['onset']} stop {d['stop']} {d['noise']} "
                          f"{d['spikes']} sigma {d['sigma'] / MiB:.0f}M {seq}")
    score.report()


PER_FAMILY_DEFAULT = 4


def main():
    run_sets(__doc__, draw, NONLEAK + LEAK, 777, PER_FAMILY_DEFAULT, 2)


if __name__ == "__main__":
    main()
