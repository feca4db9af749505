// Stepping through each counterexample: buttons, arrow keys, and clicks on a step.
// No framework and no network: the page works from a file.
(function () {
  "use strict";
  var active = null;

  function show(trace, step) {
    var last = Number(trace.dataset.steps);
    step = Math.max(1, Math.min(last, step));
    trace.dataset.at = String(step);
    trace.querySelectorAll("[data-step]").forEach(function (el) {
      el.classList.toggle("current", Number(el.dataset.step) === step);
    });
    trace.querySelector(".stepper .at").textContent = String(step);
    var row = trace.querySelector("tr.step.current");
    var action = row ? row.querySelector(".action") : null;
    trace.querySelector(".stepper .now").textContent = action ? action.textContent : "";
    trace.querySelector('[data-go="first"]').disabled = trace.querySelector('[data-go="prev"]').disabled = step === 1;
    trace.querySelector('[data-go="last"]').disabled = trace.querySelector('[data-go="next"]').disabled = step === last;
    return row;
  }

  function go(trace, where) {
    var at = Number(trace.dataset.at || 1), last = Number(trace.dataset.steps);
    var step = { first: 1, prev: at - 1, next: at + 1, last: last }[where];
    var row = show(trace, step);
    if (row && row.scrollIntoView) { row.scrollIntoView({ block: "nearest" }); }
  }

  document.querySelectorAll("section.trace").forEach(function (trace) {
    show(trace, 1);
    trace.addEventListener("click", function (event) {
      active = trace;
      var button = event.target.closest("button[data-go]");
      if (button) { go(trace, button.dataset.go); return; }
      if (event.target.closest("summary, a")) { return; }
      var step = event.target.closest("[data-step]");
      if (step) { show(trace, Number(step.dataset.step)); }
    });
    trace.addEventListener("focusin", function () { active = trace; });
  });

  var keys = { ArrowRight: "next", j: "next", ArrowLeft: "prev", k: "prev",
               Home: "first", End: "last" };
  document.addEventListener("keydown", function (event) {
    var where = keys[event.key];
    if (!where || event.altKey || event.ctrlKey || event.metaKey) { return; }
    var trace = active || document.querySelector("section.trace");
    if (!trace) { return; }
    event.preventDefault();
    go(trace, where);
  });
})();
