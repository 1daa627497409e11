# SPDX-License-Identifier: MIT
"""reportlib.py: what the drivers of mgreport's pictures, exports and diff share (stdlib only):
checks that print both values and refuse to pass after zero checks, runs under the real probe,
Debian's chromium in headless mode, and the page's data block."""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading

SKIP = 77


class Check:
    def __init__(self):
        self.failures = 0
        self.checks = 0

    def true(self, what, ok, expected=None, actual=None):
        self.checks += 1
        print(("ok    " if ok else "FAIL  ") + what)
        if not ok:
            self.failures += 1
            if expected is not None or actual is not None:
                print("      expected: %r\n      actual:   %r" % (expected, actual))
        return ok

    def equal(self, what, expected, actual):
        return self.true(what, expected == actual, expected, actual)

    def done(self, skipped=None):
        """Exit 1 on a failure or when nothing was checked, 77 when `skipped` names what could not
        run, else 0."""
        if self.failures or not self.checks:
            print("%d of %d checks failed" % (self.failures, self.checks) if self.checks else "FAIL  nothing was checked")
            sys.exit(1)
        if skipped:
            print("skipped: %s" % skipped)
            sys.exit(SKIP)
        print("all %d checks passed" % self.checks)
        sys.exit(0)


def clean_env():
    env = {k: v for k, v in os.environ.items() if not k.startswith("MGPROBE_") and k != "LD_PRELOAD"}
    env.setdefault("OMP_NUM_THREADS", "1")
    return env


def probe_run(mgprobe, trace, cmd, timeout=400, cwd=None):
    """Runs cmd under `mgprobe run -o trace`; returns (exit status, stdout, stderr)."""
    p = subprocess.run([mgprobe, "run", "-o", trace, "--"] + cmd, capture_output=True, text=True,
                       timeout=timeout, env=clean_env(), cwd=cwd)
    return p.returncode, p.stdout, p.stderr


def parallel(jobs):
    """Runs the callables at once (the machine's cores), returns their results in order."""
    results = [None] * len(jobs)

    def one(i):
        results[i] = jobs[i]()

    threads = [threading.Thread(target=one, args=(i,)) for i in range(len(jobs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results


def mgreport(tool, args, timeout=300):
    p = subprocess.run([tool] + args, capture_output=True, text=True, timeout=timeout)
    return p.returncode, p.stdout, p.stderr


def stack_frames(proc, site):
    """A site's frames, innermost first, whichever form --json gave them in: "frames", or past the
    first 1000 sites of a flat one (report-json.md) "stack", a node of the process's "stack_nodes"
    whose frames are in "stack_frames"."""
    if "stack" not in site:
        return site["frames"]
    frames, k = [], site["stack"]
    while k is not None:
        parent, frame = proc["stack_nodes"][k]
        frames.append(proc["stack_frames"][frame])
        k = parent
    return frames


def with_frames(doc):
    """The --json document with every site's "frames" filled in (stack_frames), for readers of
    frames; returns doc."""
    for proc in [doc] + doc.get("processes", []):
        for site in proc.get("sites", []):
            site["frames"] = stack_frames(proc, site)
    return doc


def answer_line(text_report):
    """The text report's answer for its first process: the paragraph after its "mg report:" header."""
    paras = [p for p in text_report.split("\n\n") if p.strip()]
    for i, p in enumerate(paras[:-1]):
        if p.startswith("mg report:"):
            return paras[i + 1].strip()
    return ""


# ---- the HTML page ----

DATA_RE = re.compile(r'<script type="application/json" id="mg-data">(.*?)</script>', re.S)


def page_data(html):
    """The page's JSON block (raw text, parsed)."""
    m = DATA_RE.search(html)
    if not m:
        return None, None
    return m.group(1), json.loads(m.group(1))


def without_scripts(html):
    """What a browser without JavaScript shows: the page minus its scripts and noscript tags."""
    return re.sub(r"<script.*?</script>", "", html, flags=re.S)


def html_text(s):
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")


def chromium():
    for name in ("chromium", "chromium-browser"):
        p = shutil.which(name)
        if p:
            return p
    return None


def browser(args, timeout=60):
    """Headless chromium with a profile of its own (tests run side by side)."""
    with tempfile.TemporaryDirectory(prefix="mg-chromium-") as profile:
        cmd = [chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
               "--no-first-run", "--disable-dev-shm-usage", "--user-data-dir=" + profile] + args
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    return p.returncode, p.stdout, p.stderr


def dump_dom(path, timeout=60):
    """The page's DOM after its scripts ran (chromium --dump-dom)."""
    rc, out, err = browser(["--virtual-time-budget=5000", "--dump-dom", "file://" + os.path.abspath(path)], timeout)
    return out if rc == 0 else ""


def screenshot(path, png, width, height, timeout=60):
    rc, out, err = browser(["--window-size=%d,%d" % (width, height), "--screenshot=" + png,
                            "file://" + os.path.abspath(path)], timeout)
    return rc == 0 and os.path.exists(png)


def png_size(png):
    """(width, height) from a PNG's header, or None."""
    with open(png, "rb") as f:
        head = f.read(24)
    if head[:8] != b"\x89PNG\r\n\x1a\n":
        return None
    return int.from_bytes(head[16:20], "big"), int.from_bytes(head[20:24], "big")


def with_script(html, script):
    """The page with one more script run after its own (to click through it in a real browser)."""
    return html.replace("</body>", "<script>\n" + script + "\n</script>\n</body>")


# ---- speedscope ----

SPEEDSCOPE_SCHEMA = "https://www.speedscope.app/file-format-schema.json"


def speedscope_problems(doc):
    """What a document lacks of speedscope's file-format schema (FileFormat.File with sampled
    profiles): required fields, their types, indices in range, one weight per sample, endValue
    the weights' sum. [] when it has none."""
    bad = []
    if doc.get("$schema") != SPEEDSCOPE_SCHEMA:
        bad.append("$schema is %r" % doc.get("$schema"))
    frames = doc.get("shared", {}).get("frames")
    if not isinstance(frames, list) or not frames:
        return bad + ["shared.frames is not a non-empty list"]
    for f in frames:
        if not isinstance(f.get("name"), str) or not isinstance(f.get("file", ""), str) or \
                not isinstance(f.get("line", 0), (int, float)) or not set(f) <= {"name", "file", "line", "col"}:
            bad.append("frame %r" % f)
    profiles = doc.get("profiles")
    if not isinstance(profiles, list) or not profiles:
        return bad + ["profiles is not a non-empty list"]
    for p in profiles:
        need = {"type", "name", "unit", "startValue", "endValue", "samples", "weights"}
        if not need <= set(p):
            bad.append("profile lacks %s" % sorted(need - set(p)))
            continue
        if p["type"] != "sampled" or p["unit"] != "bytes" or p["startValue"] != 0 or not isinstance(p["name"], str):
            bad.append("profile %r: type %r, unit %r, startValue %r" % (p["name"], p["type"], p["unit"], p["startValue"]))
        if len(p["samples"]) != len(p["weights"]):
            bad.append("profile %r: %d samples, %d weights" % (p["name"], len(p["samples"]), len(p["weights"])))
        if p["endValue"] != sum(p["weights"]):
            bad.append("profile %r: endValue %r, weights sum to %r" % (p["name"], p["endValue"], sum(p["weights"])))
        if not all(isinstance(i, int) and 0 <= i < len(frames) for s in p["samples"] for i in s):
            bad.append("profile %r: a sample indexes no frame" % p["name"])
        if not all(isinstance(w, (int, float)) and w > 0 for w in p["weights"]):
            bad.append("profile %r: a weight is not a positive number" % p["name"])
    return bad
