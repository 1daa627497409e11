#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A third, independent opinion on the classifier: memory series shaped like real training runs.

Each series is the host RSS or device reserved memory of a PyTorch/JAX-style training run, sampled
every step or every 10 steps, built from the mechanisms that move such memory in practice: weights,
gradients and optimizer state at the first steps, CUDA caching-allocator segments, DataLoader
workers and their copy-on-write growth, pinned host pools, glibc arenas, dataset caches, bucketed
sequence lengths, validation and checkpoint spikes, gradient-accumulation buffers, gc cycles and
fragmentation. Non-leak families level off (some late); leak families keep growing from `onset`
(until `stop` for fixed leaks and for an irregular staircase whose 40 drawn steps all came before
the run ended, or until the run nears 80 GiB and is cut, as an OOM would cut it).
Every series starts with a realistic warmup. It was written without reading the classifier or the
other generators' family code; it shares only the scoring (crosscheck.classify, knowable, Score).

usage: crosscheck_real.py MGREPORT [--seed N]... [--per-family K] [--jobs N] [--family F]... [--issue12] [-v]

--issue12 scores only the 11 non-leak and 7 leak families issue 12 lists (the others, `cow`,
`arena`, `frag`, `epoch2`, `release`, `bursty`, `epochrate`, include growth that no rule can tell
from a leak until it stops: caches and creeps that last half the run). Needs numpy. Seeds 31-34
were looked at while changing the classifier (session 19); judge with seeds 41 and up.
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import crosscheck as cc  # noqa: E402

MiB, GiB = cc.MiB, cc.GiB

NONLEAK = ["doubling", "cache", "cow", "runmax", "pinned", "arena", "ramp", "val", "ckpt", "saw",
           "heavy", "ar", "shift", "frag", "epoch2", "release"]
LEAK = ["late", "slow", "stair", "under-val", "under-irr", "fixed", "fast", "bursty", "epochrate"]
ISSUE12 = ["doubling", "cache", "runmax", "pinned", "ramp", "val", "ckpt", "saw", "heavy", "ar", "shift",
           "late", "slow", "stair", "under-val", "under-irr", "fixed", "fast"]
CAP = 78 * GiB  # highest noise-free level a non-leak reaches (an 80 GiB device)


def loguni(rng, lo, hi):
    return float(np.exp(rng.uniform(np.log(lo), np.log(hi))))


def last_rise(level):
    """Last step at which the noise-free, spike-free level went up (0 if never)."""
    up = np.nonzero(np.diff(level) > 1.0)[0]
    return int(up[-1]) + 1 if len(up) else 0


# ---------------------------------------------------------------- noise

def noise(rng, n, fam):
    """Step-to-step jitter; returns (array, name, sigma in bytes)."""
    kind = {"heavy": "t", "ar": "ar"}.get(fam) or rng.choice(
        ["gauss", "t", "ar", "mix", "gc"], p=[0.25, 0.2, 0.25, 0.15, 0.15])
    sigma = loguni(rng, 2, 100) * MiB
    if kind == "gauss":
        return rng.normal(0.0, sigma, n), "gauss", sigma
    if kind == "t":  # bursty Python / glibc allocations: rare excursions of tens of sigma
        df = rng.uniform(1.5, 3.0)
        return sigma * np.clip(rng.standard_t(df, n), -30, 30), f"t{df:.1f}", sigma
    if kind == "ar":  # allocator and page-cache state carries over from one step to the next
        phi = rng.uniform(0.8, 0.95) if fam == "ar" else rng.uniform(0.5, 0.95)
        sigma = loguni(rng, 30, 300) * MiB if fam == "ar" else sigma
        return cc.ar1(rng, n, phi, sigma), f"ar{phi:.2f}", sigma
    if kind == "mix":  # fast jitter + slow wander + an occasional burst
        phi = rng.uniform(0.7, 0.95)
        x = rng.normal(0.0, 0.5 * sigma, n) + cc.ar1(rng, n, phi, 0.8 * sigma)
        x += (rng.random(n) < 0.01) * sigma * np.clip(rng.standard_t(2.0, n), -20, 20)
        return x, f"mix{phi:.2f}", sigma
    # Python's generation-2 gc: cyclic garbage piles up, then is freed every `per` steps
    per, amp = int(rng.integers(100, 1001)), rng.uniform(1, 3) * sigma
    saw = amp * ((np.arange(n) + rng.integers(per)) % per) / per
    return rng.normal(0.0, sigma, n) + saw - amp / 2, "gc", sigma


# ---------------------------------------------------------------- spikes (transient, not level)

def pulse(a, t, dur, amp, shape="flat"):
    """Add one transient of `dur` steps from step t."""
    e = min(len(a), t + max(1, dur))
    if e <= t:
        return
    k = np.arange(e - t) / (e - t)
    if shape == "flat":  # held for the whole pass (eval activations, eval workers)
        a[t:e] += amp
    elif shape == "ramp":  # state_dict copied to CPU tensor by tensor, freed at once
        a[t:e] += amp * (k + 1.0 / (e - t))
    else:  # "decay": released piece by piece (workers exiting, compile threads ending)
        a[t:e] += amp * (1 - k)


def val_spikes(rng, n, period=None, amp=None):
    """Validation every `period` steps: eval batch activations, eval DataLoader workers."""
    period = period or int(rng.integers(200, 2001))
    amp = amp or loguni(rng, 0.2, 4) * GiB
    dur = int(rng.integers(1, 101))
    a = np.zeros(n)
    for t in range(period, n, period):
        pulse(a, t + int(rng.integers(0, 3)), int(dur * rng.uniform(0.8, 1.2)),
              amp * rng.uniform(0.85, 1.15))
    return a


def ckpt_spikes(rng, n, amp=None):
    """Checkpoint saves: model + optimizer state gathered to host memory, then written out."""
    period = int(rng.integers(500, 3001))
    amp = amp or loguni(rng, 0.5, 6) * GiB
    dur = int(rng.integers(5, 101))
    a = np.zeros(n)
    for t in range(period, n, period):
        pulse(a, t, dur, amp, "ramp")
    return a


def irr_spikes(rng, n, amp=None):
    """Irregular spikes: a batch of the longest sequences, an OOM-retry, a profiler window."""
    a = np.zeros(n)
    t = int(rng.exponential(200))
    mean_gap = rng.uniform(50, 500)
    amp = amp or loguni(rng, 0.2, 2) * GiB
    while t < n:
        pulse(a, t, int(rng.geometric(0.15)), min(6 * GiB, amp * rng.lognormal(0, 0.5)),
              rng.choice(["flat", "decay"]))
        t += 1 + int(rng.exponential(mean_gap))
    return a


def saw_spikes(rng, n, k=None, amp=None):
    """Gradient accumulation: per-micro-step outputs kept for metrics until the optimizer step."""
    k = k or int(rng.integers(4, 65))
    amp = amp or loguni(rng, 0.05, 2) * GiB
    return amp * ((np.arange(n) + rng.integers(k)) % k) / k


def random_spikes(rng, n):
    kind = rng.choice(["none", "val", "ckpt", "irr", "val+ckpt", "saw"],
                      p=[0.25, 0.2, 0.15, 0.2, 0.12, 0.08])
    if kind == "none":
        return "none", np.zeros(n)
    a = sum(SPIKES[k](rng, n) for k in kind.split("+"))
    return kind, a


SPIKES = {"val": val_spikes, "ckpt": ckpt_spikes, "irr": irr_spikes, "saw": saw_spikes}


def startup(rng, n):
    """cudnn.benchmark autotuning / torch.compile workers: a transient of the first few dozen steps."""
    a = np.zeros(n)
    if rng.random() < 0.8:
        pulse(a, int(rng.integers(0, 3)), int(rng.integers(3, 61)), loguni(rng, 0.2, 6) * GiB,
              rng.choice(["flat", "decay"]))
    return a


# ---------------------------------------------------------------- warmup (every series)

def warmup(rng, n):
    """Weights and CUDA context are in the base; gradients appear at the first backward, optimizer
    state at the first optimizer.step() (after k accumulation micro-steps), activation segments in
    the first steps, DataLoader workers one by one, and sometimes a slow Python-heap warm (tokenizer
    caches, pymalloc arenas). Returns (level above base, step it last rose)."""
    y = np.zeros(n)
    params = loguni(rng, 0.3, 6) * GiB
    y += params  # gradients, allocated by the first backward
    k = int(rng.choice([1, 1, 2, 4, 8, 16]))
    y[k:] += params * rng.choice([2.0, 2.0, 1.0, 0.5])  # Adam m+v, SGD momentum, 8-bit Adam
    for t in rng.integers(0, 20, size=rng.integers(1, 5)):  # allocator segments for activations
        y[t:] += 20 * MiB * rng.integers(1, 40)
    per = loguni(rng, 0.05, 0.8) * GiB
    for t in rng.integers(0, 40, size=rng.integers(0, 9)):  # a worker forks, imports, prefetches
        ramp = int(rng.integers(5, 31))
        y[t:t + ramp] += per * np.arange(1, ramp + 1) / ramp
        y[t + ramp:] += per
    if rng.random() < 0.3:  # Python heaps warming up, finite and smooth
        t0, dur = int(rng.integers(0, 50)), int(rng.integers(100, 301))
        s = np.clip((np.arange(n) - t0) / dur, 0, 1)
        y += loguni(rng, 0.05, 0.5) * GiB * s * s * (3 - 2 * s)
    return y, last_rise(y)


# ---------------------------------------------------------------- non-leak shapes
# Each returns (level above warmup, None or (spike name, spike array)).

def doubling(rng, n, w):
    """Caching allocator: the reserved pool grows whenever a batch peaks above it, by doubling
    segments; peaks are records, so growth events come ever more rarely, then stop."""
    y, size, total = np.zeros(n), loguni(rng, 64, 512) * MiB, 0.0
    t, end = w + int(rng.integers(5, 60)), int(rng.uniform(0.15, 0.55) * n)
    while t < end and total + size <= 16 * GiB:
        y[t:] += size
        total, size = total + size, size * 2
        t = int(t * rng.uniform(1.6, 3.0)) + int(rng.integers(10, 100))
    return y, None


def cache(rng, n, w):
    """Dataset cache (decoded samples kept in a dict) filled during the first epoch; or an
    lru_cache(maxsize) hit by random sampling: 1 - exp(-t/epoch) until the cap is reached."""
    size = loguni(rng, 1, 16) * GiB
    y = np.zeros(n)
    if rng.random() < 0.6:  # shuffled epoch: each sample cached once, samples differ in size
        epoch = int(rng.uniform(1000, max(1001, min(4000, 0.6 * n))))
        per = rng.lognormal(0, 0.4, epoch)
        y[1:epoch + 1] = np.cumsum(per) * size / per.sum()
        y[epoch + 1:] = size
        return y, None
    frac = rng.uniform(0.6, 0.9)  # cap reached at -epoch * ln(1 - frac) <= 2.3 epochs
    epoch = int(rng.uniform(0.6, 1.0) * 0.6 * n / -np.log(1 - frac))
    t = np.arange(n)
    return np.minimum(size / frac * (1 - np.exp(-t / epoch)), size), None


def cow(rng, n, w):
    """DataLoader workers touching a Python-object dataset: refcount writes copy shared pages;
    a page holding m objects is copied once any of them is read, so the copied share is
    1 - (1 - f)^m after a fraction f of the first epoch, and complete at its end."""
    epoch = int(rng.uniform(1000, max(1001, min(5000, 0.65 * n))))
    m = rng.uniform(1, 40)
    f = np.clip(np.arange(n) / epoch, 0, 1)
    return loguni(rng, 0.5, 12) * GiB * (1 - (1 - f) ** m), None


def runmax(rng, n, w):
    """Bucketed sequence lengths: activations scale with the bucket (L to L^2); the allocator keeps
    the running maximum reserved, in 20 MiB segments. Long buckets are rare, so records thin out."""
    nb = int(rng.integers(4, 9))
    p = rng.uniform(0.3, 0.75) ** np.arange(nb)
    b = rng.choice(nb, size=n, p=p / p.sum())
    act = (2.0 ** b) ** rng.uniform(1, 2)
    act *= loguni(rng, 2, 20) * GiB / act.max()
    return np.ceil(np.maximum.accumulate(act) / (20 * MiB)) * 20 * MiB, None


def pinned(rng, n, w):
    """Pinned host pool (CachingHostAllocator): a batch is staged in the smallest free cached block
    that fits, else a new block of its power-of-two size is pinned, and blocks are never freed.
    A block is busy while its batch is in flight (workers x prefetch batches), so the pool grows
    until enough large blocks exist, ever more rarely. Padded batch sizes are bounded."""
    inflight = int(rng.integers(2, 9)) * int(rng.integers(2, 5))
    med, sd = loguni(rng, 8, 128) * MiB, rng.uniform(0.2, 0.6)
    need = med * np.exp(np.clip(rng.normal(0, sd, n), -2 * sd, 2 * sd))
    need = 2.0 ** np.ceil(np.log2(need))
    free, busy, y, total = [], [], np.zeros(n), 0.0
    for t in range(n):
        if len(busy) == inflight:
            free.append(busy.pop(0))
        fits = [b for b in free if b >= need[t]]
        if fits:
            free.remove(min(fits))
            busy.append(min(fits))
        else:
            busy.append(need[t])
            total += need[t]
        y[t] = total
    return y, None


def arena(rng, n, w):
    """glibc malloc arenas: each new thread that mallocs (pin thread, tokenizer pool, NCCL/gloo,
    logging) gets an arena growing in 64 MiB heaps; arenas are capped at 8 x cores, so it stops."""
    y = np.zeros(n)
    end = int(rng.uniform(0.2, 0.6) * n)
    early = rng.integers(0, w + 20, size=rng.integers(2, 6))
    late = w + (end - w) * rng.random(rng.integers(2, 20)) ** 2  # new threads get rarer
    for t in np.concatenate([early, late]).astype(int):
        y[t:] += 64 * MiB * rng.integers(1, 5)
    return y, None


def ramp(rng, n, w):
    """Sequence-length / batch-size warmup: activations follow the schedule for 60-320 steps,
    linearly, smoothly or in stages (length doubled per stage), then stay flat."""
    t0, dur = int(rng.integers(0, 30)), int(rng.integers(60, 321))
    s = np.clip((np.arange(n) - t0) / dur, 0, 1)
    kind = rng.choice(["linear", "smooth", "stages"])
    if kind == "smooth":
        s = s * s * (3 - 2 * s)
    elif kind == "stages":
        st = int(rng.integers(3, 8))
        s = np.ceil(s * st) / st
    return loguni(rng, 0.5, 8) * GiB * s, None


def val(rng, n, w):
    """Periodic validation spikes; the first eval pass also leaves cached blocks behind."""
    period = int(rng.integers(200, 2001))
    y = np.zeros(n)
    if rng.random() < 0.6:
        y[period:] += loguni(rng, 20, 800) * MiB
    return y, ("val", val_spikes(rng, n, period, loguni(rng, 0.3, 6) * GiB))


def ckpt(rng, n, w):
    """Checkpoint saves: spikes the size of model + optimizer state."""
    return np.zeros(n), ("ckpt", ckpt_spikes(rng, n, loguni(rng, 1, 8) * GiB))


def saw(rng, n, w):
    """Gradient accumulation sawtooth, aliased when sampled every 10 steps."""
    return np.zeros(n), ("saw", saw_spikes(rng, n))


def flat(rng, n, w):
    """Nothing but warmup and noise: for the heavy-tailed and AR(1) families."""
    return np.zeros(n), None


def shift(rng, n, w):
    """One level shift: backbone unfrozen (its gradients + optimizer state) or an EMA copy of
    the weights started at step j, allocated over a few steps, then flat."""
    j, dur = int(rng.uniform(0.1, 0.6) * n), int(rng.integers(1, 31))
    s = np.clip((np.arange(n) - j) / dur, 0, 1)
    return loguni(rng, 0.5, 10) * GiB * s, None


def frag(rng, n, w):
    """Fragmentation creep: blocks split by varied request sizes force new 2 / 20 MiB segments,
    ever more rarely, until the free-block mix covers every request size."""
    y, end = np.zeros(n), int(rng.uniform(0.3, 0.6) * n)
    for t in (w + (end - w) * rng.random(rng.integers(20, 200)) ** 2).astype(int):
        y[t:] += rng.choice([2, 20, 20, 40, 64]) * MiB
    return y, None


def epoch2(rng, n, w):
    """Non-persistent workers: at each epoch boundary they exit and respawn (a dip and refill);
    the second epoch's iterator also keeps a little more (index arrays, a new prefetch set)."""
    epoch = int(rng.uniform(600, max(601, 0.45 * n)))
    wk = loguni(rng, 0.3, 4) * GiB
    dips = np.zeros(n)
    for t in range(epoch, n, epoch):
        pulse(dips, t, int(rng.integers(20, 101)), -wk, "decay")
    s = np.clip((np.arange(n) - epoch) / int(rng.integers(50, 201)), 0, 1)
    return loguni(rng, 0.05, 0.5) * GiB * s, ("dips", dips)


def release(rng, n, w):
    """Memory released at an epoch boundary (empty_cache, malloc_trim, epoch-1 cache dropped),
    then partly re-reserved within 20-100 steps, then flat."""
    t, drop = int(rng.uniform(1000, 0.6 * n)), loguni(rng, 0.5, 6) * GiB
    back = np.clip((np.arange(n) - t) / int(rng.integers(20, 101)), 0, 1)
    return drop * (1 - (np.arange(n) >= t)) + rng.uniform(0.3, 0.7) * drop * back, None


SHAPES = {"doubling": doubling, "cache": cache, "cow": cow, "runmax": runmax, "pinned": pinned,
          "arena": arena, "ramp": ramp, "val": val, "ckpt": ckpt, "saw": saw, "heavy": flat,
          "ar": flat, "shift": shift, "frag": frag, "epoch2": epoch2, "release": release}


# ---------------------------------------------------------------- leak shapes
# Each returns (leaked bytes per step, None or spikes, onset, stop, staircase steps).

def linear(rng, n, onset, rate, stop=None):
    """Leak of `rate` bytes/step on average; each step's size varies with its batch."""
    inc = np.zeros(n)
    e = min(stop or n, n)
    inc[onset + 1:e] = rate * rng.gamma(4.0, 0.25, max(0, e - onset - 1))
    return np.cumsum(inc)


def late(rng, n, w):
    """A code path that starts leaking mid-run (metric history kept from epoch 2, a hook added
    at a curriculum stage): onset well after warmup."""
    onset = int(rng.uniform(0.35, 0.7) * n)
    return linear(rng, n, onset, loguni(rng, 1, 20) * MiB), None, onset, None, []


def slow(rng, n, w):
    """Per-step CPU copies kept in a list (logits for a metric): 0.1-1 MiB/step."""
    onset = w + int(rng.integers(0, 301))
    return linear(rng, n, onset, loguni(rng, 0.1, 1) * MiB), None, onset, None, []


def stair(rng, n, w):
    """A few hundred MiB leaked per event: a CUDA graph / compiled variant kept for each new eval
    shape (at some validations), or per rare batch shape (irregular times)."""
    y, sp, stop = np.zeros(n), None, None
    if rng.random() < 0.5:
        period = int(rng.integers(150, 800))
        sp = ("val", val_spikes(rng, n, period))
        steps = [t for t in range(period, n, period) if rng.random() < rng.uniform(0.5, 0.9)]
    else:
        steps = list(np.cumsum(rng.exponential(rng.uniform(150, 900), 40)).astype(int) + w)
        stop = steps[-1] + 1 if steps[-1] < n else None  # all 40 taken: the leak has stopped
    steps = [int(t) for t in steps if t < n]
    for t in steps:
        y[t:] += loguni(rng, 100, 800) * MiB
    return y, sp, (steps[0] if steps else n - 1), stop, steps


def under_val(rng, n, w):
    """A steady leak under periodic validation (and sometimes checkpoint) spikes."""
    onset = w + int(rng.integers(0, 501))
    sp = val_spikes(rng, n, amp=loguni(rng, 1, 6) * GiB)
    name = "val"
    if rng.random() < 0.4:
        sp, name = sp + ckpt_spikes(rng, n), "val+ckpt"
    return linear(rng, n, onset, loguni(rng, 1, 15) * MiB), (name, sp), onset, None, []


def under_irr(rng, n, w):
    """A steady leak under irregular spikes (long-sequence batches, profiler windows)."""
    onset = w + int(rng.integers(0, 501))
    sp = ("irr", irr_spikes(rng, n, loguni(rng, 0.5, 3) * GiB))
    return linear(rng, n, onset, loguni(rng, 1, 15) * MiB), sp, onset, None, []


def fixed(rng, n, w):
    """A leak that stops: the leaking feature is switched off at `stop` (a curriculum stage
    ends, a debug hook is removed), after which the level stays put."""
    onset = w + int(rng.uniform(0, 0.3) * n)
    stop = int(rng.uniform(onset + 800, max(onset + 801, n - 800)))
    rate = min(loguni(rng, 2, 30) * MiB, 40 * GiB / (stop - onset))
    return linear(rng, n, onset, rate, stop), None, onset, stop, []


def fast(rng, n, w):
    """50-150 MiB/step (a whole batch's activations retained by a graph kept alive), starting
    late enough that the run lasts 2,500+ steps; the caller cuts it near 70-78 GiB."""
    onset = int(rng.uniform(2500, 6000))
    return linear(rng, n, onset, loguni(rng, 50, 150) * MiB), None, onset, None, []


def bursty(rng, n, w):
    """Leaks only on some steps (the AMP overflow-skip path, an exception whose traceback
    keeps frames with tensors): compound Poisson, 0.5-10 MiB/step on average."""
    onset = w + int(rng.integers(0, 501))
    p, rate = rng.uniform(0.01, 0.2), loguni(rng, 0.5, 10) * MiB
    inc = np.zeros(n)
    hit = rng.random(n - onset - 1) < p
    inc[onset + 1:] = hit * rng.lognormal(0, 0.7, n - onset - 1) * rate / p / np.exp(0.245)
    return np.cumsum(inc), None, onset, None, []


def epochrate(rng, n, w):
    """Per-token leak under a sequence-length curriculum: the rate changes at each epoch and
    tends to rise as sequences get longer."""
    onset, epoch = w + int(rng.integers(0, 301)), int(rng.integers(700, 2501))
    r0, grow = loguni(rng, 0.5, 8) * MiB, rng.uniform(1.0, 1.6)
    inc = np.zeros(n)
    for e, t in enumerate(range(onset + 1, n, epoch)):
        k = min(epoch, n - t)
        inc[t:t + k] = r0 * grow ** e * rng.lognormal(0, 0.4) * rng.gamma(4.0, 0.25, k)
    return np.cumsum(inc), None, onset, None, []


LEAKS = {"late": late, "slow": slow, "stair": stair, "under-val": under_val,
         "under-irr": under_irr, "fixed": fixed, "fast": fast, "bursty": bursty,
         "epochrate": epochrate}


# ---------------------------------------------------------------- assembling a series

def place_nonleak(rng, d, level, spk):
    """Base chosen so the noise-free series (with spikes) stays within 4-78 GiB."""
    lo, hi = 4 * GiB - level.min(), CAP - (level + spk).max()
    return rng.uniform(lo, max(lo, hi))


def place_leak(rng, d, level, leak, spk):
    """Base for a leak; then cut the run where it would reach 70-78 GiB (an OOM: that run is
    classified with its limit there, and its steps_to_oom scored), or, if that is too early, scale
    the leak down so it fits. Returns (base, leak, n)."""
    n, cap = d["n"], rng.uniform(70, 78) * GiB
    if d["fam"] == "slow":  # 20-60 GiB at the leak's onset
        base = max(rng.uniform(20, 60) * GiB - level[d["onset"]], 4 * GiB - level.min())
    else:  # a fast leak starts low enough to grow for a few hundred steps before the cut
        lo = 4 * GiB - level.min()
        hi = (0.35 if d["fam"] == "fast" else 0.6) * cap - (level + spk).max()
        base = lo + max(0.0, hi - lo) * rng.random() ** 2
    over = np.nonzero(base + level + leak + spk > cap)[0]
    if len(over) and over[0] >= max(2500, d["onset"] + 100):  # the limit is where it crossed
        d["oom_at"], d["limit"] = int(over[0]), int((base + level + leak + spk)[over[0]])
        return base, leak, int(over[0])
    if len(over):
        room = cap - base - (level + spk).max()
        leak = leak * max(0.05, room / leak.max())
    return base, leak, n


def rate_of(leak, onset, stop, n):
    end = min(stop, n - 1) if stop is not None else n - 1
    return float((leak[end] - leak[onset]) / max(1, end - onset))


def draw(rng, fam):
    n = int(rng.integers(2500, 10001)) if fam != "fast" else 10000
    d = dict(fam=fam, leak=fam in LEAK, every=int(rng.choice([1, 10])), n=n, onset=None,
             stop=None, steps=[], rate=None, settled=None, bg=None)
    level, wend = warmup(rng, n)
    if d["leak"]:
        leak, sp, d["onset"], d["stop"], d["steps"] = LEAKS[fam](rng, n, wend)
        if rng.random() < 0.35:  # real leaks sit on top of ordinary allocator behaviour
            d["bg"] = str(rng.choice(["doubling", "pinned", "arena", "frag"]))
            level = level + SHAPES[d["bg"]](rng, n, wend)[0]
    else:
        part, sp = SHAPES[fam](rng, n, wend)
        level, leak = level + part, np.zeros(n)
    d["spikes"], spk = sp or random_spikes(rng, n)
    spk = spk + startup(rng, n)
    x, d["noise"], d["sigma"] = noise(rng, n, fam)
    if d["leak"]:
        base, leak, n = place_leak(rng, d, level, leak, spk)
        d["n"], d["steps"] = n, [t for t in d["steps"] if t < n]
        d["stop"] = d["stop"] if d["stop"] is not None and d["stop"] < n else None
        d["rate"] = rate_of(leak, d["onset"], d["stop"], n)
    else:
        base = place_nonleak(rng, d, level, spk)
        t = last_rise(level)
        d["settled"] = float(t + max(200, 20 * d["every"], 0.25 * t))
    y = (base + level + leak + spk + x)[:n]
    grain = 2 * MiB if rng.random() < 0.5 else 4096.0  # device segments or host pages
    d["y"] = np.maximum(np.round(y / grain) * grain, grain)
    return d


PER_FAMILY_DEFAULT = 3


def main():
    cc.run_sets(__doc__, draw, NONLEAK + LEAK, 1, PER_FAMILY_DEFAULT, 1, {"issue12": ISSUE12})


if __name__ == "__main__":
    main()
