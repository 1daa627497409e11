# SPDX-License-Identifier: MIT
# Real programs (python3, git, sort, perl) print the same and exit the same under the probe as
# without it, and their traces read back. Python also drives the step API through ctypes and
# spawns a child; git works in a fresh repository with fixed dates so its output is reproducible.
import os
import shutil
import sys

from probetest import Test

t = Test("real-programs", 0)
python = os.path.realpath(sys.executable)
env = dict(os.environ, HOME=t.dir, GIT_CONFIG_NOSYSTEM="1", LC_ALL="C", TZ="UTC",
           GIT_AUTHOR_NAME="A", GIT_AUTHOR_EMAIL="a@example.org",
           GIT_AUTHOR_DATE="2024-01-01T00:00:00Z", GIT_COMMITTER_NAME="A",
           GIT_COMMITTER_EMAIL="a@example.org", GIT_COMMITTER_DATE="2024-01-01T00:00:00Z")
n = [0]


def compare(what, cmd, input=None, cwd=None, min_sites=1, reset=None):
    """Runs cmd plainly and under the probe (reset() first, if given, restores the state the
    command changes); checks the outputs and reads the trace back. Returns the report."""
    if reset:
        reset()
    plain = t.run(cmd, env=env, input=input, cwd=cwd)
    if reset:
        reset()
    n[0] += 1
    out = t.path(f"real{n[0]}.mgt")
    r = t.probe(cmd, out, env=env, input=input, cwd=cwd)
    t.same_run(what, plain, r)
    rep = t.report(out, top=5)
    if rep:
        t.eq(f"{what}: trace ended", True, rep["process"]["ended"])
        t.true(f"{what}: trace has sites", rep["sites_total"] >= min_sites,
               f"sites_total {rep['sites_total']}")
    return rep


# ---- python ----
compare("python3 -c (dicts, json, hashlib)", [python, "-c", (
    "import json, hashlib\n"
    "d = {str(i): [i] * i for i in range(400)}\n"
    "s = json.dumps(d, sort_keys=True)\n"
    "print(len(s), hashlib.sha256(s.encode()).hexdigest())\n")])
step_script = (
    "import ctypes, threading\n"
    "step = getattr(ctypes.CDLL(None), 'mgprobe_step', None)\n"
    "keep = []\n"
    "for s in range(1, 4):\n"
    "    if step: step(ctypes.c_uint64(s))\n"
    "    keep.append(bytearray(100000 * s))\n"
    "th = [threading.Thread(target=lambda: keep.append([0] * 50000)) for _ in range(4)]\n"
    "[x.start() for x in th]; [x.join() for x in th]\n"
    "print(len(keep), sum(len(k) for k in keep))\n")
rep = compare("python3 step API through ctypes, threads", [python, "-c", step_script])
if rep:
    t.eq("python3 step API: steps recorded", 3, rep["process"]["steps"])
    t.eq("python3 step API: x axis", "step", rep["x_axis"])
compare("python3 subprocess (vfork/exec of sort)", [python, "-c", (
    "import subprocess\n"
    "r = subprocess.run(['sort'], input=b'b\\na\\nc\\n', capture_output=True)\n"
    "print(r.returncode, r.stdout)\n")])
compare("python3 exit status and stderr", [python, "-c",
                                           "import sys; print('out'); sys.exit('bye')"])

# ---- git ----
git = shutil.which("git")
if git:
    compare("git --version", [git, "--version"])
    repo = t.path("repo")
    os.mkdir(repo)

    def fresh_repo():
        shutil.rmtree(repo)
        os.mkdir(repo)

    compare("git init", [git, "init", "-q", "-b", "main", repo], reset=fresh_repo)
    for i in range(20):
        with open(os.path.join(repo, f"f{i}.txt"), "w") as f:
            f.write("line %d\n" % i * (i + 1))
    compare("git add", [git, "add", "-A"], cwd=repo,
            reset=lambda: os.path.exists(os.path.join(repo, ".git", "index")) and
            os.unlink(os.path.join(repo, ".git", "index")))
    t.run([git, "add", "-A"], env=env, cwd=repo)
    t.run([git, "commit", "-q", "-m", "first"], env=env, cwd=repo)
    with open(os.path.join(repo, "f3.txt"), "a") as f:
        f.write("changed\n")
    compare("git log", [git, "log", "--format=%H %an %s"], cwd=repo)
    compare("git status", [git, "status", "--short"], cwd=repo)
    compare("git diff", [git, "diff", "--stat"], cwd=repo)
    compare("git rev-list of a bad ref (exit 128)", [git, "rev-list", "nosuchref"], cwd=repo,
            min_sites=0)
else:
    t.skip("git", "not installed")

# ---- sort ----
lines = b"".join(b"%d %s\n" % ((i * 7919) % 10007, b"x" * (i % 37)) for i in range(20000))
sort = shutil.which("sort")
if sort:
    compare("sort -n", [sort, "-n"], input=lines)
    compare("sort with small buffer and temp files, 2 threads",
            [sort, "-S", "64K", "--parallel=2", "-T", t.dir, "-k2,2", "-k1,1n"], input=lines)
    compare("sort missing file (exit 2)", [sort, "/nonexistent/file"], min_sites=0)
else:
    t.skip("sort", "not installed")

# ---- perl ----
perl = shutil.which("perl")
if perl:
    compare("perl -e", [perl, "-e", (
        'my %h; $h{$_} = "x" x $_ for 1..3000; my @k = sort { $a <=> $b } keys %h;'
        'print scalar(@k), " ", length(join "", values %h), "\\n"; warn "to stderr\\n"; exit 4')])
else:
    t.skip("perl", "not installed")
t.done()
