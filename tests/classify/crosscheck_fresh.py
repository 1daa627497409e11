#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A fifth, independent opinion on the classifier: training-run memory series (host RSS in 4 KiB
pages, or CUDA/XLA device memory in 2 MiB segments) drawn by a generator written from issue 12's
specification and from how PyTorch/JAX runs use memory, apart from the classifier and from the
other crosscheck generators. Every run begins with a start-up (interpreter and CUDA context,
lazily loaded kernels, weights, gradients at the first backward, optimizer state at the first
optimizer step, which AMP loss-scale skips may delay, activation segments, DataLoader prefetch
ramping), then shows its family's behaviour:

  non-leak  doubling (a BFC-style pool growing in doublings, ever rarer), cache (a dataset cache
            filled in the first epoch), runmax (activations sized by the longest bucketed
            sequence seen so far), pinned (a power-of-two pinned host pool), ramp (60-320 steps,
            then flat), shift (one jump), val (validation spikes), ckpt (checkpoint copies, the
            first sometimes leaving part of itself behind in the heap), accum (gradient-
            accumulation sawtooth), heavy (skewed heavy-tailed noise), ar1 (phi 0.5-0.95), epoch
            (epoch-boundary dip and refill under a gc sawtooth), mix (cache, epochs, validation
            and checkpoints together), jaxpre (a JAX preallocated pool, flat)
  leak      late, slow (0.1-1 MiB/step at 20-60 GiB), stair (irregular jumps of 100-800 MiB),
            spiky (under periodic spikes), irrspk (under irregular spikes), fixed (stops), fast
            (50-160 MiB/step, cut at its OOM), warmleak (starting inside a warmup), bursty (on
            a few steps each, sizes varying), dipleak (under epoch dips and a gc sawtooth)

Leaks grow steadily, with a slowly wandering per-step size, or in bursts; on a device they show
in whole allocator segments. A leak run that reaches its OOM (70-78 GiB, spikes included) is
cut there and scored for steps_to_oom. Scoring is crosscheck.py's. Run it with seeds never used
while changing the classifier.

usage: crosscheck_fresh.py MGREPORT [--seed N]... [--jobs N] [--per-family K] [--family F]... [--issue12] [-v]

--issue12 scores only the 11 non-leak and 7 leak families issue 12 lists (accum is its
gradient-accumulation sawtooth; the others, epoch, mix, jaxpre, warmleak, bursty, dipleak, go
beyond its list).
Needs numpy (Debian: python3-numpy). Exit status: 0, or 2 on bad usage or a failed mgreport run.
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import crosscheck as cc  # noqa: E402

MiB, GiB = cc.MiB, cc.GiB
PAGE, SEG = 4096.0, 2 * MiB
NONLEAK = ["doubling", "cache", "runmax", "pinned", "ramp", "shift", "val", "ckpt", "accum", "heavy",
           "ar1", "epoch", "mix", "jaxpre"]
LEAK = ["late", "slow", "stair", "spiky", "irrspk", "fixed", "fast", "warmleak", "bursty", "dipleak"]
ISSUE12 = ["doubling", "cache", "runmax", "pinned", "ramp", "shift", "val", "ckpt", "accum", "heavy", "ar1",
           "late", "slow", "stair", "spiky", "irrspk", "fixed", "fast"]
SEED_DEFAULT, PER_FAMILY_DEFAULT = 5150, 3
FLOOR, CEIL = 4 * GiB, 78 * GiB
STARTUP = 50  # steps after which a series must be at or above FLOOR


def logu(rng, lo, hi):
    """Log-uniform in [lo, hi]."""
    return float(np.exp(rng.uniform(np.log(lo), np.log(hi))))


def quantize(y, metric):
    unit = PAGE if metric == "host" else SEG
    return np.round(y / unit) * unit


def ramp(rng, n, t0, length, decay=0.0):
    """0 before t0, then irregular positive steps up to 1 at t0 + length, 1 after; `decay` > 0
    makes it concave (most of it early)."""
    length = max(1, int(length))
    inc = rng.gamma(1.0, 1.0, length) * np.exp(-decay * np.arange(length) / length)
    out = np.zeros(n)
    t0 = max(0, int(t0))
    t1 = min(n, t0 + length)
    out[t0:t1] = (np.cumsum(inc) / inc.sum())[:t1 - t0]
    out[t1:] = 1.0
    return out


# ---- start-up ---------------------------------------------------------------------------------

def startup_host(rng, n, base):
    """Host RSS settling at `base`: interpreter, torch, CUDA context and what the run keeps on
    the host from step 0, then CUDA kernels loaded lazily at first use, DataLoader prefetch and
    pinned buffers filling, sometimes the CPU copy of the checkpoint alive for the first steps."""
    t = np.arange(n)
    lazy = min(rng.uniform(0.2, 1.5) * GiB, 0.1 * base)
    dl = rng.uniform(0.05, 0.2) * base
    lvl = base - lazy - dl + lazy * (t >= rng.integers(0, 3))
    lvl = lvl + dl * ramp(rng, n, 0, rng.integers(10, 120), decay=rng.uniform(0, 3))
    if rng.random() < 0.4:
        lvl = lvl + rng.uniform(0.3, 3.0) * GiB * (t < rng.integers(1, 20))
    return lvl


def startup_device(rng, n, base):
    """Device memory settling at `base`: weights, gradients from the first backward, optimizer
    state (none, momentum, Adam, Adam with fp32 master weights) from the first optimizer step
    that is not skipped, activation segments reserved over the first steps."""
    t = np.arange(n)
    act = rng.uniform(0.1, 0.5) * base
    opt = float(rng.choice([0.0, 1.0, 2.0, 3.0]))
    w = (base - act) / (2.0 + opt)
    g0 = int(rng.integers(0, 2))
    o0 = g0 + int(rng.integers(0, 5))
    lvl = w + w * (t >= g0) + opt * w * (t >= o0)
    k = int(rng.integers(3, 12))
    when = rng.integers(0, int(rng.integers(2, 30)), k)
    for s, z in zip(when, rng.dirichlet(np.ones(k)) * act):
        lvl = lvl + z * (t >= s)
    return lvl


def startup(rng, n, metric, base):
    return startup_host(rng, n, base) if metric == "host" else startup_device(rng, n, base)


# ---- warmups that level off (0 at first, never falling) ---------------------------------------

def w_doubling(rng, n):
    """A pool that doubles its newest region whenever demand outgrows it, demand rising ever
    more slowly (JAX BFC allow_growth, arena allocators): regions at ever longer gaps."""
    out = np.zeros(n)
    c, cap = logu(rng, 32, 512) * MiB, logu(rng, 1, 20) * GiB
    t, r, total = float(rng.integers(20, 300)), rng.uniform(1.5, 3.0), 0.0
    while t < n and total < cap:
        total += c
        out[int(t):] = total
        c *= 2
        t *= r * rng.lognormal(0, 0.1)
    return out


def w_cache(rng, n, epoch=None):
    """A dataset cache filled sample by sample in the first (shuffled) epoch, then flat."""
    if epoch is None:
        epoch = int(rng.integers(1000, max(1001, min(5000, int(0.7 * n)))))
    size = logu(rng, 1, 24) * GiB
    inc = rng.lognormal(0, 0.5, epoch)
    out = np.full(n, size)
    out[:epoch] = (np.cumsum(inc) / inc.sum() * size)[:n]
    return out[:n]


def w_runmax(rng, n):
    """Activations cached for the longest (bucketed) sequence seen so far: a running maximum of
    heavy-tailed lengths truncated at the model's context, records ever rarer."""
    cap = int(rng.choice([1024, 2048, 4096, 8192]))
    bucket = int(rng.choice([64, 128, 256]))
    lens = rng.lognormal(np.log(cap * rng.uniform(0.1, 0.35)), rng.uniform(0.4, 0.9), n)
    lens = np.ceil(np.minimum(lens, cap) / bucket) * bucket / cap
    q, peak = rng.uniform(0, 0.5), logu(rng, 2, 30) * GiB
    mem = peak * ((1 - q) * lens + q * lens * lens)
    mem = np.ceil(mem / (20 * MiB)) * 20 * MiB
    return np.maximum.accumulate(mem)


def w_pinned(rng, n):
    """A pinned host pool that caches power-of-two blocks and reuses any block at least as
    big: it grows when more batches are in flight, or a batch is bigger, than ever before."""
    b0, q = logu(rng, 16, 512) * MiB, int(rng.integers(2, 17))
    size = 2.0 ** np.ceil(np.log2(b0 * rng.lognormal(0, rng.uniform(0.1, 0.4), n)))
    inflight = rng.integers(1, q + 1, n)
    blocks, out = [], np.zeros(n)
    for t in range(n):
        have = sum(1 for b in blocks if b >= size[t])
        blocks += [size[t]] * max(0, int(inflight[t]) - have)
        out[t] = sum(blocks)
    return out


def w_ramp(rng, n):
    """Batch-size or sequence-length warmup, progressive unfreezing: 60-320 steps up, then flat."""
    h = logu(rng, 0.5, 16) * GiB
    return h * ramp(rng, n, rng.integers(0, int(0.3 * n)), rng.integers(60, 321),
                    decay=rng.choice([0.0, 2.0]))


def w_shift(rng, n):
    """One jump (the backbone unfrozen, an eval buffer kept), over 1-5 steps, then flat."""
    h = logu(rng, 0.2, 8) * GiB
    return h * ramp(rng, n, rng.integers(int(0.05 * n), int(0.6 * n)), rng.integers(1, 6))


WARM = {"doubling": w_doubling, "cache": w_cache, "runmax": w_runmax, "pinned": w_pinned,
        "ramp": w_ramp, "shift": w_shift}
HOST_SHARE = {"doubling": 0.3, "cache": 1.0, "runmax": 0.0, "pinned": 1.0, "ramp": 0.5, "shift": 0.5}


# ---- spikes and periodic shapes that return to the level ---------------------------------------

def s_val(rng, n, period=None, phase=None):
    """Validation every `period` steps, each pass a little wider or narrower, a little higher or
    lower (eval batches, outputs gathered for metrics)."""
    out = np.zeros(n)
    period = period or int(rng.integers(250, 2500))
    h, w = logu(rng, 0.2, 5) * GiB, logu(rng, 5, 200)
    for t0 in range(phase if phase is not None else int(rng.integers(period // 4, period)), n, period):
        width = max(1, int(w * rng.lognormal(0, 0.4)))
        shape = np.ones(width)
        up = min(width, int(rng.integers(1, 4)))
        shape[:up] = np.arange(1, up + 1) / up
        seg = out[t0:t0 + width]
        seg[:] = np.maximum(seg, h * rng.lognormal(0, 0.15) * shape[:len(seg)])
    return out


def s_ckpt(rng, n):
    """Checkpoint saves on a wall-clock schedule (so at varying step gaps): the state copied to
    host over 1-40 steps, then dropped. Returns (spikes, what the heap keeps after the first)."""
    out, kept = np.zeros(n), np.zeros(n)
    gap, h = logu(rng, 800, 4000), logu(rng, 0.5, 12) * GiB
    keep = rng.uniform(0.1, 0.5) if rng.random() < 0.4 else 0.0
    t, first = gap * rng.uniform(0.3, 1.0), True
    while t < n:
        t0, width = int(t), int(rng.integers(1, 41))
        seg = out[t0:t0 + width]
        seg[:] = (h * np.arange(1, width + 1) / width)[:len(seg)]
        if first:
            kept[t0 + width:] = keep * h
        first = False
        t += gap * rng.lognormal(0, 0.15)
    return out, kept


def s_irreg(rng, n):
    """Spikes at random times, of random width (geometric) and height (lognormal, capped)."""
    out = np.zeros(n)
    mean_gap, mw, med = logu(rng, 80, 1000), logu(rng, 1, 60), logu(rng, 0.1, 3) * GiB
    for t0 in rng.integers(0, n, rng.poisson(n / mean_gap)):
        seg = out[t0:t0 + int(rng.geometric(1.0 / mw))]
        seg[:] = np.maximum(seg, med * min(rng.lognormal(0, 0.7), 4.0))
    return out


def s_accum(rng, n):
    """Memory held across the micro-steps of a gradient-accumulation window, freed at the
    optimizer step: a sawtooth of period 2-16 (aliased when logged every 10 steps)."""
    k = int(rng.integers(2, 17))
    a = logu(rng, 0.1, 3) * GiB
    phase = (np.arange(n) + int(rng.integers(0, k))) % k
    return a * (phase + 1) / k * rng.lognormal(0, 0.05, n)


def s_epoch(rng, n, epoch=None):
    """At each epoch boundary the DataLoader workers and their prefetched batches go, then come
    back over 10-200 steps: a dip and refill."""
    out = np.zeros(n)
    epoch = epoch or int(rng.integers(400, 3000))
    d = logu(rng, 0.2, 3) * GiB
    for t0 in range(epoch, n, epoch):
        r = int(rng.integers(10, 200))
        out -= d * (t0 <= np.arange(n)) * (1.0 - ramp(rng, n, t0, r))
    return out


# ---- noise -------------------------------------------------------------------------------------

def noise(rng, n, kind, sd):
    """Noise of about sd bytes: iid, ar1 (phi 0.5-0.95), heavy (mostly upward, Student-t),
    gc (collector sawtooth of 60-1500 steps plus a little iid), regime (quiet and busy stretches),
    seg (device segments held and released), none."""
    if kind == "none":
        return np.zeros(n)
    if kind == "iid":
        return rng.normal(0, sd, n)
    if kind == "ar1":
        return cc.ar1(rng, n, rng.uniform(0.5, 0.95), sd)
    if kind == "heavy":
        df = rng.uniform(2.2, 4.0)
        a = np.minimum(np.abs(rng.standard_t(df, n)), 60.0)
        return (a - np.median(a)) * sd / np.sqrt(df / (df - 2))
    if kind == "gc":
        return gc_saw(rng, n, sd) + rng.normal(0, sd / 4, n)
    if kind == "regime":
        busy = np.cumsum(rng.random(n) < 1.0 / logu(rng, 200, 2000)) % 2
        return rng.normal(0, 1, n) * sd * np.where(busy == 1, 2.0, 0.5)
    return segments(rng, n, sd)


def gc_saw(rng, n, sd):
    """Garbage piling up between full collections, whose spacing varies."""
    out, t = np.zeros(n), 0
    period, amp = logu(rng, 60, 1500), sd * np.sqrt(12)
    while t < n:
        p = max(2, int(period * rng.lognormal(0, 0.3)))
        seg = out[t:t + p]
        seg[:] = (amp * rng.uniform(0.8, 1.2) * np.arange(p) / p)[:len(seg)]
        t += p
    return out


def segments(rng, n, sd):
    """Allocator segments (2 or 20 MiB) cached and released now and then: 0..K held."""
    seg = 2 * MiB if sd < 10 * MiB else 20 * MiB
    k_max = max(1, int(round(sd * np.sqrt(12) / seg)))
    move = np.where(rng.random(n) < rng.uniform(0.01, 0.2), rng.choice([-1, 1], n), 0)
    k, out = int(rng.integers(0, k_max + 1)), np.zeros(n)
    for t in range(n):
        k = min(k_max, max(0, k + int(move[t])))
        out[t] = k * seg
    return out


def pick_noise(rng, metric):
    if metric == "host":
        kind = str(rng.choice(["iid", "ar1", "heavy", "gc", "regime"], p=[0.25, 0.3, 0.15, 0.15, 0.15]))
        return kind, logu(rng, 2, 250) * MiB
    kind = str(rng.choice(["seg", "iid", "ar1", "none"], p=[0.5, 0.2, 0.2, 0.1]))
    return kind, logu(rng, 1, 40) * MiB


# ---- leaks -------------------------------------------------------------------------------------

def leak_path(rng, n, onset, stop, rate, style, metric):
    """Cumulative leaked bytes: `steady` (per-step size +-10%), `vary` (per-step size wandering
    slowly over a factor of a few), `bursty` (on 2-30% of steps, lognormal sizes); on a device
    the leak shows in whole segments (2 MiB below 1 MiB/step, 20 MiB below 10 MiB/step)."""
    end = n if stop is None else stop
    m = end - onset
    if style == "steady":
        inc = np.clip(1 + 0.1 * rng.normal(0, 1, m), 0, None)
    elif style == "vary":
        inc = np.exp(cc.ar1(rng, m, 0.995, 0.5))
    else:
        inc = (rng.random(m) < rng.uniform(0.02, 0.3)) * rng.lognormal(0, 1, m)
    inc = inc * rate * m / max(inc.sum(), 1e-9)
    cum = np.zeros(n)
    cum[onset:end] = np.cumsum(inc)
    cum[end:] = cum[end - 1]
    if metric == "device":
        chunk = 20 * MiB if MiB <= rate < 10 * MiB else SEG
        cum = np.floor(cum / chunk) * chunk
    return cum


def stair_path(rng, n, metric):
    """Jumps of 100-800 MiB at irregular gaps (lognormal around 150-1200 steps), a quarter of
    them spread over 2-10 steps."""
    cum, steps = np.zeros(n), []
    t, gap = int(rng.integers(100, int(0.35 * n))), logu(rng, 150, 1200)
    while t < n:
        steps.append(t)
        jump = quantize(rng.uniform(100, 800) * MiB, metric)
        cum += jump * ramp(rng, n, t, 1 if rng.random() < 0.75 else rng.integers(2, 11))
        t += max(1, int(gap * rng.lognormal(0, 0.7)))
    return cum, steps


def style(rng):
    return str(rng.choice(["steady", "vary", "bursty"], p=[0.45, 0.35, 0.2]))


def metric_of(rng, host_share):
    return "host" if rng.random() < host_share else "device"


# ---- the families ------------------------------------------------------------------------------

def nl_warm(rng, n, fam):
    metric = metric_of(rng, HOST_SHARE[fam])
    lvl = startup(rng, n, metric, logu(rng, 4.5, 40) * GiB) + WARM[fam](rng, n)
    return dict(metric=metric, level=lvl, spikes="none")


def nl_spiky(rng, n, fam):
    """Flat after start-up, under validation, checkpoint or accumulation shapes."""
    metric = metric_of(rng, {"val": 0.5, "ckpt": 0.8, "accum": 0.0}[fam])
    lvl = startup(rng, n, metric, logu(rng, 4.5, 50) * GiB)
    if fam == "val":
        return dict(metric=metric, level=lvl, spk=s_val(rng, n), spikes="val")
    if fam == "accum":
        return dict(metric=metric, level=lvl, spk=s_accum(rng, n), spikes="accum")
    spk, kept = s_ckpt(rng, n)
    return dict(metric=metric, level=lvl + kept, spk=spk, spikes="ckpt")


def nl_noisy(rng, n, fam):
    """Flat after start-up under heavy-tailed, AR(1) or gc noise (the last with epoch dips)."""
    metric = "host" if fam != "ar1" else metric_of(rng, 0.7)
    lvl = startup(rng, n, metric, logu(rng, 4.5, 50) * GiB)
    kind = {"heavy": "heavy", "ar1": "ar1", "epoch": "gc"}[fam]
    spk = s_epoch(rng, n) if fam == "epoch" else np.zeros(n)
    return dict(metric=metric, level=lvl, spk=spk, spikes="epoch" if fam == "epoch" else "none",
                noise=(kind, logu(rng, 5, 300) * MiB))


def nl_mix(rng, n):
    """A whole run: cache filled in epoch 1, dips at epoch ends, validation at each epoch's end
    and checkpoints on a clock."""
    epoch = int(rng.integers(1000, max(1001, int(0.6 * n))))
    lvl = startup(rng, n, "host", logu(rng, 4.5, 30) * GiB) + w_cache(rng, n, epoch)
    ck, kept = s_ckpt(rng, n)
    spk = s_epoch(rng, n, epoch) + s_val(rng, n, epoch, epoch) + ck
    return dict(metric="host", level=lvl + kept, spk=spk, spikes="epoch+val+ckpt")


def nl_jaxpre(rng, n):
    """JAX preallocating its fraction of an 80 GB device at start: flat from step 0."""
    frac = 0.75 if rng.random() < 0.6 else rng.uniform(0.3, 0.95)
    noisy = rng.random() < 0.5
    return dict(metric="device", level=np.full(n, frac * 80e9), spikes="none",
                noise=("seg", logu(rng, 2, 20) * MiB) if noisy else ("none", 0.0))


def lk_make(rng, n, metric, base, onset, stop, rate, sty, spk=None, spikes="none"):
    return dict(metric=metric, level=startup(rng, n, metric, base), onset=int(onset), stop=stop,
                leak=leak_path(rng, n, int(onset), stop, rate, sty, metric), steps=[],
                spk=spk if spk is not None else np.zeros(n), spikes=spikes)


def lk_basic(rng, n, fam):
    """late, slow, fixed, fast, bursty: a leak on a flat level."""
    m, base, sty = metric_of(rng, 0.5), logu(rng, 4.5, 40) * GiB, style(rng)
    onset, stop = int(rng.integers(50, int(0.5 * n))), None
    if fam == "late":
        onset, rate = int(rng.integers(int(0.35 * n), int(0.7 * n))), logu(rng, 0.5, 30) * MiB
    elif fam == "slow":
        base, rate = logu(rng, 20, 60) * GiB, logu(rng, 0.1, 1) * MiB
        onset = int(rng.integers(50, int(0.3 * n)))
    elif fam == "fixed":
        onset, rate = int(rng.integers(50, int(0.4 * n))), logu(rng, 0.5, 20) * MiB
        stop = int(rng.integers(onset + 400, max(onset + 401, n - 800)))
    elif fam == "fast":
        base, rate, sty = logu(rng, 4.5, 20) * GiB, logu(rng, 50, 160) * MiB, style(rng)
        onset = int(rng.integers(1, int(0.3 * n)))
    else:
        rate, sty = logu(rng, 0.5, 20) * MiB, "bursty"
    return lk_make(rng, n, m, base, onset, stop, rate, sty)


def lk_spiky(rng, n, fam):
    """spiky, irrspk, dipleak: a leak under spikes or epoch dips."""
    m = "host" if fam == "dipleak" else metric_of(rng, 0.6)
    onset, rate = int(rng.integers(50, int(0.5 * n))), logu(rng, 0.3, 20) * MiB
    if fam == "dipleak":
        b = lk_make(rng, n, m, logu(rng, 4.5, 40) * GiB, onset, None, rate, style(rng),
                    s_epoch(rng, n), "epoch")
        b["noise"] = ("gc", logu(rng, 5, 200) * MiB)
        return b
    if fam == "irrspk":
        spk, name, kept = s_irreg(rng, n), "irreg", 0.0
    elif rng.random() < 0.5:
        spk, name, kept = s_val(rng, n), "val", 0.0
    else:
        (spk, kept), name = s_ckpt(rng, n), "ckpt"
    b = lk_make(rng, n, m, logu(rng, 4.5, 40) * GiB, onset, None, rate, style(rng), spk, name)
    b["level"] = b["level"] + kept
    return b


def lk_stair(rng, n):
    m = metric_of(rng, 0.5)
    cum, steps = stair_path(rng, n, m)
    return dict(metric=m, level=startup(rng, n, m, logu(rng, 4.5, 40) * GiB), leak=cum,
                onset=steps[0], stop=None, steps=steps, spikes="none")


def lk_warm(rng, n):
    """A leak that starts while a warmup is still rising."""
    fam = str(rng.choice(["cache", "ramp", "doubling", "runmax", "pinned"]))
    m = metric_of(rng, HOST_SHARE[fam])
    warm = WARM[fam](rng, n)
    rises = np.nonzero(np.diff(warm) > 0)[0]
    last = int(rises[-1]) + 1 if len(rises) else 2
    onset = int(rng.integers(1, max(2, min(last, int(0.5 * n)))))
    b = lk_make(rng, n, m, logu(rng, 4.5, 30) * GiB, onset, None, logu(rng, 0.2, 10) * MiB, style(rng))
    b["level"] = b["level"] + warm
    b["spikes"] = "none"
    return b


BUILD = {f: (lambda rng, n, f=f: nl_warm(rng, n, f)) for f in WARM}
BUILD.update({f: (lambda rng, n, f=f: nl_spiky(rng, n, f)) for f in ("val", "ckpt", "accum")})
BUILD.update({f: (lambda rng, n, f=f: nl_noisy(rng, n, f)) for f in ("heavy", "ar1", "epoch")})
BUILD.update(mix=nl_mix, jaxpre=nl_jaxpre, stair=lk_stair, warmleak=lk_warm)
BUILD.update({f: (lambda rng, n, f=f: lk_basic(rng, n, f))
              for f in ("late", "slow", "fixed", "fast", "bursty")})
BUILD.update({f: (lambda rng, n, f=f: lk_spiky(rng, n, f)) for f in ("spiky", "irrspk", "dipleak")})


# ---- assembling a series -----------------------------------------------------------------------

def settled(level, every):
    """Last step the noise-free, spike-free level rose, plus the margin issue 12 gives."""
    rises = np.nonzero(np.diff(level) > 0)[0]
    end = float(rises[-1] + 1) if len(rises) else 0.0
    return end + max(200.0, 20.0 * every, 0.25 * end)


def leak_fields(rng, d, b, y):
    """Onset, stop, steps and mean rate of a leak series; cut it at its OOM (70-78 GiB) if it
    gets there. False if the run dies before its leak has run 300 steps, or before it stops."""
    onset, stop, leak = b["onset"], b["stop"], b["leak"]
    d.update(onset=onset, stop=stop, steps=[int(s) for s in b["steps"]])
    over = np.nonzero(y >= rng.uniform(70, 78) * GiB)[0]
    if len(over):
        t = int(over[0])
        if t < onset + 300 or (stop is not None and t <= stop):
            return False
        d.update(n=t, oom_at=t, limit=int(y[t]), steps=[s for s in d["steps"] if s < t])
    end = stop or d["n"]
    prev = leak[onset - 1] if onset > 0 else 0.0
    d["rate"] = float((leak[end - 1] - prev) / max(1, end - onset))
    return True


def assemble(rng, fam, n, every, b):
    """The series from a family's parts, or None if it leaves 4-78 GiB (after STARTUP steps)."""
    metric = b["metric"]
    kind, sd = b.get("noise") or pick_noise(rng, metric)
    nz = noise(rng, n, kind, sd)
    leak = b.get("leak", np.zeros(n))
    y = quantize(b["level"] + leak + b.get("spk", np.zeros(n)) + nz, metric)
    d = dict(fam=fam, leak=fam in LEAK, every=every, n=n, noise=kind, spikes=b["spikes"],
             metric=metric, onset=None, stop=None, rate=None, steps=[])
    if d["leak"] and not leak_fields(rng, d, b, y):
        return None
    if fam == "fast" and d["rate"] < 50 * MiB:  # by definition, over the run as cut
        return None
    n = d["n"]
    if y[:n].max() > CEIL or y[STARTUP:n].min() < FLOOR or y[:n].min() <= 0:
        return None
    if not d["leak"]:
        d["settled"] = settled(quantize(b["level"], metric), every)
    d.update(sigma=float(np.std(nz[:n])), y=y)
    return d


def draw(rng, fam):
    """One series of family fam: the bytes at every step and what is true of it."""
    n, every = int(rng.integers(2000, 10001)), int(rng.choice([1, 10]))
    for _ in range(200):
        d = assemble(rng, fam, n, every, BUILD[fam](rng, n))
        if d is not None:
            return d
    sys.exit(f"crosscheck_fresh: no {fam} series within 4-78 GiB in 200 draws")


def main():
    cc.run_sets(__doc__, draw, NONLEAK + LEAK, SEED_DEFAULT, PER_FAMILY_DEFAULT, 2, {"issue12": ISSUE12})


if __name__ == "__main__":
    main()
