"""Traces and state graphs for other readers and other tools.

- `trace_markdown`: the terminal trace as Markdown, for a pull-request comment.
- `trace_itf` / `from_itf`: the Informal Trace Format (ITF) of Apalache and
  Quint, so that a counterexample can drive a test of an implementation.
- `trace_mermaid`: a sequence diagram of the run, as a `.mmd` file Mermaid
  parses; `mermaid_fenced` wraps it in the ```mermaid fence GitHub renders in Markdown.
- `state_graph`, `graph_dot`, `graph_graphml`: the reachable state graph
  through networkx, with the counterexample path highlighted on request.

None of this imports rich: these are plain text for files and pipes.

The ITF codec (Apalache's and Quint's Informal Trace Format) is protocol/tools/itf.py.
"""

from __future__ import annotations

import json
from typing import NamedTuple

from protocol import properties

from protocol.model.commands import INTERACTIVE, MAINTENANCE
from protocol.model.events import CONTROLLER_LANE, MULTIPLEXER_LANE, Call, Send, StepNote, lane
from protocol.tools.itf import from_itf, trace_itf
from protocol.render.narrate import GLOBAL, legend, story, value_text
from protocol.model import state as schema
from protocol.model.trace import Trace

# -------------------------------------------------------------------- markdown


def _code(text: str) -> str:
    return f"`{text}`"


def trace_markdown(trace: Trace, cfg=None, full: bool = False, title: str | None = None,
                   names: str | None = None) -> str:
    """The trace as Markdown: a numbered step list, changes grouped by process, witnesses last."""
    told = story(trace, cfg, names)
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
    from protocol.render.narrate import grouped_variables

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
    lines += [f"| {prop} | does not apply ({why}) |" for prop, why in properties.not_applicable_for(cfg).items()]
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

CONTROLLER, MULTIPLEXER = CONTROLLER_LANE, MULTIPLEXER_LANE


def _participants(P: int) -> list[tuple[str, str]]:
    found = [(CONTROLLER, "controller"), (MULTIPLEXER, "multiplexer")]
    for p in range(P):
        found += [(lane(MAINTENANCE, p), f"maintenance {p}"), (lane(INTERACTIVE, p), f"interactive {p}"),
                  (lane("pub", p), f"publisher {p}")]
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


class Mark(NamedTuple):
    """One thing a step draws on the sequence diagram: an arrow from `lanes[0]` to
    `lanes[1]` ("call", solid; "send", asynchronous: dashed, open head), or a note over
    `lanes` ("note"; "cycle" where a lasso's cycle starts). The Mermaid diagram writes
    them as lines (`mermaid_line`), the SVG one (protocol/render/svg.py) lays them out."""

    kind: str
    lanes: tuple
    text: str


MERMAID_ARROWS = {"call": "->>", "send": "-)"}


def step_marks(label, number: int, events, P: int) -> list[Mark]:
    """What one step draws, from the drawings of the events it recorded: its note (where
    an event places it, else over the controller), every message in the events' order,
    then the commands the multiplexer queued, stream by stream and process by process, as
    the runtimes will find them."""
    pieces = [piece for event in events for piece in event.drawing()]
    note = next((piece for piece in pieces if isinstance(piece, StepNote)), StepNote(CONTROLLER))
    marks = [Mark("note", tuple(note.over.split(",")), f"{number}. {label}{note.suffix}")]
    marks += [Mark("call", (piece.source, piece.target), piece.text) for piece in pieces if isinstance(piece, Call)]
    sends = [piece for piece in pieces if isinstance(piece, Send)]
    for runtime in (INTERACTIVE, MAINTENANCE):
        for p in range(P):
            marks += [Mark("send", (MULTIPLEXER, lane(runtime, p)), send.text)
                      for send in sends if send.runtime == runtime and p in send.processes]
    return marks


def mermaid_line(mark: Mark) -> str:
    if mark.kind in ("note", "cycle"):
        return _note(",".join(mark.lanes), mark.text)
    return _message(mark.lanes[0], MERMAID_ARROWS[mark.kind], mark.lanes[1], mark.text)


def _mermaid_step(label, number: int, events, P: int) -> list[str]:
    """The Mermaid lines one step draws (`step_marks`)."""
    return [mermaid_line(mark) for mark in step_marks(label, number, events, P)]


def trace_mermaid(trace: Trace, cfg=None, title: str | None = None, names: str | None = None) -> str:
    """The run as a Mermaid sequence diagram (a `.mmd` file: no fence, no title line);
    the violating step in red. `title` becomes a Mermaid comment line."""
    told = story(trace, cfg, names)
    participants = _participants(len(trace.steps[0].state.since))
    span = f"{participants[0][0]},{participants[-1][0]}"
    body = [f"participant {key} as {title}" for key, title in participants]
    body.append(_note(span, f"1. initial state: {told.steps[0].words}"))
    verdict = _note(span, f"violates {trace.prop}: " + "; ".join(told.violation or told.notes[:1] or ["see the last state"]))
    for step, step_story in zip(trace.steps[1:], told.steps[1:]):
        drawn = _mermaid_step(step_story.action, step_story.number, step_story.events, len(step.state.since))
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
    from protocol.render.narrate import state_lines

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
    """GraphML text through networkx's writer, its booleans spelled as GraphML's `boolean`
    type spells them (XML Schema's `true`/`false`): networkx declares the key `boolean`
    but writes Python's `True`/`False`, which a strict reader (yEd, Gephi) refuses."""
    import io

    from networkx.readwrite.graphml import GraphMLWriter

    class SchemaBooleans(GraphMLWriter):
        def add_data(self, name, element_type, value, scope="all", default=None):
            element = super().add_data(name, element_type, value, scope, default)
            if element_type is bool:  # the value comes as str(value): True or False
                element.text = element.text.lower()
            return element

    writer = SchemaBooleans(encoding="utf-8", prettyprint=True)
    writer.add_graph_element(graph)
    buffer = io.BytesIO()
    writer.dump(buffer)
    return buffer.getvalue().decode("utf-8")


# ------------------------------------------------------------------- the CLI

FORMATS = ("terminal", "markdown", "itf", "mermaid")


def legend_markdown(entries: list) -> str:
    """The traces' legend (narrate.legend) as a Markdown list."""
    return "**Legend**\n\n" + "".join(f"- {_code(term)}: {meaning}\n" for term, meaning in entries)


def export_result(result, fmt: str, out, full: bool = False, names: str | None = None) -> None:
    """Write one checked configuration in `fmt` (not "terminal") to the text stream `out`."""
    traces = [v.trace for v in result.properties.values() if v.trace is not None]
    name = result.named.name
    if fmt == "markdown":
        out.write(summary_markdown(result))
        for trace in traces:
            out.write("\n" + trace_markdown(trace, result.config, full=full,
                                            title=f"{name}: counterexample to {trace.prop}", names=names))
        if traces:
            out.write("\n" + legend_markdown(legend([story(t, result.config, names) for t in traces], full)))
    elif fmt == "itf":
        for trace in traces:  # JSON Lines: one ITF document per counterexample
            out.write(json.dumps(trace_itf(trace, source=name)) + "\n")
    elif fmt == "mermaid":  # one diagram: a .mmd file holds one; the expected violation first
        expected = result.named.expected_violation()
        trace = next((t for t in traces if t.prop == expected), traces[0])
        out.write(trace_mermaid(trace, result.config,
                                title=f"{name}: counterexample to {trace.prop}, {trace.length} states", names=names))
    else:
        raise ValueError(f"unknown format {fmt!r}: choose one of {', '.join(FORMATS)}")
    out.flush()


__all__ = [
    "FORMATS", "GLOBAL", "GraphTooLarge", "export_result", "from_itf", "graph_dot", "graph_graphml",
    "mermaid_fenced", "state_graph", "summary_markdown", "trace_itf", "trace_markdown", "trace_mermaid",
]


# ------------------------------------------------------------ `graph` command

DEFAULT_GRAPH_LIMIT = 20_000  # a DOT file past this is more than Graphviz will lay out usefully


