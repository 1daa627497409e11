# SPDX-License-Identifier: MIT
# Cut and corrupted traces: a real trace cut at every byte offset loads exactly its whole records
# (snapshots, steps, sites and their live bytes as of the last whole snapshot, the truncated flag);
# a byte flipped inside a record's payload ends the readable part there; mgreport on cut and
# malformed files exits 0 or 1 with one line, never dies of a signal.
import json
import os
import struct
from concurrent.futures import ThreadPoolExecutor

from probetest import Test

t = Test("truncated", 2)
prog, cuts = t.progs
trace = t.path("attrib.mgt")
r = t.probe([prog], trace, extra_env={"MGPROBE_COMPRESS": "0"})  # records as laid out, no zstd
t.eq("probe run: exit status", 0, r.returncode)
data = open(trace, "rb").read()

# ---- the records, as docs/trace-format.md lays them out ----
magic, version, hsize = struct.unpack_from("<8sII", data, 0)
t.eq("magic", b"MGTRACE\0", magic)
recs = []  # (start, end, type, payload)
off = hsize
while off + 16 <= len(data):
    typ, ln, _check, _res = struct.unpack_from("<IIII", data, off)
    end = off + 16 + ((ln + 7) & ~7)
    if end > len(data):
        break
    recs.append((off, end, typ, data[off + 16:off + 16 + ln]))
    off = end
t.eq("records cover the whole file", len(data), off)
SNAPSHOT, STEP, END, PROCESS, SNAPSHOT2 = 5, 6, 9, 1, 14
SNAPS = (SNAPSHOT, SNAPSHOT2)


def varints(p, o, n):
    """n LEB128 varints from p at o; returns (values, new offset)."""
    out = []
    for _ in range(n):
        v, shift = 0, 0
        while True:
            b = p[o]
            o += 1
            v |= (b & 0x7F) << shift
            shift += 7
            if not b & 0x80:
                break
        out.append(v)
    return out, o


def snapshot_sites(typ, p):
    """(site id, live bytes) of each entry of a SNAPSHOT or SNAPSHOT2 payload."""
    if typ == SNAPSHOT:
        nsites = struct.unpack_from("<I", p, 112)[0]
        o = 152
        for _ in range(nsites):
            site, mask, live_bytes = struct.unpack_from("<IIQ", p, o)
            yield site, live_bytes
            o += 56 + 8 * bin(mask).count("1")
        return
    _, o = varints(p, 0, 15)
    (lab,), o = varints(p, o, 1)
    o += lab - 1 if lab else 0
    (nsites,), o = varints(p, o, 1)
    site = 0
    for _ in range(nsites):
        (d, live, _c, _a, _ab, _f, _pk, mask), o = varints(p, o, 8)
        _, o = varints(p, o, bin(mask).count("1"))
        site += d
        yield site, live


def is_step(rec):
    """A step marker: a STEP record, or (files with MGC_FILE_DELTAS) a SNAPSHOT2 whose flags
    (its 15th varint) say MGC_SNAP_STEP."""
    return rec[2] == STEP or (rec[2] == SNAPSHOT2 and varints(rec[3], 0, 15)[0][14] & 1)


t.true("trace has 4+ snapshots and 2 steps",
       sum(r[2] in SNAPS for r in recs) >= 4 and sum(map(is_step, recs)) == 2)


def site_state(whole):
    """Sites seen and their summed live bytes after the snapshots among `whole`."""
    live = {}
    for _s, _e, typ, p in whole:
        if typ not in SNAPS:
            continue
        for site, live_bytes in snapshot_sites(typ, p):
            live[site] = live_bytes
    return len(live), sum(live.values())


def expect(whole, truncated):
    """The line trace_cuts prints for a file holding exactly the records `whole`."""
    if not any(r[2] == PROCESS for r in whole):
        return None  # an error
    seen, live = site_state(whole)
    return (f"0 {sum(r[2] in SNAPS for r in whole)} {sum(map(is_step, whole))} "
            f"{int(any(r[2] == END for r in whole))} {int(truncated)} {whole[-1][1]} {seen} {live}")


def results(flip):
    args = [cuts, trace] + (["--flip"] if flip else [])
    res = t.run(args, timeout=60)
    if not t.eq(f"trace_cuts{' --flip' if flip else ''}: exit status (no crash)", 0,
                res.returncode):
        print(res.stderr.decode(errors="replace"))
        return {}
    out = {}
    for line in res.stdout.decode().splitlines():
        k, rest = line.split(" ", 1)
        out[int(k)] = rest
    return out


# ---- every cut ----
got = results(False)
t.eq("cuts: one result per offset", len(data) + 1, len(got))
bad = []
for c in range(len(data) + 1):
    whole = [r for r in recs if r[1] <= c]
    ex = expect(whole, c != (whole[-1][1] if whole else hsize)) if c >= hsize else None
    g = got.get(c)
    ok = (g is not None and g.startswith("-")) if ex is None else g == ex
    if not ok:
        bad.append((c, ex or "error", g))
t.eq("cuts whose load differs from their whole records (offset, expected, got)", [], bad[:10])

# ---- every flipped byte ----
got = results(True)
t.eq("flips: one result per offset", len(data), len(got))
intact = expect(recs, False)
bad = []
for start, end, typ, payload in recs:
    for p in range(start + 16, end):
        if p < start + 16 + len(payload):
            # Inside the payload: the record fails its check; the records before it remain.
            before = [r for r in recs if r[1] <= start]
            ex = expect(before, True) if before else None
        else:
            ex = intact  # padding is not part of the check
        g = got.get(p)
        ok = (g is not None and g.startswith("-")) if ex is None else g == ex
        if not ok:
            bad.append((p, typ, ex or "error", g))
t.eq("flipped payload bytes not handled as a cut (offset, type, expected, got)", [], bad[:10])

# ---- mgreport on cut files: exit 0 or 1, never a signal; JSON agrees with the records ----
offsets = sorted({0, 1, 8, 15, 16, 17, len(data)} |
                 {x for s, e, _t, p in recs for x in (e, e - 1, s + 17, s + 16 + len(p) // 2)})


def mgreport_cut(c):
    path = t.path(f"cut-{c}.mgt")
    with open(path, "wb") as f:
        f.write(data[:c])
    r = t.run([t.mgreport, path, "--json", "--top", "3"], timeout=60)
    os.unlink(path)
    return c, r


with ThreadPoolExecutor(max_workers=2) as pool:
    for c, r in pool.map(mgreport_cut, offsets):
        whole = [x for x in recs if x[1] <= c]
        has_proc = c >= hsize and any(x[2] == PROCESS for x in whole)
        if not t.eq(f"mgreport cut at {c}: exit status", 0 if has_proc else 1, r.returncode):
            continue
        if not has_proc:
            t.eq(f"mgreport cut at {c}: one error line", 1, len(r.stderr.splitlines()))
            continue
        rep = json.loads(r.stdout)
        t.eq(f"mgreport cut at {c}: snapshots", sum(x[2] in SNAPS for x in whole),
             rep["process"]["snapshots"])
        t.eq(f"mgreport cut at {c}: truncated", c != whole[-1][1], rep["process"]["truncated"])

# ---- a compressed trace (the default): every cut loads, or fails with an error code, never a
# crash; what loads grows with the cut (whole flushed blocks) up to the whole file ----
ztrace = t.path("attrib-z.mgt")
t.eq("probe run, compressed: exit status", 0, t.probe([prog], ztrace).returncode)
zdata = open(ztrace, "rb").read()
t.eq("compressed: the header says zstd", 1, struct.unpack_from("<I", zdata, 16)[0] & 1)
zres = t.run([cuts, ztrace], timeout=60)
t.eq("compressed cuts: exit status (no crash)", 0, zres.returncode)
zgot = {int(l.split(" ", 1)[0]): l.split(" ")[1:] for l in zres.stdout.decode().splitlines()}
t.eq("compressed cuts: one result per offset", len(zdata) + 1, len(zgot))
whole_z = zgot.get(len(zdata), [])
t.eq("compressed, whole file: snapshots, steps, ended, not truncated as the plain trace",
     expect(recs, False).split()[1:5], whole_z[1:5])
snaps = [int(zgot[c][1]) if zgot[c][0] == "0" else 0 for c in sorted(zgot)]
t.eq("compressed cuts: snapshots never fall as the cut grows",
     [], [c for c in range(1, len(snaps)) if snaps[c] < snaps[c - 1]][:10])

# ---- malformed files ----
bad_files = {
    "empty": b"",
    "bad magic": b"NOTTRACE" + data[8:],
    "newer version": data[:8] + struct.pack("<I", 99) + data[12:],
    "header cut": data[:10],
    "huge header size": data[:12] + struct.pack("<I", 1 << 30) + data[16:],
    "record longer than the file": data[:recs[0][0]] + struct.pack("<II", PROCESS, 0xfffffff0)
    + data[recs[0][0] + 8:],
}
for what, content in bad_files.items():
    path = t.path("bad.mgt")
    with open(path, "wb") as f:
        f.write(content)
    r = t.run([t.mgreport, path, "--json"])
    t.eq(f"mgreport, {what}: exit status", 1, r.returncode)
    lines = r.stderr.decode(errors="replace").splitlines()
    t.eq(f"mgreport, {what}: one error line", 1, len(lines))
    if lines:
        t.true(f"mgreport, {what}: the line starts with 'mgreport:'",
               lines[0].startswith("mgreport:"), lines[0])
t.eq("mgreport, missing file: exit status", 1,
     t.run([t.mgreport, t.path("nonexistent.mgt")]).returncode)
t.done()
