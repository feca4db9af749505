"""The previous `validate`, kept as the reference the lazy one (protocol/tools/validate.py) is
compared with (tests/test_validate_scale.py): a plain breadth-first search over (state, what
the run violated, which leads-to pairs are pending) nodes on the readable model, every
property checked on every node, every instance of the configuration listed. Only its
verdict is kept: whether the log is a behaviour, where it is refused, what it violates."""

from __future__ import annotations

from typing import NamedTuple

from protocol.engine import Label
from protocol.model.actions import Applied
from protocol.model.commands import command_text
from protocol.model.config import Config
from protocol.model.next import model_for
from protocol.tools.log import Log, Observation, StepEvent

MAX_FITTING_STATES = 200_000


class TooAmbiguous(ValueError):
    pass


class Node(NamedTuple):
    """One state the model may be in, with what the run has done on the way there."""

    state: object
    violated: tuple  # ((property, first event), ...), in the order found
    pending: frozenset  # indices of the leads-to pairs whose premise held and conclusion has not since


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


def reference_verdict(log: Log) -> dict:
    """The verdict of the exhaustive search on `log`."""
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
            return {"behaviour": False, "matched": number - 1, "line": event.line,
                    "kind": "observation" if isinstance(event, Observation) else "step",
                    "states": len(previous.states()), "layer_states": tuple(len(l.states()) for l in layers)}
        close(follower, layer, event.where)
        layers.append(layer)
    last = layers[-1]
    events = len(log.events)
    limits = next_observed(log)
    per_node = []
    for node in last.nodes:
        found = dict(node.violated)
        if node.pending and follower.stops_fairly(node.state):
            for i in sorted(node.pending):
                found.setdefault(follower.pairs[i][0], events)
        per_node.append(found)
    every = set.intersection(*(set(found) for found in per_node))
    some = set().union(*(set(found) for found in per_node))
    order = list(follower.model.invariants) + list(follower.model.transition_properties) + list(follower.model.liveness)
    return {"behaviour": True, "matched": events,
            "violations": {name: max(found[name] for found in per_node) for name in order if name in every},
            "possible": {name: min(found[name] for found in per_node if name in found)
                         for name in order if name in some - every},
            "final_states": len(last.states()), "layer_states": tuple(len(l.states()) for l in layers),
            "layer_states_ahead": tuple(len([s for s in l.states() if not passed_next(s, limits[l.number])])
                                        for l in layers)}


def next_observed(log: Log) -> list:
    """For each event number k (0: the header), the value the log shows next, after event k, of
    each rising frontier that is a whole number: {(variable, process or None): value}."""
    from protocol.model import state as schema

    found, ahead = [], {}
    for event in reversed(log.events):
        found.append(dict(ahead))
        if isinstance(event, Observation):
            for name, p, value in event.facts:
                if name not in schema.RISING:
                    continue
                if schema.BY_NAME[name].scope == schema.GLOBAL:
                    values = {None: value}
                else:
                    values = {p: value} if p is not None else dict(enumerate(value))
                ahead.update({(name, q): v for q, v in values.items() if isinstance(v, int)})
    found.append(dict(ahead))
    found.reverse()
    return found


def passed_next(state, limits: dict) -> bool:
    """Whether a state has a rising frontier past the value the log shows of it next: it cannot
    meet that observation, frontiers never falling."""
    for (name, p), limit in limits.items():
        value = getattr(state, name) if p is None else getattr(state, name)[p]
        if isinstance(value, int) and value > limit:
            return True
    return False


def outcome(validation) -> tuple:
    """What a test compares of a verdict (protocol.tools.validate's Validation)."""
    return (validation.is_behaviour, validation.violations, validation.possible, validation.final_states,
            validation.layer_states)


def reference_outcome(text: str) -> tuple:
    """`outcome` of the exhaustive search on a log that is a behaviour."""
    from protocol.tools.log import parse

    expected = reference_verdict(parse(text))
    return (True, expected["violations"], expected["possible"], expected["final_states"],
            expected["layer_states_ahead"])
