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

from . import state as schema
from .commands import ACQUIRE, COMPACT, CREATE, DROP, EXPORT, RELEASE, command_text, index_of
from .state import (
    BOTTOM, GLOBAL, INDEX_NAMES, LIVE, UNBORN, ctl_holds, ctl_since, exported, frontier_at, held, index_of_peek,
    shown, stranded_on,
)
from .trace import Change, Trace, changes

WORDS: dict = {}  # action name -> (label, before, after) -> the step in protocol words


def words(name: str):
    """Register the function below as the words of action `name` (see model.ACTIONS)."""

    def register(function):
        WORDS[name] = function
        return function

    return register


# ------------------------------------------------------------------ values


def value_text(variable: str, value) -> str:
    """A variable's value (one process's, for a per-process variable) as a reader of the
    spec would write it; its domain in the schema says how."""
    return schema.BY_NAME[variable].domain.text(value)


def state_lines(state) -> list[str]:
    """Every variable of a state, one per line, per-process variables per process."""
    lines = []
    for variable in shown(state):
        value = getattr(state, variable.name)
        if variable.scope == GLOBAL:
            lines.append(f"{variable.name} = {variable.domain.text(value)}")
        else:
            lines += [f"{variable.name}[{p}] = {variable.domain.text(v)}" for p, v in enumerate(value)]
    return lines


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


# ------------------------------------------------------------------ actions


def has(state, name: str) -> bool:
    """Whether the configuration of `state` has variable `name` (section 10's and 11's
    variables are None, per process None for every process, where it has not)."""
    value = getattr(state, name)
    return value is not None and not (isinstance(value, tuple) and value and all(v is None for v in value))


def index_words(state, i: int) -> str:
    """How a sentence names index id i: `index` with one index, `X` or `Y` with two."""
    return "index" if state.ix is None else INDEX_NAMES[i]


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


def _sent_rose(before, after) -> int | None:
    """The index id whose AllowCompaction this step sent, or None."""
    for i in range(1 if before.ix is None else len(INDEX_NAMES)):
        if frontier_at(after.sent, i) > frontier_at(before.sent, i):
            return i
    return None


def _compact_command(after, i: int) -> str:
    frontier = frontier_at(after.sent, i)
    return f"Compact({frontier})" if after.ix is None else f"Compact({i}, {frontier})"


def _compaction_words(before, after, i: int = 0) -> str:
    """What the controller's Compact(i) did inside a step: sent, forwarded, or held back."""
    if _sent_rose(before, after) is not None:
        frontier = frontier_at(after.sent, i)
        targets = [runtime for queue, runtime in (("mq", "maintenance"), ("iq", "interactive"))
                   if _compact_command(after, i) in _queued_on(before, after, queue)]
        words = f"AllowCompaction({index_words(after, i)}, {frontier}) is sent"
        if after.fwd > before.fwd:
            words += f", and the multiplexer forwards Compact({after.fwd}) to every maintenance runtime"
            if after.fwd < frontier:
                words += f" (capped at the as_of {after.fwd} of a peek process 0 has not rendered)"
        elif targets:
            words += " to every process's " + " and ".join(f"{t} runtime" for t in targets)
        else:
            words += ", but the multiplexer's cap holds it back (a peek is not yet rendered on process 0)"
        return words
    frontier = ctl_since(after, i)
    holders = [d for d, status in enumerate(after.df) if status == LIVE and after.as_of[d] == frontier
               and index_of_peek(after, d) == i and frontier < frontier_at(after.policy, i)]
    if holders:
        return (f"the controller's read frontier stays at {frontier}, held by peek {holders[0]}, "
                f"so no AllowCompaction is sent")
    return f"the controller's read frontier stays at {frontier}, so no AllowCompaction is sent"


@words("CreatePeek")
def create_peek(label, before, after) -> str:
    d, t = label.args[0], label.args[-1]
    reading = "" if after.ix is None else f" {INDEX_NAMES[after.ix[d]]}"
    words = f"the controller creates peek {d} reading{reading} at as_of {t}"
    said = _routing(before, after)
    if after.caps != before.caps:
        said.append(f"the multiplexer caps compaction at {t} until process 0 renders peek {d}")
    return words + ": " + "; ".join(said) if said else words


@words("DropPeek")
def drop_peek(label, before, after) -> str:
    d = label.args[0]
    i = index_of_peek(before, d)
    words = f"the controller drops peek {d}: its read hold at {before.as_of[d]} goes"
    if ctl_holds(after, d):
        words = (f"the controller drops peek {d}: it keeps its read hold at {before.as_of[d]} until every "
                 f"process reports the dataflow retired")
    said = _routing(before, after, skip={_compact_command(after, i)})
    return ", ".join([words, *said]) + ", and " + _compaction_words(before, after, i)


@words("AdvancePolicy")
def advance_policy(label, before, after) -> str:
    i = label.args[0] if label.args else 0
    whose = "" if after.ix is None else f" for {INDEX_NAMES[i]}"
    return (f"the controller's compaction policy{whose} advances to {frontier_at(after.policy, i)}, and "
            + _compaction_words(before, after, i))


@words("Ingest")
def ingest(label, before, after) -> str:
    words = f"new data arrives: the index's write frontier (upper) advances to {after.upper}"
    if not has(after, "pub"):
        return words
    notified = _notified(before, after)
    if notified:
        return (words + "; the tap upstream of the sink notifies " + ", ".join(notified)
                + ", before the sink has published the new upper")
    return words


def _notified(before, after) -> list[str]:
    """What a step marked dirty, per process: "index X on process 0"."""
    return [f"index {INDEX_NAMES[i]} on process {p}"
            for p, (old, new) in enumerate(zip(before.dirty, after.dirty)) for i in sorted(new - old)]


@words("Reconnect")
def reconnect(label, before, after) -> str:
    words = ("the controller reconnects (Hello): the reconnection discards the cap, the multiplexer's "
             "per-connection state, while the runtimes' queues keep the old connection's commands")
    if after.fwd > before.fwd:
        words += f"; the multiplexer forwards Compact({after.fwd}) to every maintenance runtime"
    return words


def _head_command(label, before, queue: str, runtime: str) -> tuple[int, tuple, str]:
    """The process a runtime step runs on, the command it pops, and who that is, in words."""
    p = label.args[0]
    return p, getattr(before, queue)[p][0], f"process {p}'s {runtime} runtime"


@words("MaintStep")
def maint_step(label, before, after) -> str:
    p, command, who = _head_command(label, before, "mq", "maintenance")
    return MAINTENANCE_WORDS[command[0]](who, p, command, before, after)


def _maint_compact(who, p, command, before, after) -> str:
    f = command[-1]
    if before.ix is None:
        return f"{who} applies Compact({f}): its write handle allows compaction to {f} (writer)"
    name = INDEX_NAMES[index_of(command)]
    if isinstance(after.writer[p], tuple):
        return f"{who} applies {command_text(command)}: its write handle for {name} allows compaction to {f} (writer)"
    return (f"{who} applies {command_text(command)}: the point's one writer frontier becomes {f}, "
            f"overwritten by {name}'s AllowCompaction (it was {before.writer[p]})")


def _maint_acquire(who, p, command, before, after) -> str:
    _, d, t = command
    if d in before.released[p]:
        return (f"{who} receives Acquire({d}, {t}) after the release overtook it: "
                f"the release is consumed and no hold is installed")
    return f"{who} applies Acquire({d}, {t}): it installs a read hold at {t} for peek {d}"


def _maint_release(who, p, command, before, after) -> str:
    d = command[1]
    if before.acq[p][d] is not None:
        return f"{who} applies Release({d}): peek {d}'s acquired hold at {before.acq[p][d]} goes"
    return (f"{who} receives Release({d}) before the acquisition: "
            f"it records the release for the Acquire still to come")


def _maint_export(who, p, command, before, after) -> str:
    words = f"{who} applies Export: it renders Y's re-export of X and publishes Y on process {p}"
    if has(after, "dirty"):
        words += ("; Y's publication notifies Y" if after.dirty[p] != before.dirty[p]
                  else "; Y's publication notifies Y, but no reader of Y is parked")
    newly = sorted(stranded_on(after, p) - stranded_on(before, p))
    waiting = [d for d in held(before.readers[p]) if index_of_peek(before, d) == 1]
    if newly:
        peeks = " and ".join(f"peek {d}" for d in newly)
        return (words + f"; the placeholder is replaced, and the reader of Y registered in it ({peeks}) "
                "is stranded: its import will never read")
    if waiting:
        return words + "; the placeholder is backed in place, and its readers read the arrangement"
    return words


MAINTENANCE_WORDS = {COMPACT: _maint_compact, ACQUIRE: _maint_acquire, RELEASE: _maint_release,
                     EXPORT: _maint_export}


@words("InterStep")
def inter_step(label, before, after) -> str:
    p, command, who = _head_command(label, before, "iq", "interactive")
    return INTERACTIVE_WORDS[command[0]](who, p, command, before, after)


def _inter_create(who, p, command, before, after) -> str:
    d, t = command[1], command[-1]
    words = f"{who} renders peek {d}: it imports the arrangement and registers a read hold at {t}"
    if before.ix is not None and index_of(command) == 1 and not exported(before, p):
        words = (f"{who} renders peek {d}: Y is not yet published here, so its import creates a "
                 f"placeholder for Y and registers a read hold at {t} in it")
    if before.caps != after.caps:
        words += f"; its frontier report retires the cap on peek {d}"
        if after.fwd > before.fwd:
            words += f", and the multiplexer forwards Compact({after.fwd}) to every maintenance runtime"
    if has(after, "pub"):
        words += "; " + _seal_wait_words(p, d, t, before, after)
    if has(after, "cut"):
        at = after.cut[p][d]
        source = "the chain's coverage" if at == after.pub[p] and at != after.upper else \
            "the write frontier upper" if at == after.upper and at != after.pub[p] else "the coverage and upper"
        words += f"; its reader declares a cut at {at} ({source})"
    return words


def _seal_wait_words(p: int, d: int, t: int, before, after) -> str:
    """Whether a rendered peek is served at once or parks on the seal, and why."""
    if d in after.parked[p]:
        if index_of_peek(after, d) == 1 and not exported(after, p):
            return "the peek reads a placeholder Y not yet published here and parks"
        return f"the peek reads the published upper {after.pub[p]} and parks"
    return f"the published upper {after.pub[p]} is past its as_of {t}: the peek is served at once"


def _inter_drop(who, p, command, before, after) -> str:
    d = command[1]
    words = f"{who} applies Drop({d}): peek {d}'s reader registration goes"
    if d in stranded_on(before, p):
        words += " (it was stranded)"
    if has(before, "parked") and d in before.parked[p]:
        words += " (it was parked on the seal)"
    if has(before, "cut") and before.cut[p][d] is not None:
        words += f", with its cut at {before.cut[p][d]}"
    if after.reports is not None:
        words += "; " + _report_words(p, d, before, after)
    return words


def _report_words(p: int, d: int, before, after) -> str:
    """What became of process p's retirement report of peek d, and what it let the controller do."""
    if d in after.reported[p] and d not in before.reported[p]:
        words = f"process {p} reports peek {d}'s dataflow retired"
        if ctl_holds(before, d) and not ctl_holds(after, d):
            i = index_of_peek(after, d)
            words += (f"; every process has reported, so the controller frees its read hold at "
                      f"{after.as_of[d]}, and " + _compaction_words(before, after, i))
        return words
    if has(before, "parked") and d in before.parked[p]:
        return f"the parked peek is cancelled without a report: process {p} never reports peek {d} retired"
    return f"the report of process {p} is filtered: the multiplexer no longer owns peek {d}"


def _inter_compact(who, p, command, before, after) -> str:
    shown_command, f = command_text(command), command[-1]
    if after.standing != before.standing:
        if isinstance(after.standing[p], int):
            return f"{who} applies {shown_command}: its standing hold rises to {after.standing[p]}"
        name = INDEX_NAMES[index_of(command)]
        return f"{who} applies {shown_command}: its standing hold for {name} rises to {f}"
    if before.ix is None:
        return f"{who} pops {shown_command} and ignores it (no standing hold in this design)"
    return (f"{who} pops {shown_command}: the standing hold does not move "
            f"(it is at {schema.BY_NAME['standing'].domain.text(before.standing[p])} already, or this design has none)")


def _inter_release(who, p, command, before, after) -> str:
    return f"{who} applies Release({command[1]}): it records the release for maintenance to act on"


INTERACTIVE_WORDS = {CREATE: _inter_create, DROP: _inter_drop, COMPACT: _inter_compact, RELEASE: _inter_release}


@words("Reclaim")
def reclaim(label, before, after) -> str:
    p = label.args[0]
    gone = sorted(before.released[p] - after.released[p])
    peeks = ", ".join(map(str, gone))
    return f"process {p}'s maintenance runtime reclaims the acquired hold of peek {peeks}, whose release it has seen"


def _publish_bound(state, p: int) -> str:
    """The holds that bound process p's publisher, named, for the Publish sentence."""
    def named(kind: str, value) -> list[str]:
        if isinstance(value, int):
            return [] if value == BOTTOM else [f"{kind} {value}"]
        return [f"{kind} {INDEX_NAMES[i]} {t}" for i, t in enumerate(value) if t != BOTTOM]

    holds = named("writer", state.writer[p])
    standing = state.standing[p]
    if (standing if isinstance(standing, int) else any(standing)):  # a standing hold of 0 bounds nothing
        holds += named("standing", standing)
    stranded = stranded_on(state, p)
    holds += [f"peek {d}'s reader {t}" for d, t in held(state.readers[p]).items() if d not in stranded]
    holds += [f"peek {d}'s acquired hold {t}" for d, t in held(state.acq[p]).items()]
    return ", ".join(holds)


@words("Publish")
def publish(label, before, after) -> str:
    p = label.args[0]
    who = f"process {p}'s publisher"
    said = []
    if after.since[p] != before.since[p]:
        said.append(f"raises the published since from {before.since[p]} to {after.since[p]} "
                    f"(the least of its holds: {_publish_bound(before, p)})")
    if after.physical[p] != before.physical[p]:
        said.append(f"forwards physical compaction to {after.physical[p]} ({_physical_reason(before, p)})")
    return f"{who} " + ", and ".join(said)


def _physical_reason(state, p: int) -> str:
    """What physical compaction followed: upper, or (with cuts) the least cut or the coverage."""
    if not has(state, "cut"):
        return f"upper is {state.upper}"
    cuts = held(state.cut[p])
    if cuts:
        d, cut = min(cuts.items(), key=lambda item: item[1])
        return f"the least declared cut, peek {d}'s at {cut}"
    return f"no reader is registered: the chain's coverage, the published upper {state.pub[p]}"


@words("Seal")
def seal(label, before, after) -> str:
    p = label.args[0]
    words = f"process {p}'s publisher sink publishes upper {after.pub[p]}"
    marked = sorted(after.dirty[p] - before.dirty[p])
    if marked:
        return words + " and notifies " + " and ".join(f"index {INDEX_NAMES[i]}" for i in marked)
    waiting = {index_of_peek(before, d) for d in before.parked[p]}
    if not waiting:
        return words + " (no peek is parked here)"
    if waiting <= before.dirty[p]:
        return words + "; what its parked peeks read is already marked for re-examination"
    if 0 in waiting - before.dirty[p]:
        return words + ", and nothing notifies the parked peek (the tap fired before the sink published)"
    return words + " and notifies index X only: no seal signal reaches the parked reader of Y"


@words("Wake")
def wake(label, before, after) -> str:
    p = label.args[0]
    ids_ = " and ".join(f"index {INDEX_NAMES[i]}" for i in sorted(before.dirty[p]))
    served = sorted(before.parked[p] - after.parked[p])
    still = sorted(d for d in after.parked[p] if index_of_peek(before, d) in before.dirty[p])
    words = f"process {p}'s peek server re-examines the peeks parked on {ids_}"
    said = []
    if served:
        said.append(" and ".join(f"peek {d}" for d in served) + f" {'is' if len(served) == 1 else 'are'} served "
                    f"(the published upper {after.pub[p]} is past the as_of)")
    if still:
        said.append(" and ".join(f"peek {d}" for d in still) + " stays parked")
    return words + (": " + "; ".join(said) if said else "")


def _action_name(label) -> tuple[str, tuple]:
    """A label's name and arguments, whether a Label, a plain tuple or its printed form."""
    if isinstance(label, tuple):
        return label[0], tuple(label[1:])
    return str(label), ()


def narrate(label, before, after) -> str:
    """The step `before --label--> after` in protocol words."""
    name, args = _action_name(label)
    narrator = WORDS.get(name)
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
