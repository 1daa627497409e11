#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""End to end: mgtrain's scenarios under the real probe, judged by mgreport. Each scenario's
memory behaviour is a real mechanism (docs/ENGINE.md); the verdicts must name it.

usage: verdicts_test.py MGPROBE MGREPORT MGTRAIN SCENARIO [SAMPLE]

With SAMPLE (e.g. 512K) the run is sampled (mgprobe run --sample SAMPLE): the same verdicts and
leaking sites are expected, from estimates that carry a band. Sampled runs are seeded
(MGPROBE_SAMPLE_SEED) so that a failure repeats: a sampled leak's samples can fall, about one
time in 150, as a warmup's would (docs/CLASSIFIER.md, "Sites"); over random draws the classifier
is checked by tests/classify/test_site.c.
"""
import json
import os
import subprocess
import sys
import tempfile

SAMPLE_SEED = "1"  # any seed: the draws repeat where the program allocates alike


class Checks:
    """The checks made so far and the failed ones, each printed as it is made."""

    def __init__(self):
        self.failures = []
        self.checks = []

    def check(self, cond, what, expected, actual):
        self.checks.append(what)
        print("%s %s" % ("ok  " if cond else "FAIL", what))
        if not cond:
            print("     expected: %r\n     actual:   %r" % (expected, actual))
            self.failures.append(what)


def fn(s):
    """The function of a site's first frame, ?? without frames."""
    return s["frames"][0]["function"] if s["frames"] else "??"


def check_sampled(check, doc, sites, sample):
    """A sampled run: the trace's sample rate and the sites' bands."""
    rate = int(sample[:-1]) << {"K": 10, "M": 20}[sample[-1]]
    check(doc["process"].get("sample_bytes") == rate, "the trace says it is sampled at %s" % sample,
          rate, doc["process"].get("sample_bytes"))
    check(any(s["live_bytes_last_x_band"] > 0 for s in sites)
          and all(s["live_bytes_last_x_band"] >= 0 for s in sites),
          "sampled sites carry a band", "some band > 0",
          [(fn(s), s["live_bytes_last_x"], s["live_bytes_last_x_band"]) for s in sites[:6]])
    big = max(sites, key=lambda s: s["live_bytes_last_x"] or 0)
    check(big["live_bytes_last_x_band"] < 0.4 * big["live_bytes_last_x"],
          "the biggest site's band is under 40% of its estimate", "< 40%",
          (fn(big), big["live_bytes_last_x"], big["live_bytes_last_x_band"]))


def check_leak(check, doc, leaking):
    """Scenario leak: the process leaks, through mge_collate_batch's cache."""
    check(doc["verdict"] == "leak", "leak: process verdict is leak", "leak", doc["verdict"])
    top = max(leaking, key=lambda s: s["growth_per_x"] or 0) if leaking else None
    check(top is not None and fn(top) == "mge_collate_batch"
          and (top["frames"][0]["file"] or "").endswith("mge_loader.c")
          and top["frames"][0]["line"] > 0,
          "leak: the top leaking site is mge_collate_batch at mge_loader.c:LINE",
          "mge_collate_batch", top and (fn(top), top["frames"][0]["file"], top["frames"][0]["line"]))
    check(top is not None and 0.5e6 < (top["growth_per_x"] or 0) < 4e6,
          "leak: growth per step of the collator's cache is 0.5-4 MB (ENGINE.md: ~1.5 MB)",
          "0.5e6..4e6", top and top["growth_per_x"])


def check_scenario(check, doc, sites, leaking, scenario, sample):
    """The verdicts that name the scenario's mechanism (docs/ENGINE.md)."""
    if scenario == "leak":
        check_leak(check, doc, leaking)
    elif scenario in ("healthy", "validation"):
        check(not leaking, "%s: no leaking site" % scenario, [], [(fn(s), s["why"]) for s in leaking])
        check(doc["verdict"] in ("plateau", "stable"), "%s: process verdict plateau or stable" % scenario,
              "plateau|stable", (doc["verdict"], doc["process_verdict"]["why"]))
    elif scenario == "retention":
        check(doc["verdict"] == "retention", "retention: process verdict is retention, not leak",
              "retention", (doc["verdict"], doc["process_verdict"]["why"]))
        check(not leaking, "retention: no leaking site", [], [fn(s) for s in leaking])
    elif scenario == "slow-leak" and not sample:
        names = [fn(s) for s in leaking]
        check("mge_diag_append_history" in names, "slow-leak: mge_diag_append_history is leaking",
              "mge_diag_append_history", names)
    elif scenario == "slow-leak":
        # ~60 KiB per step against R = 512 KiB: about one sample every 8 steps, a Poisson
        # staircase the site classifier reads as one (docs/CLASSIFIER.md, "Sites"): 993 of
        # 1000 simulated ones read `leak`; this seed's run is one of them.
        hist = [s for s in sites if fn(s) == "mge_diag_append_history"]
        v = hist[0]["verdict"] if hist else None
        check(v == "leak", "slow-leak, sampled: mge_diag_append_history is leak", "leak",
              (v, hist[0]["why"] if hist else None))
    elif scenario == "late-leak":
        check(doc["verdict"] in ("leak", "growing"), "late-leak: process leak or growing, never plateau",
              "leak|growing", (doc["verdict"], doc["process_verdict"]["why"]))
        mining = [s for s in sites if fn(s) == "mge_mining_append"]
        check(mining and mining[0]["verdict"] in ("leak", "growing"),
              "late-leak: mge_mining_append is leak or growing", "leak|growing",
              mining and mining[0]["verdict"])


def print_run(p, doc, sites):
    """What the run looked like, for the log: the probe's own lines and the top sites."""
    print("probe stderr: %s" % [l for l in p.stderr.splitlines() if l.startswith("mgprobe")])
    print("process: %s | %s" % (doc["verdict"], doc["process_verdict"]["why"]))
    for s in sites[:8]:
        print("  site %-8s %-28s growth %.4g live_last %.4g allocs %d frees %d | %s" % (
            s["verdict"], fn(s), s["growth"] or 0, s["live_bytes_last_x"] or 0, s["allocs"],
            s["frees"], s["why"][:80]))


def main():
    mgprobe, mgreport, mgtrain, scenario = sys.argv[1:5]
    sample = sys.argv[5] if len(sys.argv) > 5 else None
    c = Checks()
    check = c.check

    with tempfile.TemporaryDirectory() as tmp:
        trace = os.path.join(tmp, scenario + ".mgt")
        opts = ["--sample", sample] if sample else []
        env = dict(os.environ, MGPROBE_SAMPLE_SEED=SAMPLE_SEED) if sample else None
        p = subprocess.run([mgprobe, "run", "-o", trace] + opts + ["--", mgtrain, "--scenario", scenario],
                           capture_output=True, text=True, timeout=600, env=env)
        check(p.returncode == 0 and "done: steps=300" in p.stdout, "%s runs under the probe" % scenario,
              0, (p.returncode, p.stderr[-300:]))
        r = subprocess.run([mgreport, "--json", "--top", "30", trace], capture_output=True, text=True,
                           timeout=120)
        check(r.returncode == 0, "mgreport reads the trace", 0, (r.returncode, r.stderr))
        doc = json.loads(r.stdout)
        sites = doc["sites"]
        leaking = [s for s in sites if s["verdict"] == "leak"]
        if sample:
            check_sampled(check, doc, sites, sample)
        check_scenario(check, doc, sites, leaking, scenario, sample)
        if c.failures:
            print_run(p, doc, sites)
    print("%d passed, %d failed" % (len(c.checks) - len(c.failures), len(c.failures)))
    return 1 if c.failures else 0


if __name__ == "__main__":
    sys.exit(main())
