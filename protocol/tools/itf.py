"""Traces in the Informal Trace Format (ITF) of Apalache and Quint, both ways.

ITF encoding (https://apalache-mc.org/docs/adr/015adr-trace.html). The
variables are those of the state schema (`protocol.model.state.VARIABLES`) that
the configuration has, each encoded by its domain as TLA+ would see it:

- times, ids and frontiers are JSON numbers (`{"#bigint": "..."}` is read too);
  a frontier kept per index id is a function of the id: `{"#map": [[i, t], ...]}`;
- `df`, `as_of` and `ix` are functions of the peek id: `{"#map": [[d, v], ...]}`,
  `df`'s values the strings "Unborn", "Live", "Dropped";
- `caps` is a set: `{"#set": [...]}`, sorted;
- every per-process variable is a function of the process: `{"#map": [[p, v], ...]}`;
  its value is a number (`writer`, `standing`, `since`, `physical`), a
  sequence (`mq`, `iq`: a JSON list of commands), a partial map
  (`readers`, `acq`: `{"#map": [[d, t], ...]}` with only the present
  entries) or a set (`released`, `stranded`);
- a command is a Quint variant: `{"tag": "Create", "value": {"d": 0, "t": 0}}`,
  `{"tag": "Compact", "value": {"f": 1}}`, likewise `Drop {d}`,
  `Acquire {d, t}`, `Release {d}`, and `Export {}`; with two index ids
  `Create {d, i, t}` and `Compact {i, f}`.

Each state's `#meta` holds its `index` and, after the first, the `action`
that led to it: `{"name": "CreatePeek", "args": [0, 0], "label": "CreatePeek(0, 0)"}`
(kept out of `vars`, so that the variables are exactly the model's). A
lasso has a top-level `loop`: the index of the state the last state steps
back to (for a stutter, the last state itself).
"""

from __future__ import annotations

import json

from protocol.engine import Label
from protocol.model import state as schema
from protocol.model.state import GLOBAL, Sizes, from_itf_map, itf_map, shown
from protocol.model.trace import Step, Trace

ITF_FORMAT_URL = "https://apalache-mc.org/docs/adr/015adr-trace.html"


def state_to_itf(state) -> dict:
    """One state's variables, encoded as the module docstring says."""
    encoded = {}
    for variable in shown(state):
        value, domain = getattr(state, variable.name), variable.domain
        if variable.scope == GLOBAL:
            encoded[variable.name] = domain.to_itf(value)
        else:
            encoded[variable.name] = itf_map((p, domain.to_itf(v)) for p, v in enumerate(value))
    return encoded


def state_from_itf(encoded: dict):
    """The `State` an ITF state encodes (the inverse of `state_to_itf`)."""
    sizes = Sizes(P=len(from_itf_map(encoded["since"])), D=len(from_itf_map(encoded["df"])))
    values = []
    for variable in schema.VARIABLES:
        if variable.name not in encoded:  # a variable this configuration does not have
            values.append(None if variable.scope == GLOBAL else (None,) * sizes.P)
        elif variable.scope == GLOBAL:
            values.append(variable.domain.from_itf(encoded[variable.name], sizes))
        else:
            per_process = from_itf_map(encoded[variable.name])
            values.append(tuple(variable.domain.from_itf(per_process[p], sizes) for p in range(sizes.P)))
    return schema.State(*values)


def _label_meta(label) -> dict:
    name, *args = tuple(label) if isinstance(label, tuple) else (str(label),)
    return {"name": name, "args": list(args), "label": str(label)}


def trace_itf(trace: Trace, source: str = "") -> dict:
    """The trace as an ITF document (a dict; `json.dumps` it)."""
    states = []
    for index, step in enumerate(trace.steps):
        meta = {"index": index}
        if step.action is not None:
            meta["action"] = _label_meta(step.action)
        states.append({"#meta": meta, **state_to_itf(step.state)})
    meta = {"format": "ITF", "format-description": ITF_FORMAT_URL,
            "source": source, "description": f"counterexample to {trace.prop}", "property": trace.prop}
    if trace.stutters:
        meta["stutters"] = True
    if trace.notes:
        meta["notes"] = list(trace.notes)
    variables = [v.name for v in shown(trace.steps[0].state)] if trace.steps else list(schema.State._fields)
    document = {"#meta": meta, "vars": variables, "states": states}
    if trace.is_lasso:
        document["loop"] = trace.loop
    return document


def from_itf(document) -> Trace:
    """The `Trace` an ITF document (a dict or its JSON text) encodes."""
    if isinstance(document, str):
        document = json.loads(document)
    meta = document.get("#meta", {})
    steps = []
    for encoded in document["states"]:
        action = encoded.get("#meta", {}).get("action")
        label = None if action is None else Label(action["name"], *action["args"])
        steps.append(Step(label, state_from_itf(encoded)))
    return Trace(meta.get("property", ""), tuple(steps), loop=document.get("loop"),
                 stutters=bool(meta.get("stutters", False)), notes=tuple(meta.get("notes", ())))
