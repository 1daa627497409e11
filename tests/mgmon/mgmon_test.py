# SPDX-License-Identifier: MIT
"""mgmon_test.py: drives mgmon in a real terminal (a tmux pane of 100x30: send-keys, capture-pane)
against programs running under the probe, plus its plain-text and JSON frames and its errors.

usage: mgmon_test.py CASE MGMON MGPROBE LIBMGPROBE TARGET [MGTRAIN [MGREPORT]]
CASE: errors | noprobe | leak | healthy | exit | mgtrain | agree | sampled. Exit 0 pass, 1 fail, 77 skipped.
Every process it starts is ended by its own pid; the tmux server is a private one on its own
socket (-S), removed at the end."""
import json
import mmap
import re
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

CASE, MGMON, MGPROBE, LIBPROBE, TARGET = sys.argv[1:6]
MGTRAIN = sys.argv[6] if len(sys.argv) > 6 else ""
MGREPORT = sys.argv[7] if len(sys.argv) > 7 else ""
SOCK = os.path.join(tempfile.gettempdir(), "mgmon-test-%d.tmux" % os.getpid())
started = []


def fail(msg, screen=None):
    print("FAIL: " + msg)
    if screen is not None:
        print("---- screen ----\n" + screen + "\n----------------")
    cleanup()
    sys.exit(1)


def cleanup():
    for p in started:
        if p.poll() is None:
            p.kill()
            p.wait()
    subprocess.run(["tmux", "-S", SOCK, "kill-server"], stderr=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
    # kill-server leaves the socket behind (tmux 3.3a)
    for path in (SOCK, STATUS, f"{STATUS}.tmp") if STATUS else (SOCK,):
        if os.path.exists(path):
            os.unlink(path)


def probed(args, tmp, **env_extra):
    env = dict(os.environ, LD_PRELOAD=LIBPROBE, MGPROBE_DIR=tmp, MGPROBE_INTERVAL="200")
    env.update(env_extra)
    p = subprocess.Popen(args, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    started.append(p)
    return p


def wait_segment(pid, timeout=10):
    path = "/dev/shm/mgprobe.%d" % pid
    end = time.time() + timeout
    while time.time() < end:
        if os.path.exists(path):
            return path
        time.sleep(0.05)
    fail("the probe did not create " + path)


def tmux(*args, check=True):
    r = subprocess.run(["tmux", "-S", SOCK, "-f", "/dev/null"] + list(args), capture_output=True, text=True)
    if check and r.returncode != 0:
        fail("tmux %s: %s" % (" ".join(args), r.stderr.strip()))
    return r.stdout


STATUS = None


def start_mgmon(pid, *extra):
    global STATUS
    STATUS = os.path.join(tempfile.gettempdir(), "mgmon-test-status-%d" % os.getpid())
    if os.path.exists(STATUS):
        os.unlink(STATUS)
    # the shell records mgmon's exit status; the pane stays so a crash leaves its screen
    tmux("new-session", "-d", "-x", "100", "-y", "30", "-s", "m",
         "%s %s %d; echo $? > %s.tmp; mv %s.tmp %s; sleep 60" % (MGMON, " ".join(extra), pid, STATUS, STATUS, STATUS))


def screen():
    return tmux("capture-pane", "-p", "-t", "m")


def wait_screen(pred, timeout, what):
    end = time.time() + timeout
    s = ""
    while time.time() < end:
        s = screen()
        if pred(s):
            return s
        time.sleep(0.25)
    fail("timed out waiting for " + what, s)


def pane_dead():
    """None while mgmon runs, else its exit status as a string."""
    if STATUS and os.path.exists(STATUS):
        return open(STATUS).read().strip()
    return None


def site_rows(s, verdict):
    return [l for l in s.splitlines() if l[1:].startswith(verdict + " ")]


def quit_cleanly():
    tmux("send-keys", "-t", "m", "q")
    end = time.time() + 5
    while time.time() < end:
        d = pane_dead()
        if d is not None:
            if d != "0":
                fail("mgmon exited with status " + d, screen())
            return
        time.sleep(0.1)
    fail("mgmon did not exit on q", screen())


def run_once(pid, *extra):
    r = subprocess.run([MGMON, "--once"] + list(extra) + [str(pid)], capture_output=True, text=True, timeout=20)
    return r


def dead_pid():
    p = subprocess.Popen(["true"])
    p.wait()
    return p.pid


def check_sweep(tmp):
    """A starting probe removes a dead process's segment unchanged for a minute, and leaves one
    changed since (a copy being put back, a crash mgmon is about to report): on a busy machine other
    probes start at any moment, and the stale-segment check above raced them before."""
    old, fresh = "/dev/shm/mgprobe.%d" % dead_pid(), "/dev/shm/mgprobe.%d" % dead_pid()
    for path in (old, fresh):
        with open(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "wb") as f:
            f.write(b"\0" * 4096)
    t = time.time() - 61
    os.utime(old, (t, t))
    p = probed(["true"], tmp)
    p.wait()
    gone, kept = not os.path.exists(old), os.path.exists(fresh)
    for path in (old, fresh):
        if os.path.exists(path):
            os.unlink(path)
    if not gone or not kept:
        fail("sweep: a dead process's segment unchanged for 61 s %s, one changed now %s" %
             ("was left" if not gone else "was removed", "was kept" if kept else "was removed"))


def case_errors(tmp):
    r = subprocess.run([MGMON, "4194000"], capture_output=True, text=True)
    if r.returncode != 1 or "no such process" not in r.stderr:
        fail("bad pid: exit %d, stderr %r" % (r.returncode, r.stderr))
    for args in (["--bogus", "1"], [], ["-d", "0", "1"], ["-d"], ["abc"], ["1", "2"]):
        r = subprocess.run([MGMON] + args, capture_output=True, text=True)
        if r.returncode != 2 or not r.stderr.startswith("mgmon: "):
            fail("%s: exit %d (want 2), stderr %r" % (args, r.returncode, r.stderr))
    r = subprocess.run([MGMON, "--version"], capture_output=True, text=True)
    if r.returncode != 0 or not r.stdout.startswith("mgmon "):
        fail("--version: %r" % r.stdout)
    r = subprocess.run([MGMON, "--help"], capture_output=True, text=True)
    if r.returncode != 0 or "--once" not in r.stdout:
        fail("--help: %r" % r.stdout)
    # a segment left by a killed process: a clear message, never a frame from a dead pid
    p = probed([TARGET, "leak", "10"], tmp)
    seg = wait_segment(p.pid)
    # a probe starting anywhere on the machine sweeps dead segments: keep a copy taken while the
    # process lives, and put it back if the segment went. The copy is taken once the probe has
    # published into it (killed between creating and first writing it, the segment is blank).
    data = None
    end = time.time() + 10
    while time.time() < end:
        try:
            data = open(seg, "rb").read()
        except OSError:
            data = None
        if data and data[:8].strip(b"\0"):
            break
        time.sleep(0.05)
    time.sleep(0.3)  # one more publish interval, so the copy is a whole frame
    try:
        data = open(seg, "rb").read()
    except OSError:
        pass
    p.send_signal(signal.SIGKILL)
    p.wait()
    if data and not os.path.exists(seg):
        with open(os.open(seg, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "wb") as f:
            f.write(data)  # 0600, as the probe makes it: mgmon refuses a segment others can read
    r = subprocess.run([MGMON, "--once", str(p.pid)], capture_output=True, text=True)
    if os.path.exists(seg):
        os.unlink(seg)
    if r.returncode != 1 or "stale" not in r.stderr:
        fail("stale segment: exit %d, stderr %r" % (r.returncode, r.stderr))
    check_sweep(tmp)
    # not a terminal: the live screen refuses politely
    s = subprocess.Popen(["sleep", "30"])
    started.append(s)
    r = subprocess.run([MGMON, str(s.pid)], capture_output=True, text=True, stdin=subprocess.DEVNULL)
    if r.returncode == 0 or "--once" not in r.stderr:
        fail("no terminal: exit %d, stderr %r" % (r.returncode, r.stderr))
    print("errors: ok")


def case_noprobe(tmp):
    s = subprocess.Popen(["sleep", "30"])
    started.append(s)
    time.sleep(0.2)
    r = run_once(s.pid)
    if r.returncode != 0 or "no probe: RSS only" not in r.stdout or "RSS " not in r.stdout:
        fail("--once on sleep: exit %d\n%s%s" % (r.returncode, r.stdout, r.stderr))
    rss_kb = int([l for l in open("/proc/%d/status" % s.pid) if l.startswith("VmRSS")][0].split()[1])
    r = run_once(s.pid, "--json")
    j = json.loads(r.stdout)
    if j["source"] != "proc" or j["probe"] or not (0.5 * rss_kb * 1024 <= j["rss"] <= 2 * rss_kb * 1024):
        fail("json: source %s, rss %s (VmRSS %d kB)" % (j["source"], j["rss"], rss_kb))
    # the live screen says so too
    start_mgmon(s.pid, "-d", "0.5")
    wait_screen(lambda x: "no probe: RSS only" in x and "RSS" in x, 10, "the no-probe label")
    quit_cleanly()
    print("noprobe: ok")


def case_leak(tmp):
    p = probed([TARGET, "leak", "5"], tmp)
    wait_segment(p.pid)
    start_mgmon(p.pid, "-d", "0.5")
    s = wait_screen(lambda x: any("mgm_test_collate_leak" in l for l in site_rows(x, "leak")), 40,
                    "a leaking site named mgm_test_collate_leak")
    # Enter on the first row (the leak sorts first): its whole stack
    tmux("send-keys", "-t", "m", "Home")
    tmux("send-keys", "-t", "m", "Enter")
    s = wait_screen(lambda x: "#0" in x, 5, "the stack screen")
    if "mgm_test_collate_leak" not in s or "main" not in s or "mgm_test_target.c" not in s:
        fail("the stack does not show the leaking function, main and the file", s)
    tmux("send-keys", "-t", "m", "q")  # back
    wait_screen(lambda x: "growth/step" in x, 5, "the main screen again")
    # help, sort, pause, chart switch and a resize must not break the screen
    for k in ("?", "q", "s", "v", "p", "p"):
        tmux("send-keys", "-t", "m", k)
        time.sleep(0.2)
    tmux("resize-window", "-t", "m", "-x", "80", "-y", "24", check=False)
    s = wait_screen(lambda x: "mgm_test_collate_leak" in x and "pid %d" % p.pid in x, 5, "an 80x24 frame")
    tmux("resize-window", "-t", "m", "-x", "40", "-y", "10", check=False)
    wait_screen(lambda x: "too small" in x, 5, "the too-small notice")
    tmux("resize-window", "-t", "m", "-x", "100", "-y", "30", check=False)
    wait_screen(lambda x: "mgm_test_collate_leak" in x, 5, "the frame after growing back")
    quit_cleanly()
    j = json.loads(run_once(p.pid, "--json").stdout)
    if any("live_bytes_band" in x for x in j["sites"]):
        fail("--json of an exact run has bands: %s" % j["sites"][:3])
    leaks = [x for x in j["sites"] if x["verdict"] == "leak"]
    if not leaks or leaks[0]["function"] != "mgm_test_collate_leak":
        fail("--json: leaking sites %s" % [(x["function"], x["verdict"]) for x in j["sites"][:5]])
    print("leak: ok")


def case_healthy(tmp):
    p = probed([TARGET, "healthy", "5"], tmp)
    wait_segment(p.pid)
    start_mgmon(p.pid, "-d", "0.5")
    # past the warmup (40 steps) and well into the plateau
    s = wait_screen(lambda x: int((re.search(r"step (\d+) \(", x) or re.search("()", "0")).group(1) or 0) >= 300,
                    40, "step 300")
    end = time.time() + 3
    while time.time() < end:
        s = screen()
        if site_rows(s, "leak"):
            fail("a healthy program shows a leaking site", s)
        time.sleep(0.5)
    if "LEAK" in s:
        fail("a healthy program gets a leak verdict", s)
    if not any("mgm_test_warmup_cache" in l for l in site_rows(s, "plateau") + site_rows(s, "stable")):
        fail("the warmup cache is not shown as plateau/stable", s)
    quit_cleanly()
    j = json.loads(run_once(p.pid, "--json").stdout)
    if any(x["verdict"] == "leak" for x in j["sites"]) or j["process"]["verdict"] == "leak":
        fail("--json of a healthy program: %s" % [(x["function"], x["verdict"]) for x in j["sites"][:5]])
    print("healthy: ok")


def case_sampled(tmp):
    """A sampled run (MGPROBE_SAMPLE=64K): --json gives each site's band, the text marks estimates."""
    p = probed([TARGET, "leak", "5"], tmp, MGPROBE_SAMPLE="65536")
    wait_segment(p.pid)
    end = time.time() + 30
    j = None
    while time.time() < end:
        j = json.loads(run_once(p.pid, "--json").stdout)
        if any(x.get("live_bytes_band", 0) > 0 for x in j["sites"]):
            break
        time.sleep(0.5)
    bands = [(x["function"], x["live_bytes"], x.get("live_bytes_band")) for x in j["sites"][:5]]
    if not any((b or 0) > 0 for _, _, b in bands) or any(b is None for _, _, b in bands):
        fail("--json of a sampled run: every site a band, some above 0: %s" % bands)
    t = run_once(p.pid).stdout
    if not re.search(r"~\d", t):
        fail("--once of a sampled run: no estimate marked ~", t)
    print("sampled: ok")


def case_exit(tmp):
    p = probed([TARGET, "leak", "5", "400"], tmp)
    wait_segment(p.pid)
    start_mgmon(p.pid, "-d", "0.5")
    p.wait(timeout=30)
    s = wait_screen(lambda x: "exited" in x, 10, "the exited notice")
    if "mgm_test_collate_leak" not in s:
        fail("the final state lost the sites", s)
    time.sleep(1.5)
    if pane_dead() is not None:
        fail("mgmon quit by itself after the target exited", screen())
    s = screen()
    if "exited" not in s:
        fail("the final state did not stay on screen", s)
    quit_cleanly()
    print("exit: ok")


def case_mgtrain(tmp):
    if not MGTRAIN or not os.path.exists(MGTRAIN):
        print("mgtrain is not built: skipped")
        sys.exit(77)
    p = probed([MGTRAIN, "--scenario", "leak", "--steps", "100000"], tmp)
    wait_segment(p.pid)
    start_mgmon(p.pid)
    wait_screen(lambda x: any("mge_collate_batch" in l for l in site_rows(x, "leak")), 120,
                "the collator's leaking site")
    # the process verdict follows from the leaking site, as mgreport's does
    wait_screen(lambda x: "process: LEAK" in x, 10, "the process verdict LEAK")
    tmux("send-keys", "-t", "m", "Home")
    tmux("send-keys", "-t", "m", "Enter")
    s = wait_screen(lambda x: "#0" in x, 5, "the stack screen")
    if "mge_collate_batch" not in s:
        fail("the stack does not show mge_collate_batch", s)
    tmux("send-keys", "-t", "m", "q")
    quit_cleanly()
    print("mgtrain: ok")

# The segment's layout (libmgcore/mgc_shm.h): header fields, then the grid and the sites.
SHM_STATE, SHM_GRID, SHM_GRID_SIZE, SHM_SITES, SHM_SITES_SIZE = 136, 39528, 64 * 152, 49256, 64 * 1088


def wait_stopped(pid, timeout=30):
    end = time.time() + timeout
    while time.time() < end:
        with open("/proc/%d/stat" % pid) as f:
            if f.read().rsplit(")", 1)[1].split()[0] == "T":
                return
        time.sleep(0.05)
    fail("the target did not stop itself after its last step")


def same_fit(what, a, b):
    """Verdict, slope and confidence of the report's (a) and the monitor's (b) fit agree."""
    va, vb = a.get("verdict"), b.get("verdict")
    sa, sb = a.get("slope_per_x"), b.get("slope_per_x")
    if va != vb or sa != sb or a.get("confidence") != b.get("confidence"):
        fail("%s: mgreport says %s (slope %r, confidence %r), mgmon %s (slope %r, confidence %r)"
             % (what, va, sa, a.get("confidence"), vb, sb, b.get("confidence")))


def compare(report, live):
    """mgreport --json on a trace against mgmon --once --json on the same run's segment."""
    if report["limit_bytes"] != live["limit"]:
        fail("limits differ: mgreport %r, mgmon %r" % (report["limit_bytes"], live["limit"]))
    same_fit("process verdict", report["process_verdict"], live["process"])
    rs = {s["name"]: s for s in report["series"]}
    ls = {s["name"]: s for s in live["series"]}
    if sorted(rs) != sorted(ls):
        fail("series differ: mgreport %s, mgmon %s" % (sorted(rs), sorted(ls)))
    for name in rs:
        if rs[name]["points"] != ls[name]["points"]:
            fail("%s: mgreport judged %d points, mgmon %d" % (name, rs[name]["points"], ls[name]["points"]))
        same_fit("series " + name, rs[name], ls[name])
    rsite = {s["id"]: s for s in report["sites"]}
    shown = [s["site"] for s in live["sites"]]
    want = [s["id"] for s in report["sites"] if s["live_bytes_last_x"] > 0]
    if sorted(shown) != sorted(want):
        fail("sites differ: mgreport's live sites %s, mgmon's %s" % (want, shown))
    if [i for i in [s["id"] for s in report["sites"]] if i in shown] != shown:
        fail("the sites are ranked differently: mgreport %s, mgmon %s" % (want, shown))
    for s in live["sites"]:
        r = rsite.get(s["site"], {})
        same_fit("site %d (%s)" % (s["site"], s["function"]), r, s)
        if r.get("growth") != s["growth_bytes"] or r.get("live_bytes_last_x") != s["live_bytes_last_x"]:
            fail("site %d: growth %r / %r, live at the end %r / %r" % (s["site"], r.get("growth"),
                 s["growth_bytes"], r.get("live_bytes_last_x"), s["live_bytes_last_x"]))
    return len(live["sites"])


def burners(n):
    """n processes that only spin, so the probe's sampler thread (SCHED_BATCH) runs late."""
    spin = [sys.executable, "-c", "while True: pass"]
    ps = [subprocess.Popen(spin, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) for _ in range(n)]
    started.extend(ps)
    return ps


def case_agree(tmp):
    """The live view and the report judge the same run alike: mgmon --once --json on the
    segment of a run that has made its last step, mgreport --json on its trace (issue 14). The
    exit's publish leaves the segment's grid and sites as they were at the last step. The target
    churns through 400 more sites each step (over a thread's delta table: its counters move on its
    own thread right after each marker) with two spinning processes beside it: a marker's site
    scan, left to the sampler thread, must still show the step's values, however late it runs."""
    load = burners(2)
    for mode, steps in (("leak", 40), ("healthy", 60), ("both", 60)):
        trace = os.path.join(tmp, mode + ".mgt")
        # no sampler ticks: the run is its step markers, 100 ms apart so that each one is
        # published: a marker within 200 site scans' CPU time of the last full publish only
        # updates the step (mgp_shm.c publish_step), and under ASan a scan of the 400 and more
        # churned sites passed 150 us once, so markers 30 ms apart left 32 grid points of 40
        p = probed([TARGET, mode, "100", str(steps), "stop"], tmp, MGPROBE_OUTPUT=trace,
                   MGPROBE_INTERVAL="600000", MGM_TEST_SITES="400")
        wait_stopped(p.pid)
        with open("/dev/shm/mgprobe.%d" % p.pid, "rb") as f:
            seg = mmap.mmap(f.fileno(), 0, prot=mmap.PROT_READ)
        before = seg[:]
        r = run_once(p.pid, "--json")
        p.send_signal(signal.SIGCONT)
        p.wait(timeout=30)
        after = seg[:]
        seg.close()
        if struct_u32(after, SHM_STATE) != 2:
            fail("%s: the segment does not say the process exited" % mode)
        for name, off, size in (("grid", SHM_GRID, SHM_GRID_SIZE), ("sites", SHM_SITES, SHM_SITES_SIZE)):
            if before[off:off + size] != after[off:off + size]:
                fail("%s: the exit's publish changed the segment's %s" % (mode, name))
        rep = subprocess.run([MGREPORT, "--json", "--top", "0", trace], capture_output=True, text=True, timeout=60)
        if r.returncode != 0 or rep.returncode != 0:
            fail("%s: mgmon exit %d (%s), mgreport exit %d (%s)" % (mode, r.returncode, r.stderr.strip(),
                                                                  rep.returncode, rep.stderr.strip()))
        live, report = json.loads(r.stdout), json.loads(rep.stdout)
        if live["x"] != "steps" or report["x_axis"] != "step" or report["series"][0]["points"] != steps:
            fail("%s: x axis %s / %s, %d points for %d steps" % (mode, live["x"], report["x_axis"],
                                                                report["series"][0]["points"], steps))
        if live["sites_total"] <= 400:
            fail("%s: %d sites, not the 400 and more the target churns through" % (mode, live["sites_total"]))
        n = compare(report, live)
        print("agree %s: process %s, %d series, %d sites alike of %d" % (
            mode, live["process"]["verdict"], len(live["series"]), n, live["sites_total"]))
    for b in load:
        b.kill()
        b.wait()
    print("agree: ok")


def struct_u32(b, off):
    return int.from_bytes(b[off:off + 4], "little")


def main():
    if not shutil.which("tmux"):
        print("tmux is not installed: skipped")
        sys.exit(77)
    cases = {"errors": case_errors, "noprobe": case_noprobe, "leak": case_leak, "healthy": case_healthy,
             "exit": case_exit, "mgtrain": case_mgtrain, "agree": case_agree,
             "sampled": case_sampled}
    if CASE not in cases:
        print("unknown case " + CASE)
        sys.exit(2)
    with tempfile.TemporaryDirectory(prefix="mgmon-test-") as tmp:
        try:
            cases[CASE](tmp)
        finally:
            cleanup()


if __name__ == "__main__":
    main()
