"""A trace in protocol words: what each step did, what it changed, why the last state is bad.

Plain text only (no rich): the terminal rendering, Markdown and Mermaid all
draw from the `Story` built here, so the three say the same thing. A step's
sentence is the words of the events it records (protocol/model/events.py, the
kinds declared beside the effects in protocol/model/actions.py), so it says what
actually happened (a compaction that was sent, or one that the controller's
read frontier held back), not what the action may do; nothing here
computes a bound, a frontier or a guard.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from protocol import properties
from protocol.model.commands import EXPORT
from protocol.model.events import value_text
from protocol.model.explain import explain
from protocol.model.state import BOTTOM, GLOBAL, UNBORN, held, shown
from protocol.model.trace import Change, Trace, changes


# ------------------------------------------------------------------ values


def state_lines(state, elide: bool = False) -> list[str]:
    """Every variable of a state, one per line, per-process variables per process; with `elide`,
    a long vector's runs counted (`runs_elided`)."""
    lines = []
    text = (lambda domain, value: runs_elided(domain.text(value))) if elide else (lambda domain, value: domain.text(value))
    for variable in shown(state):
        value = getattr(state, variable.name)
        if variable.scope == GLOBAL:
            lines.append(f"{variable.name} = {text(variable.domain, value)}")
        else:
            lines += [f"{variable.name}[{p}] = {text(variable.domain, v)}" for p, v in enumerate(value)]
    return lines


# A vector of more entries than this is written with its runs of equal entries counted.
LONG_VECTOR = 8
SHORTEST_RUN = 3  # a run of fewer equal entries is written out


def runs_elided(text: str) -> str:
    """A vector's text (`<Unborn, Unborn, ...>`) of more than LONG_VECTOR entries with each run
    of equal entries counted, `<Live, 299 × Unborn>`; any other text as it is."""
    if not (text.startswith("<") and text.endswith(">")):
        return text
    entries = text[1:-1].split(", ")
    if len(entries) <= LONG_VECTOR:
        return text
    parts, start = [], 0
    for end in range(1, len(entries) + 1):
        if end == len(entries) or entries[end] != entries[start]:
            run = end - start
            parts += [f"{run} \u00d7 {entries[start]}"] if run >= SHORTEST_RUN else entries[start:end]
            start = end
    return "<" + ", ".join(parts) + ">"


# ------------------------------------------------------------------ groups

GLOBAL_GROUP = "global"


def process_group(p: int) -> str:
    return f"process {p}"


def grouped_changes(before, after) -> list[tuple[str, list[Change]]]:
    """What a step changed: the globals first, then process 0, process 1, ..."""
    groups: dict[str, list[Change]] = {}
    found = changes(before, after)
    for change in sorted(found, key=lambda c: -1 if c.process is None else c.process):
        group = GLOBAL_GROUP if change.process is None else process_group(change.process)
        groups.setdefault(group, []).append(change)
    return list(groups.items())


def grouped_variables(state) -> list[tuple[str, list[tuple[str, object]]]]:
    """Every variable of a state, as `grouped_changes` groups them (for --full)."""
    variables = shown(state)
    groups = [(GLOBAL_GROUP, [(v.name, getattr(state, v.name)) for v in variables if v.scope == GLOBAL])]
    for p in range(len(state.since)):
        groups.append((process_group(p), [(v.name, getattr(state, v.name)[p])
                                          for v in variables if v.scope != GLOBAL]))
    return groups


# --------------------------------------------------------- the initial state


def initial_words(state) -> str:
    """A compact description of a state that has done nothing yet; falls back to its values."""
    P, D = len(state.since), len(state.df)
    frontiers = [value for v in shown(state) if v.rises
                 for value in (getattr(state, v.name) if v.scope != GLOBAL else (getattr(state, v.name),))]
    flat = {t for value in frontiers for t in (value if isinstance(value, tuple) else (value,))}
    parts = [f"{P} process{'es' if P != 1 else ''}, {D} peek id{'s' if D != 1 else ''}"]
    if state.ix is not None:
        parts[0] += ", index ids X and Y (Y re-exports X, sharing its publication point)"
    if flat <= {0}:
        parts.append("every frontier at 0")
    elif flat <= {0, BOTTOM}:  # floor = agent: no writer floor is captured at adoption
        parts.append("every frontier at 0 and every writer floor at ⊥ (none before the first AllowCompaction)")
    if not any(state.iq) and all(queue in ((), ((EXPORT,),)) for queue in state.mq):
        parts.append("every queue empty" if not any(state.mq)
                     else "every queue empty but for Export, Y still to be published on every process")
    if all(status == UNBORN for status in state.df):
        parts.append("no peek created")
    if not any(held(m) for m in state.readers + state.acq) and not any(state.released):
        parts.append("no hold registered")
    if len(parts) < 5:  # not the spec's initial state: say what it is instead
        return "; ".join(state_lines(state))
    return ", ".join(parts)


# ------------------------------------------------------------------ steps


def sentence(events) -> str:
    """A step's events as one sentence: the first heads it and joins the others' words."""
    head, *rest = events
    return head.words() + head.joined([event.words() for event in rest])


def step_words(label, events) -> str:
    """What a step's events say; its label, for a step that records none."""
    return sentence(events) if events else str(label)


def narrate(label, before, after, cfg) -> str:
    """The step `before --label--> after` of configuration `cfg` in protocol words."""
    return step_words(label, explain(cfg, label, before, after))


# ---------------------------------------------------------------- witnesses


# -------------------------------------------------------------------- story


class StepStory(NamedTuple):
    number: int  # 1-based, as the trace is numbered
    action: str  # "CreatePeek(0, 0)", or "Initial state"
    words: str  # the step in protocol words
    changed: list  # [(group, [Change])], globals first
    state: object  # the state after the step
    cycle_start: bool  # a lasso's cycle returns to this state
    events: tuple = ()  # what the step recorded (protocol/model/events.py); none for the initial state


class Story(NamedTuple):
    prop: str
    steps: list  # of StepStory
    ending: str | None  # "back to state k" / "stutters forever in state k" for a lasso
    violation: list  # witness sentences for the last state
    notes: tuple
    names: str = "ours"  # how the actions are named: "ours", "tla" or "both" (model/tla.py)


def lasso_ending(trace: Trace) -> str | None:
    if not trace.is_lasso:
        return None
    if trace.stutters:
        return f"stutters forever in state {trace.loop + 1}"
    return f"back to state {trace.loop + 1}"


def story(trace: Trace, cfg, names: str | None = None) -> Story:
    """The trace of configuration `cfg` as a reviewer reads it: one `StepStory` per state,
    then why it is bad. `names` says how its actions are named (model/tla.py's `naming`:
    by default both ours and the design's TLA+ names where `cfg` mirrors that model)."""
    from protocol.model import tla

    if cfg is None:
        raise TypeError("a story needs the trace's configuration: its steps are told by re-running them")
    names = names or ("both" if tla.mirrors(cfg) else "ours")
    name_of = tla.naming(cfg, names)
    told = []
    previous = None
    for index, step in enumerate(trace.steps):
        events = ()
        if previous is None:
            action, words, changed = "Initial state", initial_words(step.state), []
        else:
            action = name_of(step.action)
            events = explain(cfg, step.action, previous, step.state)
            words = step_words(step.action, events)
            changed = grouped_changes(previous, step.state)
        told.append(StepStory(index + 1, action, words, changed, step.state, trace.loop == index, events))
        previous = step.state
    ending = lasso_ending(trace)
    notes = tuple(note for note in trace.notes if note != ending)  # the ending is said once
    if names != "ours":
        notes = relabelled(notes, cfg, name_of)
    return Story(trace.prop, told, ending, properties.violation_words(trace, cfg), notes, names)


def relabelled(notes: tuple, cfg, name_of) -> tuple:
    """`notes` (a lasso's, which name action instances as ours: "Publish(0) is disabled ...")
    with every instance of `cfg` named by `name_of` instead."""
    from protocol.model.next import instances

    renamed = {str(label): name_of(label) for label, _ in instances(cfg)}
    renamed = {ours: theirs for ours, theirs in renamed.items() if ours != theirs}
    if not renamed:
        return notes
    pattern = re.compile(r"(?<![\w(])(" + "|".join(map(re.escape, sorted(renamed, key=len, reverse=True)))
                         + r")(?![\w(])")
    return tuple(pattern.sub(lambda found: renamed[found[1]], note) for note in notes)


# ------------------------------------------------------------------ the legend

CHANGE_ARROW = ("a → b", "the value before the step, then after it")


def legend(stories: list, full: bool = False) -> list[tuple[str, str]]:
    """What the traces of `stories` write that a reader may not know, as (term, meaning):
    each variable they show (its `short` words, from the schema), then each notation their
    values use (from the domains), then how the actions are named. Derived from what the
    traces show: a variable, a bracket or a command kind they never write is not listed."""
    from protocol.model import state as schema

    shown_names, notation = set(), {}

    def note(variable: str, value) -> None:
        shown_names.add(variable)
        domain = schema.BY_NAME[variable].domain
        for symbol, meaning in getattr(domain, "notation", lambda value: [])(value):
            said = notation.setdefault(symbol, [])
            if meaning not in said:
                said.append(meaning)

    words = []
    for told in stories:
        for step in told.steps:
            if full:
                for _, variables in grouped_variables(step.state):
                    for name, value in variables:
                        note(name, value)
            for _, found in step.changed:
                for change in found:
                    note(change.variable, change.before)
                    note(change.variable, change.after)
        words += [*told.violation, *told.notes]
    said = " ".join(words)
    # a variable a note or witness names as one: `mq[0]`, `standing 0`, `writer X 1`, `sent >= 1`
    shown_names |= {v.name for v in schema.VARIABLES
                    if re.search(rf"(?<![\w`']){re.escape(v.name)}(\[|\s+(?:[XY]\s+)?\d|\s*(?:[<>]=?|=))", said)}
    entries = [(v.name, v.short or v.meaning.replace("`", "")) for v in schema.VARIABLES if v.name in shown_names]
    entries += [(symbol, "; ".join(meanings)) for symbol, meanings in notation.items()]
    if not full and any(step.changed for told in stories for step in told.steps):
        entries.append(CHANGE_ARROW)
    names = {told.names for told in stories}
    if "both" in names:
        entries.append(("A (TLA+ B)", "our action A is B in the design's TLA+ model (Holds.tla, docs/tla.md); "
                                      "an action shown alone has the same name there"))
    if "tla" in names:
        entries.append(("actions", "named as the design's TLA+ model (Holds.tla) names them; docs/tla.md "
                                   "gives ours"))
    return entries
