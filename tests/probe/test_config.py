# SPDX-License-Identifier: MIT
# Configuration: bad MGPROBE_* settings give one `mgprobe:` line naming the problem and the program
# runs unchanged and unprofiled; the launcher's --help, --version, bad options and exit statuses.
import os
import re

from probetest import Test, probe_lines

t = Test("config", 1)
prog = t.progs[0]
plain = t.run([prog])
t.eq("plain run: exit status", 3, plain.returncode)

bad_env = {
    "MGPROBE_DEPTH=abc": ({"MGPROBE_DEPTH": "abc"}, "MGPROBE_DEPTH"),
    "MGPROBE_DEPTH=0": ({"MGPROBE_DEPTH": "0"}, "MGPROBE_DEPTH"),
    "MGPROBE_DEPTH=100000": ({"MGPROBE_DEPTH": "100000"}, "MGPROBE_DEPTH"),
    "MGPROBE_INTERVAL=-5": ({"MGPROBE_INTERVAL": "-5"}, "MGPROBE_INTERVAL"),
    "MGPROBE_INTERVAL=": ({"MGPROBE_INTERVAL": ""}, "MGPROBE_INTERVAL"),
    "MGPROBE_MAX_SITES=1": ({"MGPROBE_MAX_SITES": "1"}, "MGPROBE_MAX_SITES"),
    "MGPROBE_BOGUS=1": ({"MGPROBE_BOGUS": "1"}, "MGPROBE_BOGUS"),
}
for what, (env, name) in bad_env.items():
    env = dict(env, MGPROBE_DIR=t.dir)
    r = t.preload([prog], env)
    t.same_run(what, plain, r)
    lines = probe_lines(r.stderr)
    t.eq(f"{what}: mgprobe lines", 1, len(lines))
    if lines:
        t.true(f"{what}: the line names {name}", name in lines[0], lines[0])
    left = [f for f in os.listdir(t.dir) if f.endswith(".mgt")]
    t.eq(f"{what}: no trace written", [], left)
    for f in left:
        os.unlink(os.path.join(t.dir, f))

# The unknown-setting line lists every setting: each "MGPROBE_*" string the probe and its launcher
# read or set (found in their sources, so a new variable cannot be left out of the table).
src_dir = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "libmgprobe")
used = set()
for name in os.listdir(src_dir):
    if name.endswith((".c", ".h")):
        with open(os.path.join(src_dir, name), encoding="utf-8") as f:
            used |= set(re.findall(r'"(MGPROBE_[A-Z_]+)"', f.read()))
t.true("the sources name at least the documented settings",
       {"MGPROBE_OUTPUT", "MGPROBE_DIR", "MGPROBE_INTERVAL", "MGPROBE_DEPTH", "MGPROBE_NO_CHILDREN",
        "MGPROBE_MAX_SITES", "MGPROBE_OUTPUT_PID", "MGPROBE_LIB"} <= used, sorted(used))
r = t.preload([prog], {"MGPROBE_DIR": t.dir, "MGPROBE_BOGUS": "1"})
lines = probe_lines(r.stderr)
known = []
if lines and "known:" in lines[0]:
    known = re.findall(r"MGPROBE_[A-Z_]+", lines[0].split("known:", 1)[1])
for name in sorted(used):
    t.true(f"MGPROBE_BOGUS: the line names {name} among the known settings", name in known,
           lines[0] if lines else "no line")
r = t.run([t.mgprobe, "--help"])
for name in sorted(used):
    t.true(f"--help names {name}", name.encode() in r.stdout)

# Good settings: no line at all, and a trace.
r = t.preload([prog], {"MGPROBE_DIR": t.dir, "MGPROBE_DEPTH": "8", "MGPROBE_INTERVAL": "50"})
t.same_run("good MGPROBE_* settings", plain, r)
t.eq("good settings: mgprobe lines", [], probe_lines(r.stderr))
made = [f for f in os.listdir(t.dir) if f.endswith(".mgt")]
t.eq("good settings: one trace named mgprobe.<comm>.<pid>.mgt", 1, len(made))
if made:
    t.true("good settings: trace name", re.fullmatch(r"mgprobe\.probe-noisy\.\d+\.mgt", made[0]),
           made[0])
    rep = t.report(os.path.join(t.dir, made[0]))
    if rep:
        deepest = max((len(s["frames"]) for s in rep["sites"]), default=0)
        t.true("MGPROBE_DEPTH=8: no stack deeper than 8 frames (inlined frames aside)",
               0 < deepest and all(len([f for f in s["frames"] if not f.get("inlined")]) <= 8
                                   for s in rep["sites"]), f"deepest {deepest}")
    os.unlink(os.path.join(t.dir, made[0]))

# ---- the launcher ----
r = t.run([t.mgprobe, "--help"])
t.eq("--help: exit status", 0, r.returncode)
t.true("--help: usage on stdout", b"usage: mgprobe run" in r.stdout, r.stdout[:200])
r = t.run([t.mgprobe, "--version"])
t.eq("--version: exit status", 0, r.returncode)
t.true("--version: 'mgprobe X.Y.Z'", re.fullmatch(rb"mgprobe \d+\.\d+\.\d+\S*\n", r.stdout),
       r.stdout)
with open(os.path.join(src_dir, "mgprobe.h"), encoding="utf-8") as f:
    header = dict(re.findall(r"#define MGPROBE_VERSION_(MAJOR|MINOR|PATCH) (\d+)", f.read()))
t.eq("mgprobe.h's version is mgprobe --version's",
     r.stdout.decode().split()[1] if r.stdout else None,
     ".".join(header.get(k, "?") for k in ("MAJOR", "MINOR", "PATCH")))
usage_errors = {
    "no arguments": [],
    "unknown command": ["frobnicate"],
    "unknown option": ["run", "--bogus", "--", prog],
    "run without a command": ["run"],
    "run -- with nothing after": ["run", "--"],
    "--depth 0": ["run", "--depth", "0", "--", prog],
    "--depth abc": ["run", "--depth", "abc", "--", prog],
    "--interval without a value": ["run", "--interval"],
    "-o without a file": ["run", "-o"],
    "empty -o": ["run", "-o", "", "--", prog],
}
for what, args in usage_errors.items():
    r = t.run([t.mgprobe, *args])
    t.eq(f"mgprobe {what}: exit status", 2, r.returncode)
    t.eq(f"mgprobe {what}: nothing on stdout", b"", r.stdout)
    t.true(f"mgprobe {what}: says why on stderr", r.stderr.startswith(b"mgprobe:") or
           b"usage:" in r.stderr, r.stderr[:200])
    t.eq(f"mgprobe {what}: the program did not run", b"", r.stdout)

r = t.run([t.mgprobe, "run", "-o", t.path("x.mgt"), "--", "/nonexistent/program"])
t.eq("mgprobe run of a missing program: exit status 127", 127, r.returncode)
r = t.run([t.mgprobe, "run", "-o", t.path("s.mgt"), "--", "sh", "-c", "exit 7"])
t.eq("mgprobe run: the program's exit status", 7, r.returncode)
r = t.run([t.mgprobe, "run", "-o", t.path("k.mgt"), "--", "sh", "-c", "kill -TERM $$"])
t.eq("mgprobe run: killed by SIGTERM gives 128+15", 143, r.returncode)
r = t.run([t.mgprobe, "run", "-o", t.path("n.mgt"), "--interval", "5", "--depth", "3",
           "--no-cuda", "--", prog, "0"])
t.eq("mgprobe run with every option: exit status", 0, r.returncode)
t.eq("mgprobe run: says where the trace went",
     [f"mgprobe: trace written to {t.path('n.mgt')}"], probe_lines(r.stderr))
# -o without .mgt gets it appended.
r = t.run([t.mgprobe, "run", "-o", t.path("noext"), "--", prog, "0"])
t.eq("-o without .mgt: file", True, os.path.exists(t.path("noext.mgt")))
t.done()
