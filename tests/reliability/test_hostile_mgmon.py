# SPDX-License-Identifier: MIT
# Issue 13.5, 13.6, 13.7 on mgmon's side. What another user can plant at /dev/shm/mgprobe.<pid> (a
# FIFO, which hung mgmon as root; a file of another user, a file anyone may read, or a symlink,
# which made it exit) only turns the view to /proc, with a notice. A process that names itself (or
# its argv) "\x1b]0;PWNED\x07\x1b[2J" does not rewrite the terminal of whoever watches it: not in
# `--once`, not in the curses view (the pane's title stays), and `--once --json` is valid UTF-8.
#
# usage: test_hostile_mgmon.py MGPROBE MGREPORT LIBMGPROBE MGMON
import json
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "probe"))
from probetest import Test  # noqa: E402
from reltest import no_controls  # noqa: E402

t = Test("hostile-mgmon", 1)
mgmon = t.progs[0]
python = os.path.realpath(sys.executable)
EVIL = b"\x1b]0;PWNED\x07\x1b[2J"  # 14 bytes: fits a thread name
ARG = EVIL + b"\x9b31m caf\xe9"
started = []


def start(cmd, probe=False):
    env = dict(os.environ)
    env.pop("LD_PRELOAD", None)
    if probe:
        env.update(LD_PRELOAD=t.lib, MGPROBE_DIR=t.dir, MGPROBE_INTERVAL="100")
    p = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    started.append(p)
    return p


def once(pid, *extra, timeout=20):
    try:
        return subprocess.run([mgmon, "--once", *extra, str(pid)], capture_output=True,
                              timeout=timeout)
    except subprocess.TimeoutExpired as ex:
        t.fail(f"mgmon --once {' '.join(extra)} {pid}: no exit within {timeout} s")
        return subprocess.CompletedProcess([], None, ex.stdout or b"", ex.stderr or b"")


def strings(j):
    """Every string in a JSON value."""
    if isinstance(j, str):
        return [j]
    if isinstance(j, dict):
        j = list(j.values())
    return [x for v in j for x in strings(v)] if isinstance(j, list) else []


def planted(what, plant, cleanup):
    """A plain `sleep` (no probe), something planted at its segment's name: the /proc view."""
    s = start(["sleep", "60"])
    path = f"/dev/shm/mgprobe.{s.pid}"
    plant(path)
    try:
        r = once(s.pid, timeout=15)
        t.eq(f"{what}: exit 0", 0, r.returncode)
        out = r.stdout.decode(errors="replace")
        t.true(f"{what}: the /proc view", "no probe: RSS only" in out and "RSS " in out, out[:300])
        t.true(f"{what}: a notice names the file", path.encode() in r.stdout + r.stderr,
               (r.stdout + r.stderr)[:400])
        r = once(s.pid, "--json", timeout=15)
        j = json.loads(r.stdout) if r.returncode == 0 else {}
        t.eq(f"{what}: --json: source", "proc", j.get("source"))
    finally:
        cleanup(path)
        s.kill()
        s.wait()


def rm(path):
    if os.path.lexists(path):
        os.unlink(path)


def regular(mode, uid=None):
    def plant(path):
        with open(path, "wb") as f:
            f.write(b"MGSHM\0\0\0" + b"\0" * 4096)
        os.chmod(path, mode)
        if uid is not None:
            os.chown(path, uid, uid)
    return plant


try:
    planted("a FIFO", lambda p: os.mkfifo(p, 0o600), rm)
    planted("a symlink", lambda p: os.symlink("/etc/passwd", p), rm)
    planted("a file anyone may read (0644)", regular(0o644), rm)
    if os.geteuid() == 0:
        planted("a file of another user", regular(0o600, 65534), rm)
    else:
        print("note: not root: no file of another user planted")

    # ---- names and arguments that are terminal escapes ----
    prog = ("import ctypes, sys, threading, time\n"
            "libc = ctypes.CDLL(None)\n"
            f"libc.prctl(15, {EVIL!r})\n"
            "keep = [bytearray(1 << 20)]\n"
            "threading.Thread(target=lambda: (libc.prctl(15, sys.argv[1].encode('utf-8', "
            "'surrogateescape')[:15]), time.sleep(60)), daemon=True).start()\n"
            "time.sleep(60)\n")
    script = t.path("evil.py")
    with open(script, "w") as f:
        f.write(prog)
    for probe in (True, False):
        what = "under the probe" if probe else "without the probe"
        p = start([python, script, ARG], probe=probe)
        if probe:
            end = time.time() + 10
            while not os.path.exists(f"/dev/shm/mgprobe.{p.pid}") and time.time() < end:
                time.sleep(0.05)
        time.sleep(0.5)
        with open(f"/proc/{p.pid}/comm", "rb") as f:
            t.eq(f"{what}: the process is named with escapes", EVIL + b"\n", f.read())
        r = once(p.pid)
        t.eq(f"{what}: --once exit 0", 0, r.returncode)
        no_controls(t, f"{what}: --once", r.stdout)
        t.true(f"{what}: --once shows the escapes as text", b"\\x1b]0;PWNED\\x07" in r.stdout,
               r.stdout[:300])
        r = once(p.pid, "--json")
        try:
            texts = strings(json.loads(r.stdout.decode("utf-8")))
            t.true(f"{what}: --json keeps the escapes", any("\x1b]0;PWNED\x07" in x for x in texts),
                   r.stdout[:300])
            t.true(f"{what}: --json has the bad bytes as U+FFFD",
                   any("\x9b31m caf\ufffd" in x or "\ufffd31m caf\ufffd" in x for x in texts),
                   r.stdout[:300])
        except (UnicodeDecodeError, ValueError) as ex:
            t.fail(f"{what}: --once --json is not valid UTF-8 JSON ({ex})")
        if not probe:
            # The curses view (its top line names the process) in a private tmux server: the
            # pane's title would become PWNED.
            sock = os.path.join(tempfile.gettempdir(), f"mgmon-hostile-{os.getpid()}.tmux")
            tmux = ["tmux", "-S", sock, "-f", "/dev/null"]
            subprocess.run(tmux + ["new-session", "-d", "-x", "120", "-y", "30", "-s", "m",
                                   f"{mgmon} -d 0.3 {p.pid}; sleep 30"], check=True)
            try:
                subprocess.run(tmux + ["set-option", "-t", "m", "-g", "set-titles", "off"])
                time.sleep(2.5)
                title = subprocess.run(tmux + ["display-message", "-p", "-t", "m",
                                               "#{pane_title}"], capture_output=True, text=True)
                t.true("curses: the pane's title is not rewritten", "PWNED" not in title.stdout,
                       title.stdout)
                screen = subprocess.run(tmux + ["capture-pane", "-p", "-t", "m"],
                                        capture_output=True, text=True).stdout
                t.true("curses: the monitor is on screen", f"pid {p.pid}" in screen, screen)
                t.true("curses: the escapes show as text", "\\x1b]0;PWNED" in screen, screen)
            finally:
                subprocess.run(tmux + ["kill-server"], capture_output=True)
                if os.path.exists(sock):  # kill-server leaves it behind (tmux 3.3a)
                    os.unlink(sock)
        p.kill()
        p.wait()
finally:
    for p in started:
        if p.poll() is None:
            p.kill()
            p.wait()
t.done()
