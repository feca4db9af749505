"""Trace validation: is a recorded run (protocol/tools/log.py) a behaviour of the model?

An exact breadth-first search over the set of model states consistent with
the log so far, as TLC checks a trace against a trace specification, with
the model's own actions and variables as the vocabulary:

- before the first event and after every event, the set is closed under the
  silent actions (those the recorder does not log: any number of them may
  have happened in between);
- a step keeps the successors by its action instance (and, with `command`,
  only those whose runtime popped that command);
- an observation keeps the states in which every observed value holds.

Unobserved variables and silent actions may leave several states; they are
all kept, so the answer is exact, not a guess. The first event that leaves
no state is the mismatch. Each element of the set also carries what the
run has violated so far (each safety property's first event) and which
leads-to pairs are pending (the premise held, the conclusion has not since),
so the properties are judged on every consistent behaviour, not on one. A
liveness property is judged on the log read as a whole behaviour, which
stops after its last event and stutters forever (the TLA+ reading of a run
that stops): only where stopping is fair, no fair action being enabled.
"""

from __future__ import annotations

import difflib
from typing import NamedTuple

import attrs

from protocol.model.config import Config
from protocol.engine import Label
from protocol.tools.log import Log, Observation, StepEvent, fact_text, observed_value
from protocol.model.next import model_for
from protocol.model import state as schema
from protocol.model.actions import Applied
from protocol.model.commands import command_text
from protocol.model.state import PROCESS
from protocol.model.trace import Step, Trace


# More states than this fitting the log at once means the log pins almost nothing down
# (nearly every action silent, nothing observed): the search would hold the state space
# once per event. Observe more, or silence fewer actions.
MAX_FITTING_STATES = 200_000


class TooAmbiguous(ValueError):
    """The log leaves too many states: one line naming the line where it happened."""


class Node(NamedTuple):
    """One state the model may be in, with what the run has done on the way there."""

    state: object
    violated: tuple  # ((property, first event), ...), in the order found
    pending: frozenset  # indices of the leads-to pairs whose premise held and conclusion has not since


@attrs.frozen
class Mismatch:
    line: int
    where: str  # "line 7", or "state 4 (line 1)" in an ITF trace
    event: int  # 1-based
    kind: str  # "step" or "observation"
    reason: str
    candidates: tuple  # the states the model could be in just before the event
    enabled: tuple  # ((label, (candidate index, ...)), ...)
    nearest: Label | None = None


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

    @property
    def is_behaviour(self) -> bool:
        return self.mismatch is None


# ------------------------------------------------------------------ what a step did


def recorded_step(instance, state) -> tuple:
    """(next state or None, the events the step records): the step re-run with a recorder."""
    record: list = []
    return instance.step(state, record=record), tuple(record)


def applied_command(events) -> tuple | None:
    """The command a runtime step applied (its `Applied` event), if it is one."""
    return next((event.command for event in events if isinstance(event, Applied)), None)


# ------------------------------------------------------------------ the search


class Follower:
    """The model of one configuration, set up to follow a log's events."""

    def __init__(self, cfg: Config, silent=()):
        self.cfg = cfg
        self.model = model_for(cfg)
        self.by_label = {instance.label: instance for instance in self.model.instances}
        self.silent = [instance for instance in self.model.instances if instance.label.name in silent]
        self.pairs = [(prop, pair) for prop, pairs in self.model.liveness.items() for pair in pairs]
        self.names = {instance.label.name for instance in self.model.instances}

    # -- the monitor

    def start(self) -> Node:
        state = self.model.initial_states[0]
        broken = tuple((name, 0) for name, holds in self.model.invariants.items() if not holds(state))
        return Node(state, broken, self._pending(frozenset(), state))

    def _pending(self, pending: frozenset, state) -> frozenset:
        rising = {i for i, (_, pair) in enumerate(self.pairs) if pair.premise(state)}
        return frozenset(i for i in pending | rising if not self.pairs[i][1].conclusion(state))

    def advance(self, node: Node, after, event: int) -> Node:
        seen = {name for name, _ in node.violated}
        broken = [name for name, holds in self.model.transition_properties.items()
                  if name not in seen and not holds(node.state, after)]
        broken += [name for name, holds in self.model.invariants.items() if name not in seen and not holds(after)]
        violated = node.violated + tuple((name, event) for name in broken)
        return Node(after, violated, self._pending(node.pending, after))

    # -- the steps

    def successors(self, state, label: Label | None) -> list:
        """[(label, instance, next state)] by `label` (every instance where None)."""
        chosen = self.model.instances if label is None else [self.by_label[label]] if label in self.by_label else []
        found = []
        for instance in chosen:
            after = instance.step(state)
            if after is not None:
                found.append((instance.label, instance, after))
        return found

    def applied_text(self, instance, state) -> str | None:
        """The command an instance's step applies in `state`, as the narration writes it."""
        command = applied_command(recorded_step(instance, state)[1])
        return None if command is None else command_text(command)

    def enabled(self, state) -> list:
        return [label for label, _, _ in self.successors(state, None)]

    def stops_fairly(self, state) -> bool:
        """Stopping here forever is a fair behaviour: no fair action is enabled (or none is fair)."""
        if not self.cfg.fairness:
            return True
        return not any(instance.family is not None and instance.step(state) is not None
                       for instance in self.model.instances)


class Layer:
    """The nodes after some events: node -> (parent key, label), in discovery order."""

    def __init__(self, number: int):
        self.number = number
        self.nodes: dict = {}

    def add(self, node: Node, parent, label) -> None:
        if node not in self.nodes:
            self.nodes[node] = (parent, label)

    def states(self) -> list:
        return list(dict.fromkeys(node.state for node in self.nodes))


def validate(log: Log) -> Validation:
    """Follow `log` through the model of its design (its header's, or the one --config named)."""
    cfg = log.design
    follower = Follower(cfg, log.silent)
    layers = [Layer(0)]
    layers[0].add(follower.start(), None, None)
    close(follower, layers[0])
    for number, event in enumerate(log.events, 1):
        layer = Layer(number)
        previous = layers[-1]
        if isinstance(event, Observation):
            for node in previous.nodes:
                if event.holds_in(node.state):
                    layer.add(node, (previous.number, node), None)
        else:
            take_step(follower, previous, layer, event)
        if not layer.nodes:
            return refused(log, cfg, follower, layers, event, number)
        close(follower, layer, event.where)
        layers.append(layer)
    return accepted(log, cfg, follower, layers)


def take_step(follower: Follower, previous: Layer, layer: Layer, event: StepEvent) -> None:
    for node in previous.nodes:
        for label, instance, after in follower.successors(node.state, event.label):
            if event.command is not None and follower.applied_text(instance, node.state) != event.command:
                continue
            layer.add(follower.advance(node, after, layer.number), (previous.number, node), label)


def close(follower: Follower, layer: Layer, where: str = "the header") -> None:
    """Add every node the silent actions reach from the layer's nodes."""
    if not follower.silent:
        return
    frontier = list(layer.nodes)
    while frontier:
        if len(layer.nodes) > MAX_FITTING_STATES:
            raise TooAmbiguous(f"{where}: more than {MAX_FITTING_STATES:,} model states fit the log here: "
                               "observe more variables or silence fewer actions")
        reached = []
        for node in frontier:
            for instance in follower.silent:
                after = instance.step(node.state)
                if after is None:
                    continue
                child = follower.advance(node, after, layer.number)
                if child not in layer.nodes:
                    layer.add(child, (layer.number, node), instance.label)
                    reached.append(child)
        frontier = reached


def path_to(layers: list, key) -> list:
    """[(event number, label, node)] from the initial node to the node at `key`."""
    found = []
    while key is not None:
        number, node = key
        parent, label = layers[number].nodes[node]
        found.append((number, label, node))
        key = parent
    found.reverse()
    # An observation repeats its node in the next layer with no step: keep each step once.
    steps = [found[0]]
    for item in found[1:]:
        if item[1] is not None:
            steps.append(item)
    return steps


def behaviour_of(path) -> tuple:
    return tuple(Step(label, node.state) for _, label, node in path)


# ------------------------------------------------------------------ verdicts


def accepted(log: Log, cfg: Config, follower: Follower, layers: list) -> Validation:
    last = layers[-1]
    events = len(log.events)
    per_node = []
    for node in last.nodes:
        found = dict(node.violated)
        if node.pending and follower.stops_fairly(node.state):
            for i in sorted(node.pending):
                found.setdefault(follower.pairs[i][0], events)
        per_node.append((node, found))
    every = set.intersection(*(set(found) for _, found in per_node))
    some = set().union(*(set(found) for _, found in per_node))
    order = [name for name in list(follower.model.invariants) + list(follower.model.transition_properties)
             + list(follower.model.liveness)]
    definite = {name: max(found[name] for _, found in per_node) for name in order if name in every}
    possible = {name: min(found[name] for _, found in per_node if name in found)
                for name in order if name in some - every}
    first_node = next(iter(last.nodes))
    path = path_to(layers, (last.number, first_node))
    at_state = {name: violated_at(follower, path, name) for name in definite}
    witnesses = {name: witness(follower, path, name, at_state[name]) for name in definite}
    notes = log.notes
    if len(last.nodes) > 1:
        notes += (f"{len(last.states())} states fit the log at its end (silent actions or unobserved variables "
                 "leave a choice); the behaviour shown is one of them",)
    return Validation(log, cfg, events, events, None, definite, possible, witnesses, at_state, len(last.states()),
                      behaviour_of(path), layer_sizes(layers), tuple(follower.model.liveness), notes)


def violated_at(follower: Follower, path: list, name: str) -> int:
    """The index on `path` of the first state by which the behaviour violates `name`."""
    if name in follower.model.liveness:
        return len(path) - 1
    return next(index for index, (_, _, node) in enumerate(path) if name in dict(node.violated))


def witness(follower: Follower, path: list, name: str, index: int) -> list[str]:
    """Why the behaviour violates `name`: the property's witness at its first violation, or
    for a leads-to property the pairs left pending where the run stops."""
    from protocol.render.narrate import violation_words

    if name in follower.model.liveness:
        node = path[-1][2]
        texts = [pair.text for i, (prop, pair) in enumerate(follower.pairs) if prop == name and i in node.pending]
        return [f"{text}: the premise held and the conclusion has not since, and the run stops where "
                "stopping forever is fair (no weakly fair action is enabled there)" for text in texts]
    return violation_words(Trace(name, behaviour_of(path)[:index + 1]), follower.cfg)


def refused(log: Log, cfg: Config, follower: Follower, layers: list, event, number: int) -> Validation:
    previous = layers[-1]
    candidates = tuple(previous.states())
    enabled: dict = {}
    for index, state in enumerate(candidates):
        for label in follower.enabled(state):
            enabled.setdefault(label, []).append(index)
    table = tuple((label, tuple(where)) for label, where in enabled.items())
    if isinstance(event, Observation):
        reason = observation_reason(event, candidates, cfg)
        mismatch = Mismatch(event.line, event.where, number, "observation", reason, candidates, table)
    else:
        reason, nearest = step_reason(follower, event, candidates, enabled)
        mismatch = Mismatch(event.line, event.where, number, "step", reason, candidates, table, nearest)
    path = path_to(layers, (previous.number, next(iter(previous.nodes))))
    return Validation(log, cfg, len(log.events), number - 1, mismatch, {}, {}, {}, {}, len(candidates),
                      behaviour_of(path), layer_sizes(layers))


def layer_sizes(layers: list) -> tuple:
    return tuple(len(layer.states()) for layer in layers)


def observation_reason(event: Observation, candidates: tuple, cfg: Config) -> str:
    absent = [name for name, _, _ in event.facts if not schema.BY_NAME[name].where(cfg)]
    if absent:
        return f"this configuration has no variable {absent[0]}: the log observes a design that has one"
    wrong = []
    for name, p, value in event.facts:
        held = list(dict.fromkeys(observed_value(state, name, p) for state in candidates))
        if value not in held:
            text = schema.BY_NAME[name].domain.text
            observed = _value_text(name, p, value, text)
            model = " or ".join(_value_text(name, p, h, text) for h in held[:4])
            wrong.append(f"{fact_text(name, p)} observed {observed}, the model has {model}")
    if not wrong:
        return f"none of the {len(candidates)} states the model could be in fits every observed value at once"
    where = "the state" if len(candidates) == 1 else f"any of the {len(candidates)} states"
    return f"the observation does not fit {where} the model could be in: " + "; ".join(wrong)


def _value_text(name: str, p: int | None, value, text) -> str:
    if p is None and schema.BY_NAME[name].scope == PROCESS:
        return "(" + ", ".join(text(v) for v in value) + ")"
    return text(value)


def step_reason(follower: Follower, event: StepEvent, candidates: tuple, enabled: dict) -> tuple[str, Label | None]:
    label = event.label
    where = "the state" if len(candidates) == 1 else f"any of the {len(candidates)} states"
    if label is None:
        return f"no action leads from {where} the model could be in to the next state", None
    if label.name not in follower.names:
        return f"{label.name} is not an action of this configuration", None
    if label not in follower.by_label:
        return f"{label} is not an action instance of this configuration (its arguments differ)", None
    if label in enabled and event.command is not None:
        pops = sorted({text for state in candidates for _, instance, _ in follower.successors(state, label)
                       for text in [follower.applied_text(instance, state)] if text is not None})
        return (f"{label} is enabled, but pops {' or '.join(pops) or 'no command'}, "
                f"not {event.command}"), None
    nearest = nearest_label(label, list(enabled))
    hint = f"; the nearest enabled is {nearest}" if nearest is not None else ""
    return f"{label} is not enabled in {where} the model could be in{hint}", nearest


def nearest_label(label: Label, enabled: list) -> Label | None:
    """The enabled instance closest to `label`: of the same action, the arguments nearest;
    else one with the same arguments, the name closest; else the name closest."""
    same = [other for other in enabled if other.name == label.name and len(other.args) == len(label.args)]
    if same:
        return min(same, key=lambda other: sum(abs(a - b) for a, b in zip(other.args, label.args)))
    if not enabled:
        return None

    def distance(other: Label) -> tuple:
        ratio = difflib.SequenceMatcher(None, label.name, other.name).ratio()
        return (other.args != label.args, -ratio)

    return min(enabled, key=distance)


def differing(candidates: tuple) -> list[str]:
    """The variables (per process entries) in which the candidate states differ."""
    found = []
    for variable in schema.shown(candidates[0]):
        values = [getattr(state, variable.name) for state in candidates]
        if variable.scope == PROCESS:
            for p in range(len(values[0])):
                if len({v[p] for v in values}) > 1:
                    found.append(f"{variable.name}[{p}]")
        elif len(set(values)) > 1:
            found.append(variable.name)
    return found
