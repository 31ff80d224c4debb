// Replay report: decodes the embedded arrays, draws the plots on <canvas>, and
// keeps a virtualised round table in step with a scrubber. No libraries, no
// network: everything this page needs is in the page.
"use strict";
(function () {
  const status = document.getElementById("status");
  window.addEventListener("error", function (e) {
    status.dataset.error = String(e.message || e);
    status.textContent = "error: " + status.dataset.error;
  });

  const D = JSON.parse(document.getElementById("replay-data").textContent);
  const N = D.rounds;
  const MOVES = D.moves;
  const BUCKETS = ["HIGH", "MEDIUM", "LOW", "EMPTY"];
  const NONE = 7; // "no move" in the 3-bit move fields
  const SEAT_COLORS = ["#1c8fc9", "#c0398f"];
  const MOVE_COLORS = ["#7f6a5a", "#e8b730", "#5a9e4b", "#3b8bd0", "#9a5cc6"];

  function bytes(b64) {
    const s = atob(b64);
    const out = new Uint8Array(s.length);
    for (let i = 0; i < s.length; i++) out[i] = s.charCodeAt(i);
    return out;
  }
  // Arrays are interleaved by seat: index = round * 2 + seat (round from 0).
  const mv = bytes(D.arrays.mv); // real | shown << 3 | spent << 6 | request << 7
  const ob = bytes(D.arrays.obs); // opp visible | self real << 3 | bucket << 6
  const pts = new Int8Array(bytes(D.arrays.points).buffer);
  const flt = bytes(D.arrays.fault);
  const us = new Uint32Array(bytes(D.arrays.us).buffer); // 0xffffffff: no reply
  const NO_US = 0xffffffff;
  const roundNo = D.arrays.n ? new Int32Array(bytes(D.arrays.n).buffer) : null;
  const num = (i) => (roundNo ? roundNo[i] : D.first + i);

  const real = (i, s) => mv[2 * i + s] & 7;
  const shown = (i, s) => (mv[2 * i + s] >> 3) & 7;
  const spent = (i, s) => (mv[2 * i + s] >> 6) & 1;
  const requested = (i, s) => (mv[2 * i + s] >> 7) & 1;

  // Derived series, computed once.
  const cum = [new Int32Array(N), new Int32Array(N)];
  const tokens = [new Int32Array(N), new Int32Array(N)];
  const bucketChange = [new Uint8Array(N), new Uint8Array(N)];
  const moveCount = [new Int32Array((N + 1) * 5), new Int32Array((N + 1) * 5)];
  const bucketOf = (t) => (t >= 40 ? 0 : t >= 20 ? 1 : t >= 1 ? 2 : 3);
  for (let s = 0; s < 2; s++) {
    let c = 0;
    let t = D.tokens;
    const mc = moveCount[s];
    for (let i = 0; i < N; i++) {
      c += pts[2 * i + s];
      cum[s][i] = c;
      const before = t;
      if (spent(i, s)) t -= 1;
      tokens[s][i] = t;
      bucketChange[s][i] = bucketOf(t) !== bucketOf(before) ? 1 : 0;
      for (let m = 0; m < 5; m++) mc[(i + 1) * 5 + m] = mc[i * 5 + m];
      const r = real(i, s);
      if (r !== NONE) mc[(i + 1) * 5 + r] += 1;
    }
  }
  const shadowRounds = [];
  const faultRounds = [];
  for (let i = 0; i < N; i++) {
    if (spent(i, 0) || spent(i, 1)) shadowRounds.push(i);
    if (flt[2 * i] || flt[2 * i + 1]) faultRounds.push(i);
  }

  // ---- plots -------------------------------------------------------------------
  const view = { lo: 0, hi: N }; // rounds [lo, hi) shown (zoom)
  let cursor = -1; // round index under the mouse, -1 for none
  let current = 0; // the scrubber's round index
  const PAD = { l: 54, r: 12, t: 8, b: 20 };
  const plots = [];

  function niceTicks(lo, hi, count, integer) {
    // Round-numbered ticks, about ``count`` of them (at least two when possible).
    if (!(hi > lo)) return [lo];
    const raw = (hi - lo) / count;
    const mag = Math.pow(10, Math.floor(Math.log10(raw)));
    let step = [1, 2, 5, 10].map((k) => k * mag).find((k) => k >= raw * 0.6) || raw;
    if (integer) step = Math.max(1, Math.round(step));
    const out = [];
    for (let v = Math.ceil(lo / step) * step; v <= hi + 1e-9; v += step) out.push(v);
    return out;
  }
  function fmtNum(v) {
    return Math.abs(v) >= 10000 ? (v / 1000).toFixed(0) + "k" : String(Math.round(v * 100) / 100);
  }

  function makePlot(id, title, height, legend, draw, tip) {
    const box = document.createElement("div");
    box.className = "plot";
    box.id = id;
    const base = document.createElement("canvas");
    const over = document.createElement("canvas");
    over.className = "overlay";
    const t = document.createElement("div");
    t.className = "title";
    t.textContent = title;
    const lg = document.createElement("div");
    lg.className = "legend";
    lg.innerHTML = legend;
    // Title and legend in a row of their own above the canvas: a long bot name
    // in the legend wraps there instead of running over the title.
    const head = document.createElement("div");
    head.className = "head";
    head.append(t, lg);
    const canvases = document.createElement("div");
    canvases.className = "canvases";
    canvases.append(base, over);
    box.append(head, canvases);
    document.getElementById("plots").append(box);
    const p = { box, base, over, height, draw, tip, w: 0, h: 0, dpr: 1 };
    plots.push(p);
    attachMouse(p);
    return p;
  }

  function sizePlot(p) {
    const dpr = window.devicePixelRatio || 1;
    const w = p.box.clientWidth;
    p.w = w;
    p.h = p.height;
    p.dpr = dpr;
    for (const c of [p.base, p.over]) {
      c.width = Math.round(w * dpr);
      c.height = Math.round(p.height * dpr);
      c.style.width = w + "px";
      c.style.height = p.height + "px";
    }
  }

  // Round index at the start of pixel column x (plot area), and back.
  const plotW = (p) => p.w - PAD.l - PAD.r;
  const plotH = (p) => p.h - PAD.t - PAD.b;
  const xToRound = (p, x) =>
    Math.max(view.lo, Math.min(view.hi - 1, Math.floor(view.lo + ((x - PAD.l) / plotW(p)) * (view.hi - view.lo))));
  const roundToX = (p, i) => PAD.l + ((i - view.lo + 0.5) / (view.hi - view.lo)) * plotW(p);

  function columns(p) {
    // For each pixel column: the round range [a, b) it covers (at least one round).
    const w = Math.max(1, Math.floor(plotW(p)));
    const span = view.hi - view.lo;
    const cols = [];
    for (let x = 0; x < w; x++) {
      const a = view.lo + Math.floor((x * span) / w);
      const b = Math.max(a + 1, view.lo + Math.floor(((x + 1) * span) / w));
      cols.push([a, Math.min(b, view.hi)]);
    }
    return cols;
  }

  function axes(p, ctx, lo, hi, yfmt, logScale, fixedTicks) {
    const y = (v) => PAD.t + plotH(p) * (1 - (v - lo) / (hi - lo || 1));
    ctx.strokeStyle = "#e6e9ef";
    ctx.fillStyle = "#6b7385";
    ctx.lineWidth = 1;
    ctx.font = "11px system-ui, sans-serif";
    ctx.textAlign = "right";
    ctx.textBaseline = "middle";
    const ticks = fixedTicks || (logScale ? logTicks(lo, hi) : niceTicks(lo, hi, 4, true));
    for (const v of ticks) {
      const yy = Math.round(y(v)) + 0.5;
      ctx.beginPath();
      ctx.moveTo(PAD.l, yy);
      ctx.lineTo(p.w - PAD.r, yy);
      ctx.stroke();
      ctx.fillText(yfmt(v), PAD.l - 6, yy);
    }
    ctx.textAlign = "center";
    ctx.textBaseline = "top";
    for (const r of niceTicks(num(view.lo), num(view.hi - 1), 8, true)) {
      const i = r - D.first;
      if (i < view.lo || i >= view.hi) continue;
      const xx = roundToX(p, i);
      const text = String(r);
      // Keep the last label inside the canvas.
      const half = ctx.measureText(text).width / 2;
      ctx.fillText(text, Math.min(xx, p.w - half - 2), p.h - PAD.b + 4);
    }
    ctx.strokeStyle = "#c5cad4";
    ctx.strokeRect(PAD.l + 0.5, PAD.t + 0.5, plotW(p), plotH(p));
    return y;
  }
  function logTicks(lo, hi) {
    const out = [];
    for (let e = Math.ceil(lo); e <= Math.floor(hi); e++) out.push(e);
    return out;
  }

  function line(ctx, cols, value, y, color, width) {
    ctx.strokeStyle = color;
    ctx.lineWidth = width || 1.5;
    ctx.beginPath();
    let started = false;
    for (let x = 0; x < cols.length; x++) {
      const v = value(cols[x][0], cols[x][1]);
      if (v === null) {
        started = false;
        continue;
      }
      const xx = PAD.l + x + 0.5;
      if (started) ctx.lineTo(xx, y(v));
      else ctx.moveTo(xx, y(v));
      started = true;
    }
    ctx.stroke();
  }

  function drawScore(p, ctx) {
    const cols = columns(p);
    let lo = 0;
    let hi = 0;
    for (let s = 0; s < 2; s++)
      for (let i = view.lo; i < view.hi; i++) {
        if (cum[s][i] < lo) lo = cum[s][i];
        if (cum[s][i] > hi) hi = cum[s][i];
      }
    if (hi === lo) hi = lo + 1;
    const margin = (hi - lo) * 0.05;
    const y = axes(p, ctx, lo - margin, hi + margin, fmtNum);
    // Marker strips under the plot area's top: shadows, bucket changes, faults.
    for (let s = 0; s < 2; s++) {
      const top = PAD.t + 2 + s * 7;
      for (let x = 0; x < cols.length; x++) {
        let sh = 0;
        let bc = 0;
        let f = 0;
        for (let i = cols[x][0]; i < cols[x][1]; i++) {
          sh |= spent(i, s);
          bc |= bucketChange[s][i];
          f |= flt[2 * i + s] ? 1 : 0;
        }
        if (!(sh || bc || f)) continue;
        ctx.fillStyle = f ? "#d62d2d" : bc ? "#e0a100" : SEAT_COLORS[s];
        ctx.globalAlpha = f || bc ? 1 : 0.45;
        ctx.fillRect(PAD.l + x, top, 1, 5);
      }
      ctx.globalAlpha = 1;
    }
    for (let s = 0; s < 2; s++) {
      // The min-max envelope of each column, then the line through column ends.
      ctx.fillStyle = SEAT_COLORS[s];
      ctx.globalAlpha = 0.35;
      for (let x = 0; x < cols.length; x++) {
        let mn = Infinity;
        let mx = -Infinity;
        for (let i = cols[x][0]; i < cols[x][1]; i++) {
          const v = cum[s][i];
          if (v < mn) mn = v;
          if (v > mx) mx = v;
        }
        ctx.fillRect(PAD.l + x, y(mx), 1, Math.max(1, y(mn) - y(mx)));
      }
      ctx.globalAlpha = 1;
      line(ctx, cols, (a, b) => cum[s][b - 1], y, SEAT_COLORS[s], 1.6);
    }
  }

  function drawTokens(p, ctx) {
    const cols = columns(p);
    const hi = Math.max(1, D.tokens);
    const y = axes(p, ctx, 0, hi * 1.05, fmtNum);
    for (const edge of [40, 20, 1]) {
      if (edge > hi) continue;
      ctx.strokeStyle = "#f0d9a0";
      ctx.setLineDash([3, 3]);
      ctx.beginPath();
      ctx.moveTo(PAD.l, Math.round(y(edge)) + 0.5);
      ctx.lineTo(p.w - PAD.r, Math.round(y(edge)) + 0.5);
      ctx.stroke();
      ctx.setLineDash([]);
    }
    for (let s = 0; s < 2; s++) line(ctx, cols, (a, b) => tokens[s][b - 1], y, SEAT_COLORS[s], 2);
  }

  let windowSize = Math.max(20, Math.min(500, Math.round(N / 40)));
  function drawFreq(p, ctx) {
    // Two stacked bands: seat 0 above, seat 1 below; each a stacked area of the
    // five moves' shares over the last ``windowSize`` rounds.
    const cols = columns(p);
    axes(p, ctx, 0, 2, (v) => (v === 1.5 ? "seat 0" : "seat 1"), false, [1.5, 0.5]);
    const bandH = plotH(p) / 2;
    for (let s = 0; s < 2; s++) {
      const mc = moveCount[s];
      const bottom = PAD.t + bandH * (s + 1);
      for (let x = 0; x < cols.length; x++) {
        const end = cols[x][1];
        const start = Math.max(0, end - windowSize);
        let total = 0;
        for (let m = 0; m < 5; m++) total += mc[end * 5 + m] - mc[start * 5 + m];
        if (!total) continue;
        let acc = 0;
        for (let m = 0; m < MOVES.length; m++) {
          const share = (mc[end * 5 + m] - mc[start * 5 + m]) / total;
          if (!share) continue;
          ctx.fillStyle = MOVE_COLORS[m];
          const h = share * (bandH - 2);
          ctx.fillRect(PAD.l + x, bottom - acc - h, 1, h + 0.5);
          acc += h;
        }
      }
    }
    ctx.strokeStyle = "#ffffff";
    ctx.lineWidth = 2;
    ctx.beginPath();
    ctx.moveTo(PAD.l, PAD.t + bandH);
    ctx.lineTo(p.w - PAD.r, PAD.t + bandH);
    ctx.stroke();
  }

  function drawLatency(p, ctx) {
    // log10 of milliseconds; per column the maximum (light) and the mean (dark).
    const cols = columns(p);
    let lo = Infinity;
    let hi = -Infinity;
    for (let i = view.lo; i < view.hi; i++)
      for (let s = 0; s < 2; s++) {
        const u = us[2 * i + s];
        if (u === NO_US) continue;
        const v = Math.log10(Math.max(u, 1) / 1000);
        if (v < lo) lo = v;
        if (v > hi) hi = v;
      }
    if (!(hi >= lo)) {
      lo = -2;
      hi = 0;
    }
    lo = Math.floor(lo);
    hi = Math.max(lo + 1, Math.ceil(hi));
    const y = axes(p, ctx, lo, hi, (v) => fmtNum(Math.pow(10, v)) + " ms", true);
    for (let s = 0; s < 2; s++) {
      const stats = cols.map(([a, b]) => {
        let sum = 0;
        let k = 0;
        let mx = -1;
        for (let i = a; i < b; i++) {
          const u = us[2 * i + s];
          if (u === NO_US) continue;
          sum += u;
          k++;
          if (u > mx) mx = u;
        }
        return k ? [sum / k, mx] : null;
      });
      const lg = (u) => Math.log10(Math.max(u, 1) / 1000);
      ctx.fillStyle = SEAT_COLORS[s];
      ctx.globalAlpha = 0.3;
      stats.forEach((st, x) => {
        if (st) ctx.fillRect(PAD.l + x, y(lg(st[1])), 1, 2);
      });
      ctx.globalAlpha = 1;
      ctx.strokeStyle = SEAT_COLORS[s];
      ctx.lineWidth = 1.4;
      ctx.beginPath();
      let on = false;
      stats.forEach((st, x) => {
        if (!st) {
          on = false;
          return;
        }
        const yy = y(lg(st[0]));
        if (on) ctx.lineTo(PAD.l + x + 0.5, yy);
        else ctx.moveTo(PAD.l + x + 0.5, yy);
        on = true;
      });
      ctx.stroke();
    }
  }

  function drawPlot(p) {
    const ctx = p.base.getContext("2d");
    ctx.setTransform(p.dpr, 0, 0, p.dpr, 0, 0);
    ctx.clearRect(0, 0, p.w, p.h);
    if (N === 0) return;
    p.draw(p, ctx);
    drawOverlay(p);
  }

  function drawOverlay(p) {
    const ctx = p.over.getContext("2d");
    ctx.setTransform(p.dpr, 0, 0, p.dpr, 0, 0);
    ctx.clearRect(0, 0, p.w, p.h);
    const mark = (i, color, width) => {
      if (i < view.lo || i >= view.hi) return;
      const x = Math.round(roundToX(p, i)) + 0.5;
      ctx.strokeStyle = color;
      ctx.lineWidth = width;
      ctx.beginPath();
      ctx.moveTo(x, PAD.t);
      ctx.lineTo(x, p.h - PAD.b);
      ctx.stroke();
    };
    mark(current, "rgba(29,35,48,0.55)", 1.5);
    if (cursor >= 0) mark(cursor, "rgba(29,35,48,0.3)", 1);
    if (drag && drag.x1 !== undefined) {
      ctx.fillStyle = "rgba(28,143,201,0.15)";
      ctx.fillRect(Math.min(drag.x0, drag.x1), PAD.t, Math.abs(drag.x1 - drag.x0), plotH(p));
    }
  }

  let drag = null;
  const tipEl = document.getElementById("tip");
  function attachMouse(p) {
    p.over.addEventListener("mousemove", (e) => {
      const r = p.over.getBoundingClientRect();
      const x = e.clientX - r.left;
      cursor = xToRound(p, x);
      if (drag) drag.x1 = x;
      plots.forEach(drawOverlay);
      tipEl.style.display = "block";
      tipEl.style.left = e.clientX + 14 + "px";
      tipEl.style.top = e.clientY + 10 + "px";
      tipEl.textContent = "round " + num(cursor) + "\n" + p.tip(cursor);
    });
    p.over.addEventListener("mouseleave", () => {
      cursor = -1;
      tipEl.style.display = "none";
      plots.forEach(drawOverlay);
    });
    p.over.addEventListener("mousedown", (e) => {
      const r = p.over.getBoundingClientRect();
      drag = { x0: e.clientX - r.left, p };
    });
    window.addEventListener("mouseup", (e) => {
      if (!drag || drag.p !== p) return;
      const d = drag;
      drag = null;
      const r = p.over.getBoundingClientRect();
      const x1 = e.clientX - r.left;
      if (Math.abs(x1 - d.x0) < 4) {
        setCurrent(xToRound(p, x1), true); // a click: move the scrubber there
        return;
      }
      const a = xToRound(p, Math.min(d.x0, x1));
      const b = xToRound(p, Math.max(d.x0, x1)) + 1;
      if (b - a >= 2) {
        view.lo = a;
        view.hi = b;
        redrawAll();
      }
    });
    p.over.addEventListener("dblclick", () => {
      view.lo = 0;
      view.hi = N;
      redrawAll();
    });
  }

  const mvName = (m) => (m === NONE ? "—" : MOVES[m]);
  const label = (s) => D.labels[s];
  makePlot(
    "plot-score",
    "Cumulative points",
    230,
    '<span class="s0">━ ' + esc(label(0)) + '</span> &nbsp; <span class="s1">━ ' + esc(label(1)) +
      "</span> &nbsp; strips: shadow · <span style=\"color:#e0a100\">bucket change</span> · " +
      '<span class="bad">fault</span> &nbsp; drag to zoom, double-click to reset',
    drawScore,
    (i) =>
      label(0) + ": " + cum[0][i] + "\n" + label(1) + ": " + cum[1][i] +
      (spent(i, 0) || spent(i, 1) ? "\nshadow round" : "")
  );
  makePlot(
    "plot-tokens",
    "Deception tokens left",
    150,
    "dashed: bucket edges 40 / 20 / 1",
    drawTokens,
    (i) => label(0) + ": " + tokens[0][i] + "\n" + label(1) + ": " + tokens[1][i]
  );
  const freqPlot = makePlot(
    "plot-freq",
    "Move frequencies (rolling window)",
    200,
    MOVES.map((m, k) => '<span style="color:' + MOVE_COLORS[k] + '">■ ' + m + "</span>").join(" ") +
      ' &nbsp; window <select id="win"></select> rounds',
    drawFreq,
    (i) => {
      const lines = [];
      for (let s = 0; s < 2; s++) {
        const mc = moveCount[s];
        const end = i + 1;
        const start = Math.max(0, end - windowSize);
        let total = 0;
        for (let m = 0; m < 5; m++) total += mc[end * 5 + m] - mc[start * 5 + m];
        const parts = MOVES.map(
          (m, k) => m + " " + Math.round((100 * (mc[end * 5 + k] - mc[start * 5 + k])) / (total || 1)) + "%"
        );
        lines.push(label(s) + ": " + parts.join(" "));
      }
      return lines.join("\n");
    }
  );
  makePlot(
    "plot-latency",
    "Reply latency per move (log scale)",
    170,
    "line: mean per pixel column · dots: maximum",
    drawLatency,
    (i) =>
      [0, 1]
        .map((s) => label(s) + ": " + (us[2 * i + s] === NO_US ? "no reply" : (us[2 * i + s] / 1000).toFixed(3) + " ms"))
        .join("\n")
  );
  if (N === 0) {
    // Nothing was played (a bot failed before round 1): say so instead of showing
    // empty frames and an empty table.
    const say = (after, text) => {
      const p = document.createElement("p");
      p.className = "sub";
      p.textContent = text;
      after.after(p);
    };
    plots.forEach((p) => (p.box.style.display = "none"));
    say(document.getElementById("plots"), "No rounds were played: nothing to plot.");
    const rounds = document.getElementById("rounds");
    for (let e = rounds.nextElementSibling; e && e.id !== "tip"; e = e.nextElementSibling) {
      e.style.display = "none";
    }
    say(rounds, "No rounds were played.");
  }
  const winSel = document.getElementById("win");
  for (const w of [20, 50, 100, 200, 500, 1000, 2000]) {
    const o = document.createElement("option");
    o.value = String(w);
    o.textContent = String(w);
    winSel.append(o);
  }
  if (![...winSel.options].some((o) => Number(o.value) === windowSize)) {
    const o = document.createElement("option");
    o.value = String(windowSize);
    o.textContent = String(windowSize);
    winSel.append(o);
  }
  winSel.value = String(windowSize);
  winSel.addEventListener("change", () => {
    windowSize = Number(winSel.value);
    drawPlot(freqPlot);
  });

  function redrawAll() {
    plots.forEach(drawPlot);
  }

  // ---- the round table (virtualised) -------------------------------------------
  const ROW_H = 23; // px, td height + border
  const viewport = document.getElementById("viewport");
  const spacer = document.getElementById("spacer");
  const body = document.getElementById("rows");
  const slider = document.getElementById("scrub");
  const numIn = document.getElementById("round-in");
  spacer.style.height = N * ROW_H + "px";
  slider.min = "1";
  slider.max = String(Math.max(1, N));
  numIn.min = String(num(0));
  numIn.max = String(num(Math.max(0, N - 1)));

  function esc(text) {
    return String(text).replace(/[&<>"]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" })[c]);
  }
  function seatCells(i, s) {
    const o = ob[2 * i + s];
    const r = real(i, s);
    const sh = shown(i, s);
    const f = flt[2 * i + s];
    const u = us[2 * i + s];
    let shadowCell = mvName(sh);
    if (spent(i, s)) shadowCell = '<span class="mv-shown" title="shadow: shown instead of the real move">' + mvName(sh) + " ◆</span>";
    else if (requested(i, s)) shadowCell = mvName(sh) + ' <span class="muted">(asked, no token)</span>';
    return (
      '<td class="sep">' + mvName(o & 7) + "</td><td>" + mvName((o >> 3) & 7) + "</td><td>" +
      BUCKETS[(o >> 6) & 3] + "</td><td><b>" + mvName(r) + "</b></td><td>" + shadowCell +
      '</td><td class="n">' + (pts[2 * i + s] > 0 ? "+" : "") + pts[2 * i + s] + '</td><td class="n">' +
      cum[s][i] + '</td><td class="n">' + tokens[s][i] + '</td><td class="n">' +
      (u === NO_US ? "—" : (u / 1000).toFixed(2)) + '</td><td class="f" title="' + (f ? esc(D.faultKinds[f]) : "") + '">' + (f ? esc(D.faultKinds[f]) : "") + "</td>"
    );
  }
  let renderedFirst = -1;
  function renderRows(force) {
    const first = Math.max(0, Math.floor(viewport.scrollTop / ROW_H) - 4);
    if (!force && first === renderedFirst) return;
    renderedFirst = first;
    const count = Math.ceil(viewport.clientHeight / ROW_H) + 8;
    const last = Math.min(N, first + count);
    const html = [];
    for (let i = first; i < last; i++) {
      const cls = [];
      if (spent(i, 0) || spent(i, 1)) cls.push("shadow");
      if (flt[2 * i] || flt[2 * i + 1]) cls.push("fault");
      if (i === current) cls.push("current");
      html.push(
        '<tr data-i="' + i + '" class="' + cls.join(" ") + '"><td class="r">' + num(i) + "</td>" +
          seatCells(i, 0) + seatCells(i, 1) + "</tr>"
      );
    }
    body.innerHTML = html.join("");
    document.getElementById("rows-table").style.top = first * ROW_H + "px";
    status.dataset.tableRows = String(last - first);
    status.dataset.tableFirst = String(N ? num(first) : 0);
  }
  viewport.addEventListener("scroll", () => {
    renderRows(false);
    // Follow the user's scrolling only once the current round has left the view:
    // a programmatic scroll clamped at either end must not move it.
    const top = viewport.scrollTop;
    const rowTop = current * ROW_H;
    if (rowTop >= top && rowTop + ROW_H <= top + viewport.clientHeight) return;
    const mid = Math.floor((top + viewport.clientHeight / 2) / ROW_H);
    current = Math.max(0, Math.min(N - 1, mid));
    slider.value = String(current + 1);
    numIn.value = String(num(current));
    plots.forEach(drawOverlay);
    renderRows(true);
  });
  body.addEventListener("click", (e) => {
    const tr = e.target.closest("tr");
    if (tr) setCurrent(Number(tr.dataset.i), false);
  });
  function setCurrent(i, scroll) {
    current = Math.max(0, Math.min(N - 1, i));
    slider.value = String(current + 1);
    numIn.value = String(num(current));
    if (scroll) viewport.scrollTop = Math.max(0, (current + 0.5) * ROW_H - viewport.clientHeight / 2);
    renderRows(true);
    plots.forEach(drawOverlay);
  }
  slider.addEventListener("input", () => setCurrent(Number(slider.value) - 1, true));
  numIn.addEventListener("change", () => setCurrent(Number(numIn.value) - D.first, true));
  function jump(list, dir) {
    if (!list.length) return;
    let k;
    if (dir > 0) k = list.find((i) => i > current);
    else for (let j = list.length - 1; j >= 0; j--) if (list[j] < current) { k = list[j]; break; }
    if (k !== undefined) setCurrent(k, true);
  }
  document.getElementById("prev-shadow").addEventListener("click", () => jump(shadowRounds, -1));
  document.getElementById("next-shadow").addEventListener("click", () => jump(shadowRounds, 1));
  document.getElementById("next-fault").addEventListener("click", () => jump(faultRounds, 1));
  document.getElementById("shadow-count").textContent =
    shadowRounds.length + " shadow rounds, " + faultRounds.length + " rounds with faults";
  document.addEventListener("keydown", (e) => {
    if (e.target.tagName === "INPUT" || e.target.tagName === "SELECT") return;
    if (e.key === "ArrowDown" || e.key === "j") setCurrent(current + 1, true);
    else if (e.key === "ArrowUp" || e.key === "k") setCurrent(current - 1, true);
    else if (e.key === "PageDown") setCurrent(current + 20, true);
    else if (e.key === "PageUp") setCurrent(current - 20, true);
    else return;
    e.preventDefault();
  });

  // ---- start ---------------------------------------------------------------------
  function inkOf(canvas) {
    // Non-blank pixels of a canvas: the browser test's proof that something was drawn.
    if (!canvas.width || !canvas.height) return 0; // a hidden plot (no rounds)
    const ctx = canvas.getContext("2d");
    const px = ctx.getImageData(0, 0, canvas.width, canvas.height).data;
    let ink = 0;
    for (let k = 3; k < px.length; k += 4) if (px[k] !== 0) ink++;
    return ink;
  }
  function layout() {
    plots.forEach(sizePlot);
    redrawAll();
    renderRows(true);
  }
  let resizeTimer = 0;
  window.addEventListener("resize", () => {
    clearTimeout(resizeTimer);
    resizeTimer = setTimeout(layout, 100);
  });
  const t0 = performance.now();
  layout();
  const hash = location.hash.match(/^#round=(\d+)/);
  setCurrent(hash ? Number(hash[1]) - D.first : 0, true);
  if (hash) document.getElementById("rounds").scrollIntoView(); // a link to a round
  status.dataset.drawMs = String(Math.round(performance.now() - t0));
  status.dataset.ink = plots.map((p) => p.box.id + ":" + inkOf(p.base)).join(",");
  status.dataset.rounds = String(N);
  status.dataset.ready = "yes";
  status.textContent = "drawn " + N + " rounds in " + status.dataset.drawMs + " ms";
})();
