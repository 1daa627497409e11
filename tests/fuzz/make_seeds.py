#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Writes the fuzzers' seed corpora (tests/fuzz/seeds-*): real traces and live segments of a small
program under the probe, cut small, synthetic traces of both format versions (tests/report's
writer: DEVMEM, DEVSITE, PERFMAP, labels, children, a cut tail), and the CSV fixtures. Run it
again after a format change and commit what it writes; the fuzzers only read these. It leaves
alone the inputs a fuzzer once crashed on (regression-*: added by hand after the fix), and writes
the regressions it can make itself.

usage: make_seeds.py BUILD_DIR
"""
import glob
import os
import signal
import struct
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")
sys.path.insert(0, os.path.join(ROOT, "tests", "report"))
import gen_run  # noqa: E402
import mgtrace  # noqa: E402

MB = 1 << 20


def out(kind, name, data):
    d = os.path.join(HERE, "seeds-" + kind)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def synthetic(version):
    """A short run with everything the reader knows: GPU cells and site details, labels, a child,
    a perf map, an unloaded module, a Python frame and its code object, an end record."""
    path = tempfile.mktemp(suffix=".mgt")
    with open(path, "wb") as f:
        w = mgtrace.TraceWriter(f, version)
        w.process(cmdline=b"mgtrain\0--device\0cuda")
        w.module(1, 1, 0, 0x400000, 0x500000, b"/nonexistent/mg-seed/train", build_id=b"\x01\x02\x03\x04")
        host = gen_run.Site(1, [0x401010, 0x400100])
        dev = gen_run.Site(2, [0x402010, 0x401010, 0x400100])
        # a code object (PYCODE: id, first line, lengths, Python 3.11) and a frame in it
        qual, fname, table = b"Trainer.step", b"/src/train.py", bytes([0xe8, 0x0a, 0x80, 0x02])
        w.record(17, struct.pack("<IiIIIBBH", 7, 10, len(qual), len(fname), len(table), 3, 11, 0) +
                 qual + fname + table)
        host.ips = [0x401010, (1 << 63) | (7 << 32) | 2, 0x400100]
        w.stack(1, host.ips)
        w.stack(2, dev.ips, kind=mgtrace.kind(mgtrace.KIND_DEVICE, 0))
        for step in range(12):
            host.alloc(4096 * (step + 1), step)
            dev.alloc(MB, step)
            if step % 3 == 2:
                host.free_oldest()
            w.step(step * 1000000 + 1, step)
            w.snapshot(step * 1000000 + 1, step, 64 * MB + step * 4096 * 4, host.live, host.count,
                       sites=[host.entry(), dev.entry()], flags=mgtrace.SNAP_STEP, device=dev.live,
                       label=b"train" if step < 8 else b"validation")
            w.devmem([(mgtrace.kind(mgtrace.KIND_DEVICE, 0), dev.count, dev.live),
                      (mgtrace.kind(mgtrace.KIND_POOL, 0), 1, 64 * MB)])
            if step == 4:
                w.devsite(2, stream=7, flags=mgtrace.DEVSITE_ASYNC | mgtrace.DEVSITE_POOL,
                          pool_address=0x7f00000000)
                w.child(step * 1000000 + 2, 4242)
        w.record(mgtrace.MODULE_UNLOAD, b"\x01\x00\x00\x00\x02\x00\x00\x00")
        w.perfmap(b"7f0000000100 80 py::train_step:/src/train.py\nnot a line\n")
        w.snapshot(13000001, 11, 64 * MB, host.live, host.count, sites=[host.entry()],
                   flags=mgtrace.SNAP_FINAL)
        w.end(13000002)
    with open(path, "rb") as f:
        data = f.read()
    os.unlink(path)
    return data


def real_run(build):
    """A probed run of tests/mgmon's target: its trace and its segment at the last step."""
    lib = os.path.join(build, "libmgprobe", "libmgprobe.so")
    target = os.path.join(build, "tests", "mgmon", "mgm_test_target")
    trace = tempfile.mktemp(suffix=".mgt")
    env = dict(os.environ, LD_PRELOAD=lib, MGPROBE_OUTPUT=trace, MGPROBE_INTERVAL="600000")
    p = subprocess.Popen([target, "both", "30", "24", "stop"], env=env)
    while open("/proc/%d/stat" % p.pid).read().rsplit(")", 1)[1].split()[0] != "T":
        time.sleep(0.05)
    with open("/dev/shm/mgprobe.%d" % p.pid, "rb") as f:
        segment = f.read()
    p.send_signal(signal.SIGCONT)
    p.wait()
    with open(trace, "rb") as f:
        data = f.read()
    os.unlink(trace)
    return data, segment.rstrip(b"\0")


def step_past_2e63(segment):
    """The segment with its last grid point's step near 2^64: the analysis then passes a step the
    classifier cannot take back to an integer unless it is clamped (found by fuzz-shm)."""
    grid_n = int.from_bytes(segment[152:156], "little")
    off = 39528 + (grid_n - 1) * 152 + 8  # struct mgc_shm: grid[], each snapshot's step at +8
    return segment[:off] + (0xFFFFFFFFFFFFFF00).to_bytes(8, "little") + segment[off + 8:]


def python_segment(segment):
    """The segment with one Python code object in its table (segment version 2: struct mgc_shm_py
    after the module names) and the first site's second frame in it: the part a C program never
    fills."""
    py, sites, ips = 331880, 49256, 576  # offsets in struct mgc_shm and struct mgc_shm_site
    qual, fname, table = b"Trainer.step", b"/src/train.py", bytes([0xe8, 0x0a, 0x80, 0x02])
    body = qual + fname + table
    code = struct.pack("<IiIIII", 7, 10, 0, len(qual), len(fname), len(table))
    seg = bytearray(segment.ljust(py, b"\0"))
    seg += struct.pack("<II", 1, len(body)) + code + b"\0" * (24 * 2047) + body
    seg[sites + ips + 8:sites + ips + 16] = struct.pack("<Q", (1 << 63) | (7 << 32) | 2)
    return bytes(seg)


def small_trace(steps, perfmaps=(), cmdline=b"train", label=b""):
    """A version-1 trace of one site growing 1 MiB per marker at the given steps, with the given
    PERFMAP records, command line and label: the reliability seeds (issue 13)."""
    path = tempfile.mktemp(suffix=".mgt")
    with open(path, "wb") as f:
        w = mgtrace.TraceWriter(f)
        w.process(cmdline=cmdline, exe=b"/opt/" + cmdline[:8])
        w.module(1, 1, 0, 0x400000, 0x500000, b"/opt/train")
        w.stack(2, [0x7f0000000010, 0x400100])
        for text in perfmaps:
            w.perfmap(text)
        for i, s in enumerate(steps):
            live = (i + 1) * MB
            w.step((i + 1) * 10**8, s)
            if label and i == 1:
                w.record(mgtrace.LABEL,
                         struct.pack("<QQII", (i + 1) * 10**8, s, len(label), 0) + label)
            site = dict(id=2, live_bytes=live, live_count=i + 1, allocs=i + 1, alloc_bytes=live,
                        frees=0, peak_bytes=live, cohorts={mgtrace.cohort_bucket(s): live})
            w.snapshot((i + 1) * 10**8, s, 100 * MB + live, live, i + 1, sites=[site],
                       flags=mgtrace.SNAP_STEP | (mgtrace.SNAP_FULL if i == 0 else 0))
        w.end(len(steps) * 10**8 + 1)
    with open(path, "rb") as f:
        data = f.read()
    os.unlink(path)
    return data


def reliability_seeds():
    """What issue 13 fixed in the readers: a PERFMAP record of no bytes and one of no entries,
    steps near 2^64, wrapping past it and going back, and strings of terminal escapes and bytes
    that are not UTF-8."""
    top = 1 << 64
    out("trace", "perfmap-empty.mgt", small_trace(range(1, 6), perfmaps=(b"", b"\n\n")))
    out("trace", "steps-near-2e64.mgt", small_trace([top - 20 + i for i in range(20)]))
    out("trace", "steps-wrap-2e64.mgt",
        small_trace([top - 8 + i for i in range(8)] + list(range(8))))
    out("trace", "steps-backwards.mgt", small_trace(list(range(1, 9)) + list(range(1, 9))))
    evil = b"\x1b]0;PWNED\x07\x1b[2J\x9b31m caf\xe9 \xff\xfe"
    out("trace", "strings-hostile.mgt",
        small_trace(range(1, 6), perfmaps=(b"7f0000000000 20 py::" + evil + b"\n",),
                    cmdline=b"train\0" + evil, label=evil[:31]))


def main():
    build = sys.argv[1]
    reliability_seeds()
    trace, segment = real_run(build)
    out("trace", "real-v2-head.mgt", trace[:24576])
    out("trace", "real-v2-tail-cut.mgt", trace[:16] + trace[len(trace) - 8192:])
    out("shm", "real-segment", segment)
    out("shm", "real-segment-header", segment[:616])
    out("shm", "regression-step-past-2e63", step_past_2e63(segment))
    out("shm", "python-segment", python_segment(segment))
    for v in (1, 2):
        data = synthetic(v)
        out("trace", "synthetic-v%d.mgt" % v, data)
        out("trace", "synthetic-v%d-cut.mgt" % v, data[:len(data) * 2 // 3])
    for name in ("leak.mgt", "leak_v2.mgt"):
        with open(os.path.join(ROOT, "tests", "report", "data", name), "rb") as f:
            out("trace", "golden-" + name, f.read()[:12288])
    for csv in glob.glob(os.path.join(ROOT, "tests", "classify", "data", "*.csv")) + \
            glob.glob(os.path.join(ROOT, "samples", "*.csv")):
        with open(csv, "rb") as f:
            out("csv", os.path.basename(csv), f.read())
    return 0


if __name__ == "__main__":
    sys.exit(main())
