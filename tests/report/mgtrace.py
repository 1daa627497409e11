# SPDX-License-Identifier: MIT
"""A trace writer in Python for tests and benchmarks: builds *.mgt files record by record after
libmgcore/mgc_format.h, in format version 1 (STACK, SNAPSHOT) or 2 (FRAMES + STACK2, SNAPSHOT2 in
varints), so readers can be fed exact, synthetic runs (golden files, 24-hour runs, damaged files)
without a live process. The same calls write the same run in either version."""
import struct

MAGIC = b"MGTRACE\0"
VERSION = 1
COHORTS = 32

PROCESS, MODULE_LOAD, MODULE_UNLOAD, STACK, SNAPSHOT, STEP, LABEL, CHILD, END, NOTICE = range(1, 11)
FRAMES, STACK2, PERFMAP, SNAPSHOT2 = 11, 12, 13, 14
DEVMEM, DEVSITE = 15, 16
SNAP_STEP, SNAP_FINAL, SNAP_FULL = 1, 2, 4
KIND_HEAP, KIND_MMAP, KIND_DEVICE, KIND_PINNED, KIND_MANAGED, KIND_POOL = 0, 1, 2, 3, 4, 5
DEVSITE_ASYNC, DEVSITE_POOL, DEVSITE_MISMATCH = 1, 2, 4


def kind(mem, device=-1):
    """A site's or DEVMEM cell's kind field: memory kind, device ordinal + 1 in the high byte."""
    return mem | ((device + 1) << 8 if device >= 0 else 0)


def varint(v):
    """LEB128, as mgc_put_varint writes it."""
    out = bytearray()
    while v >= 0x80:
        out.append((v & 0x7F) | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


def zigzag(v):
    return (v << 1) ^ (v >> 63) if v >= 0 else ((-v) << 1) - 1


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
        assert version in (1, 2)
        self.f = f
        self.version = version
        self.nodes = {}  # version 2: (parent node, return address) -> node id
        self.prev_t = self.prev_step = 0
        self.prev_label = b""
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
        """A site's stack, innermost first: STACK (v1), or the FRAMES it adds then STACK2 (v2)."""
        if self.version == 1:
            p = struct.pack("<IIHHI", sid, gen, kind, len(ips), 0) + b"".join(struct.pack("<Q", x) for x in ips)
            self.record(STACK, p)
            return
        first = len(self.nodes) + 1
        new, node = b"", 0
        for ip in reversed(ips):  # from the outermost frame down to the leaf
            key = (node, ip)
            if key not in self.nodes:
                self.nodes[key] = len(self.nodes) + 1
                new += struct.pack("<QI", ip, node)
            node = self.nodes[key]
        if new:
            self.record(FRAMES, struct.pack("<II", first, len(new) // 12) + new)
        self.record(STACK2, struct.pack("<IIHHI", sid, gen, kind, len(ips), node))

    def snapshot(self, t_ns, step, rss_anon, heap, heap_count, sites=(), rss_file=0, rss_shmem=0,
                 mmap=0, mmap_count=0, free_kept=0, arena=0, flags=0, label=b"", device=0):
        """sites: iterable of dicts with id, live_bytes, live_count, allocs, alloc_bytes, frees,
        peak_bytes, cohorts ({bucket: bytes}). device: live CUDA bytes (device_live_bytes); device
        sites are stacks written with kind=2. Version 2 keeps RSS in KiB, as /proc reports it: the
        RSS figures must then be whole KiB."""
        sites = sorted(sites, key=lambda e: e["id"])
        allocs = sum(e["allocs"] for e in sites)
        frees = sum(e["frees"] for e in sites)
        if self.version == 1:
            self.record(SNAPSHOT, self.snapshot_v1(t_ns, step, (rss_anon, rss_file, rss_shmem, heap,
                        heap_count, mmap, mmap_count, free_kept, arena, device, allocs, frees), sites,
                        flags, label))
            return
        assert rss_anon % 1024 == 0 and rss_file % 1024 == 0 and rss_shmem % 1024 == 0
        p = varint(t_ns - self.prev_t) + varint(zigzag(step - self.prev_step))
        for v in (rss_anon >> 10, rss_file >> 10, rss_shmem >> 10, heap, heap_count, mmap, mmap_count,
                  free_kept, arena, device, allocs, frees, flags):
            p += varint(v)
        p += varint(0) if label == self.prev_label else varint(len(label) + 1) + label
        p += varint(len(sites))
        prev_id = 0
        for e in sites:
            mask, vals = self.cohorts(e)
            p += varint(e["id"] - prev_id)
            for k in ("live_bytes", "live_count", "allocs", "alloc_bytes", "frees", "peak_bytes"):
                p += varint(e[k])
            p += varint(mask) + b"".join(varint(v) for v in vals)
            prev_id = e["id"]
        self.prev_t, self.prev_step, self.prev_label = t_ns, step, label
        self.record(SNAPSHOT2, p)

    @staticmethod
    def cohorts(e):
        """(mask, values in bucket order) of a site entry's non-zero cohorts."""
        c = e.get("cohorts", {})
        ks = [k for k in sorted(c) if c[k]]
        return sum(1 << k for k in ks), [c[k] for k in ks]

    def snapshot_v1(self, t_ns, step, totals, sites, flags, label):
        body = b""
        for e in sites:
            mask, vals = self.cohorts(e)
            body += struct.pack("<IIQQQQQQ", e["id"], mask, e["live_bytes"], e["live_count"],
                                e["allocs"], e["alloc_bytes"], e["frees"], e["peak_bytes"])
            body += b"".join(struct.pack("<Q", v) for v in vals)
        hdr = struct.pack("<QQQQQQQQQQQQQQII32s", t_ns, step, *totals, len(sites), flags, label)
        assert len(hdr) == 152
        return hdr + body

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

    def label(self, t_ns, step, text):
        """mgprobe_label(text) at this step (a LABEL record)."""
        self.record(LABEL, struct.pack("<QQII", t_ns, step, len(text), 0) + text)

    def child(self, t_ns, pid):
        self.record(CHILD, struct.pack("<QiI", t_ns, pid, 1))

    def perfmap(self, text):
        self.record(PERFMAP, text)

    def end(self, t_ns, reason=1, status=0):
        self.record(END, struct.pack("<QIi", t_ns, reason, status))
