# SPDX-License-Identifier: MIT
# A day of training at 10 steps/s (issue 16: <= 20 MB a day): prog_day.c calls mgprobe_step
# 864,000 times with a training-like pattern under the real probe, as fast as it can; the trace
# must stay within 20,000,000 bytes and read back with every step marker.
import os

from probetest import Test

t = Test("day", 1)
prog = t.progs[0]
out = t.path("day.mgt")
r = t.probe([prog], out, timeout=600)
t.eq("the program's output", b"864000 steps, 1728000 metrics\n", r.stdout)
size = os.path.getsize(out) if os.path.exists(out) else None
print(f"day: a day of steps is a trace of {size} bytes ({size / 864000:.1f} bytes per step)" if size
      else "day: no trace")
t.true("a day of steps is at most 20,000,000 bytes", size and size <= 20000000, size)
rep = t.report(out)
if rep:
    t.eq("every step marker reads back", 864000, rep["process"]["steps"])
    t.eq("the x axis is steps", "step", rep["x_axis"])
t.done()
