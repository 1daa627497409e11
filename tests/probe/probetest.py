# SPDX-License-Identifier: MIT
# probetest.py: what every probe test driver shares: running a program plainly and under the real
# probe, reading a trace back through `mgreport --json`, finding sites by function, and checks that
# print the expected and the actual value and keep going, so one run shows every failure.
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "report"))
import reportlib  # noqa: E402


class Test:
    """A driver's context: tool paths from argv, a private temporary directory, failures so far.

    argv: driver.py MGPROBE MGREPORT LIBMGPROBE [PROGRAMS...]"""

    def __init__(self, name, nprogs=0):
        if len(sys.argv) < 4 + nprogs:
            print(f"usage: {sys.argv[0]} MGPROBE MGREPORT LIBMGPROBE" + " PROG" * nprogs)
            sys.exit(2)
        self.name = name
        self.mgprobe, self.mgreport, self.lib = map(os.path.abspath, sys.argv[1:4])
        self.progs = [os.path.abspath(p) for p in sys.argv[4:]]
        self.failures = 0
        self.checks = 0
        self.skipped = []  # parts that could not run here (skip())
        self.dir = tempfile.mkdtemp(prefix=f"mgprobe-test-{name}-")
        self.page = os.sysconf("SC_PAGE_SIZE")

    # ---- running ----

    def run(self, cmd, env=None, timeout=60, input=None, cwd=None, extra_env=None):
        """Runs cmd; returns CompletedProcess with bytes stdout/stderr. A timeout is a failure
        (a deadlock under the probe), reported and turned into returncode None."""
        e = dict(os.environ if env is None else env)
        for k in list(e):
            if k.startswith("MGPROBE_") or k == "LD_PRELOAD":
                del e[k]
        if extra_env:
            e.update(extra_env)
        try:
            return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=e,
                                  timeout=timeout, input=input, cwd=cwd or self.dir)
        except subprocess.TimeoutExpired as ex:
            self.fail(f"{' '.join(map(str, cmd))}: no exit within {timeout} s (deadlock?)")
            return subprocess.CompletedProcess(cmd, None, ex.stdout or b"", ex.stderr or b"")

    def probe(self, cmd, out, opts=(), **kw):
        """Runs cmd under `mgprobe run -o out opts -- cmd`."""
        return self.run([self.mgprobe, "run", "-o", out, *opts, "--", *cmd], **kw)

    def preload(self, cmd, extra_env, **kw):
        """Runs cmd with plain LD_PRELOAD=libmgprobe.so and the given MGPROBE_* variables."""
        env = {"LD_PRELOAD": self.lib}
        env.update(extra_env)
        return self.run(cmd, extra_env=env, **kw)

    def path(self, name):
        return os.path.join(self.dir, name)

    @staticmethod
    def source(name):
        """A file beside the drivers (the test programs' sources)."""
        return os.path.join(os.path.dirname(os.path.abspath(__file__)), name)

    def plain_and_probed(self, what, cmd, trace_name, opts=()):
        """Runs cmd plainly and under the probe into trace_name, checks the runs are the same
        and returns the trace's report (None on failure)."""
        plain = self.run(cmd)
        out = self.path(trace_name)
        self.same_run(what, plain, self.probe(cmd, out, opts))
        return self.report(out)

    # ---- reading traces ----

    def report(self, trace, top=0):
        """mgreport --json of one trace; a failure (and None) unless it exits 0 with JSON."""
        r = subprocess.run([self.mgreport, trace, "--json", "--top", str(top)],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
        if r.returncode != 0:
            self.fail(f"mgreport {trace}: exit {r.returncode}, expected 0; stderr: "
                      f"{r.stderr.decode(errors='replace').strip()}")
            return None
        try:
            return reportlib.with_frames(json.loads(r.stdout))  # flat sites past 1000 too
        except ValueError as ex:
            self.fail(f"mgreport {trace}: output is not JSON ({ex})")
            return None

    @staticmethod
    def overhead(path):
        """The OVERHEAD record of an uncompressed trace (MGPROBE_COMPRESS=0): mapped, peak_mapped,
        live entries, live table bytes, sites, sites_high, nodes, nodes_high, threads, retired;
        None if it has none."""
        with open(path, "rb") as f:
            data = f.read()
        off = struct.unpack_from("<I", data, 12)[0]  # the file header's size
        while off + 16 <= len(data):
            typ, n = struct.unpack_from("<II", data, off)
            if typ == 20:  # MGC_REC_OVERHEAD
                return struct.unpack_from("<QQQQIIIIII", data, off + 16)
            off += 16 + (n + 7) // 8 * 8
        return None

    @staticmethod
    def sites_in(rep, function, kind=None):
        """Sites whose innermost frame is `function` (and of `kind` if given)."""
        out = []
        for s in rep["sites"] if rep else []:
            if kind and s["kind"] != kind:
                continue
            if s["frames"] and s["frames"][0]["function"] == function:
                out.append(s)
        return out

    @staticmethod
    def sites_through(rep, function):
        """Sites whose stack contains `function` anywhere."""
        return [s for s in (rep["sites"] if rep else [])
                if any(f["function"] == function for f in s["frames"])]

    @staticmethod
    def totals(sites):
        keys = ("allocs", "frees", "live_bytes", "live_count", "alloc_bytes", "peak_bytes")
        return {k: sum(s[k] for s in sites) for k in keys}

    def check_site_numbers(self, rep, function, expect, kind=None, what=""):
        """Sums the sites whose innermost frame is `function` and checks each expected counter."""
        sites = self.sites_in(rep, function, kind)
        label = f"{what}{function}" + (f" [{kind}]" if kind else "")
        if not sites:
            have = sorted({s["frames"][0]["function"] for s in (rep["sites"] if rep else [])
                           if s["frames"]})
            self.fail(f"{label}: no site whose frames[0].function is {function!r}; "
                      f"innermost functions present: {have[:40]}")
            return None
        t = self.totals(sites)
        for k, v in expect.items():
            self.eq(f"{label}: {k}", v, t[k])
        return sites

    # ---- checks ----

    def fail(self, msg):
        self.failures += 1
        print(f"FAIL {self.name}: {msg}", flush=True)

    def eq(self, what, expected, actual):
        self.checks += 1
        if expected != actual:
            self.fail(f"{what}: expected {expected!r}, got {actual!r}")
            return False
        return True

    def true(self, what, cond, detail=""):
        self.checks += 1
        if not cond:
            self.fail(f"{what}" + (f" ({detail})" if detail else ""))
            return False
        return True

    def same_run(self, what, plain, probed, stderr=True):
        """The target's stdout, stderr (less the probe's own `mgprobe:` lines) and exit status
        under the probe are those of the plain run."""
        self.eq(f"{what}: exit status", plain.returncode, probed.returncode)
        self.eq(f"{what}: stdout", plain.stdout.decode(errors="replace"),
                probed.stdout.decode(errors="replace"))
        if stderr:
            self.eq(f"{what}: stderr without mgprobe lines",
                    plain.stderr.decode(errors="replace"),
                    strip_probe_lines(probed.stderr).decode(errors="replace"))

    def skip(self, part, why):
        """Says that a part of the test cannot run here (`why`: what is missing). The rest goes
        on; done() then exits 77 (skipped) rather than 0, so a partial run never reads as a pass."""
        self.skipped.append(f"{part} ({why})")
        print(f"SKIP {self.name}: {part}: {why}", flush=True)

    def skip_all(self, why):
        """Nothing can run here (no GPU, say): prints why, removes the directory, exits 77."""
        print(why)
        shutil.rmtree(self.dir, ignore_errors=True)
        sys.exit(77)

    def done(self):
        """Exits: 1 when a check failed or none ran, 77 when a part was skipped, else 0."""
        if self.failures:
            print(f"{self.name}: {self.failures} of {self.checks} checks failed; files kept in "
                  f"{self.dir}")
            sys.exit(1)
        if self.checks == 0:
            print(f"{self.name}: no check ran: nothing was tested; files kept in {self.dir}")
            sys.exit(1)
        if not os.environ.get("MG_TEST_KEEP"):  # tests/cupti/gpu_session.sh keeps them
            shutil.rmtree(self.dir, ignore_errors=True)
        if self.skipped:
            print(f"{self.name}: all {self.checks} checks passed, but skipped: "
                  f"{'; '.join(self.skipped)}")
            sys.exit(77)
        print(f"{self.name}: all {self.checks} checks passed")
        sys.exit(0)


def strip_probe_lines(err):
    return b"".join(l for l in err.splitlines(keepends=True) if not l.startswith(b"mgprobe:"))


def probe_lines(err):
    return [l for l in err.decode(errors="replace").splitlines() if l.startswith("mgprobe:")]


def marker_line(source, marker):
    """Line number (1-based) of the line in `source` that holds `marker`."""
    with open(source, encoding="utf-8") as f:
        for i, line in enumerate(f, 1):
            if marker in line:
                return i
    raise ValueError(f"{marker} not in {source}")
