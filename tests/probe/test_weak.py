# SPDX-License-Identifier: MIT
# The step API's weak references, as mgprobe.h documents them, with and without the probe: a PIE
# caller and a library loaded with dlopen get the probe's functions; a non-PIE caller's calls stay
# no-ops (its allocations are still traced) unless it looks the functions up with dlsym; a static
# caller cannot load the probe at all, and mgprobe run says so in one line. Without the probe every
# caller runs the same and prints "active 0".
import os

from probetest import Test, probe_lines

t = Test("weak", 4)
pie, nopie, static, lib = t.progs


def probed(what, cmd):
    out = t.path(what + ".mgt")
    r = t.probe(cmd, out)
    t.eq(f"{what} under the probe: exit status", 0, r.returncode)
    return r, out


def check_trace(what, out, steps, kept):
    rep = t.report(out)
    if not rep:
        return
    t.eq(f"{what}: step markers in the trace", steps, rep["process"]["steps"])
    t.check_site_numbers(rep, "keep_block", dict(allocs=3, live_bytes=kept), what=f"{what}: ")


for what, cmd, line in (("pie", [pie], "active"), ("nopie", [nopie], "active"),
                        ("static", [static], "active"),
                        ("dlsym", [nopie, "dlsym"], "dlsym: active"),
                        ("dlopen", [pie, "dlopen", lib], "library: active")):
    plain = t.run(cmd)
    t.eq(f"{what} without the probe", (0, f"{line} 0\n"), (plain.returncode, plain.stdout.decode()))

r, out = probed("pie", [pie])
t.eq("pie under the probe: the calls reach it", "active 1\n", r.stdout.decode())
check_trace("pie", out, 3, 3000)

r, out = probed("dlopen", [pie, "dlopen", lib])
t.eq("dlopen'ed library: its calls reach the probe", "library: active 1\n", r.stdout.decode())
check_trace("dlopen", out, 3, 3000)

r, out = probed("nopie", [nopie])
t.eq("non-PIE: the calls stay no-ops under the probe", "active 0\n", r.stdout.decode())
check_trace("nopie", out, 0, 3000)

r, out = probed("dlsym", [nopie, "dlsym"])
t.eq("non-PIE with dlsym: the calls reach the probe", "dlsym: active 1\n", r.stdout.decode())
check_trace("dlsym", out, 3, 3000)

r, out = probed("static", [static])
t.eq("static: runs unchanged", "active 0\n", r.stdout.decode())
t.eq("static: no trace", False, os.path.exists(out))
lines = probe_lines(r.stderr)
t.eq("static: one mgprobe line", 1, len(lines))
t.true("static: it says why", lines and "statically linked" in lines[0], lines)
t.done()
