"""A counterexample as inline SVG: the sequence diagram and a lasso's cycle.

Plain text only (no rich, no browser): the report embeds what these return.

The diagram knows no protocol of its own. Which lanes there are and which
arrows and notes each step draws come from `protocol.render.export`
(`_participants`, `step_marks`), which the Mermaid diagram writes as lines: the
same `Mark`s are laid out here, so the two diagrams always agree.
"""

from __future__ import annotations

import math
from html import escape
from typing import NamedTuple

from protocol.render.export import Mark, _participants, step_marks
from protocol.render.narrate import Story
from protocol.model.trace import Trace

# ------------------------------------------------------------------ marks


def step_marks_of(trace: Trace, told: Story) -> list[list[Mark]]:
    """Per step after the initial state (index 0 is step 2), what it draws."""
    return [step_marks(told_step.action, told_step.number, told_step.events, len(step.state.since))
            for step, told_step in zip(trace.steps[1:], told.steps[1:])]


# ------------------------------------------------------------------ layout

LANE_WIDTH = 150
GUTTER = 46  # the step numbers, and a lasso's way back
TOP = 52  # the lane titles
ROW = 30
CHAR = 6.6  # the width of one character at the diagram's 12px, for placing notes
NOTE_PAD = 8


def _text_width(text: str) -> float:
    return len(text) * CHAR + 2 * NOTE_PAD


class Diagram(NamedTuple):
    lanes: dict  # lane key -> x of its lifeline
    titles: list  # (key, title)
    width: int

    @classmethod
    def for_processes(cls, P: int) -> "Diagram":
        titles = _participants(P)
        lanes = {key: GUTTER + LANE_WIDTH * (i + 0.5) for i, (key, _) in enumerate(titles)}
        return cls(lanes, titles, int(GUTTER + LANE_WIDTH * len(titles) + 10))

    def span(self, lanes: tuple) -> tuple[float, float]:
        xs = [self.lanes[lane] for lane in lanes]
        return min(xs), max(xs)


def _lane_header(layout: Diagram, height: float) -> list[str]:
    out = []
    for key, title in layout.titles:
        x = layout.lanes[key]
        kind = "runtime" if key[-1].isdigit() else "control"
        out.append(f'<line class="lifeline" x1="{x:.0f}" y1="{TOP - 8}" x2="{x:.0f}" y2="{height:.0f}"/>')
        out.append(f'<rect class="lane-title {kind}" x="{x - LANE_WIDTH / 2 + 6:.0f}" y="8" '
                   f'width="{LANE_WIDTH - 12}" height="30" rx="6"/>')
        out.append(f'<text class="lane-title" x="{x:.0f}" y="28" text-anchor="middle">{escape(title)}</text>')
    return out


def _note(layout: Diagram, event: Mark, y: float, css: str = "note") -> str:
    left, right = layout.span(event.lanes)
    width = max(right - left + LANE_WIDTH - 20, _text_width(event.text))
    x = min(max((left + right) / 2 - width / 2, GUTTER), layout.width - width - 4)
    return (f'<rect class="{css}" x="{x:.0f}" y="{y + 4:.0f}" width="{width:.0f}" height="{ROW - 8}" rx="4"/>'
            f'<text class="{css}" x="{x + width / 2:.0f}" y="{y + ROW / 2 + 4:.0f}" '
            f'text-anchor="middle">{escape(event.text)}</text>')


def _arrow(layout: Diagram, event: Mark, y: float) -> str:
    source, target = (layout.lanes[lane] for lane in event.lanes)
    line_y = y + ROW - 8
    end = target - 6 if target > source else target + 6
    label_x = (source + target) / 2
    return (f'<g class="arrow {event.kind}" data-from="{event.lanes[0]}" data-to="{event.lanes[1]}">'
            f'<line x1="{source:.0f}" y1="{line_y:.0f}" x2="{end:.0f}" y2="{line_y:.0f}" '
            f'marker-end="url(#head-{event.kind})"/>'
            f'<text x="{label_x:.0f}" y="{line_y - 5:.0f}" text-anchor="middle">{escape(event.text)}</text></g>')


def _wrapped(layout: Diagram, events) -> list[Mark]:
    """Each note too wide for the diagram (one process: three lanes) as several notes,
    one line each, so that no text is cut at the diagram's edges."""
    import textwrap

    room = int((layout.width - GUTTER - 4 - 2 * NOTE_PAD) / CHAR)
    fitted = []
    for event in events:
        if event.kind in ("note", "cycle") and len(event.text) > room:
            fitted += [event._replace(text=line) for line in textwrap.wrap(event.text, room)]
        else:
            fitted.append(event)
    return fitted


def _drawn(layout: Diagram, event: Mark, y: float) -> str:
    if event.kind in ("note", "cycle"):
        return _note(layout, event, y, css=event.kind)
    return _arrow(layout, event, y)


def _step_group(layout: Diagram, number: int, events: list[Mark], y: float, css: str,
                extra: list[Mark] = ()) -> tuple[str, float]:
    """One step's band: a background the page's script highlights, its number, its events."""
    events, extra = _wrapped(layout, events), _wrapped(layout, extra)
    rows = len(events) + len(extra)
    height = rows * ROW + 8
    parts = [f'<g class="{css}" data-step="{number}">',
             f'<rect class="band" x="2" y="{y:.0f}" width="{layout.width - 4}" height="{height:.0f}" rx="6"/>',
             f'<circle class="number" cx="{GUTTER / 2:.0f}" cy="{y + ROW / 2 + 2:.0f}" r="11"/>',
             f'<text class="number" x="{GUTTER / 2:.0f}" y="{y + ROW / 2 + 6:.0f}" '
             f'text-anchor="middle">{number}</text>']
    row_y = y + 4
    for event in events:
        parts.append(_drawn(layout, event, row_y))
        row_y += ROW
    for event in extra:
        parts.append(_note(layout, event, row_y, css="verdict"))
        row_y += ROW
    parts.append("</g>")
    return "".join(parts), height + 6


def sequence_svg(trace: Trace, told: Story, title: str = "") -> str:
    """The run as an SVG sequence diagram: one band per step, the violating one marked."""
    layout = Diagram.for_processes(len(trace.steps[0].state.since))
    everyone = (layout.titles[0][0], layout.titles[-1][0])
    bands, y = [], TOP + 4
    initial = [Mark("note", everyone, f"initial state: {told.steps[0].words}")]
    drawn, height = _step_group(layout, 1, initial, y, _step_css(told, 1))
    bands.append(drawn)
    y += height
    for number, events in enumerate(step_marks_of(trace, told), start=2):
        extra = _verdict_events(told, everyone) if number == len(trace.steps) else []
        if told.steps[number - 1].cycle_start:
            events = [*events, Mark("cycle", everyone, "\u21bb the cycle starts here")]
        drawn, height = _step_group(layout, number, events, y, _step_css(told, number), extra)
        bands.append(drawn)
        y += height
    if len(trace.steps) == 1:
        for event in _wrapped(layout, _verdict_events(told, everyone)[:1]):
            bands.append(_note(layout, event, y, css="verdict"))
            y += ROW
    if told.ending:
        for event in _wrapped(layout, [Mark("note", everyone, "\u21ba the run " + told.ending)]):
            bands.append(_note(layout, event, y, css="cycle"))
            y += ROW
    height = y + 8
    return (f'<svg class="sequence" role="img" '
            f'viewBox="0 0 {layout.width} {height:.0f}" width="{layout.width}" '
            f'aria-label="{escape(title or "sequence diagram")}">'
            + _defs() + "".join(_lane_header(layout, height)) + "".join(bands) + "</svg>")


def _step_css(told: Story, number: int) -> str:
    css = ["step"]
    if number == len(told.steps):
        css.append("violating")
    if told.steps[number - 1].cycle_start:
        css.append("cycle-start")
    return " ".join(css)


def _verdict_events(told: Story, everyone: tuple) -> list[Mark]:
    lines = told.violation or [note for note in told.notes[:1]] or ["see the last state"]
    return [Mark("note", everyone, f"\u2717 violates {told.prop}: {line}") for line in lines]


def _defs() -> str:
    return ('<defs>'
            '<marker id="head-call" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="8" markerHeight="8" '
            'orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" class="head"/></marker>'
            '<marker id="head-send" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="8" markerHeight="8" '
            'orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10" class="open-head"/></marker>'
            '</defs>')


# ------------------------------------------------------------------ the cycle

STATE_RADIUS = 20
MARGIN = 40


def cycle_svg(trace: Trace, told: Story | None = None) -> str:
    """A lasso as it runs: the stem from the initial state in a row, then the cycle drawn as a
    ring (a stutter as a loop on its state), each state numbered as in the step table; each
    step named as `told` names it, where given."""
    assert trace.is_lasso, "only a lasso has a cycle"
    labels = ([step.action for step in told.steps[1:]] if told is not None
              else [str(step.action) for step in trace.steps[1:]]) + [_loop_label(trace, told)]
    spacing = max(120, max(len(label) for label in labels) * CHAR + 50)  # room for each step's name
    stem, ring = list(range(trace.loop)), list(range(trace.loop, len(trace.steps)))
    # a chord of the ring as long as a stem step: each step's name fits beside its arrow
    radius = 0 if len(ring) == 1 else spacing / (2 * math.sin(math.pi / len(ring)))
    center_x = MARGIN + STATE_RADIUS + spacing * len(stem) + radius
    center_y = MARGIN + 70 + radius  # room above for a stutter's loop and its label
    where = {i: (MARGIN + STATE_RADIUS + spacing * i, center_y) for i in stem}
    for k, i in enumerate(ring):  # the cycle's first state on the left, where the stem joins it
        angle = math.pi - 2 * math.pi * k / len(ring)
        where[i] = (center_x + radius * math.cos(angle), center_y - radius * math.sin(angle))
    center = (center_x, center_y)
    parts = [_edge(where[i], where[i + 1], labels[i], center if i >= trace.loop else None)
             for i in range(len(trace.steps) - 1)]
    if len(ring) == 1:
        parts.append(_self_loop(where[ring[0]], labels[-1]))
    else:
        parts.append(_edge(where[ring[-1]], where[ring[0]], labels[-1], center, css="edge back"))
    parts += [_state_node(i, where[i], i == trace.loop) for i in sorted(where)]
    width = center_x + radius + STATE_RADIUS + MARGIN + spacing / 2
    height = center_y + radius + STATE_RADIUS + MARGIN
    return (f'<svg class="cycle" role="img" viewBox="0 0 {width:.0f} '
            f'{height:.0f}" width="{width:.0f}" aria-label="the lasso: stem and cycle">'
            + _defs() + "".join(parts) + "</svg>")


def _loop_label(trace: Trace, told: Story | None = None) -> str:
    for note in (told.notes if told is not None else trace.notes):
        if note.startswith("back to state"):
            return note.split(" by ", 1)[-1]
    return "stutters forever" if trace.stutters else "back"


def _state_node(index: int, at: tuple, cycle_start: bool) -> str:
    x, y = at
    css = "state cycle-start" if cycle_start else "state"
    return (f'<g class="{css}" data-step="{index + 1}"><circle cx="{x:.0f}" cy="{y:.0f}" r="{STATE_RADIUS}"/>'
            f'<text x="{x:.0f}" y="{y + 5:.0f}" text-anchor="middle">{index + 1}</text></g>')


def _toward(a: tuple, b: tuple, by: float) -> tuple:
    """The point `by` away from `a` in the direction of `b`."""
    length = math.hypot(b[0] - a[0], b[1] - a[1]) or 1
    return a[0] + (b[0] - a[0]) / length * by, a[1] + (b[1] - a[1]) / length * by


def _edge(a: tuple, b: tuple, label: str, ring_center: tuple | None = None, css: str = "edge") -> str:
    """An arrow between two states: straight on the stem with its label above; on the cycle
    bowed away from the ring's centre, label outside, so that a cycle of two shows two arcs."""
    (x1, y1), (x2, y2) = a, b
    chord = math.hypot(x2 - x1, y2 - y1) or 1
    ux, uy = (x2 - x1) / chord, (y2 - y1) / chord
    mid = ((x1 + x2) / 2, (y1 + y2) / 2)
    if ring_center is None:
        control, label_at, anchor = mid, (mid[0], mid[1] - 8), "middle"
    else:
        out_x, out_y = uy, -ux  # a perpendicular; turned to point away from the centre
        if out_x * (mid[0] - ring_center[0]) + out_y * (mid[1] - ring_center[1]) < 0:
            out_x, out_y = -out_x, -out_y
        bulge = chord * 0.22
        control = (mid[0] + out_x * bulge * 2, mid[1] + out_y * bulge * 2)
        label_at = (mid[0] + out_x * (bulge + 12), mid[1] + out_y * (bulge + 12) + 4)
        anchor = "middle" if abs(out_x) < 0.3 else ("start" if out_x > 0 else "end")
    start, end = _toward(a, control, STATE_RADIUS), _toward(b, control, STATE_RADIUS + 3)
    return (f'<g class="{css}"><path d="M{start[0]:.0f},{start[1]:.0f} Q{control[0]:.0f},{control[1]:.0f} '
            f'{end[0]:.0f},{end[1]:.0f}" fill="none" marker-end="url(#head-call)"/>'
            f'<text x="{label_at[0]:.0f}" y="{label_at[1]:.0f}" text-anchor="{anchor}">{escape(label)}</text></g>')


def _self_loop(at: tuple, label: str) -> str:
    x, y = at
    r = STATE_RADIUS
    return (f'<g class="edge back"><path d="M{x - 12:.0f},{y - r + 4:.0f} C{x - 45:.0f},{y - r - 55:.0f} '
            f'{x + 45:.0f},{y - r - 55:.0f} {x + 14:.0f},{y - r + 1:.0f}" fill="none" marker-end="url(#head-call)"/>'
            f'<text x="{x:.0f}" y="{y - r - 50:.0f}" text-anchor="middle">{escape(label)}</text></g>')
