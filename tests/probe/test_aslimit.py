# SPDX-License-Identifier: MIT
# The probe under an address-space limit (ulimit -v; issue 13, point 3): it maps its tables as
# they are needed, at most a sixteenth of the limit (MGP_OS_SHARE_DIV), so the program keeps the
# rest; when even its first tables do not fit it turns off with one line and the program runs.
import re
import resource
import subprocess

from probetest import Test, probe_lines

t = Test("aslimit", 1)
prog = t.progs[0]


def limited(kib, cmd, env=None):
    def lim():
        resource.setrlimit(resource.RLIMIT_AS, (kib * 1024, kib * 1024))
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, preexec_fn=lim,
                          env=env, timeout=60, cwd=t.dir)


def under(kib, args, trace):
    env = {"PATH": "/usr/bin:/bin", "LD_PRELOAD": t.lib, "MGPROBE_OUTPUT": t.path(trace)}
    return limited(kib, [prog] + args, env)


def number(r, pattern):
    m = re.search(pattern, r.stdout.decode(errors="replace"))
    return int(m.group(1)) if m else None


# The case: a 4 MiB malloc under 800,000 KiB.
r = under(800000, ["4mib"], "4mib.mgt")
t.eq("800,000 KiB: malloc(4 MiB) under the probe", b"4 MiB: ok\n", r.stdout)
t.eq("800,000 KiB: no probe line", [], probe_lines(r.stderr))
rep = t.report(t.path("4mib.mgt"))
t.true("800,000 KiB: the trace reads", rep is not None)

# What the probe maps itself, at 1,000,000 KiB: within its sixteenth.
plain = number(limited(1000000, [prog, "vmsize"]), r"vmsize (\d+) KiB")
probed = number(under(1000000, ["vmsize"], "vmsize.mgt"), r"vmsize (\d+) KiB")
print(f"aslimit: VmSize {plain} KiB plain, {probed} KiB under the probe")
t.true("1,000,000 KiB: the probe maps at most a sixteenth of the limit",
       plain and probed and 0 < probed - plain <= 1000000 // 16, (plain, probed))

# The largest malloc: the issue measured 973 MiB natively and 195 MiB under the probe. A failed
# malloc in a process with a second thread (the probe's sampler) makes glibc try a new 64 MiB
# arena, so the probe's share and that arena are what the program may lose.
plain = number(limited(1000000, [prog, "largest"]), r"largest (\d+) MiB")
probed = number(under(1000000, ["largest"], "largest.mgt"), r"largest (\d+) MiB")
print(f"aslimit: largest malloc {plain} MiB plain, {probed} MiB under the probe")
t.true("1,000,000 KiB: the largest malloc loses at most a sixteenth and one 64 MiB arena",
       plain and probed and plain - probed <= 1000000 // 16 // 1024 + 64, (plain, probed))

# Too small a limit for the probe's first tables: one line, and the program runs unprofiled.
r = under(40000, ["4mib"], "tiny.mgt")
t.eq("40,000 KiB: the program runs", b"4 MiB: ok\n", r.stdout)
lines = probe_lines(r.stderr)
t.eq("40,000 KiB: one probe line", 1, len(lines))
t.true("40,000 KiB: it says the limit leaves too little", lines and "ulimit -v" in lines[0], lines)
t.done()
