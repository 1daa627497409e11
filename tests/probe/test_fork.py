# SPDX-License-Identifier: MIT
# fork without exec and fork+exec: each process writes its own trace (the parent to the -o name,
# children to <base>.<comm>.<pid>[.n].mgt) with its own exact numbers; the parent's file records
# its children and is untouched by them. With --no-children only the parent's file exists.
import glob
import os
import re

from probetest import Test

t = Test("fork", 1)
prog = t.progs[0]
comm = os.path.basename(prog)[:15]


def check_parent(mode, base, ppid, a, b):
    """The parent's trace: its pid, its 2 children, its own sites only."""
    parent = t.report(base + ".mgt")
    if parent:
        p = parent["process"]
        t.eq(f"{mode}: parent pid", ppid, p["pid"])
        t.eq(f"{mode}: parent children", [a, b], p["children"])
        t.eq(f"{mode}: parent ended", True, p["ended"])
        t.check_site_numbers(parent, "parent_work", dict(allocs=3, frees=0, live_bytes=3000,
                                                         live_count=3), what=f"{mode}: parent: ")
        t.check_site_numbers(parent, "parent_after", dict(allocs=2, frees=0, live_bytes=1000,
                                                          live_count=2), what=f"{mode}: parent: ")
        for fn in ("child_work", "exec_child_work"):
            t.eq(f"{mode}: parent: sites of {fn}", [], t.sites_in(parent, fn))


def check_child_alone(mode, base, a, child):
    """The fork child's trace read without its parent's file beside it."""
    # The child's file refers to the parent's for what came before the fork (parent_work's
    # stack and counts above): copied away from it, the child's own records still read, with
    # a notice.
    alone = t.path(f"{mode}-alone")
    os.mkdir(alone)
    moved = os.path.join(alone, "forks.mgt")
    os.rename(base + ".mgt", moved)
    lone = t.report(f"{base}.{comm}.{a}.mgt")
    os.rename(moved, base + ".mgt")
    if lone:
        t.true(f"{mode}: fork child without its parent's file: a notice says so",
               any("parent's trace" in n for n in lone["process"]["notices"]),
               lone["process"]["notices"])
        t.eq(f"{mode}: fork child without its parent's file: the same heap at the end",
             child["points"][-1]["heap"], lone["points"][-1]["heap"])
        t.true(f"{mode}: fork child without its parent's file: child_work's 8000 bytes are "
               "a site (its frames unnamed: the modules are in the parent's file)",
               any(x["live_bytes"] == 8000 and x["allocs"] == 5 for x in lone["sites"]),
               [(x["live_bytes"], x["allocs"]) for x in lone["sites"]])


def check_fork_child(mode, base, ppid, a):
    """The fork child's trace: its pid and parent, its sites and the inherited ones."""
    child = t.report(f"{base}.{comm}.{a}.mgt")
    if child:
        p = child["process"]
        t.eq(f"{mode}: fork child pid", a, p["pid"])
        t.eq(f"{mode}: fork child ppid", ppid, p["ppid"])
        t.eq(f"{mode}: fork child ended", True, p["ended"])
        t.eq(f"{mode}: fork child children", [], p["children"])
        t.check_site_numbers(child, "child_work", dict(allocs=5, frees=1, live_bytes=8000,
                                                       live_count=4, alloc_bytes=10000),
                             what=f"{mode}: fork child: ")
        # Inherited blocks are live in the child too; it freed one of its copies.
        t.check_site_numbers(child, "parent_work", dict(allocs=3, frees=1, live_bytes=2000,
                                                        live_count=2), what=f"{mode}: fork child: ")
        for fn in ("parent_after", "exec_child_work"):
            t.eq(f"{mode}: fork child: sites of {fn}", [], t.sites_in(child, fn))
        check_child_alone(mode, base, a, child)


def check_exec_child(mode, base, b):
    """The exec child's 2 traces: before the exec, and the exec'd image's."""
    pre = t.report(f"{base}.{comm}.{b}.mgt")
    if pre:
        t.eq(f"{mode}: exec child (before exec) pid", b, pre["process"]["pid"])
        t.eq(f"{mode}: exec child (before exec) ended at exec", True, pre["process"]["ended"])
    ex = t.report(f"{base}.{comm}.{b}.1.mgt")
    if ex:
        p = ex["process"]
        t.eq(f"{mode}: exec'd image pid", b, p["pid"])
        t.eq(f"{mode}: exec'd image command", f"{prog} exec-child", p["command"])
        t.eq(f"{mode}: exec'd image ended", True, p["ended"])
        t.check_site_numbers(ex, "exec_child_work", dict(allocs=4, frees=0, live_bytes=12000,
                                                         live_count=4),
                             what=f"{mode}: exec'd image: ")
        for fn in ("parent_work", "child_work", "parent_after"):
            t.eq(f"{mode}: exec'd image: sites of {fn}", [], t.sites_in(ex, fn))


def run_case(mode):
    """One run of the program under the probe (mode: how the fork child leaves), checked."""
    sub = t.path(mode)
    os.mkdir(sub)
    base = os.path.join(sub, "forks")
    args = [prog] + ([mode] if mode != "exit" else [])
    r = t.probe(args, base + ".mgt")
    t.eq(f"{mode}: exit status", 0, r.returncode)
    out = r.stdout.decode()
    m = re.search(r"parent (\d+) children (\d+) (\d+) status 1 1", out)
    if not t.true(f"{mode}: parent reports both children ok", m, out):
        return
    ppid, a, b = map(int, m.groups())
    t.true(f"{mode}: fork child printed", f"fork child {a} done" in out, out)
    t.true(f"{mode}: exec child printed", f"exec child {b} done" in out, out)

    files = sorted(os.path.basename(f) for f in glob.glob(base + "*.mgt"))
    # Child b forks (its own file), then execs: the new image gets the next free name.
    want = sorted(["forks.mgt", f"forks.{comm}.{a}.mgt", f"forks.{comm}.{b}.mgt",
                   f"forks.{comm}.{b}.1.mgt"])
    t.eq(f"{mode}: trace files", want, files)

    check_parent(mode, base, ppid, a, b)
    check_fork_child(mode, base, ppid, a)
    check_exec_child(mode, base, b)


run_case("exit")   # the fork child leaves with exit(0)
run_case("_exit")  # ... and with _exit(0)

# --no-children: only the parent is traced, and its numbers are unchanged.
sub = t.path("nochildren")
os.mkdir(sub)
r = t.probe([prog], os.path.join(sub, "forks.mgt"), ["--no-children"])
t.eq("--no-children: exit status", 0, r.returncode)
t.eq("--no-children: trace files", ["forks.mgt"], sorted(os.listdir(sub)))
rep = t.report(os.path.join(sub, "forks.mgt"))
t.check_site_numbers(rep, "parent_work", dict(allocs=3, live_bytes=3000), what="--no-children: ")
t.eq("--no-children: sites of child_work", [], t.sites_in(rep, "child_work"))
t.done()
