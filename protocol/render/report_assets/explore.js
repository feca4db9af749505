// The state explorer's page: a thin client of the JSON API (docs/report.md).
(function () {
  "use strict";
  var walk = [];        // [{id, action}] from the first state shown to the current one
  var onTrace = {};     // ids of the counterexample the explorer was started at
  var start = null;

  function get(path) {
    return fetch(path).then(function (response) {
      if (response.status === 503) {  // the shortest-path search has not got there yet: ask again
        return new Promise(function (resolve) { setTimeout(resolve, 1000); }).then(function () { return get(path); });
      }
      if (!response.ok) { throw new Error(path + ": " + response.status); }
      return response.json();
    });
  }
  function el(tag, attrs, children) {
    var node = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (k) { node.setAttribute(k, attrs[k]); });
    (children || []).forEach(function (c) { node.append(c); });
    return node;
  }
  function current() { return walk[walk.length - 1]; }

  function render() {
    var here = current();
    document.getElementById("back").disabled = walk.length < 2;
    var list = document.getElementById("path");
    list.replaceChildren();
    walk.forEach(function (step, i) {
      var item = el("li", { "data-index": String(i), "data-id": String(step.id) },
                    [step.action || "Initial state"]);
      if (i === walk.length - 1) { item.classList.add("current"); }
      if (onTrace[step.id]) { item.classList.add("on-trace"); }
      item.addEventListener("click", function () { walk = walk.slice(0, i + 1); render(); });
      list.append(item);
    });
    Promise.all([get("/api/state/" + here.id), get("/api/successors/" + here.id)]).then(function (got) {
      if (current() !== here) { return; }
      showState(got[0]);
      showSuccessors(got[1]);
    });
  }

  function showState(record) {
    document.getElementById("state-id").textContent = "#" + record.id + (record.initial ? " (initial)" : "");
    var changed = {};
    (current().changes || []).forEach(function (c) { changed[c.group + "/" + c.variable] = true; });
    var verdicts = el("ul", { "class": "verdict-list" });
    var bad = [];
    Object.keys(record.properties).forEach(function (name) {
      var v = record.properties[name];
      var item = el("li", { "data-property": name, "class": v.holds ? "holds" : "violated" },
                    [el("span", { "class": v.holds ? "good" : "bad" }, [(v.holds ? "\u2713 " : "\u2717 ") + name]),
                     v.holds ? " holds" : " is violated"]);
      if (!v.holds) {
        bad.push(name);
        item.append(el("div", { "class": "witness" }, [el("ul", {}, v.witnesses.map(function (w) {
          return el("li", {}, [w]); }))]));
      }
      verdicts.append(item);
    });
    Object.keys(record.liveness_properties).forEach(function (name) {
      verdicts.append(el("li", { "class": "muted" }, ["\u2013 " + name + ": " + record.liveness_properties[name]]));
    });
    document.getElementById("verdicts").replaceChildren(verdicts);
    var where = document.getElementById("where");
    where.textContent = bad.length ? "violates " + bad.join(", ") : "every invariant holds";
    where.className = "badge " + (bad.length ? "bad" : "good");
    var table = document.getElementById("variables");
    table.replaceChildren();
    record.groups.forEach(function (group) {
      group.variables.forEach(function (v, i) {
        var value = changed[group.group + "/" + v.name] ? el("mark", {}, [v.value]) : v.value;
        table.append(el("tr", {}, [el("th", {}, [i === 0 ? group.group : ""]),
                                   el("td", {}, [el("code", {}, [v.name])]), el("td", {}, [value])]));
      });
    });
  }

  function showSuccessors(record) {
    var list = document.getElementById("successors");
    list.replaceChildren();
    if (!record.successors.length) { list.append(el("li", { "class": "muted" }, ["nothing is enabled: a deadlock"])); }
    record.successors.forEach(function (s) {
      var parts = [el("code", {}, [s.action]), el("span", { "class": "words" }, [s.words])];
      if (s.breaks.length) { parts.push(el("span", { "class": "breaks" }, ["\u2717 breaks " + s.breaks.join(", ")])); }
      if (onTrace[s.id]) { parts.push(el("span", { "class": "tag bad" }, ["on the counterexample"])); }
      var button = el("button", { type: "button", "data-action": s.action, "data-id": String(s.id) }, parts);
      button.addEventListener("click", function () {
        walk.push({ id: s.id, action: s.action, changes: s.changes });
        render();
      });
      list.append(el("li", {}, [button]));
    });
  }

  function stepBack() { if (walk.length > 1) { walk.pop(); render(); } }

  document.getElementById("back").addEventListener("click", stepBack);
  document.getElementById("restart").addEventListener("click", function () {
    walk = [{ id: start.initial, action: null }]; render();
  });
  document.getElementById("shortest").addEventListener("click", function () {
    get("/api/path/" + current().id).then(function (record) { walk = record.path; render(); });
  });
  document.addEventListener("keydown", function (event) {
    if (event.key === "ArrowLeft" && !event.altKey) { event.preventDefault(); stepBack(); }
  });

  get("/api/start").then(function (record) {
    start = record;
    record.trace.forEach(function (id) { onTrace[id] = true; });
    // --from-trace: start at the counterexample's last state, with its steps as the path walked
    walk = record.trace.length
      ? record.trace.map(function (id, i) { return { id: id, action: record.trace_actions[i] }; })
      : [{ id: record.initial, action: null }];
    render();
  });
})();
