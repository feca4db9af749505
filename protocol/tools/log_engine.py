"""What trace validation runs on, shared by its two searches (validate.py, the exact one, and
factored.py, by components): the packed engine over the instances a log uses, what a step
did, and the verdict's shape."""

from __future__ import annotations

from typing import Callable

import attrs

from protocol.engine import Label, ModelError
from protocol.engine.cores import DISABLED, Cores
from protocol.engine.fast import Engine, Successor, intern
from protocol.model import actions
from protocol.model.actions import Applied
from protocol.model.config import Config
from protocol.model.next import action_instances
from protocol.tools.log import Log


class TooAmbiguous(ValueError):
    """The log leaves too many states: one line naming the line where it happened."""


@attrs.frozen
class Mismatch:
    line: int
    where: str  # "line 7", or "state 4 (line 1)" in an ITF trace
    event: int  # 1-based
    kind: str  # "step" or "observation"
    reason: str
    candidates: tuple  # a few of the states the model could be in just before the event, the nearest first
    enabled: tuple  # per shown candidate: ((label, next state), ...), every action instance enabled there
    nearest: Label | None = None
    states: int = 0  # how many states the model could be in just before the event
    # per shown candidate, for an observation: ((variable or entry, observed value's text), ...)
    # where the candidate has another value
    differences: tuple = ()

    @property
    def enabled_labels(self) -> list:
        """The instances enabled in some shown candidate, in order of first appearance."""
        return list(dict.fromkeys(label for steps in self.enabled for label, _ in steps))


@attrs.frozen
class Validation:
    log: Log
    cfg: Config
    events: int
    matched: int
    mismatch: Mismatch | None
    violations: dict  # property -> event, violated by every behaviour that fits the log
    possible: dict  # property -> event, violated by some behaviours that fit it, not all
    witnesses: dict  # property -> [sentence]
    # property -> the index in `behaviour` of the state where it is first violated (the last state
    # for a liveness property, where the run stops)
    at_state: dict
    final_states: int  # the states the model may be in at the end
    behaviour: tuple  # one behaviour that fits (Steps, the initial state first), or the prefix that did
    layer_states: tuple = ()  # how many states fit after each event (index 0: before the first)
    liveness: tuple = ()  # the configuration's liveness properties (judged where the run stops)
    notes: tuple = ()
    open_at_end: dict = attrs.Factory(dict)  # variable -> how many values it has at the end, each that has several

    @property
    def is_behaviour(self) -> bool:
        return self.mismatch is None


def recorded_step(instance, state) -> tuple:
    """(next state or None, the events the step records): the step re-run with a recorder."""
    record: list = []
    return instance.step(state, record=record), tuple(record)


def applied_command(events) -> tuple | None:
    """The command a runtime step applied (its `Applied` event), if it is one."""
    return next((event.command for event in events if isinstance(event, Applied)), None)


def log_instances(cfg: Config, silent, labels) -> list:
    """The action instances the log can use, in enumeration order: every instance of a silent
    action, and of the others only those its steps name (all of them where a step names none)."""
    anything = None in labels
    wanted = set(labels)
    named = {label.name for label in wanted if label is not None}
    table = []
    for action in actions.ACTIONS:  # as they are now (a test may replace one)
        if not action.where(cfg):
            continue
        if anything or action.name in silent:
            table += action_instances(cfg, action)
        elif action.name in named:
            table += action_instances(cfg, action, wanted)
    return table


# The variables an ambiguous end's note names; past them it counts the rest.
SHOWN_OPEN = 4


def open_at_end(engine: Engine, globals_ids, locals_ids) -> dict:
    """{variable: how many values it has} for each variable whose value differs among the
    states that fit a log at its end (made of these globals ids and, per process, these local
    ids; a process's locals named with it, `since[1]`), in the schema's order."""
    open_ = {name: len({engine.globals[g][i] for g in globals_ids}) for i, name in enumerate(engine.global_names)}
    open_.update({f"{name}[{p}]": len({engine.locals[lid][i] for lid in ids})
                  for i, name in enumerate(engine.local_names) for p, ids in enumerate(locals_ids)})
    return {name: values for name, values in open_.items() if values > 1}


def ending_note(count: int, open_: dict) -> str:
    """The note on a log at whose end `count` states fit, differing in `open_` (`open_at_end`):
    what whoever records the run would observe to pin its end down."""
    if not open_:  # one state, reached by several behaviours
        return (f"{count:,} states fit the log at its end (silent actions or unobserved variables leave a choice); "
                "the behaviour shown is one of them")
    named = [f"{name} ({values:,} values)" for name, values in open_.items()]
    if len(named) > SHOWN_OPEN:
        named = named[:SHOWN_OPEN - 1] + [f"{len(named) - SHOWN_OPEN + 1} more variables"]
    listed = named[0] if len(named) == 1 else ", ".join(named[:-1]) + " and " + named[-1]
    return (f"{count:,} states fit the log at its end: they differ in {listed}, which silent actions or "
            "unobserved variables leave open; the behaviour shown is one of them")


class MemoRow(dict):
    """A memo indexed by id where an id not yet asked about holds None (as the engine's lists do)."""

    def __missing__(self, key):
        return None


class LogEngine(Engine):
    """The packed engine over the instances a log uses, with each controller instance memoised
    apart, so that closing under the silent actions runs only theirs (not every logged
    `CreatePeek` on every globals value the closure reaches) and a logged step only its own."""

    def _prepare_actions(self, instances) -> None:
        super()._prepare_actions(instances)
        order, segments = [], []
        for kind, which in self.order:
            if kind != "memo":
                order.append((kind, which))
                continue
            for entry in self.controller_segments[which]:
                order.append(("memo", len(segments)))
                segments.append([entry])
        self.order, self.controller_segments = order, segments
        # globals id -> the segment's steps from there, filled as asked: one instance's memo
        # per segment, so a row per new globals value would be a list append per instance
        self.controller_memos = [MemoRow() for _ in segments]
        # per segment, where its instance leaves some globals untouched: the globals split
        # by them (cores.py), and per core id the append its step makes
        self.controller_cores = [self._cores_of(instances[segment[0][0]]) for segment in segments]
        self.core_appends: list[dict] = [{} for _ in segments]

    def _cores_of(self, instance) -> Cores | None:
        untouched = instance.footprint.untouched
        return Cores(self.global_names, untouched, str(instance.label), intern, "global") if untouched else None

    def controller_successors(self, segment: int, g: int) -> list:
        """The engine's, run once per core of the globals where the segment's instance leaves
        some untouched (a silent Ingest leaves one globals value per upper, which no other
        controller step reads): the step from another value with that core, with g's
        untouched values put back. So that this is never silently wrong, every step run
        must leave the untouched values as they were, and the globals at a sample of ids
        (ever sparser) are run even where their core is known, and must agree."""
        cores = self.controller_cores[segment]
        if cores is None:
            return super().controller_successors(segment, g)
        core, rest = cores.parts_of(g, self.globals[g])
        known = cores.memo.get((0, core))
        if known is not None and g & (g - 1):
            found = [] if known == DISABLED else [
                (self.controller_segments[segment][0][0], self.intern_global(cores.value(known, rest)),
                 self.core_appends[segment][core])]
            self.controller_memos[segment][g] = found
            return found
        found = super().controller_successors(segment, g)
        cores.learn((0, core), rest, self.globals[found[0][1]] if found else None, [])
        if found and self.core_appends[segment].setdefault(core, found[0][2]) != found[0][2]:
            raise ModelError(f"{cores.action} appends otherwise to the queues from globals that differ only in "
                             f"{', '.join(cores.names[i] for i in cores.untouched)}, which its footprint leaves "
                             "untouched: remove those it reads from its footprint's untouched")
        return found

    def intern_global(self, value: tuple) -> int:
        """The engine's, without growing every controller memo by a row (they fill as asked)."""
        memos, self.controller_memos = self.controller_memos, []
        try:
            return super().intern_global(value)
        finally:
            self.controller_memos = memos

    def successors_among(self, among: frozenset) -> Callable[[int], list]:
        """successors(s) -> [(label id, next packed state)] by the instances whose ids are in `among`.
        The other instances of a wanted action are still looked up in its memo, but not handed on."""

        def emit(successor: Successor) -> list[str]:
            edge = f"append(({successor.label}, {successor.state}))"
            if successor.label.isdigit():  # an instance's own code: decided here, once
                return [edge] if int(successor.label) in among else ["pass"]
            return [f"if {successor.label} in among:", f"    {edge}"]

        everything = self.order
        self.order = [(kind, which) for kind, which in everything if self._label_of(kind, which) in among]
        try:
            lines, namespace = self.successor_body(emit)
        finally:
            self.order = everything
        namespace["among"] = among
        source = ["def successors(s):", "    out = []", "    append = out.append", *lines, "    return out"]
        exec("\n".join(source), namespace)
        return namespace["successors"]

    # The properties are checked by the Follower, on the states that lead to the log's end only:
    # not on every component the closure reaches.
    def _check_global(self, value: tuple) -> None:
        pass

    def _check_local(self, value: tuple) -> None:
        pass

    def _check_step(self, before, after) -> list:
        return []  # nothing judged here, so nothing failing: a step is memoised as it goes

    def _label_of(self, kind: str, which) -> int:
        """The label id of one entry of the engine's enumeration order (a memo segment here holds one)."""
        if kind == "whole":
            return which[0]
        if kind == "memo":
            return self.controller_segments[which][0][0]
        return self.process_order[which][0]
