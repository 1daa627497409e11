# SPDX-License-Identifier: MIT
# Children made by posix_spawn/posix_spawnp are listed in the parent's trace (and their exec'd
# programs traced in their own files); a forked child that calls execl closes its pre-exec trace
# with an end record (the execl family goes through the probe's exec hooks).
import os
import re

from probetest import Test

t = Test("spawn", 1)
prog = t.progs[0]
plain = t.run([prog])
out = t.path("sp.mgt")
r = t.probe([prog], out)
t.eq("posix_spawn + execl: exit status", plain.returncode, r.returncode)
# the pids differ between runs, and the parent and the exec'd child print in either order
mask = lambda b: sorted(re.sub(r"\d+", "N", b.decode()).splitlines())
t.eq("posix_spawn + execl: stdout, pids aside", mask(plain.stdout), mask(r.stdout))
words = {l.split()[0]: l.split()[1:] for l in r.stdout.decode().splitlines()}
spawned = [int(x) for x in words["spawned"]]
forked = int(words["forked"][0])
doc = t.report(out)
kids = doc["process"]["children"]
t.eq("parent lists both spawned children and the forked one", sorted(spawned + [forked]), sorted(kids))
files = os.listdir(t.dir)
t.true("each spawned child (true) wrote its own trace",
       all(any(f.endswith(".%d.mgt" % p) for f in files) for p in spawned), files)
# The forked child writes two files under one pid: before the exec (its command line is the
# parent's) and after it (the exec'd image's, with the "child" argument). Both must end cleanly:
# the pre-exec one only does if execl went through the probe's exec hook.
mine = sorted(f for f in files if re.search(r"\.%d(\.\d+)?\.mgt$" % forked, f))
t.eq("the forked child wrote a trace before and one after its exec", 2, len(mine))
docs = [t.report(os.path.join(t.dir, f)) for f in mine]
pre = [d for d in docs if not d["process"]["command"].endswith(" child")]
post = [d for d in docs if d["process"]["command"].endswith(" child")]
t.eq("one pre-exec trace and one of the exec'd image", (1, 1), (len(pre), len(post)))
for what, group in (("pre-exec", pre), ("exec'd image", post)):
    for d in group:
        t.true(f"{what} trace ended cleanly", d["process"]["ended"], d["process"])
t.done()
