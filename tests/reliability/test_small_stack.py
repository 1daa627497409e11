# SPDX-License-Identifier: MIT
# Issue 13.2 for small thread stacks: a thread created with a PTHREAD_STACK_MIN (16 KiB) stack
# that uses most of it and then allocates, and 64 such threads, run under the probe as they run
# natively (the probe's stack capture, ~8 KiB, used to overflow them: SIGSEGV). Their allocations
# are recorded, without a stack, to the byte; a thread with room (64 KiB) still gets its stacks,
# as they are without the probe.
# The layout of glibc's thread stacks the probe relies on (libmgprobe/mgp_tstack.c) is checked
# too, so a libc that changes it fails here rather than in a program.
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "probe"))
from probetest import Test  # noqa: E402

t = Test("small-stack", 1)
prog = t.progs[0]

layout = t.run([prog, "layout"])
lines = layout.stdout.decode(errors="replace").splitlines()
t.eq("layout: exit status", 0, layout.returncode)
t.eq("layout: four stack sizes checked", 4, len(lines))
for line in lines:
    t.true(f"layout: {line}", "NOT" not in line and "as assumed" in line)


def frameless(rep):
    return t.totals([s for s in rep["sites"] if not s["frames"] and s["kind"] == "heap"])


rep = t.plain_and_probed("deep", [prog, "deep"], "deep.mgt")
if rep:
    got = frameless(rep)
    t.eq("deep: live bytes recorded without a stack", 3 * 12345, got["live_bytes"])
    t.eq("deep: live blocks recorded without a stack", 3, got["live_count"])

rep = t.plain_and_probed("many", [prog, "many"], "many.mgt")
if rep:
    got = frameless(rep)
    t.eq("many: live bytes recorded without a stack", 64 * 4 * 777, got["live_bytes"])
    t.eq("many: live blocks recorded without a stack", 64 * 4, got["live_count"])

rep = t.plain_and_probed("roomy", [prog, "roomy"], "roomy.mgt")
if rep:
    sites = t.check_site_numbers(rep, "allocate", {"live_bytes": 2 * 4321, "live_count": 2},
                                 kind="heap", what="roomy: with its stack: ")
    for s in sites or []:
        # The probe's start wrapper jumps to the routine: no frame of its own between them.
        names = [f["function"] for f in s["frames"]]
        t.eq("roomy: the thread's stack as without the probe", ["allocate", "roomy", "start_thread"],
             names[:3])
t.done()
