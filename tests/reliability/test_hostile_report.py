# SPDX-License-Identifier: MIT
# Issue 13.6, 13.7, 13.10, 13.12 on mgreport's side: whatever a trace holds, mgreport's text has no
# control byte but newlines (a command line, a label, a notice, a module path or a JIT's function
# name that says "\x1b]0;PWNED\x07\x1b[2J" shows as text, never rewrites the reader's terminal),
# its JSON is valid UTF-8 (bad bytes become U+FFFD), a FIFO is refused at once instead of blocking,
# and `mgreport -` reads a trace from stdin (the step numbers are test_report_steps.py's).
import json
import os
import struct
import subprocess
import sys
import threading

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "probe"))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "report"))
import mgtrace  # noqa: E402
from probetest import Test  # noqa: E402
from reltest import no_controls, valid_json  # noqa: E402

t = Test("hostile-report", 0)
EVIL = b"\x1b]0;PWNED\x07\x1b[2J\x9b31m caf\xe9 \xff\xfe end"
MB = 1 << 20
BASE = 0x7f0000000000


def hostile_trace(path, steps=40):
    with open(path, "wb") as f:
        w = mgtrace.TraceWriter(f)
        w.process(cmdline=b"train\0--name=" + EVIL + b"\0x", exe=b"/opt/" + EVIL, host=b"h" + EVIL)
        w.record(mgtrace.NOTICE, struct.pack("<QII", 0, len(EVIL), 0) + EVIL)
        w.module(1, 1, 0, 0x400000, 0x500000, b"/lib/" + EVIL + b".so")
        w.stack(2, [BASE + 0x10, 0x400100], gen=1)
        w.perfmap(b"%x 100 py::" % BASE + EVIL + b"\n")
        live = 0
        for s in range(1, steps + 1):
            live += MB
            w.step(s * 10**8, s)
            if s == 5:
                w.record(mgtrace.LABEL, struct.pack("<QQII", s * 10**8, s, len(EVIL), 0) + EVIL)
            site = dict(id=2, live_bytes=live, live_count=s, allocs=s, alloc_bytes=live, frees=0,
                        peak_bytes=live, cohorts={mgtrace.cohort_bucket(s): live})
            w.snapshot(s * 10**8, s, 100 * MB + live, live, s, sites=[site],
                       flags=mgtrace.SNAP_STEP | (mgtrace.SNAP_FULL if s == 1 else 0))
        w.end(steps * 10**8 + 1)


def mgreport(*args, input=None, timeout=30):
    try:
        return subprocess.run([t.mgreport, *args], capture_output=True, input=input,
                              timeout=timeout)
    except subprocess.TimeoutExpired as ex:
        t.fail(f"mgreport {' '.join(args)}: no exit within {timeout} s")
        return subprocess.CompletedProcess(args, None, ex.stdout or b"", ex.stderr or b"")


# ---- control bytes and bad UTF-8 ----
trace = t.path("evil.mgt")
hostile_trace(trace)
r = mgreport(trace, "--top", "5")
t.eq("text: exit status", 0, r.returncode)
no_controls(t, "text", r.stdout)
no_controls(t, "text stderr", r.stderr)
t.true("text: the escapes show as text", b"\\x1b]0;PWNED\\x07" in r.stdout, r.stdout[:400])
t.true("text: the JIT frame's name is there", b"py::" in r.stdout, r.stdout[-800:])
r = mgreport(trace, "--json", "--top", "5")
t.eq("json: exit status", 0, r.returncode)
rep = valid_json(t, "json", r.stdout)
if rep:
    cmd = rep["process"].get("command", "")
    t.true("json: the command line keeps its escapes, with U+FFFD for the bad bytes",
           "\x1b]0;PWNED\x07" in cmd and "caf\ufffd \ufffd\ufffd end" in cmd, repr(cmd))

# The issue's own: `mgprobe run -- /bin/echo $'caf\xe9'`.
out = t.path("echo.mgt")
t.probe(["/bin/echo", b"caf\xe9"], out)
r = mgreport(out, "--json")
rep = valid_json(t, "echo caf\\xe9: json", r.stdout)
if rep:
    t.true("echo caf\\xe9: U+FFFD in the JSON", "caf\ufffd" in rep["process"].get("command", ""),
           rep["process"].get("command"))
no_controls(t, "echo caf\\xe9: text", mgreport(out).stdout)

# ---- streams ----
fifo = t.path("fifo.mgt")
os.mkfifo(fifo)
r = mgreport(fifo, timeout=10)
t.eq("a FIFO: exit 1 at once", 1, r.returncode)
t.true("a FIFO: one line says why",
       r.stderr.count(b"\n") == 1 and b"not a regular file" in r.stderr, r.stderr)
with open(trace, "rb") as f:
    data = f.read()


def without_file(out):
    """The report less the fields that name the file it was read from."""
    j = json.loads(out) if out else {}
    for p in [j] + j.get("processes", []):
        p.pop("file", None)
    return j


want = without_file(mgreport(trace, "--json").stdout)
r = mgreport("-", "--json", input=data)
t.eq("mgreport - from a pipe: exit status", 0, r.returncode)
t.eq("mgreport - from a pipe: the same report as from the file", want, without_file(r.stdout))
with open(trace, "rb") as f:
    r = subprocess.run([t.mgreport, "-", "--json"], stdin=f, capture_output=True, timeout=30)
t.eq("mgreport - from a redirected file: the same report", want, without_file(r.stdout))
r = mgreport("-", input=b"")
t.eq("mgreport - of nothing: exit 1", 1, r.returncode)
# A writer that keeps the FIFO open while mgreport reads it through stdin.
writer = threading.Thread(target=lambda: open(fifo, "wb").write(data))
writer.start()
with open(fifo, "rb") as f:
    r = subprocess.run([t.mgreport, "-", "--json"], stdin=f, capture_output=True, timeout=30)
writer.join()
t.eq("mgreport - from a FIFO on stdin: the same report", want, without_file(r.stdout))
csv = t.path("fifo.csv")
os.mkfifo(csv)
r = mgreport("--series", csv, timeout=10)
t.eq("--series of a FIFO: exit 1 at once", 1, r.returncode)

t.done()
