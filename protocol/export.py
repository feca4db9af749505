"""Traces and state graphs for other readers and other tools.

- `trace_markdown`: the terminal trace as Markdown, for a pull-request comment.
- `trace_itf` / `from_itf`: the Informal Trace Format (ITF) of Apalache and
  Quint, so that a counterexample can drive a test of an implementation.
- `trace_mermaid`: a sequence diagram of the run, as a `.mmd` file Mermaid
  parses; `mermaid_fenced` wraps it in the ```mermaid fence GitHub renders in Markdown.
- `state_graph`, `graph_dot`, `graph_graphml`: the reachable state graph
  through networkx, with the counterexample path highlighted on request.

None of this imports rich: these are plain text for files and pipes.

The ITF codec (Apalache's and Quint's Informal Trace Format) is protocol/itf.py.
"""

from __future__ import annotations

import invariants

import json

from .commands import command_text
from .itf import from_itf, trace_itf
from .narrate import GLOBAL, story, value_text
from . import state as schema
from .state import INDEX_NAMES, frontier_at
from .trace import Trace

DRAWINGS: dict = {}  # action name -> (name, args, head, before, after) -> Mermaid lines


def draws(*names: str):
    """Register the function below as the Mermaid drawing of the actions `names`."""

    def register(function):
        for name in names:
            DRAWINGS[name] = function
        return function

    return register

# -------------------------------------------------------------------- markdown


def _code(text: str) -> str:
    return f"`{text}`"


def trace_markdown(trace: Trace, cfg=None, full: bool = False, title: str | None = None) -> str:
    """The trace as Markdown: a numbered step list, changes grouped by process, witnesses last."""
    told = story(trace, cfg)
    heading = title or f"Counterexample to {trace.prop}"
    lines = [f"### {heading}: {trace.length} states", ""]
    for step in told.steps:
        marker = " *(the cycle starts here)*" if step.cycle_start else ""
        action = _code(step.action) if step.number > 1 else step.action
        lines.append(f"{step.number}. **{action}**{marker}: {step.words}")
        if full:
            lines += _markdown_state(step)
        else:
            for group, found in step.changed:
                shown = ", ".join(
                    f"{_code(c.variable)} {_code(value_text(c.variable, c.before))} \u2192 "
                    f"**{_code(value_text(c.variable, c.after))}**"
                    for c in found
                )
                lines.append(f"   - {group}: {shown}")
    if told.ending:
        lines += ["", f"\u21ba The run {told.ending}."]
    if told.violation:
        lines += ["", f"**{trace.prop} is violated** in the last state:", ""]
        lines += [f"- {line}" for line in told.violation]
    if told.notes:
        lines += [""] + [f"> {note}" for note in told.notes]
    return "\n".join(lines) + "\n"


def _markdown_state(step) -> list[str]:
    from .narrate import grouped_variables

    changed = {(group, c.variable) for group, found in step.changed for c in found}
    lines = []
    for group, variables in grouped_variables(step.state):
        shown = []
        for name, value in variables:
            text = f"{_code(name)} = {_code(value_text(name, value))}"
            shown.append(f"**{text}**" if (group, name) in changed else text)
        lines.append(f"   - {group}: " + ", ".join(shown))
    return lines


def summary_markdown(result) -> str:
    """A configuration's verdicts as a Markdown table, to head a PR comment."""
    cfg = result.config
    status = "as expected" if result.as_expected else "**NOT as expected**"
    if not result.complete or result.interrupted:
        status = "**INCOMPLETE**"
    lines = [
        f"## `{result.named.name}`: {status}", "",
        "| | |", "|---|---|",
        "| constants | " + ", ".join(f"{k}={v}" for k, v in cfg.constants.items()) + " |",
        "| switches | " + ", ".join(f"{k}={v}" for k, v in cfg.switches.items()) + " |",
        f"| distinct states | {result.distinct_states:,} |",
        f"| transitions | {result.transitions:,} |",
        f"| depth | {result.depth} |",
        *incomplete_markdown(result),
        "", "| property | verdict |", "|---|---|",
    ]
    for prop, verdict in result.properties.items():
        shown = {True: "holds", False: f"violated ({verdict.trace_length} states)",
                 None: "unknown (not decided)"}[verdict.holds]
        lines.append(f"| {prop} | {shown} |")
    lines += [f"| {prop} | does not apply ({why}) |" for prop, why in invariants.not_applicable_for(cfg).items()]
    return "\n".join(lines) + "\n"


def incomplete_markdown(result) -> list[str]:
    """The summary's row saying the run was cut short, as the terminal summary says it."""
    if not result.complete:
        why = "interrupted" if result.interrupted else "cut short"
        return [f"| search | **INCOMPLETE** ({why}): no property is reported to hold |"]
    if result.interrupted:
        return ["| search | **INCOMPLETE**: interrupted while deciding liveness; its verdicts are unknown |"]
    return []


# --------------------------------------------------------------------- mermaid

CONTROLLER, MULTIPLEXER = "controller", "multiplexer"


def _participants(P: int) -> list[tuple[str, str]]:
    found = [(CONTROLLER, "controller"), (MULTIPLEXER, "multiplexer")]
    for p in range(P):
        found += [(f"maint{p}", f"maintenance {p}"), (f"inter{p}", f"interactive {p}"),
                  (f"pub{p}", f"publisher {p}")]
    return found


# Mermaid reads ';' as a line end, '#' as the start of an entity and '<' as HTML:
# in labels they are written as Mermaid's entity codes.
MERMAID_ENTITIES = str.maketrans({"#": "#35;", ";": "#59;", "<": "#lt;", ">": "#gt;"})


def _mermaid_text(text: str) -> str:
    return text.translate(MERMAID_ENTITIES)


def _message(source: str, arrow: str, target: str, text: str) -> str:
    return f"{source}{arrow}{target}: {_mermaid_text(text)}"


def _note(over: str, text: str) -> str:
    return f"Note over {over}: {_mermaid_text(text)}"


def _queued_messages(before, after) -> list[str]:
    """The multiplexer's sends of a step: one asynchronous arrow per command and process."""
    lines = []
    for queue, target in (("iq", "inter"), ("mq", "maint")):
        for p, (old, new) in enumerate(zip(getattr(before, queue), getattr(after, queue))):
            if new[: len(old)] == old:
                for command in new[len(old):]:
                    lines.append(_message(MULTIPLEXER, "-)", f"{target}{p}", command_text(command)))
    return lines


@draws("CreatePeek", "DropPeek", "AdvancePolicy", "Reconnect")
def draw_controller_step(name, args, head, before, after) -> list[str]:
    lines = [_note(CONTROLLER, head)]
    if name == "CreatePeek":
        reads = "" if after.ix is None else f", index {INDEX_NAMES[after.ix[args[0]]]}"
        lines.append(_message(CONTROLLER, "->>", MULTIPLEXER,
                              f"CreateDataflow(peek {args[0]}{reads}, as_of {args[-1]})"))
    elif name == "DropPeek":
        lines.append(_message(CONTROLLER, "->>", MULTIPLEXER, f"Drop(peek {args[0]})"))
    elif name == "Reconnect":
        lines.append(_message(CONTROLLER, "->>", MULTIPLEXER, "Hello (reconnect: the cap is discarded)"))
    for i in range(1 if after.ix is None else len(INDEX_NAMES)):
        if frontier_at(after.sent, i) > frontier_at(before.sent, i):
            index = "index" if after.ix is None else INDEX_NAMES[i]
            lines.append(_message(CONTROLLER, "->>", MULTIPLEXER,
                                  f"AllowCompaction({index}, {frontier_at(after.sent, i)})"))
    return lines + _queued_messages(before, after)


@draws("Ingest")
def draw_ingest(name, args, head, before, after) -> list[str]:
    return [_note(CONTROLLER, f"{head}: upper {before.upper} to {after.upper}"),
            *_notifications(before, after, lambda p: f"maint{p}", "notify {index} (tap, before the sink)")]


def _notifications(before, after, source, words: str) -> list[str]:
    """One arrow to each interactive runtime per index id a step marked dirty there."""
    if after.dirty is None or after.dirty[0] is None:
        return []
    return [_message(source(p), "-)", f"inter{p}", words.format(index=INDEX_NAMES[i]))
            for p, (old, new) in enumerate(zip(before.dirty, after.dirty)) for i in sorted(new - old)]


def _seal_wait_lines(p: int, before, after) -> list[str]:
    """A peek parking on the seal, and the retirement reports a Drop sends (or does not)."""
    lines = []
    if after.parked[0] is not None:
        for d in sorted(after.parked[p] - before.parked[p]):
            lines.append(_note(f"inter{p}", f"peek {d} parks: published upper {after.pub[p]}"))
    if after.reports is not None:
        command = before.iq[p][0] if before.iq[p] else None
        if command and command[0] == "Drop":
            d = command[1]
            if d in after.reported[p] and d not in before.reported[p]:
                lines.append(_message(f"inter{p}", "->>", CONTROLLER, f"retired (peek {d})"))
            else:
                lines.append(_message(f"inter{p}", "-x", MULTIPLEXER, f"no report of peek {d} reaches the controller"))
    return lines


@draws("Seal", "Wake")
def draw_seal_step(name, args, head, before, after) -> list[str]:
    p = args[0]
    if name == "Seal":
        return [_note(f"pub{p}", f"{head}: publishes upper {after.pub[p]}"),
                *_notifications(before, after, lambda q: f"pub{q}", "notify {index}")]
    served = sorted(before.parked[p] - after.parked[p])
    said = ", ".join(f"serves peek {d}" for d in served) or "nothing to serve"
    return [_note(f"inter{p}", f"{head}: {said}")]


# What a runtime step hands its publisher: (variable, the runtime that sets it, words).
HANDED_TO_PUBLISHER = (("writer", "maint", "writer"), ("acq", "maint", "acquired holds"),
                       ("stranded", "maint", "stranded readers"),
                       ("readers", "inter", "readers"), ("standing", "inter", "standing hold"),
                       ("cut", "inter", "declared cuts"))


def _handed_to_publisher(runtime: str, p: int, before, after) -> list[str]:
    return [
        _message(f"{runtime}{p}", "->>", f"pub{p}", f"{words} {value_text(name, getattr(after, name)[p])}")
        for name, source, words in HANDED_TO_PUBLISHER
        if source == runtime and getattr(after, name)[p] != getattr(before, name)[p]
    ]


@draws("MaintStep", "InterStep", "Reclaim", "Publish")
def draw_runtime_step(name, args, head, before, after) -> list[str]:
    p = args[0]
    if name in ("MaintStep", "InterStep"):
        runtime, queue = ("maint", "mq") if name == "MaintStep" else ("inter", "iq")
        lines = [_note(f"{runtime}{p}", f"{head}: applies {command_text(getattr(before, queue)[p][0])}")]
        lines += _handed_to_publisher(runtime, p, before, after)
        if after.caps != before.caps:
            lines.append(_message(f"inter{p}", "->>", MULTIPLEXER, "frontier report (retires the cap)"))
        if name == "InterStep":
            lines += _seal_wait_lines(p, before, after)
        else:
            lines += _notifications(before, after, lambda q: f"maint{q}", "notify {index} (published)")
        return lines + _controller_sends(before, after) + _queued_messages(before, after)
    if name == "Publish":
        return [_note(f"pub{p}", f"{head}: since {after.since[p]}, physical {after.physical[p]}")]
    return [_note(f"maint{p}", head)]  # Reclaim


def _controller_sends(before, after) -> list[str]:
    """AllowCompaction sent within a runtime's step (a last retirement report frees a hold)."""
    if after.reports is None:
        return []
    return [_message(CONTROLLER, "->>", MULTIPLEXER, f"AllowCompaction({'index' if after.ix is None else INDEX_NAMES[i]}, "
                                                     f"{frontier_at(after.sent, i)})")
            for i in range(1 if after.ix is None else len(INDEX_NAMES))
            if frontier_at(after.sent, i) > frontier_at(before.sent, i)]


def _mermaid_step(label, number: int, before, after) -> list[str]:
    """The messages and notes one step draws (the drawing registered for its action)."""
    name, args = label[0], tuple(label[1:])
    head = f"{number}. {label}"
    drawing = DRAWINGS.get(name)
    if drawing is None:
        return [_note(CONTROLLER, head)]
    return drawing(name, args, head, before, after)


def trace_mermaid(trace: Trace, cfg=None, title: str | None = None) -> str:
    """The run as a Mermaid sequence diagram (a `.mmd` file: no fence, no title line);
    the violating step in red. `title` becomes a Mermaid comment line."""
    told = story(trace, cfg)
    participants = _participants(len(trace.steps[0].state.since))
    span = f"{participants[0][0]},{participants[-1][0]}"
    body = [f"participant {key} as {title}" for key, title in participants]
    body.append(_note(span, f"1. initial state: {told.steps[0].words}"))
    verdict = _note(span, f"violates {trace.prop}: " + "; ".join(told.violation or told.notes[:1] or ["see the last state"]))
    for before, step, step_story in zip(trace.steps, trace.steps[1:], told.steps[1:]):
        drawn = _mermaid_step(step.action, step_story.number, before.state, step.state)
        if step_story.cycle_start:
            drawn.append(_note(span, "the cycle starts here"))
        if step_story.number == len(trace.steps):  # the violating step, in a red box
            body += ["rect rgb(255, 221, 221)", *("    " + line for line in drawn), "    " + verdict, "end"]
        else:
            body += drawn
    if len(trace.steps) == 1:
        body.append(verdict)
    if told.ending:
        body.append(_note(span, told.ending))
    heading = [f"%% {title}"] if title else []
    return "\n".join([*heading, "sequenceDiagram", *("    " + line for line in body)]) + "\n"


def mermaid_fenced(trace: Trace, cfg=None) -> str:
    """The sequence diagram in a ```mermaid fence, for a Markdown page or comment."""
    return "```mermaid\n" + trace_mermaid(trace, cfg) + "```\n"


# ----------------------------------------------------------------------- graph

HIGHLIGHT = "red"


class GraphTooLarge(Exception):
    """The reachable graph has more states than the guard allows."""


def state_graph(exploration, highlight: Trace | None = None):
    """The explored graph as an nx.DiGraph on integer state ids (edges must be recorded).

    `highlight` is a counterexample: its states and steps (a lasso's step back
    included) get `color` red and `on_trace` true; its last state `violates`.
    """
    import networkx as nx

    graph = nx.DiGraph()
    for state_id, state in enumerate(exploration.states):
        graph.add_node(state_id, label=str(state_id), state=_state_text(state),
                       initial=exploration.parent[state_id] < 0, on_trace=False)
    labels = exploration.labels
    for src, label_id, dst in zip(exploration.edge_src, exploration.edge_label, exploration.edge_dst):
        graph.add_edge(src, dst, action=str(labels[label_id]), on_trace=False)
    if highlight is not None:
        _highlight(graph, exploration, highlight)
    return graph


def _state_text(state) -> str:
    """Every variable of a protocol state on one line (any other state as it prints)."""
    from .narrate import state_lines

    return "; ".join(state_lines(state)) if isinstance(state, schema.State) else str(state)


def _highlight(graph, exploration, trace: Trace) -> None:
    ids = [exploration.index[step.state] for step in trace.steps]
    if trace.is_lasso and not trace.stutters:
        ids.append(ids[trace.loop])  # the step back to where the cycle starts
    for state_id in ids:
        graph.nodes[state_id].update(on_trace=True, color=HIGHLIGHT)
    for src, dst in zip(ids, ids[1:]):
        if graph.has_edge(src, dst):
            graph.edges[src, dst].update(on_trace=True, color=HIGHLIGHT)
    if ids:
        graph.nodes[exploration.index[trace.steps[-1].state]]["violates"] = True


def _dot_quote(value) -> str:
    text = str(value).lower() if isinstance(value, bool) else str(value)
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def graph_dot(graph, name: str = "states") -> str:
    """Graphviz DOT text, written by hand so that no pydot/pygraphviz is needed
    and the text is the same on every machine."""
    lines = [f"digraph {_dot_quote(name)} {{", "  node [shape=circle, fontsize=10];"]
    for node, data in graph.nodes(data=True):
        attrs = {"label": data["label"], "tooltip": data["state"]}
        if data.get("on_trace"):
            attrs.update(color=HIGHLIGHT, penwidth=2)
        if data.get("violates"):
            attrs.update(style="filled", fillcolor="#ffdddd")
        if data.get("initial"):
            attrs["shape"] = "doublecircle"
        lines.append(f"  {node} [" + ", ".join(f"{k}={_dot_quote(v)}" for k, v in attrs.items()) + "];")
    for src, dst, data in graph.edges(data=True):
        attrs = {"label": data["action"]}
        if data.get("on_trace"):
            attrs.update(color=HIGHLIGHT, penwidth=2)
        lines.append(f"  {src} -> {dst} [" + ", ".join(f"{k}={_dot_quote(v)}" for k, v in attrs.items()) + "];")
    lines.append("}")
    return "\n".join(lines) + "\n"


def graph_graphml(graph) -> str:
    """GraphML text through networkx's writer."""
    import io

    import networkx as nx

    buffer = io.BytesIO()
    nx.write_graphml(graph, buffer)
    return buffer.getvalue().decode("utf-8")


# ------------------------------------------------------------------- the CLI

FORMATS = ("terminal", "markdown", "itf", "mermaid")


def export_result(result, fmt: str, out, full: bool = False) -> None:
    """Write one checked configuration in `fmt` (not "terminal") to the text stream `out`."""
    traces = [v.trace for v in result.properties.values() if v.trace is not None]
    name = result.named.name
    if fmt == "markdown":
        out.write(summary_markdown(result))
        for trace in traces:
            out.write("\n" + trace_markdown(trace, result.config, full=full,
                                            title=f"{name}: counterexample to {trace.prop}"))
    elif fmt == "itf":
        for trace in traces:  # JSON Lines: one ITF document per counterexample
            out.write(json.dumps(trace_itf(trace, source=name)) + "\n")
    elif fmt == "mermaid":  # one diagram: a .mmd file holds one; the expected violation first
        expected = result.named.expected_violation()
        trace = next((t for t in traces if t.prop == expected), traces[0])
        out.write(trace_mermaid(trace, result.config,
                                title=f"{name}: counterexample to {trace.prop}, {trace.length} states"))
    else:
        raise ValueError(f"unknown format {fmt!r}: choose one of {', '.join(FORMATS)}")
    out.flush()


__all__ = [
    "FORMATS", "GLOBAL", "GraphTooLarge", "export_result", "from_itf", "graph_dot", "graph_graphml",
    "mermaid_fenced", "state_graph", "summary_markdown", "trace_itf", "trace_markdown", "trace_mermaid",
]


# ------------------------------------------------------------ `graph` command

DEFAULT_GRAPH_LIMIT = 20_000  # a DOT file past this is more than Graphviz will lay out usefully


