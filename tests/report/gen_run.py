#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Writes a synthetic but exact trace of a training run (see mgtrace.py): a set of sites that
allocate and free per step following a scenario, the process series derived from them. Used for
mgreport's golden tests and its 24-hour speed benchmark.

usage: gen_run.py --scenario warmup|leak|day OUT.mgt [--steps N] [--sites N] [--version 1|2]
"""
import argparse
import random
import sys

import mgtrace

MB = 1 << 20


class Site:
    def __init__(self, sid, ips):
        self.id, self.ips = sid, ips
        self.live = self.count = self.allocs = self.abytes = self.frees = self.peak = 0
        self.cohorts = {}
        self.blocks = []  # (size, birth)
        self.dirty = True

    def alloc(self, size, step):
        self.blocks.append((size, step))
        self.live += size
        self.count += 1
        self.allocs += 1
        self.abytes += size
        self.peak = max(self.peak, self.live)
        b = mgtrace.cohort_bucket(step)
        self.cohorts[b] = self.cohorts.get(b, 0) + size
        self.dirty = True

    def free_oldest(self):
        size, birth = self.blocks.pop(0)
        self.live -= size
        self.count -= 1
        self.frees += 1
        b = mgtrace.cohort_bucket(birth)
        self.cohorts[b] -= size
        self.dirty = True

    def entry(self):
        return dict(id=self.id, live_bytes=self.live, live_count=self.count, allocs=self.allocs,
                    alloc_bytes=self.abytes, frees=self.frees, peak_bytes=self.peak,
                    cohorts=dict(self.cohorts))


def kib(n):
    """RSS in whole KiB, as /proc reports it (and as format version 2 stores it)."""
    return n & ~1023


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--scenario", choices=["warmup", "leak", "day"], required=True)
    ap.add_argument("out")
    ap.add_argument("--steps", type=int, default=300)
    ap.add_argument("--sites", type=int, default=6)
    ap.add_argument("--version", type=int, choices=(1, 2), default=mgtrace.VERSION)
    a = ap.parse_args()
    rnd = random.Random(42)
    base = 0x400000
    with open(a.out, "wb") as f:
        w = mgtrace.TraceWriter(f, a.version)
        w.process(cmdline=b"train\0--scenario\0" + a.scenario.encode())
        # A module the reader cannot open: frames stay "??" with this path, on every machine.
        w.module(1, 1, 0, base, base + 0x100000, b"/nonexistent/mg-golden/train")
        sites = []
        for i in range(a.sites):
            s = Site(i + 1, [base + 0x1000 * (i + 1) + 0x10, base + 0x800 + 0x20 * i, base + 0x100])
            w.stack(s.id, s.ips)
            sites.append(s)
        t = 0
        base_rss = 200 * MB
        for step in range(a.steps):
            t += 500_000_000 if a.scenario != "day" else 1_000_000_000
            # Site 1: a pool that grows for the first 80 steps (warmup), then is reused.
            if step < 80:
                sites[0].alloc(4 * MB + step * 16384, step)
            # Site 2: scratch allocated and freed every step.
            sites[1].alloc(2 * MB, step)
            sites[1].free_oldest()
            # Site 3: in "leak", a cache that keeps 1 MiB from every step; else bounded at 16 entries.
            sites[2].alloc(MB, step)
            if a.scenario != "leak" and len(sites[2].blocks) > 16:
                sites[2].free_oldest()
            # Other sites: a little churn each, some steps.
            for s in sites[3:]:
                if rnd.random() < 0.2:
                    s.alloc(rnd.randint(64, 4096), step)
                    if len(s.blocks) > 8:
                        s.free_oldest()
            heap = sum(s.live for s in sites)
            count = sum(s.count for s in sites)
            noise = rnd.randint(-512, 512) * 1024
            changed = [s for s in sites if s.dirty]
            for s in changed:
                s.dirty = False
            w.step(t, step)
            w.snapshot(t, step, kib(base_rss + heap + noise), heap, count,
                       sites=[s.entry() for s in changed], rss_file=50 * MB, free_kept=3 * MB,
                       flags=mgtrace.SNAP_STEP)
        w.snapshot(t + 1000, a.steps - 1, kib(base_rss + heap), heap, count,
                   sites=[s.entry() for s in sites], rss_file=50 * MB, free_kept=3 * MB,
                   flags=mgtrace.SNAP_FINAL | mgtrace.SNAP_FULL)
        w.end(t + 2000)
    return 0


if __name__ == "__main__":
    sys.exit(main())
