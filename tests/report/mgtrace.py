# SPDX-License-Identifier: MIT
"""A trace writer in Python for tests and benchmarks: builds *.mgt files record by record after
libmgcore/mgc_format.h (version 1), so readers can be fed exact, synthetic runs (golden files,
24-hour runs, damaged files) without a live process."""
import struct

MAGIC = b"MGTRACE\0"
VERSION = 1
COHORTS = 32

PROCESS, MODULE_LOAD, MODULE_UNLOAD, STACK, SNAPSHOT, STEP, LABEL, CHILD, END, NOTICE = range(1, 11)
PERFMAP = 13
DEVMEM, DEVSITE = 15, 16
SNAP_STEP, SNAP_FINAL, SNAP_FULL = 1, 2, 4
KIND_HEAP, KIND_MMAP, KIND_DEVICE, KIND_PINNED, KIND_MANAGED, KIND_POOL = 0, 1, 2, 3, 4, 5
DEVSITE_ASYNC, DEVSITE_POOL, DEVSITE_MISMATCH = 1, 2, 4


def kind(mem, device=-1):
    """A site's or DEVMEM cell's kind field: memory kind, device ordinal + 1 in the high byte."""
    return mem | ((device + 1) << 8 if device >= 0 else 0)


def fnv1a(b):
    h = 2166136261
    for c in b:
        h ^= c
        h = (h * 16777619) & 0xFFFFFFFF
    return h


def cohort_bucket(step):
    if step == 0:
        return 0
    return min(step.bit_length(), COHORTS - 1)


class TraceWriter:
    def __init__(self, f, version=VERSION):
        self.f = f
        f.write(MAGIC + struct.pack("<II", version, 16))

    def record(self, rtype, payload):
        pad = (-len(payload)) % 8
        self.f.write(struct.pack("<IIII", rtype, len(payload), fnv1a(payload), 0))
        self.f.write(payload + b"\0" * pad)

    def process(self, pid=1000, ppid=1, mem_total=32 << 30, mem_available=30 << 30, cgroup_limit=0,
                interval_ms=1000, depth=64, host=b"testhost", cmdline=b"train\0--steps\0100",
                exe=b"/opt/train"):
        p = struct.pack("<iiQQQQQIIIiiIII", pid, ppid, 1_700_000_000_000_000_000, 0, mem_total,
                        mem_available, cgroup_limit, 4096, interval_ms, depth, -1, -1, len(host),
                        len(cmdline), len(exe))
        assert len(p) == 80
        self.record(PROCESS, p + host + cmdline + exe)

    def module(self, mid, gen, bias, start, end, path, build_id=b""):
        p = struct.pack("<IIQQQII", mid, gen, bias, start, end, len(build_id), len(path))
        self.record(MODULE_LOAD, p + build_id + path)

    def stack(self, sid, ips, gen=1, kind=0):
        p = struct.pack("<IIHHI", sid, gen, kind, len(ips), 0) + b"".join(struct.pack("<Q", x) for x in ips)
        self.record(STACK, p)

    def snapshot(self, t_ns, step, rss_anon, heap, heap_count, sites=(), rss_file=0, rss_shmem=0,
                 mmap=0, mmap_count=0, free_kept=0, arena=0, flags=0, label=b"", device=0):
        """sites: iterable of dicts with id, live_bytes, live_count, allocs, alloc_bytes, frees,
        peak_bytes, cohorts ({bucket: bytes}). device: live CUDA bytes (device_live_bytes); device
        sites are stacks written with kind=2."""
        body = b""
        n = 0
        for s in sites:
            cohorts = s.get("cohorts", {})
            mask = 0
            vals = b""
            for k in sorted(cohorts):
                if cohorts[k]:
                    mask |= 1 << k
                    vals += struct.pack("<Q", cohorts[k])
            body += struct.pack("<IIQQQQQQ", s["id"], mask, s["live_bytes"], s["live_count"],
                                s["allocs"], s["alloc_bytes"], s["frees"], s["peak_bytes"]) + vals
            n += 1
        allocs = sum(s["allocs"] for s in sites)
        frees = sum(s["frees"] for s in sites)
        hdr = struct.pack("<QQQQQQQQQQQQQQII32s", t_ns, step, rss_anon, rss_file, rss_shmem, heap,
                          heap_count, mmap, mmap_count, free_kept, arena, device, allocs, frees, n, flags,
                          label)
        assert len(hdr) == 152
        self.record(SNAPSHOT, hdr + body)

    def devmem(self, cells):
        """The DEVMEM completing the snapshot just written: cells are (kind, count, bytes)."""
        self.record(DEVMEM, struct.pack("<II", len(cells), 0) +
                    b"".join(struct.pack("<HHIQ", k, 0, c, b) for k, c, b in cells))

    def devsite(self, site, stream=0, mem_kind=3, device=0, pool_type=0, flags=0, pool_address=0,
                records=1):
        self.record(DEVSITE, struct.pack("<IIIIIIQQ", site, stream, mem_kind, device, pool_type, flags,
                                         pool_address, records))

    def step(self, t_ns, step):
        self.record(STEP, struct.pack("<QQ", t_ns, step))

    def child(self, t_ns, pid):
        self.record(CHILD, struct.pack("<QiI", t_ns, pid, 1))

    def perfmap(self, text):
        self.record(PERFMAP, text)

    def end(self, t_ns, reason=1, status=0):
        self.record(END, struct.pack("<QIi", t_ns, reason, status))
