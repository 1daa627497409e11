# SPDX-License-Identifier: MIT
# Issue 13.4, 13.14, 13.15: the probe's own output files.
# - MGPROBE_OUTPUT naming a symlink is refused (plain LD_PRELOAD truncated its target), as is a FIFO
#   (opening it for writing would wait for a reader forever); the program runs on, unprofiled, with
#   one line, and the symlink's target is untouched.
# - Traces are 0600 (they hold command lines), also when an existing file is overwritten.
# - `mgprobe run` without -o lists the traces of this run only: its process and its descendants'
#   (not another run's in the same directory, not 2,000 planted symlinks).
import os
import re
import stat
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "probe"))
from probetest import Test, probe_lines  # noqa: E402

t = Test("planted-output", 0)
sh = "/bin/sh"
plain = t.run([sh, "-c", "echo out; echo err >&2; exit 5"])
prog = [sh, "-c", "echo out; echo err >&2; exit 5"]

# ---- MGPROBE_OUTPUT planted ----
victim = t.path("victim")
with open(victim, "w") as f:
    f.write("precious\n")
os.symlink(victim, t.path("link.mgt"))
os.mkfifo(t.path("fifo.mgt"))
for what, base in {"a symlink": "link", "a FIFO": "fifo"}.items():
    r = t.preload(prog, {"MGPROBE_OUTPUT": t.path(base), "MGPROBE_NO_CHILDREN": "1"}, timeout=20)
    t.same_run(f"MGPROBE_OUTPUT is {what}", plain, r)
    lines = probe_lines(r.stderr)
    t.eq(f"MGPROBE_OUTPUT is {what}: one line", 1, len(lines))
    t.true(f"MGPROBE_OUTPUT is {what}: the line says it is refused",
           lines and "refused" in lines[0] and t.path(base) in lines[0], lines)
with open(victim, "rb") as f:
    t.eq("the symlink's target is untouched", b"precious\n", f.read())
t.eq("the symlink is still a symlink", True, os.path.islink(t.path("link.mgt")))
r = t.run([t.mgprobe, "run", "-o", t.path("link.mgt"), "--", *prog])
t.eq("mgprobe run -o a symlink: refused (exit 2)", 2, r.returncode)

# ---- modes ----
old = os.umask(0o022)
try:
    out = t.path("new")
    t.preload(prog, {"MGPROBE_OUTPUT": out})
    t.eq("a new trace (LD_PRELOAD) is 0600", "0o600",
         oct(stat.S_IMODE(os.stat(out + ".mgt").st_mode)))
    exist = t.path("exist")
    with open(exist + ".mgt", "w") as f:
        f.write("old")
    os.chmod(exist + ".mgt", 0o644)
    t.preload(prog, {"MGPROBE_OUTPUT": exist})
    t.eq("an overwritten trace is 0600", "0o600",
         oct(stat.S_IMODE(os.stat(exist + ".mgt").st_mode)))
    t.true("the overwritten trace is a trace", open(exist + ".mgt", "rb").read(8) == b"MGTRACE\0")
    sub = t.path("modes")
    os.mkdir(sub)
    t.run([t.mgprobe, "run", "-o", os.path.join(sub, "run.mgt"), "--", sh, "-c",
           "/bin/true; /bin/true"])
    files = sorted(os.listdir(sub))
    t.true("mgprobe run -o: the run and a child", len(files) >= 2, files)
    t.eq("mgprobe run -o: every trace is 0600", [],
         [f for f in files if stat.S_IMODE(os.stat(os.path.join(sub, f)).st_mode) != 0o600])
finally:
    os.umask(old)

# ---- what `mgprobe run` lists ----
d = t.path("listing")
os.mkdir(d)
fresh = t.path("fresh")  # a file changed during the run: symlinks to it look new
open(fresh, "w").close()
for i in range(2000):
    os.symlink(fresh, os.path.join(d, f"mgprobe.evil.{100000 + i}.mgt"))
# An earlier run's trace, made fresh, and a run going on beside ours in the same directory.
t.run([t.mgprobe, "run", "--", "/bin/true"], cwd=d)
for f in os.listdir(d):
    if f.startswith("mgprobe.true."):
        os.utime(os.path.join(d, f))
env = dict(os.environ, LD_PRELOAD=t.lib, MGPROBE_DIR=d)
beside = subprocess.Popen(["sleep", "3"], env=env)
time.sleep(0.3)
before = set(os.listdir(d))
r = t.run([t.mgprobe, "run", "--", sh, "-c", "/bin/true; sh -c 'exit 0' & wait; echo done"], cwd=d)
beside.wait()
after = set(os.listdir(d))
t.eq("listing: the run's own exit status", 0, r.returncode)
besides = {f for f in after if f.startswith(f"mgprobe.sleep.{beside.pid}.")}
t.eq("listing: the run beside ours wrote its trace", 1, len(besides))
mine = sorted(os.path.join(d, f) for f in after - before - besides)
listed = sorted(re.sub(r"^mgprobe: (child )?trace written to ", "", l)
                for l in probe_lines(r.stderr))
t.true("listing: the run made a trace per process (sh, true, the subshell, its sh)",
       len(mine) >= 4, mine)
t.eq("listing: exactly this run's traces", mine, listed)
t.done()
