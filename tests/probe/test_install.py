# SPDX-License-Identifier: MIT
# After `meson install` (into a scratch DESTDIR), the installed mgprobe finds the installed
# libmgprobe.so on its own, traces a program, and the installed mgreport reads the trace.
# usage: test_install.py MESON BUILD_ROOT
import json
import os
import shutil
import subprocess
import sys
import tempfile

meson, build = sys.argv[1:3]
dest = tempfile.mkdtemp(prefix="mg-install.")
failures = 0


def check(cond, what, detail=""):
    global failures
    print(("ok   " if cond else "FAIL ") + what + ("" if cond else "\n     " + str(detail)))
    failures += 0 if cond else 1


r = subprocess.run([meson, "install", "-C", build, "--destdir", dest, "--no-rebuild", "--quiet"],
                   capture_output=True, text=True)
check(r.returncode == 0, "meson install into a DESTDIR", r.stderr[-500:])
found = {}
for root, _dirs, names in os.walk(dest):
    for n in names:
        if n in ("mgprobe", "mgreport", "libmgprobe.so"):
            found[n] = os.path.join(root, n)
check(set(found) == {"mgprobe", "mgreport", "libmgprobe.so"}, "installed mgprobe, mgreport, libmgprobe.so",
      found)
if set(found) == {"mgprobe", "mgreport", "libmgprobe.so"}:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MGPROBE_") and k != "LD_PRELOAD"}
    trace = os.path.join(dest, "t.mgt")
    r = subprocess.run([found["mgprobe"], "run", "-o", trace, "--", "sh", "-c", "echo hi; exit 5"],
                       capture_output=True, text=True, env=env, cwd=dest)
    check(r.returncode == 5 and r.stdout == "hi\n", "installed mgprobe: output and exit status unchanged",
          (r.returncode, r.stdout, r.stderr))
    check("trace written to " + trace in r.stderr, "installed mgprobe found its library and says where",
          r.stderr)
    r = subprocess.run([found["mgreport"], "--json", trace], capture_output=True, text=True)
    ok = r.returncode == 0 and json.loads(r.stdout)["process"]["ended"] is True
    check(ok, "installed mgreport reads the trace", (r.returncode, r.stderr))
shutil.rmtree(dest, ignore_errors=True)
print("%d failed" % failures)
sys.exit(1 if failures else 0)
