# SPDX-License-Identifier: MIT
# Unwritable output: with the trace path in a missing directory, a read-only directory, or under a
# regular file, the program's stdout, stderr and exit status are those of a plain run; the probe
# adds one `mgprobe:` line naming the problem (plain LD_PRELOAD), and writes no file.
import os
import stat
import subprocess

from probetest import Test, probe_lines, strip_probe_lines

t = Test("unwritable", 1)
prog = t.progs[0]

plain = t.run([prog])
t.eq("plain run: exit status", 3, plain.returncode)

# A read-only directory: as root permissions do not stop us, so fall back to sysfs.
ro = t.path("ro")
os.mkdir(ro)
os.chmod(ro, stat.S_IRUSR | stat.S_IXUSR)
try:
    open(os.path.join(ro, "probe"), "w").close()
    os.unlink(os.path.join(ro, "probe"))
    ro = "/sys/kernel" if os.path.isdir("/sys/kernel") and not os.access("/sys/kernel", os.W_OK) \
        else "/sys"
except OSError:
    pass

targets = {
    "missing directory": "/nonexistent/dir/x.mgt",
    "read-only directory": os.path.join(ro, "x.mgt"),
    "under a regular file": os.path.join(prog, "x.mgt"),
}
for what, out in targets.items():
    # Through the launcher: only mgprobe lines are added.
    r = t.probe([prog], out)
    t.same_run(f"mgprobe run, {what}", plain, r)
    t.true(f"mgprobe run, {what}: says so on stderr", len(probe_lines(r.stderr)) >= 1,
           r.stderr.decode(errors="replace"))
    t.eq(f"mgprobe run, {what}: no file", False, os.path.exists(out))
    # Plain LD_PRELOAD: exactly one line from the probe.
    r = t.preload([prog], {"MGPROBE_OUTPUT": out})
    t.same_run(f"LD_PRELOAD, {what}", plain, r)
    lines = probe_lines(r.stderr)
    t.eq(f"LD_PRELOAD, {what}: mgprobe lines", 1, len(lines))
    if lines:
        t.true(f"LD_PRELOAD, {what}: the line names the path", out[:-4] in lines[0], lines[0])
    # With a different exit status too.
    p7 = t.run([prog, "7"])
    r = t.preload([prog, "7"], {"MGPROBE_OUTPUT": out})
    t.same_run(f"LD_PRELOAD, {what}, exit 7", p7, r)

# Default naming in a directory we cannot write (MGPROBE_DIR).
r = t.preload([prog], {"MGPROBE_DIR": "/nonexistent/dir"})
t.same_run("MGPROBE_DIR missing", plain, r)
t.eq("MGPROBE_DIR missing: mgprobe lines", 1, len(probe_lines(r.stderr)))
# The stderr of the program itself still comes out in its own order.
t.eq("stderr order", plain.stderr, strip_probe_lines(r.stderr))
# A file-size limit (RLIMIT_FSIZE) smaller than the trace: the kernel answers the write past it
# with SIGXFSZ, which would kill the program; the probe takes it and stops recording instead.
out = t.path("limited.mgt")
r = t.run(["prlimit", "--fsize=2500", prog], extra_env={"LD_PRELOAD": t.lib, "MGPROBE_OUTPUT": out})
t.same_run("RLIMIT_FSIZE 2500 bytes", plain, r)
lines = probe_lines(r.stderr)
t.eq("RLIMIT_FSIZE: one line", 1, len(lines))
t.true("RLIMIT_FSIZE: it names the limit and that the trace stops at it", lines and
       lines[0].startswith("mgprobe: the file-size limit (2500 bytes, ulimit -f) ") and
       "the trace stops" in lines[0], lines)
t.true("RLIMIT_FSIZE: the file stops at the limit", os.path.getsize(out) <= 2500, os.path.getsize(out))

# A full disk: a one-page tmpfs (the trace needs more) (needs mount; skipped where it is not allowed).
small = t.path("small")
os.mkdir(small)
if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4k", "tmpfs", small],
                  capture_output=True).returncode == 0:
    try:
        # python3 loads enough modules for its trace to outgrow one page
        out = os.path.join(small, "full.mgt")
        py = ["python3", "-c", "import json, sys; print(json.dumps([1, 2])); sys.exit(4)"]
        r = t.preload(py, {"MGPROBE_OUTPUT": out})
        t.same_run("full disk", t.run(py), r)
        t.true("full disk: says so", any(b"No space left" in l for l in r.stderr.splitlines()),
               r.stderr.decode(errors="replace"))
        # What was written before the disk filled reads back.
        rr = subprocess.run([t.mgreport, out, "--json"], capture_output=True)
        t.eq("full disk: the partial trace reads back", 0, rr.returncode)
    finally:
        subprocess.run(["umount", small], capture_output=True)
else:
    t.skip("full disk", "cannot mount a tmpfs here")
t.done()
