"""Checking a named configuration: explore it, give every property a verdict,
and compare the verdicts with what the configuration expects.
"""

from __future__ import annotations

from functools import partial
from typing import Callable

import attrs

import invariants

from .checker import Exploration, Progress, explore
from .config import NamedConfig
from .model import model_for
from .trace import Trace, trace_from_path


@attrs.frozen
class Verdict:
    """A property's verdict: True holds, False violated, None unknown (search cut short)."""

    holds: bool | None
    trace: Trace | None = None

    @property
    def trace_length(self) -> int | None:
        return self.trace.length if self.trace is not None else None


@attrs.frozen
class CheckResult:
    named: NamedConfig
    distinct_states: int
    transitions: int
    depth: int
    seconds: float
    complete: bool
    interrupted: bool
    properties: dict  # name -> Verdict, in the spec's order
    stopped_on_violation: bool = False

    @property
    def config(self):
        return self.named.config

    def violation(self, prop: str) -> Trace | None:
        return self.properties[prop].trace

    def mismatches(self) -> list[str]:
        """Why the verdicts differ from what the configuration expects; empty if as expected."""
        expected = self.named.expected_violation()
        length = self.named.expected_length()
        found = []
        for name, verdict in self.properties.items():
            if name == expected:
                if verdict.holds is not False:
                    found.append(f"{name} was expected to be violated, but "
                                 + ("it holds" if verdict.holds else "no violation was found"))
                elif length is not None and verdict.trace_length != length:
                    found.append(f"{name} violated in {verdict.trace_length} states, expected {length}")
            elif verdict.holds is False:
                found.append(f"{name} violated unexpectedly")
            elif verdict.holds is None and not (self.stopped_on_violation and expected is not None
                                                and self.properties[expected].holds is False):
                found.append(f"{name} has no verdict: the search was cut short")
        return found

    @property
    def as_expected(self) -> bool:
        return not self.mismatches()


def safety_properties(cfg):
    """The state invariants and transition properties, bound to `cfg`."""
    state = {name: partial(pred, cfg=cfg) for name, pred in invariants.STATE_INVARIANTS.items()}
    transition = {
        name: partial(pred, cfg=cfg) for name, pred in invariants.TRANSITION_PROPERTIES.items()
    }
    return state, transition


def check(
    named: NamedConfig,
    *,
    max_states: int | None = None,
    stop_on_violation: bool = False,
    on_progress: Callable[[Progress], None] | None = None,
) -> CheckResult:
    """Explore `named` breadth-first and give each property its verdict."""
    cfg = named.config
    model = model_for(cfg)
    state_props, transition_props = safety_properties(cfg)
    run = explore(
        model.initial_states,
        model.successors,
        state_props,
        transition_props,
        max_states=max_states,
        stop_on_violation=stop_on_violation,
        on_progress=on_progress,
    )
    verdicts = {
        name: safety_verdict(run, name) for name in list(state_props) + list(transition_props)
    }
    return CheckResult(
        named=named,
        distinct_states=run.distinct_states,
        transitions=run.transitions,
        depth=run.depth,
        seconds=run.seconds,
        complete=run.complete,
        interrupted=run.interrupted,
        properties=verdicts,
        stopped_on_violation=stop_on_violation and bool(run.violations),
    )


def safety_verdict(run: Exploration, name: str) -> Verdict:
    path = run.counterexample(name)
    if path is not None:
        return Verdict(False, trace_from_path(name, path))
    return Verdict(True if run.complete else None)
