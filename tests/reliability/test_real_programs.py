# SPDX-License-Identifier: MIT
# Real programs print the same and exit the same under the probe as without it, and their traces
# read back: interpreters (Python with threads, subprocesses, multiprocessing and numpy; perl;
# bash), git, sqlite3, openssl, compressors (gzip, xz, bzip2, zstd) and tar, a parallel sort, a C
# build (make, gcc, as, ld), binutils and the text tools (awk, sed, grep, diff, find, sha256sum).
# Every one is installed by the README's commands; a missing one is a failure, not a skip. Inputs,
# dates and locales are fixed so each output is reproducible; each program runs in a second or two.
import os
import shutil
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "probe"))
from probetest import Test  # noqa: E402

t = Test("real-programs", 0)
python = os.path.realpath(sys.executable)
env = dict(os.environ, HOME=t.dir, GIT_CONFIG_NOSYSTEM="1", LC_ALL="C", TZ="UTC",
           GIT_AUTHOR_NAME="A", GIT_AUTHOR_EMAIL="a@example.org",
           GIT_AUTHOR_DATE="2024-01-01T00:00:00Z", GIT_COMMITTER_NAME="A",
           GIT_COMMITTER_EMAIL="a@example.org", GIT_COMMITTER_DATE="2024-01-01T00:00:00Z",
           OPENBLAS_NUM_THREADS="2")
n = [0]
programs = set()


def tool(name):
    """The installed program's path; a failure when the README's commands did not install it."""
    path = shutil.which(name, path="/usr/bin:/bin")
    t.true(f"{name} is installed (the README's commands install it)", path is not None)
    return path


def compare(what, cmd, input=None, cwd=None, min_sites=1, reset=None):
    """Runs cmd plainly and under the probe (reset() first, if given, restores the state the
    command changes); checks the outputs and reads the trace back. Returns the report."""
    if not cmd[0]:
        return None
    programs.add(os.path.basename(cmd[0]))
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


def sh(script, **kw):
    return compare(f"bash: {script[:40]}", [tool("bash"), "-c", script], **kw)


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
compare("python3 multiprocessing pool (fork)", [python, "-c", (
    "import multiprocessing as mp\n"
    "def sq(x): return sum(i * i for i in range(x))\n"
    "if __name__ == '__main__':\n"
    "    with mp.get_context('fork').Pool(2) as p: print(p.map(sq, range(0, 4000, 500)))\n")])
compare("python3 exit status and stderr", [python, "-c",
                                           "import sys; print('out'); sys.exit('bye')"])
compare("numpy (Debian's python3, OpenBLAS threads)", [tool("python3"), "-c", (
    "import numpy as np\n"
    "a = np.arange(250000, dtype=np.float64).reshape(500, 500) / 1e5\n"
    "print(round(float(a.sum()), 3), round(float(np.trace(a @ a.T)), 3), np.sort(a[7])[:3])\n")])

# ---- git ----
git = tool("git")
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

# ---- sort, text tools ----
lines = b"".join(b"%d %s\n" % ((i * 7919) % 10007, b"x" * (i % 37)) for i in range(20000))
data = t.path("lines.txt")
with open(data, "wb") as f:
    f.write(lines)
sort = tool("sort")
compare("sort -n", [sort, "-n"], input=lines)
compare("sort with small buffer and temp files, 2 threads",
        [sort, "-S", "64K", "--parallel=2", "-T", t.dir, "-k2,2", "-k1,1n"], input=lines)
compare("sort missing file (exit 2)", [sort, "/nonexistent/file"], min_sites=0)
compare("awk sums", [tool("awk"), "{s += $1; n[length($2)]++} END {print s, length(n)}", data])
compare("sed", [tool("sed"), "-n", "s/^\\(1[0-9]*\\) x\\{30,\\}$/\\1/p", data])
compare("grep -c", [tool("grep"), "-c", "^99", data])
compare("grep, no match (exit 1)", [tool("grep"), "nomatch", data], min_sites=0)
compare("sha256sum", [tool("sha256sum"), data])
with open(t.path("lines2.txt"), "wb") as f:
    f.write(lines.replace(b"\n1", b"\n2", 50))
compare("diff -u (exit 1)", [tool("diff"), "-u", data, t.path("lines2.txt")])
compare("find | sort", [tool("bash"), "-c", f"find {t.dir}/repo -name 'f1*' | sort"])

# ---- perl, bash ----
compare("perl -e", [tool("perl"), "-e", (
    'my %h; $h{$_} = "x" x $_ for 1..3000; my @k = sort { $a <=> $b } keys %h;'
    'print scalar(@k), " ", length(join "", values %h), "\\n"; warn "to stderr\\n"; exit 4')])
sh("for i in $(seq 1 300); do a[$i]=$((i * i)); done; echo ${#a[@]} ${a[300]}; "
   "(echo sub >&2; exit 3); echo $?; echo a b c | tr a-z A-Z | cut -d' ' -f2; exit 6")

# ---- compressors, tar ----
for name, args in (("gzip", ["-9", "-n", "-c"]), ("xz", ["-6", "-c"]), ("bzip2", ["-9", "-c"]),
                   ("zstd", ["-q", "-19", "-c"])):
    prog = tool(name)
    compare(f"{name} compress", [prog, *args], input=lines, min_sites=0)  # gzip: static buffers
    if prog:
        packed = t.run([prog, *args], input=lines).stdout
        compare(f"{name} decompress", [prog, "-d", "-c"], input=packed)
        compare(f"{name} of garbage (exit 1 or 2)", [prog, "-d", "-c"], input=b"not packed",
                min_sites=0)
compare("tar create", [tool("tar"), "--sort=name", "--mtime=2024-01-01", "--owner=0", "--group=0",
                       "-cf", "-", "-C", t.dir, "lines.txt", "lines2.txt"])
compare("tar list of a compressed archive", [tool("bash"), "-c",
        f"tar --sort=name -czf - -C {t.dir} lines.txt | tar -tvzf - --utc"])

# ---- sqlite3, openssl ----
compare("sqlite3 in memory", [tool("sqlite3"), ":memory:"], input=(
    b"CREATE TABLE t(a INTEGER, b TEXT);\n"
    b"WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 20000)\n"
    b"INSERT INTO t SELECT x, printf('%08d', x * 7919 % 10007) FROM c;\n"
    b"CREATE INDEX tb ON t(b);\n"
    b"SELECT count(*), sum(a), min(b), max(b) FROM t;\n"
    b"SELECT b, count(*) FROM t GROUP BY substr(b, 1, 3) ORDER BY 2 DESC, 1 LIMIT 3;\n"))
compare("sqlite3 error (exit 1)", [tool("sqlite3"), ":memory:"], input=b"SELECT * FROM nope;\n",
        min_sites=0)
openssl = tool("openssl")
compare("openssl dgst", [openssl, "dgst", "-sha256", data])
compare("openssl enc", [openssl, "enc", "-aes-256-cbc", "-K", "00" * 32, "-iv", "11" * 16, "-in",
                        data, "-a"])

# ---- a C build: make, gcc (cc1, as, ld), binutils ----
build = t.path("cbuild")
os.mkdir(build)
with open(os.path.join(build, "hello.c"), "w") as f:
    f.write("#include <stdio.h>\n#include <stdlib.h>\n"
            "int main(void) { char *p = malloc(100); printf(\"hello %d\\n\", p != 0); "
            "free(p); return 3; }\n")
with open(os.path.join(build, "Makefile"), "w") as f:
    f.write("hello: hello.o\n\tgcc -o $@ $^\nhello.o: hello.c\n\tgcc -O2 -c -o $@ $<\n")


def clean():
    for f in ("hello", "hello.o"):
        if os.path.exists(os.path.join(build, f)):
            os.unlink(os.path.join(build, f))


compare("make + gcc", [tool("make"), "-C", build, "--no-print-directory"], reset=clean)
compare("the built program (exit 3)", [os.path.join(build, "hello")])
compare("gcc syntax error (exit 1)", [tool("gcc"), "-x", "c", "-c", "-o", "/dev/null", "-"],
        input=b"int main( { return }\n", min_sites=0)
compare("readelf -h", [tool("readelf"), "-h", os.path.join(build, "hello.o")])
compare("objdump -d", [tool("objdump"), "-d", os.path.join(build, "hello.o")])

t.true(f"at least 20 distinct programs ({len(programs)}: {sorted(programs)})", len(programs) >= 20)
t.done()
