// schedlab report: follows the window of the shared time axis (x_range, in days).
// Run by a Bokeh CustomJS on every change of the window, of the colour or of the
// schedule picked for the Gantt chart, and once when the document is ready
// (`ready`: the window of the address #window=START:END in seconds, else `view`).
// It only fills data sources and ranges: Bokeh draws everything.
const DAY = 86400;
if (ready) {
  let v = view;
  const hash = /window=([0-9.]+):([0-9.]+)/.exec(window.location.hash);
  if (hash && +hash[2] > +hash[1]) v = [+hash[1] / DAY, +hash[2] / DAY];
  // a window outside the schedule is left alone (the page shows everything)
  if (v && v[1] > 0 && v[0] < span / DAY) {
    const end = Math.min(span / DAY, v[1]);
    x_range.setv({start: Math.max(0, Math.min(v[0], end - 60 / DAY)), end: end});
  }
}
const a = x_range.start * DAY, b = x_range.end * DAY;

function duration(s) {
  if (s < 0) return "unknown";
  // rounded to a tenth of a second first, so that 59.96 s carries into 00:01:00
  const tenths = Math.round(s * 10), whole = Math.floor(tenths / 10), tenth = tenths % 10;
  const d = Math.floor(whole / DAY), h = Math.floor(whole % DAY / 3600);
  const m = Math.floor(whole % 3600 / 60), sec = whole % 60;
  const two = (n) => (n < 10 ? "0" : "") + n;
  return (d ? d + "d " : "") + two(h) + ":" + two(m) + ":" + two(sec) +
    (tenth ? "." + tenth : "");
}
const count = (n) => n.toLocaleString("en");

// Series: the finest resolution with at most one bin per pixel of the window.
const plot = series[0];
const pixels = plot.inner_width > 0 ? plot.inner_width : plot.width - 90;
let li = 0;
for (let i = 0; i < widths.length; i++) if ((b - a) / widths[i] <= pixels) li = i;
const w = widths[li];
for (let s = 0; s < shown.length; s++) {
  if (shown[s].tags[0] !== li) {
    shown[s].tags = [li];
    shown[s].data = levels[s][li].data;
  }
}
const n = levels[0][li].data.x.length - 1;
const k0 = Math.max(0, Math.floor(a / w)), k1 = Math.min(n, Math.ceil(b / w));
names.forEach(function (name, i) {
  let top = 0;
  for (let s = 0; s < levels.length; s++) {
    const max = levels[s][li].data[name + "_max"];
    for (let k = k0; k < k1; k++) if (max[k] > top) top = max[k];
  }
  top = Math.max(top, floor[i]);
  top = top > 0 ? top * 1.05 : 1;
  // a little below zero, so that a level of zero shows as a line above the axis
  series[i].y_range.setv({start: -0.02 * top, end: top});
});
bin_info.text = "bin width " + duration(w) + " (" + (k1 - k0) +
  (k1 - k0 === 1 ? " bin" : " bins") + " shown; band: maximum per bin, line: mean)";

// Job colours.
function colour(T, j) {
  const by = colour_by.value;
  if (by === "user") return T.user[j] < 0 ? "#999999" : palette[T.user[j] % palette.length];
  if (by === "queue") return T.queue[j] < 0 ? "#999999" : palette[T.queue[j] % palette.length];
  if (by === "class") return class_colours[T.klass[j]];
  if (T.size[j] < 0) return "#999999";  // unknown processors
  return size_colours[Math.min(7, Math.floor(Math.log2(Math.max(1, T.size[j])) / 1.5))];
}

// Gantt chart: the jobs of the picked schedule that overlap the window.
const si = pick ? +pick.value : 0, J = jobs[si].data, U = users[si];
const rows = [];
for (let j = 0; j < J.submit.length; j++) {
  // (a zero-length job submitted at the window's start is in it)
  const end = J.submit[j] + J.waited[j] + J.run[j];
  if (J.submit[j] < b && (end > a || J.submit[j] >= a)) rows.push(j);
}
const G = {y: [], submit: [], start: [], end: [], colour: [], id: [], user: [], size: [],
           submit_t: [], wait_t: [], run_t: [], req_t: []};
if (rows.length > max_rows) {
  gantt_info.text = count(rows.length) + (rows.length === 1 ? " job" : " jobs") +
    " in the window: too many to draw; select " +
    "at most " + count(max_rows) + " (drag the window on the overview, or zoom a chart).";
} else {
  rows.forEach(function (j, r) {
    const s0 = J.submit[j], st = s0 + J.waited[j];
    G.y.push(r); G.submit.push(s0 / DAY); G.start.push(st / DAY);
    // a job shorter than 3 pixels is drawn 3 pixels wide, so that it shows (the tooltip
    // has its times)
    G.end.push((st + Math.max(J.run[j], 3 * (b - a) / pixels)) / DAY);
    G.colour.push(colour(J, j)); G.id.push(J.id[j]);
    G.user.push(J.user[j] < 0 ? "unknown" : U[J.user[j]]);
    G.size.push(J.size[j] < 0 ? "unknown" : J.size[j]);
    G.submit_t.push(duration(s0)); G.wait_t.push(duration(J.waited[j]));
    G.run_t.push(duration(J.run[j])); G.req_t.push(duration(J.req[j]));
  });
  gantt_info.text = rows.length === 1
    ? "1 job in the window, one row (pink: waiting)."
    : count(rows.length) + " jobs in the window, one row each in submission order " +
      "(pink: waiting).";
}
gantt.data = G;
gantt_fig.y_range.setv({start: Math.max(rows.length, 1) - 0.5, end: -0.5});

// Node Gantt chart (platform runs): a bar per job on every node it held.
if (node_src) {
  const T = jobs[0].data, A = node_alloc.data.node;
  if (!node_alloc._first) {
    const first = new Int32Array(T.nodes.length + 1);
    for (let q = 0; q < T.nodes.length; q++) first[q + 1] = first[q] + T.nodes[q];
    node_alloc._first = first;
  }
  const F = node_alloc._first, shownJobs = [];
  let bars = 0;
  for (let j = 0; j < T.submit.length; j++) {
    const st = T.submit[j] + T.waited[j];
    if (st < b && (st + T.run[j] > a || st >= a) && F[j + 1] > F[j]) { shownJobs.push(j); bars += F[j + 1] - F[j]; }
  }
  const N = {y: [], left: [], right: [], colour: [], id: [], user: [], held: [], start_t: [],
             end_t: [], partition: []};
  const P = node_part ? node_part.data.part : [];
  if (bars > max_bars) {
    node_info.text = count(shownJobs.length) + (shownJobs.length === 1 ? " job" : " jobs") +
      " on " + count(bars) + " job-node bars " +
      "in the window: too many to draw; select a window with at most " + count(max_bars) + ".";
  } else {
    const U0 = users[0];
    shownJobs.forEach(function (j) {
      const st = T.submit[j] + T.waited[j], held = [], c = colour(T, j);
      for (let q = F[j]; q < F[j + 1] && held.length < 8; q++) held.push(node_names[A[q]]);
      const total = F[j + 1] - F[j];
      const text = total + (total === 1 ? " node: " : " nodes: ") + held.join(" ") +
        (total > 8 ? " …" : "");
      for (let q = F[j]; q < F[j + 1]; q++) {
        N.y.push(A[q]); N.left.push(st / DAY); N.right.push((st + T.run[j]) / DAY);
        N.colour.push(c); N.id.push(T.id[j]); N.user.push(T.user[j] < 0 ? "unknown" : U0[T.user[j]]);
        N.held.push(text); N.start_t.push(duration(st)); N.end_t.push(duration(st + T.run[j]));
        N.partition.push(P.length > j && P[j] >= 0 ? part_names[P[j]] : "-");
      }
    });
    node_info.text = count(shownJobs.length) +
      (shownJobs.length === 1 ? " job" : " jobs") + " running in the window.";
  }
  node_src.data = N;
}
