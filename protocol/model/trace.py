"""Traces: a counterexample as a sequence of steps, and what a step changed.

A trace is a list of `Step`s, the first with no action (the initial state).
A lasso (a liveness counterexample) also says where its cycle starts:
`loop` is the index of the state the last step returns to, and a cycle of
one state with no step back is a stutter.
"""

from __future__ import annotations

from typing import Hashable, NamedTuple

from protocol.model import state as schema
from protocol.model.state import State


class Step(NamedTuple):
    action: Hashable  # the action instance that led here; None for the initial state
    state: State


class Change(NamedTuple):
    """One variable a step changed: `name` is e.g. "since" or "since[1]"."""

    variable: str
    process: int | None  # the process, for per-process variables
    before: object
    after: object

    @property
    def name(self) -> str:
        return self.variable if self.process is None else f"{self.variable}[{self.process}]"


class Trace(NamedTuple):
    prop: str
    steps: tuple  # of Step
    loop: int | None = None  # lasso: index of the state the cycle returns to
    stutters: bool = False  # lasso: the cycle is the last state stuttering forever
    notes: tuple = ()  # extra lines (for example why a lasso is fair)

    @property
    def length(self) -> int:
        """Distinct states in the trace, the initial state included (spec section 7).

        A shortest path never repeats a state; a lasso's cycle may have to pass
        a state twice to be fair, and spec section 7 counts it once.
        """
        return len({step.state for step in self.steps})

    @property
    def is_lasso(self) -> bool:
        return self.loop is not None


def trace_from_path(prop: str, path, **extra) -> Trace:
    return Trace(prop, tuple(Step(label, state) for label, state in path), **extra)


def changes(before: State, after: State) -> list[Change]:
    """The variables `after` differs from `before` in, globals first, then by process."""
    found = [
        Change(name, None, getattr(before, name), getattr(after, name))
        for name in schema.GLOBAL_VARIABLES
        if getattr(before, name) != getattr(after, name)
    ]
    for name in schema.PROCESS_VARIABLES:
        old, new = getattr(before, name), getattr(after, name)
        if old != new:
            found += [Change(name, p, o, n) for p, (o, n) in enumerate(zip(old, new)) if o != n]
    return found
