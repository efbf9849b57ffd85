/* schedlab report: draws the embedded data (script#schedlab-data) on canvases.
   No library, no network. Sets body[data-status] to "ok" when every chart is
   drawn, or to "error: ..." on the first exception. */
(function () {
  "use strict";
  var body = document.body;
  function fail(message) {
    if (body.getAttribute("data-status") !== "error") {
      body.setAttribute("data-status", "error");
      body.setAttribute("data-error", String(message));
    }
  }
  window.addEventListener("error", function (e) { fail(e.message); });

  var D = JSON.parse(document.getElementById("schedlab-data").textContent);
  var TYPES = { f4: Float32Array, i4: Int32Array, i2: Int16Array, u2: Uint16Array,
                u1: Uint8Array };
  function unpack(p) {
    var bin = atob(p.b), buf = new Uint8Array(bin.length);
    for (var i = 0; i < bin.length; i++) buf[i] = bin.charCodeAt(i);
    var array = new TYPES[p.t](buf.buffer);
    if (p.s === undefined) return array;
    var out = new Float32Array(array.length);
    for (i = 0; i < array.length; i++) out[i] = array[i] * p.s;
    return out;
  }
  var S = D.schedules, LEVELS = S[0].levels, cache = {}, tables = [];
  function level(s, i, name) {
    var key = s + ":" + i + ":" + name;
    if (!cache[key]) {
      var L = S[s].levels[i];
      cache[key] = [unpack(L[name][0]), unpack(L[name][1])];
    }
    return cache[key];
  }
  function jobs(s) {
    if (!tables[s]) {
      var J = {}, n = S[s].n, ends = new Float64Array(n);
      Object.keys(S[s].jobs).forEach(function (k) { J[k] = unpack(S[s].jobs[k]); });
      for (var q = 0; q < n; q++) ends[q] = J.submit[q] + J.waited[q] + J.run[q];
      J.ends = ends;
      tables[s] = J;
    }
    return tables[s];
  }

  var view = { a: 0, b: D.span };
  var M = { l: 62, r: 12, t: 8, b: 24 };
  var CLASS = ["#bbbbbb", "#fde725", "#5ec962", "#21918c", "#3b528b", "#440154"];
  var PALETTE = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b",
                 "#e377c2", "#7f7f7f", "#bcbd22", "#17becf", "#393b79", "#637939"];

  function setup(canvas, height) {
    var ratio = window.devicePixelRatio || 1;
    var width = canvas.clientWidth || 800;
    canvas.style.height = height + "px";
    canvas.width = Math.round(width * ratio);
    canvas.height = Math.round(height * ratio);
    var ctx = canvas.getContext("2d");
    ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
    ctx.clearRect(0, 0, width, height);
    ctx.font = "11px system-ui, sans-serif";
    return { ctx: ctx, w: width, h: height, pw: width - M.l - M.r, ph: height - M.t - M.b };
  }
  function niceStep(range, count) {
    var raw = range / count, p = Math.pow(10, Math.floor(Math.log10(raw)));
    var f = raw / p;
    return (f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10) * p;
  }
  function timeUnit(span) {
    if (span > 3 * 86400) return [86400, "days"];
    if (span > 3 * 3600) return [3600, "hours"];
    return [60, "minutes"];
  }
  function duration(s) {
    if (s < 0) return "unknown";
    var d = Math.floor(s / 86400), h = Math.floor(s % 86400 / 3600);
    var m = Math.floor(s % 3600 / 60), sec = Math.round(s % 60);
    var hms = (h < 10 ? "0" : "") + h + ":" + (m < 10 ? "0" : "") + m + ":" +
              (sec < 10 ? "0" : "") + sec;
    return (d ? d + "d " : "") + hms;
  }
  function timeAxis(g, a, b, label) {
    var ctx = g.ctx, u = timeUnit(b - a), step = niceStep((b - a) / u[0], 8);
    ctx.fillStyle = "#444"; ctx.strokeStyle = "#ddd"; ctx.textAlign = "center";
    for (var v = Math.ceil(a / u[0] / step) * step; v <= b / u[0]; v += step) {
      var x = M.l + (v * u[0] - a) / (b - a) * g.pw;
      ctx.beginPath(); ctx.moveTo(x, M.t); ctx.lineTo(x, M.t + g.ph); ctx.stroke();
      ctx.fillText(String(+v.toFixed(6)), x, M.t + g.ph + 13);
    }
    if (label) {
      ctx.textAlign = "right";
      ctx.fillText("time since first submission (" + u[1] + ")", M.l + g.pw, M.t + g.ph + 23);
    }
  }
  function compact(v) {
    if (v >= 1e6) return +(v / 1e6).toPrecision(4) + "M";
    if (v >= 1e4) return +(v / 1e3).toPrecision(4) + "k";
    return String(+v.toPrecision(6));
  }
  function valueAxis(g, top, label) {
    var ctx = g.ctx, step = niceStep(top, 4);
    ctx.fillStyle = "#444"; ctx.strokeStyle = "#eee"; ctx.textAlign = "right";
    for (var v = 0; v <= top + 1e-9; v += step) {
      var y = M.t + g.ph - v / top * g.ph;
      ctx.beginPath(); ctx.moveTo(M.l, y); ctx.lineTo(M.l + g.pw, y); ctx.stroke();
      ctx.fillText(compact(v), M.l - 4, y + 4);
    }
    ctx.save(); ctx.translate(12, M.t + g.ph / 2); ctx.rotate(-Math.PI / 2);
    ctx.textAlign = "center"; ctx.fillText(label, 0, 0); ctx.restore();
  }
  function pickLevel(span, pixels) {
    var chosen = 0;
    for (var i = 0; i < LEVELS.length; i++) {
      if (span / LEVELS[i].w <= pixels) chosen = i;
    }
    return chosen;
  }

  var SERIES = document.querySelectorAll("canvas[data-series]");
  function drawSeries(canvas) {
    var name = canvas.getAttribute("data-series"), g = setup(canvas, 150), ctx = g.ctx;
    var a = view.a, b = view.b, li = pickLevel(b - a, g.pw), w = LEVELS[li].w;
    var k0 = Math.max(0, Math.floor(a / w)), k1 = Math.min(LEVELS[li].n, Math.ceil(b / w));
    var top = 0;
    S.forEach(function (sched, s) {
      var max = level(s, li, name)[1];
      for (var k = k0; k < k1; k++) if (max[k] > top) top = max[k];
    });
    if (name === "busy" && S[0].procs) top = Math.max(top, 100);
    top = top > 0 ? top * 1.05 : 1;
    valueAxis(g, top, canvas.getAttribute("data-label"));
    timeAxis(g, a, b, canvas.hasAttribute("data-time-label"));
    function X(t) { return M.l + (t - a) / (b - a) * g.pw; }
    function Y(v) { return M.t + g.ph - v / top * g.ph; }
    ctx.save(); ctx.beginPath(); ctx.rect(M.l, M.t, g.pw, g.ph); ctx.clip();
    var single = S.length === 1;
    S.forEach(function (sched, s) {
      var data = level(s, li, name), mean = data[0], max = data[1];
      var colour = single ? canvas.getAttribute("data-colour") : sched.colour;
      [[max, single ? 0.28 : 0.12], [mean, single ? 0.55 : 0]].forEach(function (pair) {
        var values = pair[0];
        ctx.beginPath(); ctx.moveTo(X(k0 * w), Y(0));
        for (var k = k0; k < k1; k++) {
          ctx.lineTo(X(k * w), Y(values[k])); ctx.lineTo(X((k + 1) * w), Y(values[k]));
        }
        ctx.lineTo(X(k1 * w), Y(0));
        if (pair[1] > 0) {
          ctx.closePath(); ctx.globalAlpha = pair[1]; ctx.fillStyle = colour; ctx.fill();
        } else {
          ctx.globalAlpha = 1; ctx.strokeStyle = colour; ctx.lineWidth = 1.2; ctx.stroke();
          ctx.lineWidth = 1;
        }
      });
    });
    ctx.restore(); ctx.globalAlpha = 1;
    ctx.strokeStyle = "#888"; ctx.strokeRect(M.l, M.t, g.pw, g.ph);
    var info = document.getElementById("bin-info");
    if (info) info.textContent = "bin width " + duration(w) + " (" + (k1 - k0) +
      " bins shown; light: maximum per bin, dark: mean)";
    canvas.setAttribute("data-drawn", "true");
  }

  var overview = document.getElementById("overview");
  function drawOverview() {
    var g = setup(overview, 70), ctx = g.ctx, L = LEVELS[0], w = L.w;
    var max = level(0, 0, "busy")[1], top = 0;
    for (var k = 0; k < L.n; k++) if (max[k] > top) top = max[k];
    top = top || 1;
    function X(t) { return M.l + t / D.span * g.pw; }
    ctx.beginPath(); ctx.moveTo(X(0), M.t + g.ph);
    for (k = 0; k < L.n; k++) {
      var y = M.t + g.ph - max[k] / top * g.ph;
      ctx.lineTo(X(k * w), y); ctx.lineTo(X(Math.min((k + 1) * w, D.span)), y);
    }
    ctx.lineTo(X(D.span), M.t + g.ph); ctx.closePath();
    ctx.fillStyle = "#9aa7c7"; ctx.fill();
    timeAxis(g, 0, D.span, false);
    ctx.fillStyle = "rgba(230, 120, 40, 0.25)"; ctx.strokeStyle = "#d2691e";
    ctx.fillRect(X(view.a), M.t, X(view.b) - X(view.a), g.ph);
    ctx.strokeRect(X(view.a), M.t, Math.max(1, X(view.b) - X(view.a)), g.ph);
    ctx.fillStyle = "#444"; ctx.textAlign = "right";
    ctx.fillText("overview", M.l - 4, M.t + 12);
    overview.setAttribute("data-drawn", "true");
  }

  var gantt = document.getElementById("gantt"), tip = document.getElementById("tip");
  var colourBy = document.getElementById("colour-by");
  var GMAX = +gantt.getAttribute("data-max-rows"), rows = [], rowHeight = 1;
  var pickSchedule = document.getElementById("gantt-schedule"), J = jobs(0);
  function jobsShown() { return J; }
  if (pickSchedule) pickSchedule.addEventListener("change", function () { guard(drawGantt); });
  function jobColour(j, T) {
    var J = T || jobsShown(), by = colourBy.value;
    if (by === "user") return J.user[j] < 0 ? "#999" : PALETTE[J.user[j] % PALETTE.length];
    if (by === "queue") return J.queue[j] < 0 ? "#999" : PALETTE[J.queue[j] % PALETTE.length];
    if (by === "class") return CLASS[J.klass[j]];
    var s = Math.min(7, Math.floor(Math.log2(Math.max(1, J.size[j])) / 1.5));
    return ["#440154", "#46327e", "#365c8d", "#277f8e", "#1fa187", "#4ac16d", "#a0da39",
            "#fde725"][s];
  }
  function drawGantt() {
    var a = view.a, b = view.b, ENDS;
    J = jobs(pickSchedule ? +pickSchedule.value : 0); ENDS = J.ends;
    rows = [];
    for (var j = 0; j < ENDS.length; j++) if (J.submit[j] < b && ENDS[j] > a) rows.push(j);
    var message = document.getElementById("gantt-info");
    if (rows.length > GMAX) {
      var g0 = setup(gantt, 60);
      g0.ctx.fillStyle = "#444";
      g0.ctx.fillText(rows.length.toLocaleString("en") + " jobs in the window: select at most " +
        GMAX + " (drag on the overview or zoom the charts above)", M.l, 30);
      message.textContent = rows.length.toLocaleString("en") +
        " jobs in the window: too many to draw.";
      rows = [];
      gantt.setAttribute("data-drawn", "true");
      return;
    }
    rowHeight = Math.max(1, Math.min(12, 480 / Math.max(rows.length, 1)));
    var g = setup(gantt, Math.max(60, rows.length * rowHeight + M.t + M.b)), ctx = g.ctx;
    timeAxis(g, a, b, true);
    function X(t) { return M.l + (t - a) / (b - a) * g.pw; }
    ctx.save(); ctx.beginPath(); ctx.rect(M.l, M.t, g.pw, g.ph); ctx.clip();
    var h = rowHeight > 3 ? rowHeight * 0.8 : rowHeight;
    rows.forEach(function (j, r) {
      var y = M.t + r * rowHeight, s = J.submit[j], st = s + J.waited[j];
      ctx.fillStyle = "#f3c1d9";
      ctx.fillRect(X(s), y, Math.max(0.5, X(st) - X(s)), h);
      ctx.fillStyle = jobColour(j);
      ctx.fillRect(X(st), y, Math.max(0.5, X(ENDS[j]) - X(st)), h);
    });
    ctx.restore();
    ctx.strokeStyle = "#888"; ctx.strokeRect(M.l, M.t, g.pw, g.ph);
    message.textContent = rows.length.toLocaleString("en") +
      " jobs in the window, one row each in submission order (pink: waiting).";
    gantt.setAttribute("data-drawn", "true");
  }
  gantt.addEventListener("mousemove", function (e) {
    var box = gantt.getBoundingClientRect(), x = e.clientX - box.left, y = e.clientY - box.top;
    var r = Math.floor((y - M.t) / rowHeight), j = rows[r];
    var t = view.a + (x - M.l) / (box.width - M.l - M.r) * (view.b - view.a);
    if (j === undefined || t < J.submit[j] || t > J.ends[j]) {
      tip.style.display = "none"; return;
    }
    var users = S[pickSchedule ? +pickSchedule.value : 0].users;
    var user = J.user[j] < 0 ? "unknown" : users[J.user[j]];
    tip.textContent = "job " + J.id[j] + " · user " + user + " · " + J.size[j] +
      " procs · submit " + duration(J.submit[j]) + " · wait " + duration(J.waited[j]) +
      " · run " + duration(J.run[j]) + " · requested " + duration(J.req[j]);
    tip.style.display = "block";
    tip.style.left = (e.pageX + 12) + "px"; tip.style.top = (e.pageY + 12) + "px";
  });
  gantt.addEventListener("mouseleave", function () { tip.style.display = "none"; });
  colourBy.addEventListener("change", function () { guard(drawGantt); });

  // Nodes over time (platform runs): one row per node, a bar per job on each node
  // it held, for the jobs running in the window. Allocations are columnar: a count
  // per job and the flat node indices, job after job.
  var nodeCanvas = document.getElementById("node-gantt"), NT = null, nodeJobs = [];
  var nodeRow = 1;
  function nodeTable() {
    if (!NT) {
      var N = S[0].nodes, count = unpack(N.count), flat = unpack(N.node);
      var first = new Int32Array(count.length + 1);
      for (var q = 0; q < count.length; q++) first[q + 1] = first[q] + count[q];
      NT = { names: N.names, first: first, node: flat };
    }
    return NT;
  }
  function drawNodes() {
    var T = nodeTable(), JN = jobs(0), a = view.a, b = view.b, bars = 0;
    var info = document.getElementById("node-info"), limit = +nodeCanvas.getAttribute("data-max-bars");
    nodeJobs = [];
    for (var j = 0; j < JN.ends.length; j++) {
      if (JN.submit[j] + JN.waited[j] < b && JN.ends[j] > a && T.first[j + 1] > T.first[j]) {
        nodeJobs.push(j); bars += T.first[j + 1] - T.first[j];
      }
    }
    if (bars > limit) {
      var g0 = setup(nodeCanvas, 60);
      g0.ctx.fillStyle = "#444";
      g0.ctx.fillText(bars.toLocaleString("en") + " job-node bars in the window: select a " +
        "window with at most " + limit.toLocaleString("en"), M.l, 30);
      info.textContent = nodeJobs.length.toLocaleString("en") + " jobs on " +
        bars.toLocaleString("en") + " job-node bars in the window: too many to draw.";
      nodeJobs = [];
      nodeCanvas.setAttribute("data-drawn", "true");
      return;
    }
    var count = T.names.length;
    nodeRow = Math.max(1, Math.min(14, 480 / count));
    var g = setup(nodeCanvas, Math.max(60, count * nodeRow + M.t + M.b)), ctx = g.ctx;
    timeAxis(g, a, b, true);
    function X(t) { return M.l + (t - a) / (b - a) * g.pw; }
    ctx.fillStyle = "#444"; ctx.textAlign = "right";
    var every = Math.max(1, Math.ceil(12 / nodeRow));
    for (var r = 0; r < count; r += every) {
      ctx.fillText(T.names[r], M.l - 4, M.t + (r + 0.5) * nodeRow + 4);
    }
    ctx.save(); ctx.beginPath(); ctx.rect(M.l, M.t, g.pw, g.ph); ctx.clip();
    var h = nodeRow > 3 ? nodeRow - 1 : nodeRow;
    ctx.strokeStyle = "#fff";
    nodeJobs.forEach(function (j) {
      var x0 = X(JN.submit[j] + JN.waited[j]), w = Math.max(0.5, X(JN.ends[j]) - x0);
      ctx.fillStyle = jobColour(j, JN);
      for (var q = T.first[j]; q < T.first[j + 1]; q++) {
        var y = M.t + T.node[q] * nodeRow;
        ctx.fillRect(x0, y, w, h);
        if (w > 3 && nodeRow > 3) ctx.strokeRect(x0 + 0.5, y + 0.5, w - 1, h - 1);
      }
    });
    ctx.restore();
    ctx.strokeStyle = "#888"; ctx.strokeRect(M.l, M.t, g.pw, g.ph);
    info.textContent = nodeJobs.length.toLocaleString("en") + " jobs running in the window.";
    nodeCanvas.setAttribute("data-drawn", "true");
  }
  function nodeList(T, j) {
    var names = [], n = T.first[j + 1] - T.first[j];
    for (var q = T.first[j]; q < T.first[j + 1] && names.length < 8; q++) {
      names.push(T.names[T.node[q]]);
    }
    return n + (n === 1 ? " node: " : " nodes: ") + names.join(" ") + (n > 8 ? " …" : "");
  }
  if (nodeCanvas) {
    nodeCanvas.addEventListener("mousemove", function (e) {
      var box = nodeCanvas.getBoundingClientRect(), x = e.clientX - box.left;
      var r = Math.floor((e.clientY - box.top - M.t) / nodeRow);
      var t = view.a + (x - M.l) / (box.width - M.l - M.r) * (view.b - view.a);
      var T = nodeTable(), JN = jobs(0), hit = -1;
      for (var i = 0; i < nodeJobs.length && hit < 0; i++) {
        var j = nodeJobs[i];
        if (t < JN.submit[j] + JN.waited[j] || t > JN.ends[j]) continue;
        for (var q = T.first[j]; q < T.first[j + 1]; q++) if (T.node[q] === r) hit = j;
      }
      if (hit < 0 || x < M.l) { tip.style.display = "none"; return; }
      var user = JN.user[hit] < 0 ? "unknown" : S[0].users[JN.user[hit]];
      tip.textContent = "job " + JN.id[hit] + " · user " + user + " · " + nodeList(T, hit) +
        " · start " + duration(JN.submit[hit] + JN.waited[hit]) + " · end " +
        duration(JN.ends[hit]);
      tip.style.display = "block";
      tip.style.left = (e.pageX + 12) + "px"; tip.style.top = (e.pageY + 12) + "px";
    });
    nodeCanvas.addEventListener("mouseleave", function () { tip.style.display = "none"; });
  }
  colourBy.addEventListener("change", function () { if (nodeCanvas) guard(drawNodes); });

  function drawCdf(canvas) {
    var which = canvas.getAttribute("data-cdf"), g = setup(canvas, 220), ctx = g.ctx;
    var seconds = which === "waited", lo = Infinity, hi = 10;
    S.forEach(function (sched) {
      var x = sched.cdf[which].x;
      if (x.length) { lo = Math.min(lo, x[0]); hi = Math.max(hi, x[x.length - 1]); }
    });
    var e0 = Math.floor(Math.log10(Math.max(1, lo === Infinity ? 1 : lo)));
    var e1 = Math.max(e0 + 1, Math.ceil(Math.log10(hi)));
    function X(v) { return M.l + (Math.log10(v) - e0) / (e1 - e0) * g.pw; }
    function Y(p) { return M.t + g.ph - p * g.ph; }
    valueAxis(g, 1, "share of jobs ≤ x");
    ctx.fillStyle = "#444"; ctx.strokeStyle = "#ddd"; ctx.textAlign = "center";
    var ticks = [];
    if (seconds) {
      [[1, "1 s"], [10, "10 s"], [60, "1 min"], [600, "10 min"], [3600, "1 h"],
       [36000, "10 h"], [86400, "1 d"], [864000, "10 d"], [8640000, "100 d"]]
        .forEach(function (t) { ticks.push(t); });
    } else {
      for (var e = e0; e <= e1; e++) ticks.push([Math.pow(10, e), String(Math.pow(10, e))]);
    }
    ticks.forEach(function (t) {
      var x = X(t[0]);
      if (x < M.l - 0.5 || x > M.l + g.pw + 0.5) return;
      ctx.beginPath(); ctx.moveTo(x, M.t); ctx.lineTo(x, M.t + g.ph); ctx.stroke();
      ctx.fillText(t[1], x, M.t + g.ph + 13);
    });
    ctx.textAlign = "right";
    ctx.fillText(canvas.getAttribute("data-label"), M.l + g.pw, M.t + g.ph + 23);
    S.forEach(function (sched) {
      var c = sched.cdf[which], colour = S.length === 1 ? "#21918c" : sched.colour;
      ctx.strokeStyle = colour; ctx.lineWidth = 1.5; ctx.beginPath();
      ctx.moveTo(M.l, Y(c.zero));
      var previous = c.zero;
      for (var i = 0; i < c.x.length; i++) {
        var px = Math.max(M.l, X(c.x[i]));
        ctx.lineTo(px, Y(previous)); ctx.lineTo(px, Y(c.p[i])); previous = c.p[i];
      }
      ctx.lineTo(M.l + g.pw, Y(previous)); ctx.stroke(); ctx.lineWidth = 1;
      ctx.setLineDash([4, 3]); ctx.strokeStyle = S.length === 1 ? "#888" : colour;
      ctx.beginPath(); ctx.moveTo(M.l, Y(c.zero)); ctx.lineTo(M.l + g.pw, Y(c.zero));
      ctx.stroke(); ctx.setLineDash([]);
    });
    ctx.strokeStyle = "#888"; ctx.strokeRect(M.l, M.t, g.pw, g.ph);
    canvas.setAttribute("data-drawn", "true");
  }

  function guard(f) {
    try { f(); } catch (err) { fail(err && err.stack || err); throw err; }
  }
  function drawView() {
    Array.prototype.forEach.call(SERIES, drawSeries);
    drawOverview();
    drawGantt();
    if (nodeCanvas) drawNodes();
  }
  function setView(a, b) {
    var span = Math.max(b - a, 60);
    a = Math.max(0, Math.min(a, D.span - span)); b = Math.min(D.span, a + span);
    view.a = a; view.b = b;
    guard(drawView);
  }

  // Zoom (wheel) and pan (drag) on the series and the node chart; select a window
  // on the overview.
  var ZOOMABLE = Array.prototype.slice.call(SERIES);
  if (nodeCanvas) ZOOMABLE.push(nodeCanvas);
  ZOOMABLE.forEach(function (canvas) {
    canvas.addEventListener("wheel", function (e) {
      e.preventDefault();
      var box = canvas.getBoundingClientRect(), pw = box.width - M.l - M.r;
      var f = Math.min(1, Math.max(0, (e.clientX - box.left - M.l) / pw));
      var t = view.a + f * (view.b - view.a), k = e.deltaY > 0 ? 1.25 : 0.8;
      setView(t - f * (view.b - view.a) * k, t + (1 - f) * (view.b - view.a) * k);
    }, { passive: false });
    var drag = null;
    canvas.addEventListener("mousedown", function (e) { drag = [e.clientX, view.a, view.b]; });
    window.addEventListener("mouseup", function () { drag = null; });
    canvas.addEventListener("mousemove", function (e) {
      if (!drag) return;
      var pw = canvas.getBoundingClientRect().width - M.l - M.r;
      var dt = (drag[0] - e.clientX) / pw * (drag[2] - drag[1]);
      setView(drag[1] + dt, drag[2] + dt);
    });
    canvas.addEventListener("dblclick", function () { setView(0, D.span); });
  });
  var brush = null;
  function overviewTime(e) {
    var box = overview.getBoundingClientRect(), pw = box.width - M.l - M.r;
    return Math.min(1, Math.max(0, (e.clientX - box.left - M.l) / pw)) * D.span;
  }
  overview.addEventListener("mousedown", function (e) { brush = overviewTime(e); });
  overview.addEventListener("mouseup", function (e) {
    if (brush === null) return;
    var t = overviewTime(e), a = Math.min(brush, t), b = Math.max(brush, t);
    brush = null;
    if (b - a < D.span / 2000) { var half = (view.b - view.a) / 2; a = t - half; b = t + half; }
    setView(a, b);
  });
  document.getElementById("reset-view").addEventListener("click", function () {
    setView(0, D.span);
  });
  window.addEventListener("resize", function () { guard(drawView); });

  // A window in the address: #window=START:END (seconds since the first submission).
  // The window the page was written for (report --window), unless the address has one.
  if (D.view) {
    view.a = Math.max(0, Math.min(D.view[0], D.span));
    view.b = Math.max(view.a + 60, Math.min(D.span, D.view[1]));
  }
  var hash = /window=([0-9.]+):([0-9.]+)/.exec(window.location.hash);
  if (hash && +hash[2] > +hash[1]) { view.a = +hash[1]; view.b = Math.min(D.span, +hash[2]); }

  guard(function () {
    drawView();
    Array.prototype.forEach.call(document.querySelectorAll("canvas[data-cdf]"), drawCdf);
    if (body.getAttribute("data-status") !== "error") body.setAttribute("data-status", "ok");
  });
})();
