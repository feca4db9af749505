"""Model-based testing: a small set of shortest runs that together cover the model.

`generate` explores the configuration breadth-first over the readable model,
keeping each state's parent, and notes where each *target* is first
reached. The targets come from the model's declarations, never from a hand
list, so a new action, command kind or property is a new target:

- every action instance (`action CreatePeek(0, 1)`);
- every command kind applied by every runtime that may receive it
  (`command interactive applies Compact`), as the step's `Applied` event
  says;
- every kind of effect, the events a step records (`effect StandingRaised`,
  `effect CompactionHeld`: protocol/model/events.py), so that each thing a command
  can do, not only each command, is done by some run;
- every leads-to pair's premise (`premise sent >= 1 ~> since[0] >= 1`),
  so that no liveness property of the runs holds vacuously;
- for a refutation, its counterexample (`counterexample I1`): for a safety
  property the first violation in breadth-first order, which is the trace
  the checker prints; for a liveness property the checker's lasso.

Each run is a shortest path (the breadth-first parents) to the first
target it adds; the runs are chosen greedily, the deepest target first,
each covering whatever else it passes, and a run that covers nothing the
others do not is dropped. A target the search never reaches is reported as
unreachable in this configuration.
"""

from __future__ import annotations

import time
from typing import NamedTuple

import attrs

from protocol.configurations.named import NamedConfig
from protocol.tools.itf import state_to_itf
from protocol.tools.log import GENERATOR, header_line, observation_line, step_line, encode
from protocol.model.next import model_for
from protocol.model.trace import Step, changes
from protocol.model.actions import Applied
from protocol.tools.log_engine import applied_command, recorded_step

ACTION, COMMAND, EFFECT, PREMISE, COUNTEREXAMPLE = "action", "command", "effect", "premise", "counterexample"


class Target(NamedTuple):
    kind: str  # ACTION, COMMAND, PREMISE or COUNTEREXAMPLE
    name: str

    def __str__(self) -> str:
        return f"{self.kind} {self.name}"


@attrs.frozen
class CoveringRun:
    steps: tuple  # of Step, the initial state first
    first: Target  # the target this run was made for
    covers: tuple  # every target it reaches, in the order reached
    counterexample: str | None = None  # the property, for a refutation's counterexample


@attrs.frozen
class Coverage:
    named: NamedConfig
    runs: tuple  # of CoveringRun
    covered: dict  # Target -> index of the first run covering it
    unreachable: tuple  # of Target
    distinct_states: int
    seconds: float


def universe(cfg) -> list[Target]:
    """Every target the configuration declares, reachable or not, in declaration order."""
    from protocol.model.commands import KINDS
    from protocol.model.events import EVENT_KINDS

    model = model_for(cfg)
    found = [Target(ACTION, str(instance.label)) for instance in model.instances]

    found += [Target(COMMAND, command_target(runtime, kind.name)) for kind in KINDS.values() for runtime in kind.runtimes]
    found += [Target(EFFECT, kind) for kind in EVENT_KINDS]
    found += [Target(PREMISE, pair.text) for pairs in model.liveness.values() for pair in pairs]
    return found


def command_target(runtime: str, kind: str) -> str:
    return f"{runtime} applies {kind}"


class TargetSearch:
    """Breadth-first search keeping parents, noting where each target is first reached."""

    def __init__(self, cfg, watch=()):
        self.cfg = cfg
        self.model = model_for(cfg)
        # The safety properties whose first violation is a target: the search notes it where
        # the checker finds it, the first in breadth-first order (the same trace).
        self.invariants = {name: self.model.invariants[name] for name in watch if name in self.model.invariants}
        self.transitions = {name: self.model.transition_properties[name] for name in watch
                            if name in self.model.transition_properties}
        self.by_label = {instance.label: instance for instance in self.model.instances}
        self.pairs = [pair for pairs in self.model.liveness.values() for pair in pairs]
        self.parent: dict = {}
        self.first: dict = {}  # Target -> (state before or None, label or None, state)

    def explore(self) -> None:
        initial = self.model.initial_states[0]
        self.parent[initial] = None
        self._note(self.state_targets(initial), None, None, initial)
        frontier = [initial]
        while frontier:
            reached = []
            for before in frontier:
                for instance in self.model.instances:
                    after, events = recorded_step(instance, before)
                    if after is None:
                        continue
                    self._note(step_targets(instance, events), before, instance.label, after)
                    self._note([Target(COUNTEREXAMPLE, name) for name, holds in self.transitions.items()
                                if not holds(before, after)], before, instance.label, after)
                    if after not in self.parent:
                        self.parent[after] = (before, instance.label)
                        reached.append(after)
                        self._note(self.state_targets(after), before, instance.label, after)
            frontier = reached

    def _note(self, targets: list, before, label, after) -> None:
        for target in targets:
            if target not in self.first:
                self.first[target] = (before, label, after)

    def state_targets(self, state) -> list[Target]:
        """What one state reaches: the premises that hold in it (and a watched violation)."""
        found = [Target(PREMISE, pair.text) for pair in self.pairs if pair.premise(state)]
        return found + [Target(COUNTEREXAMPLE, name) for name, holds in self.invariants.items() if not holds(state)]

    def targets_of(self, steps: tuple) -> list[Target]:
        """Every target a run reaches, in the order it reaches them."""
        found: dict = {}
        for index, step in enumerate(steps):
            if index:
                before = steps[index - 1].state
                instance = self.by_label[step.action]
                found.update(dict.fromkeys(step_targets(instance, recorded_step(instance, before)[1])))
            found.update(dict.fromkeys(self.state_targets(step.state)))
        return list(found)

    def path(self, target: Target) -> tuple:
        """The shortest run to the first step (or state) reaching `target`."""
        before, label, after = self.first[target]
        steps, state = ([Step(label, after)], before) if label is not None else ([], after)
        while state is not None:
            link = self.parent[state]
            steps.append(Step(None if link is None else link[1], state))
            state = None if link is None else link[0]
        return tuple(reversed(steps))


def step_targets(instance, events: tuple) -> list[Target]:
    """What one step reaches: its action instance, the command a runtime applied (by
    runtime), and the kind of every event it records."""
    found = [Target(ACTION, str(instance.label))]
    found += [Target(COMMAND, command_target(event.runtime, event.command[0]))
              for event in events if isinstance(event, Applied)]
    return found + [Target(EFFECT, event.kind) for event in events]


def generate(named: NamedConfig) -> Coverage:
    """The runs covering every reachable target of `named`, and what it cannot reach."""
    started = time.perf_counter()
    explorer = TargetSearch(named.config, watch=named.expected_violations())
    explorer.explore()
    runs = counterexample_runs(named, explorer)
    covered = {target for run in runs for target in run.covers}
    by_depth = sorted((target for target in explorer.first if target.kind != COUNTEREXAMPLE),
                      key=lambda target: -len(explorer.path(target)))
    for target in by_depth:
        if target in covered:
            continue
        steps = explorer.path(target)
        run = CoveringRun(steps, target, tuple(explorer.targets_of(steps)))
        runs.append(run)
        covered.update(run.covers)
    runs = drop_redundant(runs)
    first_run = {}
    for index, run in enumerate(runs):
        for target in run.covers:
            first_run.setdefault(target, index)
    unreachable = tuple(target for target in universe(named.config) if target not in first_run)
    ordered = {target: first_run[target] for target in [*universe(named.config), *first_run] if target in first_run}
    return Coverage(named, tuple(runs), ordered, unreachable, len(explorer.parent), time.perf_counter() - started)


def counterexample_runs(named: NamedConfig, explorer: TargetSearch) -> list[CoveringRun]:
    """A refutation's counterexamples, as the checker prints them: a safety property's is
    the search's shortest path to its first violation; a liveness property's lasso (its stem
    and the state it stutters in) is the checker's."""
    expected = named.expected_violations()
    traces = {}
    if any(name in explorer.model.liveness for name in expected):
        from protocol.run import check

        result = check(named)
        traces = {name: verdict.trace for name, verdict in result.properties.items()
                  if name in explorer.model.liveness and verdict.holds is False and verdict.trace is not None}
    runs = []
    for name in expected:
        target = Target(COUNTEREXAMPLE, name)
        if name in traces:
            if traces[name].is_lasso and not traces[name].stutters:
                continue  # a cycle is not a finite run; the named configurations have none
            steps = traces[name].steps
        elif target in explorer.first:
            steps = explorer.path(target)
        else:
            continue  # not violated at these constants
        runs.append(CoveringRun(steps, target, (target, *explorer.targets_of(steps)), name))
    return runs


def drop_redundant(runs: list) -> list:
    """Drop, shortest first, every run each of whose targets another kept run covers."""
    kept = list(runs)
    for run in sorted(runs, key=lambda r: len(r.steps)):
        if run.counterexample:
            continue
        others = [other for other in kept if other is not run]
        elsewhere = {target for other in others for target in other.covers}
        if all(target in elsewhere for target in run.covers):
            kept = others
    return kept


# ------------------------------------------------------------------ as logs


def run_log(name: str, cfg, run_steps: tuple, silent=(), observe: bool = True) -> str:
    """A run as a protocol-log/1 log: its logged steps (each runtime step with the command it
    popped), and after each the variables that changed since the last observation."""
    by_label = {instance.label: instance for instance in model_for(cfg).instances}
    lines = [header_line(name, cfg, silent, GENERATOR)]  # marked: generate's own, to replace next time
    observed = run_steps[0].state
    pending = False
    for index, step in enumerate(run_steps[1:], 1):
        before = run_steps[index - 1].state
        if step.action.name in silent:
            continue
        if pending and observe:
            lines.append(observation(observed, before))
            observed = before
        lines.append(step_line(step.action, applied_command(recorded_step(by_label[step.action], before)[1])))
        pending = True
    last = run_steps[-1].state
    if observe and last != observed:
        lines.append(observation(observed, last))
    return "\n".join(lines) + "\n"


def snapshot(state) -> str:
    """An observation of every variable the state has, as the ITF export writes it: the line a
    recorder that dumps the whole state as its run ends writes last."""
    return observation_line(state_to_itf(state))


def observation(before, after) -> str:
    facts = {}
    for change in changes(before, after):
        facts[change.name] = encode(after, change.variable, change.process)
    if not facts:  # nothing changed since: observe a variable anyway, so the line says the state is unchanged
        facts["since"] = encode(after, "since", None)
    return observation_line(facts)
