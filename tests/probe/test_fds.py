# SPDX-License-Identifier: MIT
# Descriptors: a program that closes every descriptor and opens its own files (even copying one
# onto every number up to 1023) gets exactly its own bytes in them; the probe never writes its
# trace into a descriptor it no longer owns, and keeps tracing when its descriptor survives.
import os

from probetest import Test, probe_lines

t = Test("fds", 1)
prog = t.progs[0]
for mode in ("low", "all", "dup"):
    data = t.path(f"{mode}.txt")
    args = [prog, data, mode]
    plain = t.run(args)
    t.eq(f"{mode}: plain run: exit status", 0, plain.returncode)
    out = t.path(f"{mode}.mgt")
    r = t.probe(args, out)
    t.same_run(mode, plain, r)
    with open(data, "rb") as f:
        t.eq(f"{mode}: the program's file holds only its own bytes", b"hello\n", f.read())
    rep = t.report(out)
    if mode == "low":
        # The trace descriptor is above the numbers the program closed: tracing goes on.
        t.eq("low: probe lines", [f"mgprobe: trace written to {out}"], probe_lines(r.stderr))
        t.check_site_numbers(rep, "after_close", dict(allocs=100, live_bytes=6400), what="low: ")
        if rep:
            t.eq("low: process.ended", True, rep["process"]["ended"])
    else:
        # The descriptor was closed or taken over: recording stops with one line; the trace up
        # to then reads back.
        lines = probe_lines(r.stderr)
        t.eq(f"{mode}: lines saying recording stopped", 1,
             sum("recording stopped" in l for l in lines))
        if rep:
            t.eq(f"{mode}: process.ended", False, rep["process"]["ended"])
t.done()
