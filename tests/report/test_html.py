#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""test_html.py: `mgreport --html` on real traces of real runs under the probe, in a real browser.

    test_html.py MGPROBE MGREPORT MGTRAIN PROG_STEPS

mgtrain's leak and healthy scenarios and prog_steps with two forked workers run under the probe;
then, for each page:
  the file: self-contained (no http:// or https:// anywhere), the same bytes twice, its data in a
  <script type="application/json"> block with no "</" inside, the text report's answer and every
  series' verdict in the HTML text itself (readable without JavaScript);
  in Debian's chromium (headless --dump-dom after the scripts ran): the chart's paths (one point
  per point of the run), the site rows, the flame graph's frames; clicking through the page (a
  row opens its stack, a column sorts, the flame graph's modes, slider and zoom, the chart's limit
  view and legend) through the page's own handlers; a screenshot of the right size;
  several processes: the process tree and one panel per process;
  a CSV of 5000 points: the chart keeps at most 2000, each bucket's minimum and maximum exactly.
Exits 77 after the file checks when chromium is absent (README's test command installs it).
Stdlib only."""
import json
import os
import re
import sys
import tempfile

import reportlib as rl

MAX_POINTS = 2000
SHORT_TABLE = 15


def check_file(t, mgreport, trace, html_path, name):
    rc, out, err = rl.mgreport(mgreport, [trace, "--html", html_path])
    t.true("%s: --html exits 0, says where the page went, prints nothing on stdout" % name,
           rc == 0 and out == "" and "HTML report written to" in err, 0, (rc, out[:200], err))
    with open(html_path, encoding="utf-8") as f:
        html = f.read()
    rc, _, _ = rl.mgreport(mgreport, [trace, "--html", html_path + ".2"])
    with open(html_path + ".2", encoding="utf-8") as f:
        t.true("%s: the same bytes twice" % name, f.read() == html)
    t.true("%s: no URL anywhere (http:// or https://)" % name,
           not re.search(r"https?://", html, re.I), "none", re.findall(r".{20}https?://.{20}", html, re.I)[:3])
    t.true("%s: under 2 MB (%d bytes)" % (name, len(html)), len(html) < 2_000_000)
    raw, data = rl.page_data(html)
    t.true("%s: the data is a JSON block with no '</' inside" % name, raw is not None and "</" not in raw)
    rc, text, _ = rl.mgreport(mgreport, [trace, "--no-color"])
    answer = rl.answer_line(text)
    static = rl.without_scripts(html)
    t.true("%s: without JavaScript the page still says the answer" % name,
           answer and rl.html_text(answer) in static, answer, re.findall(r'<p class="verdict-text">(.*?)</p>', static)[:1])
    rc, js, _ = rl.mgreport(mgreport, [trace, "--json"])
    doc = json.loads(js)
    for s in doc["series"]:
        row = re.search(r'<tr class="series-row" data-series="%s">(.*?)</tr>' % s["name"], static, re.S)
        t.true("%s: without JavaScript the page gives the %s series' verdict (%s)" % (name, s["name"], s["verdict"]),
               row and 'class="verdict v-%s"' % s["verdict"] in row.group(1), s["verdict"], row and row.group(1)[:200])
    t.equal("%s: the data's answer is the text report's" % name, answer, data["processes"][0]["answer"])
    t.equal("%s: the data's series have every point of the run" % name,
            [s["points"] for s in doc["series"]], [len(s["y"]) for s in data["processes"][0]["series"]])
    return html, data, doc


def interact_script():
    """Clicks through the page with its own handlers and writes what it saw into <pre id=mg-test>."""
    return r"""
(function () {
  var out = {}, sec = document.querySelector('section.proc');
  function order() { return [].map.call(sec.querySelectorAll('tr.site'), function (r) { return +r.dataset.k; }); }
  sec.querySelector('tr.site').click();
  var st = sec.querySelector('tr.stack');
  out.stack = st ? st.textContent : null;
  sec.querySelector('.more button') && sec.querySelector('.more button').click();
  out.rows_all = sec.querySelectorAll('tr.site').length;
  sec.querySelector('th[data-key=live]').click();
  out.live_desc = order();
  sec.querySelector('th[data-key=live]').click();
  out.live_asc = order();
  out.sorted_class = sec.querySelector('th[data-key=live]').className;
  var flame = sec.querySelector('[data-part=flame]');
  function slide(name, v) {
    var s = flame.querySelector('input[data-s=' + name + ']');
    s.value = v;
    s.dispatchEvent(new Event('input', {bubbles: true}));
  }
  slide('at', 0);
  out.pos_first = flame.querySelector('.pos').textContent;
  slide('at', flame.querySelector('input[data-s=at]').max);
  out.pos_last = flame.querySelector('.pos').textContent;
  var g = [].filter.call(flame.querySelectorAll('g[data-i]'), function (x) { return /mge_collate_batch/.test(x.textContent); })[0];
  if (g) g.querySelector('rect').dispatchEvent(new MouseEvent('click', {bubbles: true}));
  out.crumbs = flame.querySelector('.crumbs').textContent;
  out.zoomed_rects = flame.querySelectorAll('rect.node').length;
  flame.querySelector('button[data-mode=growth]').click();
  out.growth_pos = flame.querySelector('.pos').textContent;
  out.growth_rects = flame.querySelectorAll('rect.node').length;
  var chart = sec.querySelector('[data-part=chart]');
  [].filter.call(chart.querySelectorAll('button'), function (b) { return b.textContent === 'to the limit'; })[0].click();
  out.limit_line = chart.querySelectorAll('line.limit').length;
  var box = chart.querySelector('input[type=checkbox]');
  box.checked = false;
  box.dispatchEvent(new Event('change', {bubbles: true}));
  out.rss_after_unchecking = chart.querySelectorAll('path.s-rss').length;
  var pre = document.createElement('pre');
  pre.id = 'mg-test';
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
})();
"""


def path_points(d):
    return len(re.findall(r"[ML]", d))


def check_drawn(t, html_path, data, name, leak):
    dom = rl.dump_dom(html_path)
    t.true("%s: chromium ran the page's script" % name, 'class="drawn"' in dom, "drawn", dom[:200])
    P = data["processes"][0]
    paths = re.findall(r'<path class="series s-(\w+)" stroke="[^"]*" d="([^"]*)"', dom)
    t.equal("%s: one chart path per series" % name, [s["name"] for s in P["series"]], [p[0] for p in paths])
    t.true("%s: each path has one point per point of the run (%d)" % (name, len(P["x"])),
           paths and all(path_points(d) == len(P["x"]) for _, d in paths), len(P["x"]), [path_points(d) for _, d in paths])
    rows = re.findall(r'<tr class="site" data-id="(\d+)" data-k="(\d+)">(.*?)</tr>', dom, re.S)
    table = [s for s in P["sites"] if s["table"]]
    t.equal("%s: the site table's first rows (the top %d by growth)" % (name, SHORT_TABLE),
            min(len(table), SHORT_TABLE), len(rows))
    rects = re.findall(r'<rect class="node"', dom)
    t.true("%s: the flame graph has frames (%d)" % (name, len(rects)), len(rects) > 5)
    if leak:
        t.true("leak: the first site row is the leaking mge_collate_batch", rows and "v-leak" in rows[0][2] and
               "mge_collate_batch mge_loader.c:" in rows[0][2], "leak mge_collate_batch", rows[:1])
        t.true("leak: the flame graph names mge_collate_batch", '>mge_collate_batch</text>' in dom)
        t.true("leak: the chart projects the leak and says when the limit is reached",
               'class="projection"' in dom and "limit reached at step" in dom)
    else:
        t.true("healthy: no site row is a leak", rows and not any("v-leak" in r[2] for r in rows))
    return dom


def check_clicks(t, html, tmp, data):
    page = os.path.join(tmp, "clicked.html")
    with open(page, "w", encoding="utf-8") as f:
        f.write(rl.with_script(html, interact_script()))
    dom = rl.dump_dom(page)
    m = re.search(r'<pre id="mg-test">(.*?)</pre>', dom, re.S)
    t.true("clicks: the clicking script ran", m is not None, "mg-test", dom[-300:])
    if not m:
        return
    out = json.loads(m.group(1).replace("&quot;", '"').replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&"))
    P = data["processes"][0]
    t.true("clicks: a row opens its stack (mge_collate_batch, mge_loader.c, worker_main)",
           out["stack"] and all(w in out["stack"] for w in ("mge_collate_batch", "mge_loader.c", "worker_main")),
           "stack", out["stack"])
    table = [k for k, s in enumerate(P["sites"]) if s["table"]]
    t.equal("clicks: 'show all' lists every table site", len(table), out["rows_all"])
    live = lambda k: P["sites"][k]["live_bytes_last_x"]
    t.true("clicks: the live column sorts largest first, then smallest first",
           [live(k) for k in out["live_desc"]] == sorted((live(k) for k in table), reverse=True) and
           [live(k) for k in out["live_asc"]] == sorted(live(k) for k in table), "sorted",
           ([live(k) for k in out["live_desc"]][:5], [live(k) for k in out["live_asc"]][:5]))
    t.true("clicks: the sorted column is marked", "sorted asc" in out["sorted_class"], "sorted asc", out["sorted_class"])
    t.true("clicks: the slider moves the flame graph to the first and the last step",
           out["pos_first"].startswith("live bytes at step %d:" % P["slider_x"][0]) and
           out["pos_last"].startswith("live bytes at step %d:" % P["slider_x"][-1]), "first/last",
           (out["pos_first"], out["pos_last"]))
    t.true("clicks: a frame zooms in (the crumbs name it)", "mge_collate_batch" in out["crumbs"] and out["zoomed_rects"] > 0,
           "crumbs", out["crumbs"])
    t.true("clicks: growth mode weighs the growth between two steps",
           out["growth_pos"].startswith("growth from step") and out["growth_rects"] > 0, "growth from step ...",
           out["growth_pos"])
    t.true("clicks: 'to the limit' draws the limit line", out["limit_line"] == 1, 1, out["limit_line"])
    t.equal("clicks: unchecking RSS hides its path", 0, out["rss_after_unchecking"])


def check_screenshot(t, html_path, tmp, name):
    png = os.path.join(tmp, name + ".png")
    ok = rl.screenshot(html_path, png, 1280, 1800)
    t.true("%s: a 1280x1800 screenshot" % name, ok and rl.png_size(png) == (1280, 1800) and os.path.getsize(png) > 20000,
           (1280, 1800), ok and (rl.png_size(png), os.path.getsize(png)))


def check_family(t, mgprobe, mgreport, prog, tmp, browser):
    trace = os.path.join(tmp, "family.mgt")
    rc, out, err = rl.probe_run(mgprobe, trace, [prog, "--workers", "2"], cwd=tmp)
    t.equal("prog_steps --workers 2 runs under the probe", 0, rc)
    page = os.path.join(tmp, "family.html")
    html, data, doc = check_file(t, mgreport, trace, page, "family")
    procs = doc["processes"]
    grows = [p["process"]["pid"] for p in procs if p["verdict"] in ("leak", "growing", "retention")]
    tree = re.search(r'<section id="processes">(.*?)</section>', html, re.S)
    t.true("family: a process tree of 3 rows", tree and len(re.findall(r"<tr><td", tree.group(1))) == 3, 3,
           tree and tree.group(1)[:500])
    summary = re.search(r'<p class="verdict-text">(.*?)</p>', tree.group(1)).group(1) if tree else ""
    t.true("family: the summary names the processes that grow (%s)" % grows,
           summary.startswith("3 processes traced;") and all("[pid %d]" % p in summary for p in grows) and
           summary.count("[pid ") == len(grows), grows, summary)
    t.true("family: the leaking worker is among them", any(p["verdict"] == "leak" for p in procs), "a leak",
           [p["verdict"] for p in procs])
    t.equal("family: one panel per process", 3, len(data["processes"]))
    if browser:
        dom = rl.dump_dom(page)
        t.equal("family: three charts drawn", 3, len(re.findall(r'<path class="series s-rss"', dom)))


def check_csv(t, mgreport, tmp, browser):
    n = 5000
    rows = [(i, 1_000_000_000 + i * 100_000 + (500_000_000 if i % 97 == 0 else 0) - (i % 7) * 1_000_000) for i in range(n)]
    path = os.path.join(tmp, "big.csv")
    with open(path, "w") as f:
        f.write("step,rss\n" + "".join("%d,%d\n" % r for r in rows))
    page = os.path.join(tmp, "big.html")
    rc, out, err = rl.mgreport(mgreport, ["--series", path, "--html", page])
    t.equal("CSV: --series --html exits 0", 0, rc)
    with open(page) as f:
        html = f.read()
    _, data = rl.page_data(html)
    s = data["processes"][0]["series"][0]
    t.true("CSV: %d points become %d buckets" % (n, MAX_POINTS),
           len(data["processes"][0]["x"]) == MAX_POINTS and len(s["lo"]) == len(s["hi"]) == MAX_POINTS and "y" not in s)
    lo = [min(v for _, v in rows[b * n // MAX_POINTS:(b + 1) * n // MAX_POINTS]) for b in range(MAX_POINTS)]
    hi = [max(v for _, v in rows[b * n // MAX_POINTS:(b + 1) * n // MAX_POINTS]) for b in range(MAX_POINTS)]
    t.true("CSV: each bucket keeps its minimum and maximum exactly (the spikes survive)", s["lo"] == lo and s["hi"] == hi,
           (lo[:3], hi[:3]), (s["lo"][:3], s["hi"][:3]))
    if browser:
        dom = rl.dump_dom(page)
        t.true("CSV: the chart draws the band between minimum and maximum",
               '<path class="band"' in dom and '<path class="series s-rss"' in dom)


def main():
    mgprobe, mgreport, mgtrain, prog = sys.argv[1:5]
    t = rl.Check()
    browser = rl.chromium() is not None
    with tempfile.TemporaryDirectory() as tmp:
        runs = {"leak": [mgtrain, "--scenario", "leak", "--batch", "8"],
                "healthy": [mgtrain, "--scenario", "healthy", "--batch", "8"]}
        traces = {k: os.path.join(tmp, k + ".mgt") for k in runs}
        results = rl.parallel([lambda k=k: rl.probe_run(mgprobe, traces[k], runs[k]) for k in runs])
        for k, (rc, out, err) in zip(runs, results):
            t.true("mgtrain --scenario %s runs under the probe" % k, rc == 0, 0, (rc, err[-300:]))
        pages = {}
        for k in runs:
            page = os.path.join(tmp, k + ".html")
            pages[k] = (page,) + check_file(t, mgreport, traces[k], page, k)
        if browser:
            for k in runs:
                check_drawn(t, pages[k][0], pages[k][2], k, k == "leak")
                check_screenshot(t, pages[k][0], tmp, k)
            check_clicks(t, pages["leak"][1], tmp, pages["leak"][2])
        check_family(t, mgprobe, mgreport, prog, tmp, browser)
        check_csv(t, mgreport, tmp, browser)
    t.done(skipped=None if browser else "chromium is not installed: the page was not checked in a browser")


if __name__ == "__main__":
    main()
