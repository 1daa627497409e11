# SPDX-License-Identifier: MIT
# Issue 13.1: /tmp/perf-PID.map is a well-known name in a world-writable directory, so another user
# can plant anything there for a future pid. At exit the probe copies it into the trace only when it
# is a regular file owned by the process's own user with one link, never through a symlink (else
# /etc/shadow lands in the trace), never blocking on a FIFO (else the program hangs at exit) and at
# most 64 MiB of it (else /dev/zero fills the disk). What it refuses it names in a trace notice.
# Each program plants the thing at its own pid's path, as an attacker would for a future pid. The
# traces are written plain (MGPROBE_COMPRESS=0) so that their records can be read here.
import os
import signal
import struct
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "probe"))
from probetest import Test, probe_lines  # noqa: E402

t = Test("planted-perfmap", 0)
python = os.path.realpath(sys.executable)
CAP = 64 << 20
REC_PERFMAP, REC_NOTICE = 13, 10
PLAIN = {"MGPROBE_COMPRESS": "0"}


def records(trace, typ):
    with open(trace, "rb") as f:
        data = f.read()
    off, out = struct.unpack_from("<I", data, 12)[0], []  # the header's size
    while off + 16 <= len(data):
        ty, ln, _c, _r = struct.unpack_from("<IIII", data, off)
        if ty == typ:
            out.append(data[off + 16:off + 16 + ln])
        off += 16 + ((ln + 7) & ~7)
    return out


def notices(trace):
    return [r[16:].decode(errors="replace") for r in records(trace, REC_NOTICE)]


secret = t.path("shadow")
with open(secret, "w") as f:
    f.write("root:SECRET-HASH-4f1d:19000:0:99999:7:::\n")
os.chmod(secret, 0o600)

# What each program does to its own /tmp/perf-PID.map before it exits.
plants = {
    "a symlink to a secret file": f"os.symlink({secret!r}, p)",
    "a symlink to /dev/zero": "os.symlink('/dev/zero', p)",
    "a FIFO": "os.mkfifo(p, 0o666)",
    "a hard link to a secret file": f"os.link({secret!r}, p)",
}
if os.geteuid() == 0:
    plants["a /dev/zero device node"] = "os.mknod(p, stat.S_IFCHR | 0o666, os.makedev(1, 5))"
    plants["a regular file of another user"] = (
        "open(p, 'w').write('7f0000000000 10 planted::fn\\n'); os.chown(p, 65534, 65534)")
else:
    print("note: not root: the device node and the foreign file are not planted")

made = []


def planted(r):
    """The path the program planted (its stdout: "planted PID")."""
    w = r.stdout.split()
    t.eq("stdout", b"planted", w[0] if w else b"")
    if r.returncode is None and len(w) == 2:  # hung at exit: the launcher was killed, not it
        try:
            os.kill(int(w[1]), signal.SIGKILL)
        except OSError:
            pass
    return [f"/tmp/perf-{int(w[1])}.map"] if len(w) == 2 else []


for n, (what, plant) in enumerate(plants.items()):
    prog = (f"import os, stat\np = '/tmp/perf-%d.map' % os.getpid()\n{plant}\n"
            "print('planted', os.getpid(), flush=True)\n")
    out = t.path(f"p{n}.mgt")
    r = t.probe([python, "-c", prog], out, timeout=30, extra_env=PLAIN)
    made += planted(r)
    t.eq(f"{what}: the program exits 0 and in time", 0, r.returncode)
    t.eq(f"{what}: no mgprobe line but where the trace went", 1, len(probe_lines(r.stderr)))
    if not os.path.exists(out):
        t.fail(f"{what}: no trace")
        continue
    t.eq(f"{what}: nothing copied", [], records(out, REC_PERFMAP))
    with open(out, "rb") as f:
        t.true(f"{what}: the secret is not in the trace", b"SECRET-HASH" not in f.read())
    t.eq(f"{what}: one notice names the refusal", 1,
         len([x for x in notices(out) if "perf map" in x and "not copied" in x]))
    rep = t.report(out)
    t.true(f"{what}: the trace reads back", rep is not None)

# A regular file of our own is copied, but at most 64 MiB of it: a sparse 1 GiB file.
prog = ("import os\np = '/tmp/perf-%d.map' % os.getpid()\n"
        "with open(p, 'wb') as f:\n"
        "    f.write(b'7f0000000000 10 first::fn\\n'); f.truncate(1 << 30)\n"
        "print('planted', os.getpid(), flush=True)\n")
out = t.path("big.mgt")
r = t.probe([python, "-c", prog], out, timeout=60, extra_env=PLAIN)
made += planted(r)
t.eq("1 GiB perf map: exit status", 0, r.returncode)
chunks = records(out, REC_PERFMAP) if os.path.exists(out) else []
t.eq("1 GiB perf map: 64 MiB copied", CAP, sum(len(c) for c in chunks))
t.true("1 GiB perf map: from its start", chunks and chunks[0].startswith(b"7f0000000000 10 first"))
t.eq("1 GiB perf map: a notice says it was cut", 1,
     len([x for x in notices(out) if "perf map" in x and "64 MiB" in x]) if chunks else 0)
os.unlink(out)

for f in made:
    try:
        os.unlink(f)
    except OSError:
        pass
t.done()
