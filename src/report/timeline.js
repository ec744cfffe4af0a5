
(function () {
  "use strict";
  window.onerror = function (msg, src, line) {
    var p = document.createElement("p");
    p.className = "script-error";
    p.textContent = "script error: " + msg + " (line " + line + ")";
    document.body.insertBefore(p, document.body.firstChild);
  };
  var data = JSON.parse(document.getElementById("journal").textContent);
  var steps = data.steps, n = steps.length, cur = 0;
  var svg = document.getElementById("svg");
  var timeline = document.getElementById("timeline");
  var box = document.getElementById("events-box");
  var rows = document.querySelectorAll("#events tbody tr");
  var dots = svg.querySelectorAll("circle.ev");
  var NS = svg.namespaceURI;
  var LEFT = Number(svg.dataset.left), RIGHT = Number(svg.dataset.right);
  var CUT_PX = Number(svg.dataset.cutPx), BREAK_PX = Number(svg.dataset.breakPx);
  var LABEL_ROW = Number(svg.dataset.labelRow), LABEL_ROWS = 3, LABEL_GAP = 6;
  var OPENING = Number(svg.dataset.pxPerMs);
  var zoom = { k: OPENING, cuts: true };
  var times = data.journal.map(function (e) { return e.t_ns; });
  var end = times.length ? times[times.length - 1] : 0;
  var axis;

  function each(sel, f) { Array.prototype.forEach.call(svg.querySelectorAll(sel), f); }
  function text(id, s) { document.getElementById(id).textContent = s; }
  function trim(v) { return String(Number(v.toFixed(3))); }

  // The axis of src/report/axis.rs: to scale at k px/ms, quiet stretches
  // wider than CUT_PX cut to BREAK_PX.
  function axisOf(k, cuts) {
    var ts = [0], xs = [LEFT], breaks = [];
    times.forEach(function (t) {
      var pt = ts[ts.length - 1], px = xs[xs.length - 1];
      if (t === pt) { return; }
      var wide = (t - pt) / 1e6 * k;
      if (cuts && wide > CUT_PX) {
        breaks.push({ t0: pt, t1: t, x0: px, x1: px + BREAK_PX });
        wide = BREAK_PX;
      }
      ts.push(t); xs.push(px + wide);
    });
    function x(t) {
      var lo = 0, hi = ts.length;
      while (lo < hi) { var mid = (lo + hi) >> 1; if (ts[mid] < t) { lo = mid + 1; } else { hi = mid; } }
      if (lo < ts.length && ts[lo] === t) { return xs[lo]; }
      if (lo >= ts.length) { return xs[xs.length - 1] + (t - ts[ts.length - 1]) / 1e6 * k; }
      var a = ts[lo - 1], xa = xs[lo - 1];
      return xa + (xs[lo] - xa) * (t - a) / (ts[lo] - a);
    }
    return { x: x, k: k, breaks: breaks, end: xs[xs.length - 1] };
  }

  function roundStep(ms) {
    for (var base = 1000; ; base *= 10) {
      for (var m of [1, 2, 5]) { if (base * m / 1e6 >= ms) { return base * m; } }
    }
  }
  function tickText(ns) {
    var s = Math.floor(ns / 1e9), frac = ns % 1e9;
    if (frac === 0) { return s + "s"; }
    return (s + "." + String(frac).padStart(9, "0")).replace(/0+$/, "") + "s";
  }
  function spanText(ns) {
    if (ns >= 1e9) { return trim(Math.floor(ns / 1e6) / 1e3) + "s"; }
    if (ns >= 1e6) { return trim(Math.floor(ns / 1e3) / 1e3) + "ms"; }
    return Math.floor(ns / 1e3) + "µs";
  }

  // Labels in rows, left to right, hidden where no row has room.
  function placeLabels(group) {
    var byLane = {};
    group.forEach(function (el) {
      el.classList.remove("hidden");
      (byLane[el.dataset.lane] = byLane[el.dataset.lane] || []).push(el);
    });
    Object.keys(byLane).forEach(function (lane) {
      var items = byLane[lane].map(function (el, i) {
        var w = el.getComputedTextLength(), x = Number(el.getAttribute("x"));
        var left = el.classList.contains("bandlabel") ? x : x - w / 2;
        return { el: el, left: left, right: left + w, i: i };
      });
      items.sort(function (a, b) { return a.left - b.left || a.i - b.i; });
      var ends = [];
      for (var r = 0; r < LABEL_ROWS; r++) { ends.push(-Infinity); }
      items.forEach(function (it) {
        var row = ends.findIndex(function (e) { return it.left >= e + LABEL_GAP; });
        if (row < 0) { it.el.classList.add("hidden"); return; }
        ends[row] = it.right;
        it.el.setAttribute("y", Number(it.el.dataset.y) + row * LABEL_ROW);
      });
    });
  }

  // The time axis: cuts, then round ticks whose labels clear the others.
  function drawTicks(width, height) {
    var g = document.getElementById("ticks");
    g.textContent = "";
    var taken = [];
    function add(tag, attrs, content) {
      var el = document.createElementNS(NS, tag);
      Object.keys(attrs).forEach(function (a) { el.setAttribute(a, attrs[a]); });
      if (content !== undefined) { el.textContent = content; }
      g.appendChild(el);
      return el;
    }
    function clear(el) {
      var b = el.getBBox(), l = b.x, r = b.x + b.width;
      if (taken.some(function (t) { return !(r + LABEL_GAP <= t[0] || l >= t[1] + LABEL_GAP); })) {
        el.remove(); return;
      }
      taken.push([l, r]);
    }
    var top = Number(svg.dataset.top);
    axis.breaks.forEach(function (c) {
      add("rect", { "class": "cut", x: c.x0 + 6, y: top, width: c.x1 - c.x0 - 12, height: height - top });
      clear(add("text", { "class": "cutlabel", x: (c.x0 + c.x1) / 2, y: 22 }, "// " + spanText(c.t1 - c.t0)));
    });
    var step = roundStep(90 / axis.k), t = 0, b = 0;
    while (t <= end) {
      while (b < axis.breaks.length && axis.breaks[b].t1 <= t) { b++; }
      if (b < axis.breaks.length && axis.breaks[b].t0 < t) {
        t = Math.ceil(axis.breaks[b].t1 / step) * step; continue;
      }
      var x = axis.x(t);
      add("line", { "class": "tick", x1: x, y1: top, x2: x, y2: height });
      clear(add("text", { "class": "time", x: x, y: 22 }, tickText(t)));
      t += step;
    }
  }

  // Puts every mark where the axis says, then the labels and the ticks.
  function layout() {
    axis = axisOf(zoom.k, zoom.cuts);
    var width = Math.max(timeline.clientWidth, Math.ceil(axis.end + RIGHT));
    var height = Number(svg.getAttribute("height"));
    svg.setAttribute("width", width);
    each("line.axis", function (el) { el.setAttribute("x2", width - RIGHT); });
    each("[data-t]", function (el) {
      var x = axis.x(Number(el.dataset.t)) + Number(el.dataset.dx || 0);
      el.setAttribute(el.tagName === "circle" ? "cx" : "x", x);
    });
    each("[data-t0]", function (el) {
      var x0 = axis.x(Number(el.dataset.t0)), x1 = axis.x(Number(el.dataset.t1));
      if (el.tagName === "rect") {
        el.setAttribute("x", x0); el.setAttribute("width", Math.max(2, x1 - x0));
      } else if (el.tagName === "line") {
        el.setAttribute("x1", x0); el.setAttribute("x2", el.dataset.lost ? (x0 + x1) / 2 : x1);
      } else if (el.tagName === "path") {
        el.setAttribute("transform", "translate(" + (x0 + x1) / 2 + "," + el.dataset.y + ")");
      } else if (el.tagName === "text") {
        // A bar's label: whole, short, or none, as fits the bar.
        el.setAttribute("x", x0 + Number(el.dataset.dx || 0));
        var room = x1 - x0 - 8;
        el.textContent = el.dataset.label;
        if (el.getComputedTextLength() > room) { el.textContent = el.dataset.short; }
        if (el.getComputedTextLength() > room) { el.textContent = ""; }
      }
    });
    placeLabels(Array.prototype.slice.call(svg.querySelectorAll("text.label")));
    drawTicks(width, height);
    var scale = "time axis to scale: 1 px = " + trim(1 / zoom.k) + " ms";
    scale += zoom.cuts
      ? "; quiet stretches over " + trim(CUT_PX / zoom.k) + " ms are cut (//, labelled with their length)"
      : "; nothing cut";
    text("scale", scale + " · zoom: − and + (keys - and +), 0 for the whole run to scale, c to cut or keep quiet stretches");
    document.getElementById("zoom-cuts").setAttribute("aria-pressed", String(zoom.cuts));
    if (n > 0) { go(cur); }
  }

  // The widest the page draws: browsers give up on much wider SVGs.
  var MAX_WIDTH = 400000;
  function setZoom(k, cuts) {
    var span = Math.max(end / 1e6, 1);
    if (!cuts) { k = Math.min(k, (MAX_WIDTH - LEFT - RIGHT) / span); }
    zoom = { k: Math.min(Math.max(k, 1e-4), 4096), cuts: cuts };
    layout();
  }
  function whole() {
    var span = Math.max(end / 1e6, 1);
    setZoom(Math.max(timeline.clientWidth - LEFT - RIGHT, 100) / span, false);
  }

  // Scrolls `outer` so that [a, b) (its own coordinates) is inside it.
  function reveal(outer, a, b, horizontal, margin) {
    var from = horizontal ? outer.scrollLeft : outer.scrollTop;
    var size = horizontal ? outer.clientWidth : outer.clientHeight;
    if (a >= from + margin && b <= from + size) { return; }
    var to = Math.max(0, (a + b) / 2 - (size + margin) / 2);
    if (horizontal) { outer.scrollLeft = to; } else { outer.scrollTop = to; }
  }

  function go(i) {
    if (n === 0) { return; }
    cur = Math.max(0, Math.min(n - 1, i));
    var s = steps[cur], e = data.journal[cur];
    document.body.setAttribute("data-step", String(cur));
    document.title = "step " + (cur + 1) + "/" + n + " · " + e.node + " " + e.kind;
    text("position", "step " + (cur + 1) + " of " + n + " · " + s.t + " · event #" + e.seq);
    text("phrase", s.node + ": " + s.phrase);
    text("sentence", s.sentence);
    text("findings", s.violations.map(function (v) { return "⚠ " + v; }).join(" "));
    var table = document.getElementById("beliefs");
    table.textContent = "";
    var head = table.insertRow();
    ["node", "believes it holds", "truly (at the lock)"].forEach(function (h) {
      var th = document.createElement("th"); th.textContent = h; head.appendChild(th);
    });
    s.beliefs.forEach(function (r) {
      var tr = table.insertRow();
      r.forEach(function (c) { tr.insertCell().textContent = c; });
    });
    var x = axis.x(e.t_ns);
    var cursor = document.getElementById("cursor");
    cursor.setAttribute("x1", x); cursor.setAttribute("x2", x);
    var future = document.getElementById("future");
    future.setAttribute("x", x + 8);
    future.setAttribute("width", Math.max(0, svg.width.baseVal.value - x - 8));
    each(".current", function (el) { el.classList.remove("current"); });
    if (dots[cur]) { dots[cur].classList.add("current"); }
    if (s.msg !== null && s.msg !== undefined) {
      each('.msg[data-msg="' + s.msg + '"]', function (el) { el.classList.add("current"); });
    }
    Array.prototype.forEach.call(rows, function (r, j) { r.classList.toggle("current", j === cur); });
    // Follow the cursor.
    reveal(timeline, x - 40, x + 40, true, 0);
    var row = rows[cur], headH = box.querySelector("thead").offsetHeight;
    if (row) { reveal(box, row.offsetTop, row.offsetTop + row.offsetHeight, false, headH); }
  }
  function nextViolation() {
    for (var k = 0; k < data.violations.length; k++) {
      if (data.violations[k] > cur) { go(data.violations[k]); return true; }
    }
    return false;
  }
  function on(id, f) { document.getElementById(id).addEventListener("click", f); }
  on("first", function () { go(0); });
  on("back", function () { go(cur - 1); });
  on("next", function () { go(cur + 1); });
  on("last", function () { go(n - 1); });
  on("violation", nextViolation);
  on("zoom-in", function () { setZoom(zoom.k * 2, zoom.cuts); });
  on("zoom-out", function () { setZoom(zoom.k / 2, zoom.cuts); });
  on("zoom-whole", whole);
  on("zoom-cuts", function () { setZoom(zoom.k, !zoom.cuts); });
  document.addEventListener("keydown", function (ev) {
    var k = ev.key;
    if (ev.ctrlKey || ev.metaKey || ev.altKey) { return; }
    if (k === "ArrowRight" || k === "n" || k === " ") { go(cur + 1); }
    else if (k === "ArrowLeft" || k === "b") { go(cur - 1); }
    else if (k === "Home") { go(0); }
    else if (k === "End") { go(n - 1); }
    else if (k === "v") { nextViolation(); }
    else if (k === "+" || k === "=") { setZoom(zoom.k * 2, zoom.cuts); }
    else if (k === "-") { setZoom(zoom.k / 2, zoom.cuts); }
    else if (k === "0") { whole(); }
    else if (k === "c") { setZoom(zoom.k, !zoom.cuts); }
    else { return; }
    ev.preventDefault();
  });
  Array.prototype.forEach.call(dots, function (d) {
    d.addEventListener("click", function () { go(Number(d.getAttribute("data-seq"))); });
  });
  Array.prototype.forEach.call(rows, function (r) {
    r.addEventListener("click", function () { go(Number(r.getAttribute("data-seq"))); });
  });
  var m = /^#step=(\d+)$/.exec(location.hash);
  cur = m ? Number(m[1]) : 0;
  layout();

  if (location.hash === "#selftest") { selftest(); }

  // Walks every step through the buttons' handlers and checks, over the
  // browser's own boxes, what a reader relies on.
  function selftest() {
    var failures = [];
    function fail(s) { if (failures.length < 20) { failures.push(s); } }
    function inside(inner, outer, horizontal, margin) {
      // The box's visible area: inside its border, above its scroll bars.
      var a = inner.getBoundingClientRect(), b = outer.getBoundingClientRect();
      var left = b.left + outer.clientLeft, top = b.top + outer.clientTop;
      return horizontal
        ? a.left >= left + margin - 0.5 && a.right <= left + outer.clientWidth + 0.5
        : a.top >= top + margin - 0.5 && a.bottom <= top + outer.clientHeight + 0.5;
    }
    function visible(what) {
      var cursor = document.getElementById("cursor");
      if (!inside(cursor, timeline, true, 0)) { fail(what + ": cursor off screen"); }
      var row = rows[cur];
      if (row && !inside(row, box, false, box.querySelector("thead").offsetHeight)) {
        fail(what + ": row " + cur + " off screen");
      }
    }
    // Every shown text of the SVG against every other one.
    function overlaps(what) {
      var boxes = [];
      each("text", function (el) {
        if (el.classList.contains("hidden") || el.textContent === "") { return; }
        var r = el.getBoundingClientRect();
        if (r.width > 0) { boxes.push({ r: r, t: el.textContent }); }
      });
      boxes.sort(function (a, b) { return a.r.left - b.r.left; });
      var count = 0;
      for (var i = 0; i < boxes.length; i++) {
        for (var j = i + 1; j < boxes.length && boxes[j].r.left < boxes[i].r.right - 0.5; j++) {
          var a = boxes[i].r, b = boxes[j].r;
          if (b.top < a.bottom - 0.5 && b.bottom > a.top + 0.5) {
            count++;
            fail(what + ": labels overlap: “" + boxes[i].t + "” and “" + boxes[j].t + "”");
          }
        }
      }
      return boxes.length;
    }
    var next = document.getElementById("next"), back = document.getElementById("back");
    document.getElementById("first").click();
    visible("step 0");
    for (var i = 1; i < n; i++) {
      next.click();
      if (document.body.getAttribute("data-step") !== String(i)) { fail("next to " + i); }
      visible("step " + i);
    }
    next.click();
    if (document.body.getAttribute("data-step") !== String(n - 1)) { fail("next past the end"); }
    back.click();
    if (n > 1 && document.body.getAttribute("data-step") !== String(n - 2)) { fail("back"); }
    // The cursor's x at load is the one the renderer computed.
    if (n > 0 && Math.abs(axisOf(OPENING, true).x(data.journal[n - 1].t_ns) - steps[n - 1].x) > 1) {
      fail("the page's axis differs from the renderer's");
    }
    var labels = overlaps("opening zoom");
    // Every zoom: labels clear, and stepping from the last event back to
    // the first (and a sample between) keeps the cursor in view.
    var zooms = [["zoom-in", "zoomed in"], ["zoom-in", "zoomed in twice"], ["zoom-out", "zoomed out"],
      ["zoom-out", "opening zoom again"], ["zoom-out", "zoomed out"], ["zoom-cuts", "without cuts"],
      ["zoom-whole", "whole run"], ["zoom-cuts", "whole run, cut"]];
    zooms.forEach(function (z) {
      document.getElementById(z[0]).click();
      overlaps(z[1]);
      document.getElementById("last").click();
      visible(z[1] + ", last step");
      for (var s = n - 1; s >= 0; s -= Math.max(1, Math.floor(n / 13))) {
        go(s);
        visible(z[1] + ", step " + s);
      }
      document.getElementById("first").click();
      visible(z[1] + ", first step");
    });
    setZoom(OPENING, true);
    document.getElementById("first").click();
    if (data.journal.length !== n) { fail("journal has " + data.journal.length + " events, " + n + " steps"); }
    var out = document.getElementById("selftest-result");
    out.textContent = failures.length === 0
      ? "selftest " + "ok: " + n + " steps forward, back, first; cursor and row in view at every step; "
        + labels + " labels, none overlapping, at " + (zooms.length + 1) + " zooms"
      : "selftest FAILED: " + failures.join("; ");
  }
})();
