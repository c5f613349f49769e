// Periscope console: the little the pages do with JavaScript (every page
// works without it). Loaded as a file: the CSP allows no inline script.
(function () {
  "use strict";
  function chart(el) {
    var d = JSON.parse(el.getAttribute("data-chart"));
    if (!window.uPlot || !d.days || !d.days.length) return;
    var width = Math.max(280, el.clientWidth);
    el.textContent = "";
    new uPlot({
      width: width, height: 200,
      series: [{}, { label: el.getAttribute("data-label") || "count", stroke: "#1565c0", fill: "rgba(21,101,192,.15)" }],
      axes: [{}, { size: 40 }],
      scales: { x: { time: true } },
    }, [d.days, d.counts], el);
  }
  function init(root) {
    root.querySelectorAll("[data-chart]").forEach(chart);
    root.querySelectorAll("input[data-check-all]").forEach(function (box) {
      box.addEventListener("change", function () {
        var form = box.form || document;
        form.querySelectorAll("input[name=id]").forEach(function (c) { c.checked = box.checked; });
      });
    });
    root.querySelectorAll("form[data-confirm]").forEach(function (f) {
      f.addEventListener("submit", function (e) {
        if (!window.confirm(f.getAttribute("data-confirm"))) e.preventDefault();
      });
    });
  }
  document.addEventListener("DOMContentLoaded", function () { init(document); });
  document.addEventListener("htmx:afterSwap", function (e) { init(e.target); });
})();
