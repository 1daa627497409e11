#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A third opinion on the classifier, from a generator written apart from both eval_train.c and
crosscheck.py: every run has a warmup (an exponential approach of 20-120 steps) and leaks start on
top of it; the 11 non-leak families issue 12 lists (ramps, pool doublings, dataset caches of
1000-2600 steps with jittered batches, running maxima, pinned pools, validation and checkpoint
spikes, accumulation sawtooth, heavy-tailed (clipped Cauchy) noise, AR noise, level shifts) and
7 leak families (late, slow, irregular staircases, under validation spikes, under irregular
spikes, fixed, fast to 70 GiB). Scored exactly as crosscheck.py scores (its classify and Score).

usage: crosscheck_warm.py MGREPORT [--seed N]... [--jobs N] [--per-family K] [--family F]... [-v]
Needs numpy. Seeds 4242 and 4243 were looked at while changing the classifier in session 9;
use others to judge it."""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import crosscheck as cc  # noqa: E402

MiB, GiB = cc.MiB, cc.GiB
NONLEAK = ["ramp", "doubling", "cache", "runmax", "pinned", "val", "ckpt", "saw", "heavy", "ar", "shift"]
LEAK = ["late", "slow", "stair", "under-val", "under-irr", "fixed", "fast"]


def ar(rng, n, phi, sigma):
    e = rng.normal(0, sigma * np.sqrt(1 - phi * phi), n)
    x = np.zeros(n)
    for i in range(1, n):
        x[i] = phi * x[i - 1] + e[i]
    return x


def base_noise(rng, n, sigma, kind=None):
    """The noise and its kind's name."""
    kind = str(kind or rng.choice(["gauss", "heavy", "ar", "mix"]))
    if kind == "gauss":
        return rng.normal(0, sigma, n), kind
    if kind == "heavy":
        return np.clip(rng.standard_cauchy(n), -30, 30) * sigma * 0.3, kind
    if kind == "ar":
        phi = rng.uniform(0.8, 0.95)
        return ar(rng, n, phi, sigma), f"ar{phi:.2f}"
    return ar(rng, n, 0.9, sigma * 0.7) + rng.normal(0, sigma * 0.5, n), kind


def warm(rng, n):
    """A warmup every run has: a smooth approach, then flat."""
    x = np.arange(n, dtype=float)
    tau = rng.uniform(20, 120)
    return (1 - np.exp(-x / tau)) * rng.uniform(0.5, 6) * GiB


def val_spikes(rng, n, per=None):
    y = np.zeros(n)
    per = per or int(rng.integers(250, 1500))
    amp, dur = rng.uniform(0.5, 8) * GiB, int(rng.integers(5, 80))
    for s in range(per + int(rng.integers(0, per)), n, per):
        y[s:s + dur] += amp * rng.uniform(0.8, 1.2)
    return y


def ckpt_spikes(rng, n):
    y = np.zeros(n)
    per, amp = int(rng.integers(400, 3000)), rng.uniform(1, 15) * GiB
    for s in range(per, n, per):
        y[s:s + int(rng.integers(1, 5))] += amp
    return y


def irr_spikes(rng, n):
    y, s = np.zeros(n), 0
    while True:
        s += int(rng.gamma(2.0, 300)) + 30
        if s >= n:
            return y
        y[s:s + int(rng.integers(3, 60))] += rng.uniform(0.5, 10) * GiB


def nonleak(rng, fam, n):
    x = np.arange(n, dtype=float)
    t = warm(rng, n)
    if fam == "ramp":
        t += np.minimum(x / rng.integers(60, 321), 1) * rng.uniform(1, 12) * GiB
    elif fam == "doubling":
        p, k = rng.uniform(0.05, 0.5) * GiB, int(rng.integers(1, 20))
        while k < n and p < 12 * GiB:
            t[k:] += p
            p, k = p * 2, int(k * rng.uniform(1.6, 3.0)) + 1
    elif fam == "cache":  # per-step batch of new samples, jittered, during epoch 1
        ep = int(rng.integers(1000, 2600))
        inc = rng.uniform(1, 12) * MiB * rng.uniform(0.7, 1.3, n)
        inc[ep:] = 0
        t += np.cumsum(inc)
    elif fam == "runmax":
        L = np.maximum.accumulate(rng.lognormal(6, 0.6, n))
        t += np.minimum(L / L.max(), 1) * rng.uniform(1, 10) * GiB
    elif fam == "pinned":
        for _ in range(rng.integers(1, 5)):
            t[int(rng.integers(0, 600)):] += rng.uniform(0.25, 4) * GiB
    elif fam == "val":
        t += val_spikes(rng, n)
    elif fam == "ckpt":
        t += ckpt_spikes(rng, n)
    elif fam == "saw":
        per = int(rng.integers(2, 33))
        t += (np.arange(n) % per) / per * rng.uniform(0.2, 3) * GiB
    elif fam == "shift":
        for _ in range(rng.integers(1, 3)):
            t[int(rng.integers(100, n * 2 // 3)):] += rng.uniform(0.5, 10) * GiB
    return t


def leaky(rng, fam, n):
    x = np.arange(n, dtype=float)
    t = warm(rng, n)
    onset = int(rng.integers(0, 400))
    if fam == "late":
        onset = int(rng.integers(n // 4, n * 3 // 4))
    rate = {"slow": rng.uniform(0.1, 1), "fast": rng.uniform(50, 200)}.get(fam, rng.uniform(0.8, 25)) * MiB
    stop, steps = None, []
    if fam == "stair":
        s = onset
        while s < n:
            steps.append(s)
            t[s:] += rng.uniform(80, 800) * MiB
            s += int(rng.gamma(1.5, 120)) + 3
    else:
        t += np.clip(x - onset, 0, None) * rate
        if fam == "fixed":
            stop = int(rng.integers(onset + 600, max(onset + 601, n - 400)))
            t[stop:] = t[stop]
    if fam == "under-val":
        t += val_spikes(rng, n)
    elif fam == "under-irr":
        t += irr_spikes(rng, n)
    return t, onset, stop, steps


def draw(rng, fam):
    n = int(rng.integers(2500, 10000))
    base = rng.uniform(3, 55) * GiB
    sigma = rng.uniform(10, 300) * MiB
    d = dict(fam=fam, leak=fam in LEAK, sigma=sigma, noise="-", spikes="-", onset=None, stop=None,
             steps=[], every=int(rng.choice([1, 1, 10])))
    if fam in LEAK:
        if fam == "slow":
            base = rng.uniform(20, 60) * GiB
        t, d["onset"], d["stop"], d["steps"] = leaky(rng, fam, n)
        if fam == "fast":
            rate = (t[-1] - t[d["onset"]]) / max(1, n - 1 - d["onset"])
            n = min(n, d["onset"] + int(70 * GiB / rate))
            t = t[:n]
        end = d["stop"] or n
        d["rate"] = (t[end - 1] - t[d["onset"]]) / max(1, end - 1 - d["onset"])
    else:
        t = nonleak(rng, fam, n)
        rises = np.nonzero(np.diff(t) > 1 * MiB)[0]
        rises = rises[rises < n - 1]
        end = float(rises[-1] + 1) if len(rises) and fam not in ("val", "ckpt", "saw") else 400.0
        d["settled"] = end + max(200.0, 20.0 * d["every"], 0.25 * end)
    nk = "heavy" if fam == "heavy" else ("ar" if fam == "ar" else None)
    d["n"] = n
    noise, d["noise"] = base_noise(rng, n, sigma, nk)
    d["y"] = base + t + noise
    return d


PER_FAMILY_DEFAULT = 3


def main():
    cc.run_sets(__doc__, draw, NONLEAK + LEAK, 4242, PER_FAMILY_DEFAULT, 1)


if __name__ == "__main__":
    main()
