#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""test_torch_outputs.py: the HTML report, the exports and the diff on two real PyTorch runs.

    test_torch_outputs.py MGPROBE MGREPORT SAMPLE TORCH_PYTHON

samples/torch_vision_train.py runs healthy and --leak (1 MiB of malloc'd memory per batch, through
ctypes and libffi) for 120 steps each under the probe. PyTorch makes ~600,000 allocation sites, so
this is where the outputs must choose what they carry:
  --html        under 2 MB, self-contained, the same bytes twice, the answer in its text; in
                chromium the chart, the site rows and the flame graph, the leak's row first, and
                a screenshot;
  --folded      valid lines; the leak's stack (through ffi_call) weighs 120 steps x 1 MiB;
  --speedscope  speedscope's schema fields, the same total as --folded;
  --diff        healthy -> leak: the ffi_call site started leaking, exit 3 with --fail-on leak.
Exits 77 (skip) when TORCH_PYTHON cannot import torch and torchvision. Stdlib only."""
import json
import os
import re
import subprocess
import sys
import tempfile
import time

import reportlib as rl

STEPS = 120
LEAK_BYTES = 1 << 20


def has_ffi(frames):
    return any(f["function"] == "ffi_call" or "libffi" in (f["module"] or "") for f in frames)


def check_html(t, mgreport, trace, tmp, name, browser):
    page = os.path.join(tmp, name + ".html")
    start = time.monotonic()
    rc, out, err = rl.mgreport(mgreport, [trace, "--html", page])
    took = time.monotonic() - start
    t.true("%s: --html exits 0 (%.1f s)" % (name, took), rc == 0, 0, (rc, err))
    with open(page, encoding="utf-8") as f:
        html = f.read()
    print("      %s: %d bytes" % (name, len(html)))
    t.true("%s: under 2 MB (%d bytes)" % (name, len(html)), len(html) < 2_000_000)
    t.true("%s: no URL anywhere" % name, not re.search(r"https?://", html, re.I))
    rl.mgreport(mgreport, [trace, "--html", page + ".2"])
    with open(page + ".2", encoding="utf-8") as f:
        t.true("%s: the same bytes twice" % name, f.read() == html)
    raw, data = rl.page_data(html)
    t.true("%s: the data is a JSON block with no '</' inside" % name, raw is not None and "</" not in raw)
    rc, text, _ = rl.mgreport(mgreport, [trace, "--no-color"])
    answer = rl.answer_line(text)
    t.true("%s: without JavaScript the page still says the answer" % name,
           answer and rl.html_text(answer) in rl.without_scripts(html), answer)
    P = data["processes"][0]
    if not browser:
        return P
    dom = rl.dump_dom(page, timeout=90)
    t.true("%s: chromium ran the page's script" % name, 'class="drawn"' in dom)
    paths = re.findall(r'<path class="series s-(\w+)" stroke="[^"]*" d="([^"]*)"', dom)
    t.true("%s: the chart draws RSS with every point (%d)" % (name, len(P["x"])),
           any(n == "rss" and len(re.findall(r"[ML]", d)) == len(P["x"]) for n, d in paths), len(P["x"]),
           [(n, len(re.findall(r"[ML]", d))) for n, d in paths])
    rows = re.findall(r'<tr class="site" data-id="\d+" data-k="(\d+)">(.*?)</tr>', dom, re.S)
    t.true("%s: site rows (%d)" % (name, len(rows)), len(rows) >= 10)
    t.true("%s: the flame graph has frames" % name, len(re.findall(r'<rect class="node"', dom)) > 20)
    png = os.path.join(tmp, name + ".png")
    t.true("%s: a 1280x1800 screenshot" % name, rl.screenshot(page, png, 1280, 1800, timeout=90) and
           rl.png_size(png) == (1280, 1800), (1280, 1800), os.path.exists(png) and rl.png_size(png))
    if name == "leak" and rows:
        first = P["sites"][int(rows[0][0])]
        frames = [{"function": P["strings"][P["frames"][i][1]], "module": P["strings"][P["frames"][i][4]]}
                  for i in first["stack"]]
        t.true("leak: the first row is the leak, through ffi_call", "v-leak" in rows[0][1] and has_ffi(frames),
               "leak via ffi_call", rows[0][1][:300])
        t.true("leak: its row names the Python line that leaks (leaky_collate torch_vision_train.py:N)",
               re.search(r"leaky_collate torch_vision_train\.py:\d+", rows[0][1]) is not None,
               "leaky_collate torch_vision_train.py:N", rows[0][1][-200:])
    return P


def check_exports(t, mgreport, trace, tmp):
    rc, out, err = rl.mgreport(mgreport, [trace, "--folded"])
    lines = out.splitlines()
    t.true("leak: --folded exits 0 with valid lines (%d)" % len(lines),
           rc == 0 and lines and all(re.fullmatch(r"[^ ;][^;]*(;[^;]+)* \d+", l) for l in lines))
    ffi = sum(int(l.rsplit(" ", 1)[1]) for l in lines if ";ffi_call;" in l)
    t.true("leak: the stacks through ffi_call weigh %d steps x 1 MiB (within 5%%)" % STEPS,
           abs(ffi - STEPS * LEAK_BYTES) <= 0.05 * STEPS * LEAK_BYTES, STEPS * LEAK_BYTES, ffi)
    other = [l for l in lines if re.match(r"\[\d+ other sites\] \d+$", l)]
    t.equal("leak: one '[N other sites]' line holds the rest", 1, len(other))
    ss = os.path.join(tmp, "leak.speedscope.json")
    rc, _, err = rl.mgreport(mgreport, [trace, "--speedscope", ss])
    with open(ss) as f:
        doc = json.load(f)
    t.true("leak: --speedscope has speedscope's schema fields", rc == 0 and not rl.speedscope_problems(doc), [],
           rl.speedscope_problems(doc))
    t.equal("leak: --speedscope weighs what --folded weighs", sum(int(l.rsplit(" ", 1)[1]) for l in lines),
            doc["profiles"][0]["endValue"])


def check_diff(t, mgreport, healthy, leak):
    rc, out, err = rl.mgreport(mgreport, ["--diff", healthy, leak, "--json", "--fail-on", "leak"])
    d = json.loads(out) if out.strip() else {}
    started = d.get("sites", {}).get("started", [])
    t.true("diff healthy -> leak: the ffi_call site started leaking, exit 3 with --fail-on leak",
           rc == 3 and any(has_ffi(r["frames"]) for r in started), 3, (rc, [r["where"] for r in started], err))
    t.true("diff: the started site is named by its Python line (leaky_collate torch_vision_train.py:N)",
           any(re.fullmatch(r"leaky_collate torch_vision_train\.py:\d+", r["where"]) for r in started),
           "leaky_collate ...", [r["where"] for r in started])
    growth = [r["after"]["growth_per_x"] for r in started if has_ffi(r["frames"])]
    t.true("diff: it grows 1 MiB per step after (within 10%)", growth and abs(growth[0] - LEAK_BYTES) <= 0.1 * LEAK_BYTES,
           LEAK_BYTES, growth)
    after = d.get("process_verdict", {}).get("after", {}).get("verdict")
    t.true("diff: the process verdict after says it grows (leak, or growing while the classifier cannot tell yet)",
           after in ("leak", "growing"), "leak or growing", after)


def main():
    mgprobe, mgreport, sample, python = sys.argv[1:5]
    t = rl.Check()
    probe = subprocess.run([python, "-c", "import torch, torchvision"], capture_output=True)
    if probe.returncode != 0:
        print("skipped: %s cannot import torch and torchvision" % python)
        sys.exit(rl.SKIP)
    browser = rl.chromium() is not None
    with tempfile.TemporaryDirectory() as tmp:
        runs = {"healthy": [python, sample, "--steps", str(STEPS)],
                "leak": [python, sample, "--steps", str(STEPS), "--leak", "--leak-bytes", str(LEAK_BYTES)]}
        traces = {k: os.path.join(tmp, k + ".mgt") for k in runs}
        results = rl.parallel([lambda k=k: rl.probe_run(mgprobe, traces[k], runs[k], timeout=500) for k in runs])
        for k, (rc, out, err) in zip(runs, results):
            t.true("torch %s runs under the probe" % k, rc == 0 and "done:" in out, 0, (rc, err[-300:]))
        for k in runs:
            check_html(t, mgreport, traces[k], tmp, k, browser)
        check_exports(t, mgreport, traces["leak"], tmp)
        check_diff(t, mgreport, traces["healthy"], traces["leak"])
    t.done(skipped=None if browser else "chromium is not installed: the pages were not checked in a browser")


if __name__ == "__main__":
    main()
