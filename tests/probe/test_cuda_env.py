# SPDX-License-Identifier: MIT
# test_cuda_env.py: how the probe gets into CUDA programs, checked without a GPU. `mgprobe run`
# points CUDA_INJECTION64_PATH at the probe (when built with CUPTI) unless the user set it, `none`
# included, and never with --no-cuda; a program that never calls cuInit never loads libcupti; and
# InitializeInjection (what the driver calls at cuInit) returns 1 twice, with one line on stderr
# when CUPTI cannot trace, and host profiling goes on in the same trace.
import os
import sys

from probetest import Test, probe_lines

t = Test("cuda-env")
SHOW = ["/bin/sh", "-c", 'printf "[%s]\\n" "$CUDA_INJECTION64_PATH"']

# Built with CUPTI? The probe exports InitializeInjection only then (asked under the probe itself).
ASK = "import ctypes; print(hasattr(ctypes.CDLL(None), 'InitializeInjection'))"
r = t.probe([sys.executable, "-c", ASK], t.path("ask.mgt"))
t.eq("asking the probe: exit status", 0, r.returncode)
cupti = r.stdout.decode().strip() == "True"

r = t.probe(SHOW, t.path("env.mgt"))
t.eq("mgprobe run: CUDA_INJECTION64_PATH names the probe" if cupti else
     "mgprobe run without CUPTI: CUDA_INJECTION64_PATH unset",
     "[%s]" % (t.lib if cupti else ""), r.stdout.decode().strip())
r = t.probe(SHOW, t.path("none.mgt"), extra_env={"CUDA_INJECTION64_PATH": "none"})
t.eq("a user's CUDA_INJECTION64_PATH=none is kept", "[none]", r.stdout.decode().strip())
r = t.probe(SHOW, t.path("other.mgt"), extra_env={"CUDA_INJECTION64_PATH": "/opt/nsys/libinj.so"})
t.eq("a user's own injection library is kept", "[/opt/nsys/libinj.so]", r.stdout.decode().strip())
r = t.probe(SHOW, t.path("nocuda.mgt"), opts=["--no-cuda"])
t.eq("--no-cuda: CUDA_INJECTION64_PATH unset", "[]", r.stdout.decode().strip())

# A program that never calls cuInit never loads CUPTI (or the driver).
r = t.probe(["/bin/cat", "/proc/self/maps"], t.path("maps.mgt"))
maps = r.stdout.decode(errors="replace")
t.true("cat under the probe ran (the probe is mapped)", "libmgprobe" in maps, maps[:300])
t.eq("no libcupti or libcuda in a program that never calls cuInit", [],
     sorted({l.split()[-1] for l in maps.splitlines() if "libcupti" in l or "libcuda" in l}))

if cupti:
    # What the driver does at cuInit, done by hand: twice, as a second cuInit would.
    PROG = ("import ctypes\n"
            "h = ctypes.CDLL(None)\n"
            "a = h.InitializeInjection(); b = h.InitializeInjection()\n"
            "keep = [bytearray(1 << 20) for _ in range(8)]\n"
            "print(a, b)\n")
    out = t.path("inject.mgt")
    r = t.probe([sys.executable, "-c", PROG], out)
    t.eq("InitializeInjection: exit status", 0, r.returncode)
    t.eq("InitializeInjection returns 1, twice", "1 1", r.stdout.decode().strip())
    if not os.path.exists("/dev/nvidiactl"):
        lines = [l for l in probe_lines(r.stderr) if "CUDA" in l]
        t.true("without a driver: one line, CUDA not traced, host profiling goes on",
               len(lines) == 1 and "CUDA memory is not traced" in lines[0]
               and "host profiling goes on" in lines[0], lines)
    rep = t.report(out)
    big = [s for s in (rep or {}).get("sites", []) if s["kind"] == "heap" and s["alloc_bytes"] >= 8 << 20]
    t.true("the host trace goes on: the eight 1 MiB buffers made after it are recorded", big,
           sorted((s["alloc_bytes"], s["kind"]) for s in (rep or {}).get("sites", []))[-5:])
t.done()
