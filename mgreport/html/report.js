// SPDX-License-Identifier: MIT
// report.js: draws mgreport's HTML report from the page's JSON block (id "mg-data", described in
// docs/report-html.md): per process, the memory chart, the sortable site table and the flame graph
// (an icicle: the outermost frame on top). Hand-written, no library; SVG is built as markup and
// inserted into the page, so the page names no URL at all. It only draws: every verdict and number
// comes from mgreport.
(function () {
  'use strict';

  var DATA = JSON.parse(document.getElementById('mg-data').textContent);
  var COLORS = {rss: '#2563eb', heap: '#16a34a', mmap: '#9333ea', free_kept: '#ea580c', device: '#0891b2'};
  var SPARE = ['#2563eb', '#16a34a', '#9333ea', '#ea580c', '#0891b2', '#be185d', '#4d7c0f', '#57606a'];
  var RANK = {leak: 4, growing: 3, retention: 2, plateau: 1, stable: 0};
  var SHORT_TABLE = 15; // site rows shown before "show all"
  var UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB']; // IEC binary units, as the rest of mg prints them

  // ---- words and numbers ----

  function esc(s) {
    return String(s).replace(/[&<>"]/g, function (c) {
      return {'&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;'}[c];
    });
  }

  function bytes(b) {
    if (b === null || b === undefined || !isFinite(b)) return '-';
    var a = Math.abs(b), k = 0;
    while (a >= 1024 && k < 4) { a /= 1024; k++; }
    var s = k === 0 ? a.toFixed(0) : a.toFixed(a < 10 ? 2 : a < 100 ? 1 : 0);
    return (b < 0 ? '-' : '') + s + ' ' + UNITS[k];
  }

  function count(n) { return String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ','); }
  function perX(P) { return P.x_axis === 'step' ? 'per step' : 'per second'; }
  function fmtX(P, x) {
    if (P.x_axis === 'step') return 'step ' + count(Math.round(x));
    return (x < 10 ? x.toFixed(1) : count(Math.round(x))) + ' s';
  }
  function fixed(v, d) { return Math.round(v * Math.pow(10, d)) / Math.pow(10, d); }
  function base(path) { return path ? path.slice(path.lastIndexOf('/') + 1) : ''; }
  function verdictTag(v) { return '<span class="verdict v-' + esc(v || 'none') + '">' + esc(v || 'not judged') + '</span>'; }

  // Ticks at 1, 2, 5 times a power of ten of the axis unit.
  function ticks(lo, hi, n) {
    if (!(hi > lo)) return [lo];
    var raw = (hi - lo) / n, p = Math.pow(10, Math.floor(Math.log(raw) / Math.LN10)), m = raw / p;
    var st = (m < 1.5 ? 1 : m < 3 ? 2 : m < 7 ? 5 : 10) * p, out = [];
    for (var v = Math.ceil(lo / st) * st; v <= hi + st * 1e-9; v += st) out.push(v);
    return out;
  }
  // Byte ticks: round numbers of the IEC unit of the top value, labelled in that unit with the
  // decimals the step needs ("0.2 GiB", "0.4 GiB").
  function byteTicks(hi, n) {
    var u = 1, k = 0;
    while (hi / u >= 1024 && k < 4) { u *= 1024; k++; }
    var t = ticks(0, hi / u, n), step = t.length > 1 ? t[1] - t[0] : 1;
    var dec = Math.max(0, Math.min(3, -Math.floor(Math.log(step) / Math.LN10 + 1e-9)));
    return t.map(function (v) { return {v: v * u, label: v === 0 ? '0' : v.toFixed(dec) + ' ' + UNITS[k]}; });
  }

  function el(tag, cls, html) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (html !== undefined) e.innerHTML = html;
    return e;
  }

  // ---- frames ----

  function frame(P, i) {
    var f = P.frames[i];
    return {label: P.strings[f[0]], fn: P.strings[f[1]], file: f[2] >= 0 ? P.strings[f[2]] : null,
      line: f[3], module: P.strings[f[4]], inlined: (f[5] & 1) !== 0, python: (f[5] & 2) !== 0};
  }
  function where(P, fr) {
    if (fr.file && !fr.python) return fr.label + ' ' + base(fr.file) + ':' + fr.line;
    return fr.label;
  }
  function siteValue(s, k) { return typeof s.s === 'number' ? s.s : s.s[k]; }

  // ---- the memory chart ----

  function seriesY(s) { return s.y || s.hi; }
  function lastOf(a) { return a[a.length - 1]; }

  // The fit whose projection and plateau the chart draws for series s: the process verdict for
  // the first series of a trace (the answer), else the series' own.
  function fitOf(P, s, i) { return i === 0 && P.process_fit ? P.process_fit : (s.verdict ? s : null); }

  function oomX(P, fit) {
    var to = fit ? (P.x_axis === 'step' ? fit.steps_to_oom : fit.seconds_to_oom) : null;
    if (!fit || (fit.verdict !== 'leak' && fit.verdict !== 'growing') || to === null || to === undefined) return null;
    return lastOf(P.x) + to;
  }

  // The limit is drawn by default when it is near: reached within 10 runs and within 20 times the
  // chart's height.
  function limitNear(P, ymax) {
    var fit = fitOf(P, P.series[0], 0), ox = oomX(P, fit), span = lastOf(P.x) - P.x[0];
    return P.limit !== null && ox !== null && ox - lastOf(P.x) <= 10 * Math.max(span, 1) && P.limit <= 20 * ymax;
  }

  function chartFrame(P, st) {
    var x0 = P.x[0], x1 = lastOf(P.x), ymax = 0, span = Math.max(x1 - x0, 1e-9), proj = false;
    P.series.forEach(function (s, i) {
      if (st.hidden[s.name]) return;
      seriesY(s).forEach(function (v) { if (v > ymax) ymax = v; });
      var fit = fitOf(P, s, i);
      if (fit && (fit.verdict === 'leak' || fit.verdict === 'growing') && fit.slope_per_x > 0) proj = true;
    });
    var xmax = x1 + (proj ? 0.25 * span : 0);
    var main = fitOf(P, P.series[0], 0);
    if (proj && st.scale !== 'limit' && !st.hidden[P.series[0].name] && main && main.slope_per_x > 0 && main.level !== null &&
        (main.verdict === 'leak' || main.verdict === 'growing')) // room for the answer's projection
      ymax = Math.max(ymax, main.level + main.slope_per_x * (xmax - x1));
    if (st.scale === 'limit' && P.limit !== null) {
      ymax = Math.max(ymax, P.limit);
      var ox = oomX(P, fitOf(P, P.series[0], 0));
      if (ox !== null) xmax = Math.max(xmax, ox * 1.02);
    }
    return {x0: x0, x1: x1, xmax: xmax, ymax: (ymax > 0 ? ymax : 1) * 1.08};
  }

  function phaseBands(P, X, fr, H, M) {
    var ph = P.phases || [], out = '', len = {};
    if (ph.length < 2) return '';
    ph.forEach(function (p, i) {
      var end = i + 1 < ph.length ? ph[i + 1].x : fr.x1;
      len[p.label] = (len[p.label] || 0) + (end - p.x);
    });
    var main = Object.keys(len).sort(function (a, b) { return len[b] - len[a] || (a < b ? -1 : 1); })[0];
    ph.forEach(function (p, i) {
      if (p.label === main) return;
      var end = i + 1 < ph.length ? ph[i + 1].x : fr.x1, a = X(p.x), w = Math.max(X(end) - a, 1.5);
      out += '<rect class="phase" x="' + fixed(a, 1) + '" y="' + M.t + '" width="' + fixed(w, 1) +
        '" height="' + (H - M.t - M.b) + '"><title>' + esc(p.label + ' from ' + fmtX(P, p.x)) + '</title></rect>';
      out += '<text class="phase-label" x="' + fixed(a + 2, 1) + '" y="' + (M.t + 11) + '">' + esc(p.label) + '</text>';
    });
    return out;
  }

  function axes(P, X, Y, fr, W, H, M) {
    var out = '<g class="grid">';
    var yt = byteTicks(fr.ymax, 6), xt = ticks(fr.x0, fr.xmax, 8);
    yt.forEach(function (t) {
      out += '<line x1="' + M.l + '" x2="' + (W - M.r) + '" y1="' + fixed(Y(t.v), 1) + '" y2="' + fixed(Y(t.v), 1) + '"/>';
    });
    out += '</g><g class="axis"><line x1="' + M.l + '" x2="' + (W - M.r) + '" y1="' + (H - M.b) + '" y2="' + (H - M.b) + '"/>';
    out += '<line x1="' + M.l + '" x2="' + M.l + '" y1="' + M.t + '" y2="' + (H - M.b) + '"/></g>';
    yt.forEach(function (t) {
      out += '<text x="' + (M.l - 6) + '" y="' + fixed(Y(t.v) + 4, 1) + '" text-anchor="end">' + esc(t.label) + '</text>';
    });
    xt.forEach(function (v) {
      out += '<text x="' + fixed(X(v), 1) + '" y="' + (H - M.b + 15) + '" text-anchor="middle">' + esc(count(fixed(v, 2))) + '</text>';
    });
    out += '<text x="' + (W - M.r) + '" y="' + (H - 4) + '" text-anchor="end">' + (P.x_axis === 'step' ? 'step' : 'seconds') + '</text>';
    return out;
  }

  function seriesPath(P, s, X, Y) {
    var d = '', color = s.color;
    if (s.y) {
      s.y.forEach(function (v, i) { d += (i ? 'L' : 'M') + fixed(X(P.x[i]), 1) + ' ' + fixed(Y(v), 1); });
      return '<path class="series s-' + esc(s.name) + '" stroke="' + color + '" d="' + d + '"/>';
    }
    var band = '', n = s.lo.length; // downsampled: the band between each bucket's minimum and maximum
    for (var i = 0; i < n; i++) band += (i ? 'L' : 'M') + fixed(X(P.x[i]), 1) + ' ' + fixed(Y(s.hi[i]), 1);
    for (i = n - 1; i >= 0; i--) band += 'L' + fixed(X(P.x[i]), 1) + ' ' + fixed(Y(s.lo[i]), 1);
    s.hi.forEach(function (v, i) { d += (i ? 'L' : 'M') + fixed(X(P.x[i]), 1) + ' ' + fixed(Y((v + s.lo[i]) / 2), 1); });
    return '<path class="band" fill="' + color + '" d="' + band + 'Z"/>' +
      '<path class="series s-' + esc(s.name) + '" stroke="' + color + '" d="' + d + '"/>';
  }

  // Plateau: where the series levelled and at what; leak or growing: the slope carried on to the
  // limit (or to the chart's edge), with the step at which the limit is reached.
  function annotations(P, s, i, X, Y, fr, W, M) {
    var fit = fitOf(P, s, i), out = '', main = i === 0;
    if (!fit) return '';
    if (fit.verdict === 'plateau' && fit.plateau_at !== null && fit.plateau_level !== null) {
      var px = X(fit.plateau_at), py = Y(fit.plateau_level);
      out += '<line class="plateau" stroke="' + s.color + '" x1="' + fixed(px, 1) + '" x2="' + fixed(X(fr.x1), 1) +
        '" y1="' + fixed(py, 1) + '" y2="' + fixed(py, 1) + '"/><circle cx="' + fixed(px, 1) + '" cy="' + fixed(py, 1) +
        '" r="4" fill="' + s.color + '"/>';
      if (main) out += '<text class="note" x="' + fixed(px + 6, 1) + '" y="' + fixed(py - 8 < M.t + 24 ? py + 16 : py - 8, 1) + '">plateau ' +
        esc(bytes(fit.plateau_level)) + ' from ' + esc(fmtX(P, fit.plateau_at)) + '</text>';
    }
    if ((fit.verdict === 'leak' || fit.verdict === 'growing') && fit.slope_per_x > 0) {
      var xa = fr.x1, ya = fit.level !== null ? fit.level : lastOf(seriesY(s)), xb = fr.xmax, yb = ya + fit.slope_per_x * (xb - xa);
      var ox = main ? oomX(P, fit) : null;
      if (ox !== null && ox < xb) { xb = ox; yb = P.limit; }
      if (yb > fr.ymax) { xb = xa + (fr.ymax - ya) / fit.slope_per_x; yb = fr.ymax; }
      out += '<path class="projection" stroke="' + s.color + '" d="M' + fixed(X(xa), 1) + ' ' + fixed(Y(ya), 1) +
        'L' + fixed(X(xb), 1) + ' ' + fixed(Y(yb), 1) + '"/>';
      if (main) {
        var txt = fit.verdict + ': ' + bytes(fit.slope_per_x) + ' ' + perX(P);
        if (ox !== null) txt += ', limit reached at ' + fmtX(P, ox);
        out += '<text class="note leak" x="' + fixed(W - M.r, 1) + '" y="' + (M.t - 8) + '" text-anchor="end">' + esc(txt) + '</text>';
      }
    }
    return out;
  }

  function limitLine(P, X, Y, fr, W, M) {
    if (P.limit === null || P.limit > fr.ymax) return '';
    var y = fixed(Y(P.limit), 1);
    return '<line class="limit" x1="' + M.l + '" x2="' + (W - M.r) + '" y1="' + y + '" y2="' + y + '"/>' +
      '<text class="note leak" x="' + (M.l + 6) + '" y="' + fixed(Y(P.limit) - 5, 1) + '">limit ' + esc(bytes(P.limit)) + '</text>';
  }

  function chartSvg(P, st) {
    var W = 960, H = 330, M = {l: 76, r: 14, t: 28, b: 34};
    var fr = chartFrame(P, st);
    var X = function (x) { return M.l + (x - fr.x0) / Math.max(fr.xmax - fr.x0, 1e-9) * (W - M.l - M.r); };
    var Y = function (y) { return H - M.b - y / fr.ymax * (H - M.t - M.b); };
    var out = '<svg class="memory" viewBox="0 0 ' + W + ' ' + H + '" role="img" aria-label="memory over the run">';
    out += phaseBands(P, X, fr, H, M) + axes(P, X, Y, fr, W, H, M);
    P.series.forEach(function (s, i) {
      if (!st.hidden[s.name]) out += seriesPath(P, s, X, Y) + annotations(P, s, i, X, Y, fr, W, M);
    });
    out += limitLine(P, X, Y, fr, W, M);
    out += '<g class="hover"></g><rect class="catch" x="' + M.l + '" y="' + M.t + '" width="' + (W - M.l - M.r) +
      '" height="' + (H - M.t - M.b) + '" fill="transparent"/></svg>';
    return {svg: out, X: X, W: W, H: H, M: M, fr: fr};
  }

  // The values of every shown series at the point nearest the mouse.
  function hover(P, st, wrap, g) {
    var svg = wrap.querySelector('svg.memory'), tip = wrap.querySelector('.tip'), catcher = svg.querySelector('rect.catch');
    catcher.addEventListener('mousemove', function (ev) {
      var r = svg.getBoundingClientRect(), sx = (ev.clientX - r.left) / r.width * g.W;
      var best = 0;
      for (var i = 1; i < P.x.length; i++) if (Math.abs(g.X(P.x[i]) - sx) < Math.abs(g.X(P.x[best]) - sx)) best = i;
      var x = fixed(g.X(P.x[best]), 1), html = '<b>' + esc(fmtX(P, P.x[best])) + '</b>';
      P.series.forEach(function (s) {
        if (!st.hidden[s.name]) html += '<br><span style="color:' + s.color + '">&#9632;</span> ' + esc(s.title) + ' ' + esc(bytes(seriesY(s)[best]));
      });
      svg.querySelector('g.hover').innerHTML = '<line x1="' + x + '" x2="' + x + '" y1="' + g.M.t + '" y2="' + (g.H - g.M.b) + '"/>';
      tip.innerHTML = html;
      tip.style.display = 'block';
      var left = ev.clientX - wrap.getBoundingClientRect().left + 14;
      tip.style.left = (left + tip.offsetWidth > wrap.clientWidth ? left - tip.offsetWidth - 28 : left) + 'px';
      tip.style.top = (ev.clientY - wrap.getBoundingClientRect().top + 10) + 'px';
    });
    catcher.addEventListener('mouseleave', function () {
      tip.style.display = 'none';
      svg.querySelector('g.hover').innerHTML = '';
    });
  }

  function drawChart(P, box) {
    if (!P.x.length) { box.innerHTML = '<p class="muted">No points to draw.</p>'; return; }
    P.series.forEach(function (s, i) { s.color = COLORS[s.name] || SPARE[i % SPARE.length]; });
    var peak = 0;
    P.series.forEach(function (s) { seriesY(s).forEach(function (v) { if (v > peak) peak = v; }); });
    var st = {hidden: {}, scale: limitNear(P, peak) ? 'limit' : 'run'};
    box.innerHTML = '<h3>Memory over the run</h3>';
    var bar = el('div', 'toolbar'), wrap = el('div', 'chart-wrap');
    box.appendChild(bar);
    box.appendChild(wrap);
    var note = el('span', 'muted');
    function render() {
      var g = chartSvg(P, st);
      wrap.innerHTML = g.svg + '<div class="tip" style="display:none"></div>';
      hover(P, st, wrap, g);
      note.textContent = P.limit !== null && P.limit > g.fr.ymax ? 'limit ' + bytes(P.limit) + ': above the chart' : '';
    }
    P.series.forEach(function (s) {
      var lab = el('label', '', '<input type="checkbox" checked> <span class="swatch" style="background:' + s.color +
        '"></span>' + esc(s.title) + (s.verdict ? ' ' + verdictTag(s.verdict) : ''));
      lab.querySelector('input').addEventListener('change', function (ev) { st.hidden[s.name] = !ev.target.checked; render(); });
      bar.appendChild(lab);
    });
    if (P.limit !== null) {
      [['run', 'whole run'], ['limit', 'to the limit']].forEach(function (b) {
        var btn = el('button', st.scale === b[0] ? 'on' : '', esc(b[1]));
        btn.type = 'button';
        btn.addEventListener('click', function () {
          st.scale = b[0];
          bar.querySelectorAll('button').forEach(function (x) { x.className = x === btn ? 'on' : ''; });
          render();
        });
        bar.appendChild(btn);
      });
      bar.appendChild(note);
    }
    render();
  }

  // ---- the site table ----

  function spark(P, s) {
    if (typeof s.s === 'number') return '<svg class="spark" viewBox="0 0 120 22"><path d="M0 11L120 11"/></svg>';
    var max = Math.max.apply(null, s.s), n = s.s.length, d = '';
    s.s.forEach(function (v, k) {
      d += (k ? 'L' : 'M') + fixed(k / Math.max(n - 1, 1) * 120, 1) + ' ' + fixed(20 - (max > 0 ? v / max : 0) * 18, 1);
    });
    return '<svg class="spark v-' + esc(s.verdict || 'none') + '" viewBox="0 0 120 22"><path d="' + d + '"/></svg>';
  }

  function stackHtml(P, s) {
    var out = '<ol class="stack-frames">';
    s.stack.forEach(function (fi, j) {
      var fr = frame(P, fi), cls = (fr.python ? 'py' : '') + (j === s.user ? ' user' : '');
      out += '<li class="' + cls + '"><span class="fn">' + esc(fr.label) + '</span>' + (fr.inlined ? ' <span class="mod">(inlined)</span>' : '');
      if (fr.file) out += '  <span class="loc">' + esc(fr.file) + ':' + fr.line + '</span>';
      if (!fr.python) out += '  <span class="mod">[' + esc(base(fr.module)) + ']</span>';
      out += '</li>';
    });
    if (!s.stack.length) out += '<li class="muted">no stack recorded</li>';
    out += '</ol><p class="muted">site ' + s.id + ', ' + esc(s.kind) + ': ' + esc(bytes(s.live_bytes_last_x)) + ' live at the last ' +
      (P.x_axis === 'step' ? 'step' : 'point') + ', ' + esc(bytes(s.live_bytes)) + ' in ' + count(s.live_count) +
      ' block' + (s.live_count === 1 ? '' : 's') + ' at exit; peak ' + esc(bytes(s.peak_bytes)) + '; ' + count(s.allocs) +
      ' allocations, ' + count(s.frees) + ' frees' + (s.why ? '. Evidence: ' + esc(s.why) : '') + '</p>';
    return out;
  }

  var COLUMNS = [
    {key: 'verdict', title: 'verdict', val: function (s) { return RANK[s.verdict] !== undefined ? RANK[s.verdict] : -1; }},
    {key: 'live', title: 'live', num: true, val: function (s) { return s.live_bytes_last_x; }},
    {key: 'slope', title: 'growth', num: true, val: function (s) { return s.slope_per_x === undefined || s.slope_per_x === null ? -Infinity : s.slope_per_x; }},
    {key: 'allocs', title: 'allocations', num: true, val: function (s) { return s.allocs; }},
    {key: 'spark', title: 'over the run'},
    {key: 'where', title: 'where (first frame in your code)', val: function (s, P) { return s.user >= 0 ? where(P, frame(P, s.stack[s.user])) : ''; }}
  ];

  function siteRow(P, s, i) {
    var fr = s.user >= 0 ? frame(P, s.stack[s.user]) : null;
    return '<tr class="site" data-id="' + s.id + '" data-k="' + i + '"><td>' + verdictTag(s.verdict) + '</td><td class="num">' +
      esc(bytes(s.live_bytes_last_x)) + '</td><td class="num">' + (s.slope_per_x === undefined || s.slope_per_x === null ? '-' : esc(bytes(s.slope_per_x)) + ' ' + perX(P)) +
      '</td><td class="num">' + count(s.allocs) + '</td><td>' + spark(P, s) + '</td><td class="site-where">' +
      (s.pymalloc_arena ? '<span class="muted">[pymalloc arena]</span> ' : '') +
      (fr ? esc(where(P, fr)) : '<span class="muted">no stack</span>') + '</td></tr>';
  }

  function drawSites(P, box) {
    var rows = [];
    P.sites.forEach(function (s, i) { if (s.table) rows.push(i); });
    var st = {key: null, asc: false, all: rows.length <= SHORT_TABLE};
    box.innerHTML = '<h3>Allocation sites</h3><p class="muted">The ' + rows.length + ' sites that grew most over the run (of ' +
      count(P.sites_total) + '); click a column to sort, a row for its stack.</p>';
    var table = el('table', 'site-table'), more = el('p', 'more');
    box.appendChild(table);
    box.appendChild(more);
    more.addEventListener('click', function () { st.all = !st.all; render(); });
    function render() {
      var order = rows.slice();
      if (st.key) {
        var col = COLUMNS.filter(function (c) { return c.key === st.key; })[0];
        order.sort(function (a, b) {
          var va = col.val(P.sites[a], P), vb = col.val(P.sites[b], P);
          var c = va < vb ? -1 : va > vb ? 1 : a - b;
          return st.asc ? c : -c;
        });
      }
      var head = '<thead><tr>' + COLUMNS.map(function (c) {
        return '<th data-key="' + c.key + '" class="' + (c.num ? 'num' : '') + (st.key === c.key ? ' sorted' + (st.asc ? ' asc' : '') : '') + '">' + esc(c.title) + '</th>';
      }).join('') + '</tr></thead>';
      if (!st.all) order = order.slice(0, SHORT_TABLE);
      table.innerHTML = head + '<tbody>' + order.map(function (k) { return siteRow(P, P.sites[k], k); }).join('') + '</tbody>';
      more.innerHTML = rows.length <= SHORT_TABLE ? '' : '<button type="button">' +
        (st.all ? 'show the first ' + SHORT_TABLE : 'show all ' + rows.length + ' sites') + '</button>';
    }
    table.addEventListener('click', function (ev) {
      var th = ev.target.closest('th'), tr = ev.target.closest('tr.site');
      if (th && th.dataset.key !== 'spark') {
        st.asc = st.key === th.dataset.key ? !st.asc : false;
        st.key = th.dataset.key;
        render();
      } else if (tr) {
        var next = tr.nextElementSibling;
        if (next && next.classList.contains('stack')) { next.remove(); tr.classList.remove('open'); return; }
        var row = el('tr', 'stack', '<td colspan="' + COLUMNS.length + '">' + stackHtml(P, P.sites[+tr.dataset.k]) + '</td>');
        tr.after(row);
        tr.classList.add('open');
      }
    });
    render();
  }

  // ---- the flame graph (an icicle: the outermost frame on top, callees below) ----

  // Stacks merge by prefix, frames by name (as flame graphs do): a node keeps the frames it stands
  // for, so the info line can name their files and lines.
  function buildTree(P, weight, other) {
    var root = {key: 'all', value: 0, leak: 0, kids: {}, depth: 0, parent: null, frames: []};
    function add(node, key, fi, w, leak) {
      var k = node.kids[key] || (node.kids[key] = {key: key, value: 0, leak: 0, kids: {}, depth: node.depth + 1, parent: node, frames: []});
      k.value += w;
      k.leak += leak;
      if (fi !== null && k.frames.indexOf(fi) < 0) k.frames.push(fi);
      return k;
    }
    P.sites.forEach(function (s) {
      var w = weight(s);
      if (!(w > 0)) return;
      var leak = s.verdict === 'leak' ? w : 0, node = root;
      root.value += w;
      root.leak += leak;
      for (var j = s.stack.length - 1; j >= 0; j--) node = add(node, P.frames[s.stack[j]][0], s.stack[j], w, leak);
      if (!s.stack.length) add(node, 'nostack', null, w, leak);
    });
    if (other > 0) { add(root, 'other', null, other, 0); root.value += other; }
    return root;
  }

  function nodeName(P, n) {
    if (n.key === 'all') return 'all tracked memory';
    if (n.key === 'other') return '[' + count(P.other_sites) + ' other sites]';
    if (n.key === 'nostack') return '[no stack]';
    return P.strings[n.key];
  }

  function nodeColor(P, n) {
    if (n.key === 'other' || n.key === 'all' || n.key === 'nostack') return '#d0d7de';
    var f = frame(P, n.frames[0]), h = 0, m = f.module || '';
    for (var i = 0; i < m.length; i++) h = (h * 31 + m.charCodeAt(i)) % 997;
    var frac = n.value > 0 ? n.leak / n.value : 0;
    if (frac > 0.5) return 'hsl(' + (h % 12) + ', 78%, ' + (62 - 10 * frac).toFixed(0) + '%)';
    return 'hsl(' + (28 + h % 28) + ', ' + (f.python ? 55 : 82) + '%, ' + (70 + h % 10) + '%)';
  }

  function sortedKids(n) {
    return Object.keys(n.kids).map(function (k) { return n.kids[k]; }).sort(function (a, b) {
      return b.value - a.value || (String(a.key) < String(b.key) ? -1 : 1);
    });
  }

  function icicleSvg(P, root, focus) {
    var W = 1200, RH = 18, rows = [], path = [], n;
    for (n = focus; n; n = n.parent) path.unshift(n);
    path.forEach(function (a, d) { rows.push({n: a, x: 0, w: W, d: d}); });
    var top = path.length - 1;
    (function lay(node, x, d) {
      var kx = x;
      sortedKids(node).forEach(function (k) {
        var w = k.value / focus.value * W;
        if (w >= 0.4) { rows.push({n: k, x: kx, w: w, d: d + 1}); lay(k, kx, d + 1); }
        kx += w;
      });
    })(focus, 0, top);
    var depth = 0;
    rows.forEach(function (r) { depth = Math.max(depth, r.d); });
    var out = '<svg class="icicle" viewBox="0 0 ' + W + ' ' + ((depth + 1) * RH) + '">';
    rows.forEach(function (r, i) {
      var name = nodeName(P, r.n);
      out += '<g data-i="' + i + '"><rect class="node" x="' + fixed(r.x, 1) + '" y="' + r.d * RH + '" width="' + fixed(r.w, 1) +
        '" height="' + (RH - 1) + '" fill="' + nodeColor(P, r.n) + '"><title>' + esc(name + ': ' + bytes(r.n.value)) + '</title></rect>';
      if (r.w > 36) {
        var chars = Math.floor((r.w - 6) / 6.6), t = name.length > chars ? name.slice(0, Math.max(chars - 1, 1)) + '\u2026' : name;
        out += '<text class="fl" x="' + fixed(r.x + 3, 1) + '" y="' + (r.d * RH + 13) + '">' + esc(t) + '</text>';
      }
      out += '</g>';
    });
    return {svg: out + '</svg>', rows: rows};
  }

  function flameControls(P, st) {
    var last = P.slider_x.length - 1;
    function slider(name, v) {
      return '<input type="range" min="0" max="' + last + '" value="' + v + '" data-s="' + name + '">';
    }
    var h = '<div class="toolbar"><button type="button" data-mode="live" class="' + (st.mode === 'live' ? 'on' : '') +
      '">live bytes at</button><button type="button" data-mode="growth" class="' + (st.mode === 'growth' ? 'on' : '') +
      '">growth between</button>';
    if (st.mode === 'live') h += slider('at', st.at) + ' <span class="pos"></span>';
    else h += slider('from', st.from) + slider('to', st.to) + ' <span class="pos"></span>';
    return h + '</div><div class="crumbs"></div><div class="info"></div><div class="flame-box"></div>';
  }

  function flameWeights(P, st) {
    if (st.mode === 'live') {
      return {w: function (s) { return siteValue(s, st.at); }, other: P.other[st.at],
        what: 'live bytes at ' + fmtX(P, P.slider_x[st.at])};
    }
    var a = Math.min(st.from, st.to), b = Math.max(st.from, st.to), shrunk = 0;
    P.sites.forEach(function (s) { var g = siteValue(s, b) - siteValue(s, a); if (g < 0) shrunk -= g; });
    return {w: function (s) { return siteValue(s, b) - siteValue(s, a); }, other: P.other[b] - P.other[a],
      what: 'growth from ' + fmtX(P, P.slider_x[a]) + ' to ' + fmtX(P, P.slider_x[b]) + (shrunk > 0 ? ' (sites that shrank, ' + bytes(shrunk) + ' in all, are left out)' : '')};
  }

  function drawFlame(P, box) {
    if (!P.slider_x || !P.slider_x.length) return;
    var last = P.slider_x.length - 1, st = {mode: 'live', at: last, from: 0, to: last, focusPath: []};
    var root, focus;
    function renderGraph() {
      var fw = flameWeights(P, st);
      root = buildTree(P, fw.w, fw.other);
      focus = root;
      st.focusPath.every(function (k) { var nx = focus.kids[k]; if (nx) focus = nx; return !!nx; });
      box.querySelector('.pos').textContent = fw.what + ': ' + bytes(root.value);
      var crumbs = [], n;
      for (n = focus; n; n = n.parent) crumbs.unshift(n);
      box.querySelector('.crumbs').innerHTML = crumbs.length > 1 ? crumbs.map(function (c, i) {
        return '<a data-up="' + i + '">' + esc(nodeName(P, c)) + '</a>';
      }).join(' &rsaquo; ') : '<span class="muted">Width is bytes, callers above callees; red frames hold mostly the bytes of leaking sites. ' +
        'Click a frame to zoom in, a bar above it to zoom out.</span>';
      if (!(root.value > 0)) {
        box.querySelector('.flame-box').innerHTML = '<p class="muted">' + (st.mode === 'live' ? 'No memory is tracked at this point.'
          : 'No site grew between these points.') + '</p>';
        return;
      }
      var ic = icicleSvg(P, root, focus);
      box.querySelector('.flame-box').innerHTML = ic.svg;
      box.querySelector('.flame-box').rows = ic.rows;
    }
    function renderAll() {
      box.innerHTML = '<h3>Where the memory is (flame graph)</h3>' + flameControls(P, st);
      renderGraph();
    }
    function pathTo(n) { var p = []; for (; n && n.parent; n = n.parent) p.unshift(n.key); return p; }
    box.addEventListener('click', function (ev) {
      var b = ev.target.closest('button[data-mode]'), g = ev.target.closest('g[data-i]'), up = ev.target.closest('a[data-up]');
      if (b) { st.mode = b.dataset.mode; renderAll(); return; }
      if (up) { st.focusPath = st.focusPath.slice(0, +up.dataset.up); renderGraph(); return; }
      if (g) { st.focusPath = pathTo(box.querySelector('.flame-box').rows[+g.dataset.i].n); renderGraph(); }
    });
    box.addEventListener('input', function (ev) {
      if (ev.target.dataset.s) { st[ev.target.dataset.s] = +ev.target.value; renderGraph(); }
    });
    box.addEventListener('mouseover', function (ev) {
      var g = ev.target.closest('g[data-i]'), info = box.querySelector('.info');
      if (!g) return;
      var n = box.querySelector('.flame-box').rows[+g.dataset.i].n, txt = nodeName(P, n);
      if (n.frames.length) {
        var fr = frame(P, n.frames[0]), lines = n.frames.slice(0, 4).map(function (fi) { return frame(P, fi).line; });
        if (fr.file) txt += '  ' + fr.file + ':' + lines.join(', ') + (n.frames.length > 4 ? ', ...' : '');
        if (!fr.python) txt += '  [' + base(fr.module) + ']';
      }
      info.textContent = txt + ': ' + bytes(n.value) + ' (' + (n.value / root.value * 100).toFixed(1) + '% of all)' +
        (n.leak > 0 ? ', ' + bytes(n.leak) + ' of it in leaking sites' : '');
    });
    renderAll();
  }

  // ---- the page ----

  document.querySelectorAll('section.proc').forEach(function (sec) {
    var P = DATA.processes[+sec.dataset.proc];
    if (!P) return;
    var chart = sec.querySelector('[data-part=chart]'), sites = sec.querySelector('[data-part=sites]'), flame = sec.querySelector('[data-part=flame]');
    if (chart) drawChart(P, chart);
    if (sites && P.sites) drawSites(P, sites);
    if (flame && P.sites) drawFlame(P, flame);
  });
  document.documentElement.classList.add('drawn');
})();
