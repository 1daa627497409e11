# SPDX-License-Identifier: MIT
# The probe at scale (issue 16): 1,000,000 blocks from 1,000,000 distinct stacks, and 1,000,000
# blocks from one stack, all live: exact site and byte counts, and the probe's own memory per
# stack and per block from its OVERHEAD record (docs/BENCHMARKS.md records the numbers).
from probetest import Test

t = Test("torture", 2)
prog, cuts = t.progs
res = {}
for mode, nsites in (("stacks", 1000000), ("blocks", 1)):
    out = t.path(mode + ".mgt")
    r = t.preload([prog, mode], {"MGPROBE_OUTPUT": out, "MGPROBE_COMPRESS": "0",
                                 "MGPROBE_MAX_SITES": "2097152"}, timeout=300)
    t.eq(f"{mode}: the program's output", b"1000000 blocks\n", r.stdout)
    w = t.run([cuts, out, "--whole"], timeout=300)
    fields = w.stdout.split()
    t.eq(f"{mode}: the trace loads and ended", [b"0", b"0", b"1"], [fields[i] for i in (0, 1, 4)]
         if len(fields) == 9 else w.stdout)
    if len(fields) == 9:
        t.eq(f"{mode}: sites", nsites, int(fields[7]))
        t.eq(f"{mode}: live bytes", 16000000, int(fields[8]))
    o = t.overhead(out)
    if t.true(f"{mode}: an OVERHEAD record", o is not None):
        t.eq(f"{mode}: the probe's live table holds every block", 1000000, o[2])
        res[mode] = o

if len(res) == 2:
    per_block = res["blocks"][1] / 1e6
    per_stack = (res["stacks"][1] - res["blocks"][1]) / 1e6
    print(f"torture: probe's peak mapped {res['blocks'][1] >> 20} MiB for 10^6 blocks of one stack, "
          f"{res['stacks'][1] >> 20} MiB for 10^6 blocks of 10^6 stacks ({res['stacks'][7]} frame "
          f"nodes): {per_block:.0f} bytes per block, {per_stack:.0f} per stack")
    t.true("torture: at most 64 bytes per live block", per_block <= 64, per_block)
    t.true("torture: at most 256 bytes per distinct stack", per_stack <= 256, per_stack)
t.done()
