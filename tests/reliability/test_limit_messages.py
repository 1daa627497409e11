# SPDX-License-Identifier: MIT
# Issue 13.13: where the probe degrades, it says so in exactly one stderr line, and never twice or
# in contradiction: a file-size limit of 8 KiB (the trace outgrows it and the live segment cannot
# be reserved) or of 0 (not even the trace's header fits: no file is left behind), and a site table
# of 16 (MGPROBE_MAX_SITES=16: the allocations from the stacks past it have no site of their own,
# which the report also says, with how many).
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "probe"))
from probetest import Test, probe_lines  # noqa: E402

t = Test("limit-messages", 1)
python = os.path.realpath(sys.executable)
py = [python, "-c", "import json, sys; print(json.dumps([1, 2])); sys.exit(4)"]
plain = t.run(py)

for kib in (8, 0):
    out = t.path(f"f{kib}")
    # As `ulimit -f` in a shell (bash's, in KiB): only the program itself runs under the probe.
    r = t.run(["/bin/bash", "-c", f'ulimit -f {kib} && LD_PRELOAD="$P" exec "$@"', "sh", *py],
              extra_env={"P": t.lib, "MGPROBE_OUTPUT": out})
    t.same_run(f"ulimit -f {kib}", plain, r)
    lines = probe_lines(r.stderr)
    t.eq(f"ulimit -f {kib}: one mgprobe line", 1, len(lines))
    t.true(f"ulimit -f {kib}: it names the limit",
           lines and f"file-size limit ({kib} KiB, ulimit -f)" in lines[0] if kib else
           lines and "file-size limit (0 bytes, ulimit -f)" in lines[0], lines)
    if kib == 0:
        t.eq("ulimit -f 0: no empty trace left behind", False, os.path.exists(out + ".mgt"))
        t.true("ulimit -f 0: says the program runs unprofiled", lines and "unprofiled" in lines[-1],
               lines)
    else:
        t.true("ulimit -f 8: the trace stops at the limit", os.path.getsize(out + ".mgt") <= 8192)

# The site table: 50 distinct stacks into 16 sites.
prog = t.progs[0]
out = t.path("max16.mgt")
plain = t.run([prog])
r = t.preload([prog], {"MGPROBE_OUTPUT": out, "MGPROBE_MAX_SITES": "16"})
t.same_run("MGPROBE_MAX_SITES=16", plain, r)
lines = probe_lines(r.stderr)
t.eq("MGPROBE_MAX_SITES=16: one mgprobe line", 1, len(lines))
t.true("MGPROBE_MAX_SITES=16: the line says the table is full and what to raise",
       lines and "site table is full" in lines[0] and "MGPROBE_MAX_SITES" in lines[0], lines)
rep = t.report(out)
if rep:
    over = [s for s in rep["sites"] if not s["frames"]]
    n = over[0]["allocs"] if over else 0
    t.true("MGPROBE_MAX_SITES=16: some allocations had no site", n > 0, n)
    t.eq("MGPROBE_MAX_SITES=16: the JSON counts them", n,
         (rep.get("unattributed") or {}).get("allocs"))
    r = t.run([t.mgreport, out])
    text = r.stdout.decode(errors="replace")
    t.true("MGPROBE_MAX_SITES=16: the text report says how many went unattributed",
           f"{n} allocations" in text and "unattributed" in text and "MGPROBE_MAX_SITES" in text,
           text[:600])
# A table big enough says nothing.
r = t.preload([prog], {"MGPROBE_OUTPUT": t.path("big.mgt")})
t.eq("default table: no mgprobe line", [], probe_lines(r.stderr))
rep = t.report(t.path("big.mgt"))
t.eq("default table: nothing unattributed", None, rep and rep.get("unattributed", 0))
t.done()
