# SPDX-License-Identifier: MIT
# Little stack left (issue 13, point 2): a crash handler on a SIGSTKSZ alternate stack that calls
# backtrace() exits 42 under the probe as it does natively, its allocations recorded without a
# stack; and the hook's own need, measured on a big painted alternate stack, is within
# MGP_CAPTURE_STACK (16 KiB).
import re

from probetest import Test

t = Test("altstack", 1)
prog = t.progs[0]

rep = t.plain_and_probed("altstack", [prog, "altstack"], "altstack.mgt")
if rep:
    frameless = [s for s in rep["sites"] if not s["frames"] and s["kind"] == "heap"]
    t.true("altstack: the handler's allocations are recorded, without a stack",
           sum(s["allocs"] for s in frameless) > 0, [(s["allocs"], s["live_bytes"]) for s in frameless])
plain = t.run([prog, "altstack"])
t.eq("altstack: plain exit status", 42, plain.returncode)


def used(r):
    m = re.search(rb"alternate stack used: (\d+) bytes", r.stdout)
    return int(m.group(1)) if m else None


native = used(t.run([prog, "measure"]))
probed = used(t.probe([prog, "measure"], t.path("measure.mgt")))
print(f"altstack: the handler uses {native} bytes natively, {probed} under the probe")
if t.true("measure: both runs print their use", native and probed, (native, probed)):
    t.true("measure: the hook's need (probe - native) is within 16 KiB",
           0 < probed - native <= 16384, probed - native)
t.done()
