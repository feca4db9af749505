"""A trace in protocol words: what each step did, what it changed, why the last state is bad.

Plain text only (no rich): the terminal rendering, Markdown and Mermaid all
draw from the `Story` built here, so the three say the same thing. Every
sentence is derived from the action and the states before and after it, so
it says what actually happened (a compaction that was sent, or one that the
controller's read frontier held back), not what the action may do.
"""

from __future__ import annotations

from typing import NamedTuple

import invariants

from .state import (
    ACQUIRE, COMPACT, CREATE, DF_NAMES, DROP, GLOBAL_VARIABLES, LIVE, PROCESS_VARIABLES, RELEASE,
    UNBORN, ctl_since, held,
)
from .trace import Change, Trace, changes

# ------------------------------------------------------------------ values


def command_text(command) -> str:
    kind, *args = command
    return f"{kind}({', '.join(map(str, args))})"


def value_text(variable: str, value) -> str:
    """A variable's value as a reader of the spec would write it."""
    if variable in ("mq", "iq"):
        return "[" + ", ".join(command_text(c) for c in value) + "]"
    if variable == "df":
        return "<" + ", ".join(DF_NAMES[v] for v in value) + ">"
    if variable in ("readers", "acq"):
        entries = [f"{d}: {t}" for d, t in enumerate(value) if t is not None]
        return "{" + ", ".join(entries) + "}"
    if variable in ("caps", "released"):
        return "{" + ", ".join(map(str, sorted(value))) + "}"
    if isinstance(value, tuple):
        return "<" + ", ".join(map(str, value)) + ">"
    return str(value)


def state_lines(state) -> list[str]:
    """Every variable of a state, one per line, per-process variables per process."""
    lines = [f"{name} = {value_text(name, getattr(state, name))}" for name in GLOBAL_VARIABLES]
    for name in PROCESS_VARIABLES:
        for p, value in enumerate(getattr(state, name)):
            lines.append(f"{name}[{p}] = {value_text(name, value)}")
    return lines


# ------------------------------------------------------------------ groups

GLOBAL = "global"


def process_group(p: int) -> str:
    return f"process {p}"


def grouped_changes(before, after) -> list[tuple[str, list[Change]]]:
    """What a step changed: the globals first, then process 0, process 1, ..."""
    groups: dict[str, list[Change]] = {}
    found = changes(before, after)
    for change in sorted(found, key=lambda c: -1 if c.process is None else c.process):
        group = GLOBAL if change.process is None else process_group(change.process)
        groups.setdefault(group, []).append(change)
    return list(groups.items())


def grouped_variables(state) -> list[tuple[str, list[tuple[str, object]]]]:
    """Every variable of a state, as `grouped_changes` groups them (for --full)."""
    groups = [(GLOBAL, [(name, getattr(state, name)) for name in GLOBAL_VARIABLES])]
    for p in range(len(state.since)):
        groups.append((process_group(p), [(name, getattr(state, name)[p]) for name in PROCESS_VARIABLES]))
    return groups


# --------------------------------------------------------- the initial state


def initial_words(state) -> str:
    """A compact description of a state that has done nothing yet; falls back to its values."""
    P, D = len(state.since), len(state.df)
    frontiers = [state.policy, state.sent, state.upper, state.fwd]
    for name in ("writer", "standing", "since", "physical"):
        frontiers += getattr(state, name)
    parts = [f"{P} process{'es' if P != 1 else ''}, {D} peek id{'s' if D != 1 else ''}"]
    if set(frontiers) <= {0}:
        parts.append("every frontier at 0")
    if not any(state.mq) and not any(state.iq):
        parts.append("every queue empty")
    if all(status == UNBORN for status in state.df):
        parts.append("no peek created")
    if not any(held(m) for m in state.readers + state.acq) and not any(state.released):
        parts.append("no hold registered")
    if len(parts) < 5:  # not the spec's initial state: say what it is instead
        return "; ".join(state_lines(state))
    return ", ".join(parts)


# ------------------------------------------------------------------ actions


def _queued_on(before, after, queue: str) -> dict[str, list[int]]:
    """The commands a step appended to queue `queue` ("mq" or "iq"), command text -> processes."""
    found: dict[str, list[int]] = {}
    for p, (old, new) in enumerate(zip(getattr(before, queue), getattr(after, queue))):
        if new[: len(old)] == old:
            for command in new[len(old):]:
                found.setdefault(command_text(command), []).append(p)
    return found


def _processes_phrase(processes: list[int], total: int) -> str:
    if len(processes) == total:
        return "every process's" if total > 1 else "the process's"
    return " and ".join(f"process {p}'s" for p in processes)


def _routing(before, after, skip: set[str] = frozenset()) -> list[str]:
    """What the multiplexer queued in this step, per stream, in protocol words."""
    total = len(after.since)
    said = []
    for queue, runtime in (("iq", "interactive"), ("mq", "maintenance")):
        for command, processes in _queued_on(before, after, queue).items():
            if command in skip:
                continue
            said.append(f"{command} is queued on {_processes_phrase(processes, total)} {runtime} stream")
    return said


def _compaction_words(before, after) -> str:
    """What the controller's Compact did inside a step: sent, forwarded, or held back."""
    if after.sent > before.sent:
        targets = [runtime for queue, runtime in (("mq", "maintenance"), ("iq", "interactive"))
                   if f"Compact({after.sent})" in _queued_on(before, after, queue)]
        words = f"AllowCompaction(index, {after.sent}) is sent"
        if after.fwd > before.fwd:
            words += f", and the multiplexer forwards Compact({after.fwd}) to every maintenance runtime"
            if after.fwd < after.sent:
                words += f" (capped at the as_of {after.fwd} of a peek process 0 has not rendered)"
        elif targets:
            words += " to every process's " + " and ".join(f"{t} runtime" for t in targets)
        else:
            words += ", but the multiplexer's cap holds it back (a peek is not yet rendered on process 0)"
        return words
    frontier = ctl_since(after)
    holders = [d for d, status in enumerate(after.df) if status == LIVE and after.as_of[d] == frontier
               and frontier < after.policy]
    if holders:
        return (f"the controller's read frontier stays at {frontier}, held by peek {holders[0]}, "
                f"so no AllowCompaction is sent")
    return f"the controller's read frontier stays at {frontier}, so no AllowCompaction is sent"


def _create_peek(label, before, after) -> str:
    d, t = label.args
    words = f"the controller creates peek {d} reading at as_of {t}"
    said = _routing(before, after)
    if after.caps != before.caps:
        said.append(f"the multiplexer caps compaction at {t} until process 0 renders peek {d}")
    return words + ": " + "; ".join(said) if said else words


def _drop_peek(label, before, after) -> str:
    d = label.args[0]
    words = f"the controller drops peek {d}: its read hold at {before.as_of[d]} goes"
    said = _routing(before, after, skip={f"Compact({after.sent})"})
    return ", ".join([words, *said]) + ", and " + _compaction_words(before, after)


def _advance_policy(label, before, after) -> str:
    return (f"the controller's compaction policy advances to {after.policy}, and "
            + _compaction_words(before, after))


def _ingest(label, before, after) -> str:
    return f"new data arrives: the index's write frontier (upper) advances to {after.upper}"


def _head_command(label, before, queue: str, runtime: str) -> tuple[int, tuple, str]:
    """The process a runtime step runs on, the command it pops, and who that is, in words."""
    p = label.args[0]
    return p, getattr(before, queue)[p][0], f"process {p}'s {runtime} runtime"


def _maint_step(label, before, after) -> str:
    p, command, who = _head_command(label, before, "mq", "maintenance")
    kind = command[0]
    if kind == COMPACT:
        return f"{who} applies Compact({command[1]}): its write handle allows compaction to {command[1]} (writer)"
    if kind == ACQUIRE:
        _, d, t = command
        if d in before.released[p]:
            return (f"{who} receives Acquire({d}, {t}) after the release overtook it: "
                    f"the release is consumed and no hold is installed")
        return f"{who} applies Acquire({d}, {t}): it installs a read hold at {t} for peek {d}"
    if kind == RELEASE:
        d = command[1]
        if before.acq[p][d] is not None:
            return f"{who} applies Release({d}): peek {d}'s acquired hold at {before.acq[p][d]} goes"
        return (f"{who} receives Release({d}) before the acquisition: "
                f"it records the release for the Acquire still to come")
    return f"{who} applies {command_text(command)}"


def _inter_step(label, before, after) -> str:
    p, command, who = _head_command(label, before, "iq", "interactive")
    kind = command[0]
    if kind == CREATE:
        _, d, t = command
        words = f"{who} renders peek {d}: it imports the arrangement and registers a read hold at {t}"
        if before.caps != after.caps:
            words += f"; its frontier report retires the cap on peek {d}"
            if after.fwd > before.fwd:
                words += f", and the multiplexer forwards Compact({after.fwd}) to every maintenance runtime"
        return words
    if kind == DROP:
        return f"{who} applies Drop({command[1]}): peek {command[1]}'s reader registration goes"
    if kind == COMPACT:
        if after.standing != before.standing:
            return f"{who} applies Compact({command[1]}): its standing hold rises to {command[1]}"
        return f"{who} pops Compact({command[1]}) and ignores it (no standing hold in this design)"
    if kind == RELEASE:
        return f"{who} applies Release({command[1]}): it records the release for maintenance to act on"
    return f"{who} applies {command_text(command)}"


def _reclaim(label, before, after) -> str:
    p = label.args[0]
    gone = sorted(before.released[p] - after.released[p])
    peeks = ", ".join(map(str, gone))
    return f"process {p}'s maintenance runtime reclaims the acquired hold of peek {peeks}, whose release it has seen"


def _publish_bound(state, p: int) -> str:
    """The holds that bound process p's publisher, named, for the Publish sentence."""
    holds = [f"writer {state.writer[p]}"]
    if state.standing[p]:  # a standing hold of 0 bounds nothing a Publish could raise
        holds.append(f"standing {state.standing[p]}")
    holds += [f"peek {d}'s reader {t}" for d, t in held(state.readers[p]).items()]
    holds += [f"peek {d}'s acquired hold {t}" for d, t in held(state.acq[p]).items()]
    return ", ".join(holds)


def _publish(label, before, after) -> str:
    p = label.args[0]
    who = f"process {p}'s publisher"
    said = []
    if after.since[p] != before.since[p]:
        said.append(f"raises the published since from {before.since[p]} to {after.since[p]} "
                    f"(the least of its holds: {_publish_bound(before, p)})")
    if after.physical[p] != before.physical[p]:
        said.append(f"forwards physical compaction to {after.physical[p]} (upper is {after.upper})")
    return f"{who} " + ", and ".join(said)


NARRATORS = {
    "CreatePeek": _create_peek,
    "DropPeek": _drop_peek,
    "AdvancePolicy": _advance_policy,
    "Ingest": _ingest,
    "MaintStep": _maint_step,
    "InterStep": _inter_step,
    "Reclaim": _reclaim,
    "Publish": _publish,
}


def _action_name(label) -> tuple[str, tuple]:
    """A label's name and arguments, whether a model.Label, a plain tuple or its printed form."""
    if isinstance(label, tuple):
        return label[0], tuple(label[1:])
    return str(label), ()


def narrate(label, before, after) -> str:
    """The step `before --label--> after` in protocol words."""
    name, args = _action_name(label)
    narrator = NARRATORS.get(name)
    if narrator is None:
        return str(label)
    return narrator(_Label(name, args), before, after)


class _Label(NamedTuple):
    name: str
    args: tuple


# ---------------------------------------------------------------- witnesses


def violation_words(trace: Trace, cfg=None) -> list[str]:
    """Why the last state (or last step) breaks `trace.prop`: the property's witnesses."""
    explain = invariants.WITNESSES.get(trace.prop)
    if explain is None or not trace.steps:
        return []
    last = trace.steps[-1].state
    try:
        if trace.prop in invariants.TRANSITION_PROPERTIES:
            if len(trace.steps) < 2:
                return []
            return list(explain(trace.steps[-2].state, last, cfg))
        return list(explain(last, cfg))
    except AttributeError:
        return []  # this witness needs the configuration (TypeOK's domains) and none was given


# -------------------------------------------------------------------- story


class StepStory(NamedTuple):
    number: int  # 1-based, as the trace is numbered
    action: str  # "CreatePeek(0, 0)", or "Initial state"
    words: str  # the step in protocol words
    changed: list  # [(group, [Change])], globals first
    state: object  # the state after the step
    cycle_start: bool  # a lasso's cycle returns to this state


class Story(NamedTuple):
    prop: str
    steps: list  # of StepStory
    ending: str | None  # "back to state k" / "stutters forever in state k" for a lasso
    violation: list  # witness sentences for the last state
    notes: tuple


def lasso_ending(trace: Trace) -> str | None:
    if not trace.is_lasso:
        return None
    if trace.stutters:
        return f"stutters forever in state {trace.loop + 1}"
    return f"back to state {trace.loop + 1}"


def story(trace: Trace, cfg=None) -> Story:
    """The trace as a reviewer reads it: one `StepStory` per state, then why it is bad."""
    told = []
    previous = None
    for index, step in enumerate(trace.steps):
        if previous is None:
            action, words, changed = "Initial state", initial_words(step.state), []
        else:
            action = str(step.action)
            words = narrate(step.action, previous, step.state)
            changed = grouped_changes(previous, step.state)
        told.append(StepStory(index + 1, action, words, changed, step.state, trace.loop == index))
        previous = step.state
    ending = lasso_ending(trace)
    notes = tuple(note for note in trace.notes if note != ending)  # the ending is said once
    return Story(trace.prop, told, ending, violation_words(trace, cfg), notes)
