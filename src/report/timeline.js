
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
  var rows = document.querySelectorAll("#events tbody tr");
  var dots = svg.querySelectorAll("circle.ev");
  function text(id, s) { document.getElementById(id).textContent = s; }
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
    var cursor = document.getElementById("cursor");
    cursor.setAttribute("x1", s.x); cursor.setAttribute("x2", s.x);
    var future = document.getElementById("future");
    future.setAttribute("x", s.x + 8);
    future.setAttribute("width", Math.max(0, svg.width.baseVal.value - s.x - 8));
    Array.prototype.forEach.call(svg.querySelectorAll(".current"), function (el) { el.classList.remove("current"); });
    if (dots[cur]) { dots[cur].classList.add("current"); }
    if (s.msg !== null && s.msg !== undefined) {
      Array.prototype.forEach.call(svg.querySelectorAll('.msg[data-msg="' + s.msg + '"]'), function (el) { el.classList.add("current"); });
    }
    Array.prototype.forEach.call(rows, function (r, j) { r.classList.toggle("current", j === cur); });
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
  document.addEventListener("keydown", function (ev) {
    var k = ev.key;
    if (k === "ArrowRight" || k === "n" || k === " ") { go(cur + 1); }
    else if (k === "ArrowLeft" || k === "b") { go(cur - 1); }
    else if (k === "Home") { go(0); }
    else if (k === "End") { go(n - 1); }
    else if (k === "v") { nextViolation(); }
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
  go(m ? Number(m[1]) : 0);
  if (location.hash === "#selftest") {
    var failures = [], next = document.getElementById("next"), back = document.getElementById("back");
    for (var i = 1; i < n; i++) {
      next.click();
      if (document.body.getAttribute("data-step") !== String(i)) { failures.push("next to " + i); }
    }
    next.click();
    if (document.body.getAttribute("data-step") !== String(n - 1)) { failures.push("next past the end"); }
    back.click();
    if (n > 1 && document.body.getAttribute("data-step") !== String(n - 2)) { failures.push("back"); }
    document.getElementById("first").click();
    if (data.journal.length !== n) { failures.push("journal has " + data.journal.length + " events, " + n + " steps"); }
    var out = document.getElementById("selftest-result");
    out.textContent = failures.length === 0
      ? "selftest " + "ok: " + n + " steps forward, back, first"
      : "selftest FAILED: " + failures.join(", ");
  }
})();
