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

The search by components (factored.py) answers first: it keeps the states
that fit as products of per-process sets and decides a log that is a
behaviour where no property can fail. Where it cannot decide alone, the
search here does. It runs on the checker's packed engine
(protocol/engine/fast.py), built over only the action instances the log can
use: the silent actions' and the instances its steps name, never every
`CreatePeek(d, t)` of the header's constants. A state is one int; each
action runs once per distinct component it reads; the invariants are checked
once per component (or once per state reached, where a property is not a
conjunction over components), not on every candidate; and the leads-to pairs
pending on a path are a bit mask, updated from masks computed once per
component, not by scanning every pair per state.
"""

from __future__ import annotations

import difflib
from functools import partial
from typing import Callable, NamedTuple

from protocol.engine import EACH, GLOBALS, LOCAL, PROCESS, WHOLE, WIDE, CONTROLLER, Label
from protocol.engine.fast import BITS, MASK, Engine
from protocol.model import state as schema
from protocol.model import actions as declared  # ACTIONS read when used: a test may add one
from protocol.model.commands import command_text
from protocol.model.config import Config
from protocol.model.next import action_instances, model_with
from protocol.model.state import PROCESS as PER_PROCESS
from protocol.model.trace import Step, Trace
from protocol.tools.log import Log, Observation, StepEvent, fact_text, observed_value
from protocol.tools.log_engine import (  # noqa: F401  (named here too: validate's callers import them from it)
    LogEngine, Mismatch, TooAmbiguous, Validation, applied_command, ending_note, log_instances, open_at_end,
    recorded_step,
)

# More states than this fitting the log at once means the log pins almost nothing down
# (nearly every action silent, nothing observed): the search would hold the state space
# once per event. Observe more, or silence fewer actions.
MAX_FITTING_STATES = 200_000
# A refusal shows this many of the states the model could be in (the nearest first), and
# counts the rest: a log refused where thousands fit would otherwise print thousands.
SHOWN_CANDIDATES = 3


class Node(NamedTuple):
    """One state the model may be in (packed), with the leads-to pairs pending on the way there.
    What the run has violated on the way is not part of it: that is worked out at the end,
    on the states that lead to the log's end only (`Histories`)."""

    state: int
    pending: int  # bit i: leads-to pair i's premise held and its conclusion has not since


# ------------------------------------------------------------------ what a step did


def mask_of(indices: list) -> int:
    """The int whose set bits are `indices`, built in one pass (not one shift per index)."""
    if not indices:
        return 0
    bitmap = bytearray(max(indices) // 8 + 1)
    for index in indices:
        bitmap[index >> 3] |= 1 << (index & 7)
    return int.from_bytes(bitmap, "little")


def bits(mask: int):
    """The indices of the set bits of `mask`, ascending."""
    while mask:
        low = mask & -mask
        yield low.bit_length() - 1
        mask ^= low


# ------------------------------------------------------------------ the model, as the log uses it


class Follower:
    """The model of one configuration, packed, set up to follow a log's events."""

    def __init__(self, cfg: Config, silent=(), labels=()):
        self.cfg = cfg
        self.silent_names = frozenset(silent)
        self.model = model_with(cfg, log_instances(cfg, self.silent_names, labels))
        self.instances = self.model.instances
        self.label_ids = {instance.label: index for index, instance in enumerate(self.instances)}
        self.names = {action.name for action in declared.ACTIONS if action.where(cfg)}
        self.silent_ids = frozenset(i for i, instance in enumerate(self.instances) if instance.label.name in silent)
        self.engine = LogEngine(self.model)
        self.P, self.shift = cfg.P, cfg.P * BITS
        self.silent_successors = self.engine.successors_among(self.silent_ids)
        self._steppers: dict = {}  # label id -> packed state -> [(label id, next packed state)]
        self._prepare_properties()
        self._applied: dict = {}
        self._reads: dict = {}  # label id -> (footprint kind, process, positions of the globals read)
        self._fair: dict = {}
        self._fair_instances = None

    # -- the properties, once per component or per state, on the states that matter

    def _prepare_properties(self) -> None:
        engine, model = self.engine, self.model
        self.invariant_checks = []  # (name, by component: bool, packed state -> bool)
        for name, readable in model.invariants.items():
            if name in model.by_pair:
                self.invariant_checks.append((name, False, engine.invariant(name)))
            else:
                self.invariant_checks.append((name, name in model.by_component, partial(self._readable, readable)))
        self.transition_checks = list(model.transition_properties.items())
        self._state_broken: dict = {}
        self._step_broken: dict = {}
        self._component_ok: dict = {}  # (name, "globals" or "locals", id) -> the component's verdict
        self.pairs = [(prop, pair) for prop, pairs in model.liveness.items() for pair in pairs]
        self.leads_to = LeadsToMasks(engine, [pair for _, pair in self.pairs])

    def _readable(self, holds, s: int) -> bool:
        return holds(self.decode(s))

    def state_broken(self, s: int) -> tuple:
        """The invariants packed state `s` violates, each state checked once. An invariant that is a
        conjunction of checks on the components holds wherever each component passed its check,
        which is made once per component (as the packed engine does); elsewhere, on the state."""
        found = self._state_broken.get(s)
        if found is None:
            found = self._state_broken[s] = tuple(
                name for name, by_component, holds in self.invariant_checks
                if not (by_component and self._components_pass(name, s)) and not holds(s))
        return found

    def _components_pass(self, name: str, s: int) -> bool:
        engine, holds = self.engine, self.model.invariants[name]
        g = s >> self.shift
        key = (name, "globals", g)
        if key not in self._component_ok:
            self._component_ok[key] = holds(engine.assemble(engine.globals[g], [engine.empty_local] * self.P))
        if not self._component_ok[key]:
            return False
        for p in range(self.P):
            lid = (s >> (p * BITS)) & MASK
            key = (name, "locals", lid)
            if key not in self._component_ok:
                self._component_ok[key] = holds(engine.assemble(engine.initial_globals, [engine.locals[lid]] * self.P))
            if not self._component_ok[key]:
                return False
        return True

    def step_broken(self, s: int, after: int) -> tuple:
        """The transition properties the step from `s` to `after` violates, each step checked once."""
        key = (s, after)
        found = self._step_broken.get(key)
        if found is None:
            before_state, after_state = self.decode(s), self.decode(after)
            found = self._step_broken[key] = tuple(
                name for name, holds in self.transition_checks if not holds(before_state, after_state))
        return found

    def broken_by(self, s: int, after: int) -> tuple:
        """What a step from `s` to `after` breaks: the transition properties, then the invariants."""
        return self.step_broken(s, after) + self.state_broken(after)

    # -- the monitor

    def start(self) -> Node:
        s = self.engine.initial
        return Node(s, self.leads_to.advance(0, s))

    def advance(self, node: Node, after: int) -> Node:
        return Node(after, self.leads_to.advance(node.pending, after))

    # -- the steps

    def decode(self, s: int):
        return self.engine.decode(s)

    def label(self, label_id: int) -> Label:
        return self.instances[label_id].label

    def step(self, s: int, label_id: int) -> list:
        """[(label id, next packed state)] by the instance `label_id`."""
        stepper = self._steppers.get(label_id)
        if stepper is None:
            stepper = self._steppers[label_id] = self.engine.successors_among(frozenset((label_id,)))
        return stepper(s)

    def applied_text(self, label_id: int, s: int) -> str | None:
        """The command instance `label_id` applies in packed state `s`, as the narration writes it:
        run once per distinct part of the state the instance reads (its footprint)."""
        key = (label_id, self._read_key(label_id, s))
        if key not in self._applied:
            instance = self.instances[label_id]
            command = applied_command(recorded_step(instance, self.decode(s))[1])
            self._applied[key] = None if command is None else command_text(command)
        return self._applied[key]

    def _read_key(self, label_id: int, s: int):
        """What instance `label_id` reads of packed state `s`, as a key."""
        reads = self._reads.get(label_id)
        if reads is None:
            instance = self.instances[label_id]
            kind = instance.footprint.kind
            if kind in (WHOLE, EACH) or (kind != CONTROLLER and instance.process is None):
                kind = WHOLE
            assert kind in (CONTROLLER, WHOLE, LOCAL, WIDE), kind
            positions = tuple(self.engine.global_names.index(name) for name in instance.footprint.reads)
            reads = self._reads[label_id] = (kind, instance.process, positions)
        kind, p, positions = reads
        g = s >> self.shift
        if kind == CONTROLLER:
            return g
        if kind == WHOLE:
            return s
        local = (s >> (p * BITS)) & MASK
        if kind == LOCAL:
            values = self.engine.globals[g]
            return local, tuple(values[i] for i in positions)
        return g, local

    def stops_fairly(self, s: int) -> bool:
        """Stopping here forever is a fair behaviour: no fair action is enabled (or none is fair)."""
        if not self.cfg.fairness:
            return True
        if s not in self._fair:
            if self._fair_instances is None:
                self._fair_instances = [instance for action in declared.ACTIONS if action.fair and action.where(self.cfg)
                                        for instance in action_instances(self.cfg, action)]
            state = self.decode(s)
            self._fair[s] = not any(instance.family is not None and instance.step(state) is not None
                                    for instance in self._fair_instances)
        return self._fair[s]

    def observation_check(self, event: Observation) -> Callable[[int], bool]:
        """Whether every observed value holds in a packed state, read off its components."""
        engine = self.engine
        global_facts, local_facts = [], []
        for name, p, value in event.facts:
            if name in engine.global_names:
                global_facts.append((engine.global_names.index(name), value))
            else:
                position = engine.local_names.index(name)
                if p is None:
                    local_facts += [(q, position, value[q]) for q in range(self.P)]
                else:
                    local_facts.append((p, position, value))
        globals_, locals_, shift = engine.globals, engine.locals, self.shift
        on_process = [(p, [(position, value) for q, position, value in local_facts if q == p])
                      for p in range(self.P)]
        on_process = [(p * BITS, facts, {}) for p, facts in on_process if facts]
        on_globals: dict = {}  # globals id -> whether it has the observed values; per process, local id -> the same

        def holds(s: int) -> bool:
            if not agrees(on_globals, globals_, s >> shift, global_facts):
                return False
            return all(agrees(known, locals_, (s >> offset) & MASK, facts) for offset, facts, known in on_process)

        return holds


def agrees(known: dict, components: list, component: int, facts: list) -> bool:
    """Whether interned component `component` has each observed (position, value) of `facts`,
    decided once per component (`known`)."""
    ok = known.get(component)
    if ok is None:
        values = components[component]
        ok = known[component] = all(values[position] == value for position, value in facts)
    return ok


class LeadsToMasks:
    """The leads-to bookkeeping of a path: the pending pairs as a bit mask. A pair's predicate
    is evaluated once per globals component or once per process's locals where the pair says
    it reads only those (`engine.LeadsTo`), else once per state; pairs whose predicates are
    the same call (the same function and arguments) are evaluated once for all of them."""

    def __init__(self, engine: Engine, pairs: list):
        self.engine = engine
        self.P = engine.P
        self.shift = engine.P * BITS
        self.premises = PredicateMasks(engine, [(pair.premise, pair.premise_reads, pair.process) for pair in pairs])
        self.conclusions = PredicateMasks(engine, [(pair.conclusion, pair.conclusion_reads, pair.process)
                                                   for pair in pairs])
        self.memo: dict = {}  # packed state -> (premises holding, conclusions holding)

    def advance(self, pending: int, s: int) -> int:
        """The pending pairs after the path reaches `s`: those pending or rising, not concluded."""
        rising, concluded = self.masks_of(s)
        return (pending | rising) & ~concluded

    def masks_of(self, s: int) -> tuple[int, int]:
        """(the pairs whose premise holds in `s`, those whose conclusion does), as masks."""
        masks = self.memo.get(s)
        if masks is None:
            masks = self.memo[s] = (self.premises.holding(s), self.conclusions.holding(s))
        return masks


class PredicateMasks:
    """For predicates (fn, reads, process), the mask of those holding in a packed state: each
    predicate on the globals (or on one process's locals) is evaluated once per distinct value
    of the fields it was seen to read (`ReadMemo`), the rest once per state."""

    def __init__(self, engine: Engine, predicates: list):
        self.engine = engine
        self.P, self.shift = engine.P, engine.P * BITS
        groups: dict = {GLOBALS: {}, PROCESS: {}, "state": {}}
        on_process: list = [[] for _ in range(engine.P)]
        for index, (predicate, reads, process) in enumerate(predicates):
            if reads not in (GLOBALS, PROCESS) or (reads == PROCESS and process is None):
                reads = "state"
            groups[reads].setdefault(call_key(predicate), [predicate, []])[1].append(index)
            if reads == PROCESS:
                on_process[process].append(index)
        self.process_bits = [mask_of(indices) for indices in on_process]  # p -> the predicates on p's locals
        self.on_globals = ReadMemo(list(groups[GLOBALS].values()))
        self.on_locals = ReadMemo(list(groups[PROCESS].values()))
        self.on_states = list(groups["state"].values())
        self.by_globals: dict = {}
        self.by_locals: dict = {}

    def holding(self, s: int) -> int:
        engine, mask = self.engine, 0
        if self.on_globals:
            g = s >> self.shift
            found = self.by_globals.get(g)
            if found is None:
                probe = engine.assemble(engine.globals[g], [engine.empty_local] * self.P)
                found = self.by_globals[g] = self.on_globals.mask(probe)
            mask |= found
        if self.on_locals:
            for p in range(self.P):
                lid = (s >> (p * BITS)) & MASK
                found = self.by_locals.get(lid)
                if found is None:
                    probe = engine.assemble(engine.initial_globals, [engine.locals[lid]] * self.P)
                    found = self.by_locals[lid] = self.on_locals.mask(probe)
                mask |= found & self.process_bits[p]
        if self.on_states:
            state = engine.decode(s)
            mask |= mask_of([index for predicate, indices in self.on_states if predicate(state) for index in indices])
        return mask


class Recording:
    """A state that notes which of its fields are read (a predicate's reads, found by running it)."""

    __slots__ = ("_state", "_read")

    def __init__(self, state):
        object.__setattr__(self, "_state", state)
        object.__setattr__(self, "_read", set())

    def __getattr__(self, name: str):
        value = getattr(self._state, name)
        self._read.add(name)
        return value


class ReadMemo:
    """Predicates [(fn, [bit index, ...])] on states, evaluated once per distinct value of the
    fields they read. A predicate's reads are found by running it on a `Recording`; its verdict
    is then the same on every state with the same values in those fields (it reads nothing else,
    and reads them in the same order given the same values), so the mask of the predicates that
    read the same fields is kept per those fields' values. A predicate that reads other fields
    on another state joins the fields it read; one that cannot run on a `Recording` (it indexes
    the state, say) is evaluated on every state it is asked about."""

    def __init__(self, predicates: list):
        self.unlearnt = list(predicates)
        self.groups: dict = {}  # tuple of fields -> ([(fn, indices)], {values: mask})
        self.direct: list = []

    def __bool__(self) -> bool:
        return bool(self.unlearnt or self.groups or self.direct)

    def mask(self, state) -> int:
        holding = [index for predicate, indices in self.direct if predicate(state) for index in indices]
        for predicate, indices in self.unlearnt:
            if self._learn(predicate, indices, state):
                holding += indices
        self.unlearnt = []
        mask = mask_of(holding)
        for fields, (members, table) in list(self.groups.items()):
            key = tuple(getattr(state, name) for name in fields)
            found = table.get(key)
            if found is None:
                found = self._evaluate(fields, members, state)
                if found is None:  # a member read outside the fields: it was learnt apart; start again
                    return self.mask(state)
                table[key] = found
            mask |= found
        return mask

    def _learn(self, predicate, indices: list, state, known=frozenset()) -> bool:
        """Run a predicate on a Recording of `state`: its verdict, and it joins its fields' group."""
        recording = Recording(state)
        try:
            holds = predicate(recording)
        except Exception:  # noqa: BLE001 - it needs the state itself: evaluate it directly from now on
            self.direct.append((predicate, indices))
            return bool(predicate(state))
        fields = tuple(sorted(known | recording._read))
        members, table = self.groups.setdefault(fields, ([], {}))
        members.append((predicate, indices))
        table.clear()  # a new member: the masks kept so far do not count it
        return bool(holds)

    def _evaluate(self, fields: tuple, members: list, state) -> int | None:
        """The group's mask on `state`, each member's reads checked; None where one read outside
        the fields (it is then learnt again, in a group with the fields it read)."""
        holding = []
        for position, (predicate, indices) in enumerate(members):
            recording = Recording(state)
            holds = predicate(recording)
            if not recording._read <= set(fields):
                del members[position]
                self.groups[fields][1].clear()
                self._learn(predicate, indices, state, frozenset(fields))
                return None
            if holds:
                holding += indices
        return mask_of(holding)


def call_key(predicate) -> object:
    """Predicates with the same key are the same call: a partial of one function with the same
    arguments (`sent >= t` is the premise of one pair per process), else the object itself."""
    if isinstance(predicate, partial):
        try:
            key = (predicate.func, predicate.args, tuple(sorted(predicate.keywords.items())))
            hash(key)
            return key
        except TypeError:
            return predicate
    return predicate


class Layer:
    """The nodes after some events: node -> [(parent key, label id), ...], every edge that reaches
    it (the first is the one the behaviour shown follows), in discovery order. A parent key is
    (layer number, node); an observation's edge has no label."""

    def __init__(self, number: int):
        self.number = number
        self.nodes: dict = {}

    def add(self, node: Node, parent, label) -> bool:
        """Record the edge; whether the node is new."""
        edges = self.nodes.get(node)
        if edges is None:
            self.nodes[node] = [(parent, label)]
            return True
        edges.append((parent, label))
        return False

    def states(self) -> list:
        return list(dict.fromkeys(node.state for node in self.nodes))


def validate(log: Log, progress: Callable | None = None) -> Validation:
    """Follow `log` through the model of its design (its header's, or the one --config named).
    `progress(event number, events, states fitting)`, if given, is called after every event.
    The search by components (factored.py) answers first; where it cannot decide alone (a
    refusal, a property that may fail), the exact search below does."""
    from protocol.tools.factored import Exact, follow

    try:
        return follow(log, progress, MAX_FITTING_STATES)
    except Exact:
        pass
    cfg = log.design
    labels = {event.label for event in log.events if isinstance(event, StepEvent)}
    follower = Follower(cfg, log.silent, labels)
    layers = [Layer(0)]
    layers[0].add(follower.start(), None, None)
    close(follower, layers[0])
    for number, event in enumerate(log.events, 1):
        layer = Layer(number)
        previous = layers[-1]
        if isinstance(event, Observation):
            holds = follower.observation_check(event)
            for node in previous.nodes:
                if holds(node.state):
                    layer.nodes[node] = [((previous.number, node), None)]
        else:
            take_step(follower, previous, layer, event)
        if not layer.nodes:
            return refused(log, cfg, follower, layers, event, number)
        close(follower, layer, event.where)
        layers.append(layer)
        if progress is not None:
            progress(number, len(log.events), len(layer.nodes))
    return accepted(log, cfg, follower, layers)


def take_step(follower: Follower, previous: Layer, layer: Layer, event: StepEvent) -> None:
    if event.label is None:  # some action, unnamed: any instance of the configuration
        chosen = range(len(follower.instances))
    elif event.label in follower.label_ids:
        chosen = (follower.label_ids[event.label],)
    else:
        return  # not an instance of this configuration: nothing follows
    for node in previous.nodes:
        for label_id in chosen:
            for _, after in follower.step(node.state, label_id):
                if event.command is not None and follower.applied_text(label_id, node.state) != event.command:
                    continue
                layer.add(follower.advance(node, after), (previous.number, node), label_id)


def close(follower: Follower, layer: Layer, where: str = "the header") -> None:
    """Add every node the silent actions reach from the layer's nodes."""
    if not follower.silent_ids:
        return
    nodes, number = layer.nodes, layer.number
    successors, masks_of, make = follower.silent_successors, follower.leads_to.masks_of, tuple.__new__
    frontier = list(nodes)
    while frontier:
        if len(nodes) > MAX_FITTING_STATES:
            raise TooAmbiguous(f"{where}: more than {MAX_FITTING_STATES:,} model states fit the log here: "
                               "observe more variables or silence fewer actions")
        reached = []
        for node in frontier:
            parent = (number, node)
            state, pending = node
            for label_id, after in successors(state):
                rising, concluded = masks_of(after)
                child = make(Node, (after, (pending | rising) & ~concluded))  # follower.advance, inlined
                edges = nodes.get(child)
                if edges is None:
                    nodes[child] = [(parent, label_id)]
                    reached.append(child)
                else:
                    edges.append((parent, label_id))
        frontier = reached


def path_to(layers: list, key) -> list:
    """[(event number, label id, node)] from the initial node to the node at `key`, by first edges."""
    found = []
    while key is not None:
        number, node = key
        parent, label = layers[number].nodes[node][0]
        found.append((number, label, node))
        key = parent
    found.reverse()
    # An observation repeats its node in the next layer with no step: keep each step once.
    steps = [found[0]]
    for item in found[1:]:
        if item[1] is not None:
            steps.append(item)
    return steps


def behaviour_of(follower: Follower, path) -> tuple:
    return tuple(Step(None if label is None else follower.label(label), follower.decode(node.state))
                 for _, label, node in path)


# ------------------------------------------------------------------ what the run violated


class Histories:
    """What each behaviour that fits the whole log has violated: for each node that leads to the
    log's end, the set of its possible histories, each ((property, first event), ...) in the
    order found. Worked out after the search, over the edges between those nodes only (most
    states the silent actions reach are ruled out by a later event, and are never checked)."""

    def __init__(self, follower: Follower, layers: list):
        self.follower = follower
        self.layers = layers
        self.of: dict = {}  # (layer number, node) -> set of histories
        self._spread(self._edges_to_the_end())

    def _edges_to_the_end(self) -> dict:
        """child key -> [(parent key, label id)], over the nodes from which the log's end is reached."""
        last = self.layers[-1]
        frontier = [(last.number, node) for node in last.nodes]
        seen = set(frontier)
        edges: dict = {}
        while frontier:
            key = frontier.pop()
            number, node = key
            edges[key] = self.layers[number].nodes[node]
            for parent, _ in edges[key]:
                if parent is not None and parent not in seen:
                    seen.add(parent)
                    frontier.append(parent)
        return edges

    def _spread(self, edges: dict) -> None:
        """Histories from the initial node along the edges, until nothing new is found (silent steps
        may go round a cycle)."""
        children: dict = {}
        for child, into in edges.items():
            for parent, label in into:
                if parent is not None:
                    children.setdefault(parent, []).append((child, label))
        start = (0, next(iter(self.layers[0].nodes)))
        first = tuple((name, 0) for name in self.follower.state_broken(start[1].state))
        self.of[start] = {first}
        work = [start]
        while work:
            parent = work.pop()
            for child, label in children.get(parent, ()):
                found = self.of.setdefault(child, set())
                before = len(found)
                for history in self.of[parent]:
                    found.add(self.after(history, parent, child, label))
                if len(found) > before:
                    work.append(child)

    def after(self, history: tuple, parent, child, label) -> tuple:
        """The history after the edge from `parent` to `child` (stamped with the child's event)."""
        if label is None:  # an observation: the same node, no step
            return history
        broken = self.follower.broken_by(parent[1].state, child[1].state)
        if not broken:
            return history
        seen = {name for name, _ in history}
        return history + tuple((name, child[0]) for name in dict.fromkeys(broken) if name not in seen)

    def along(self, path: list) -> list:
        """The history at each node of a path (path_to's), as that behaviour went."""
        history = tuple((name, 0) for name in self.follower.state_broken(path[0][2].state))
        found = [history]
        for (_, _, before), (number, label, after) in zip(path, path[1:]):
            history = self.after(history, (None, before), (number, after), label)
            found.append(history)
        return found


# ------------------------------------------------------------------ verdicts


def accepted(log: Log, cfg: Config, follower: Follower, layers: list) -> Validation:
    last = layers[-1]
    events = len(log.events)
    histories = Histories(follower, layers)
    found_per_behaviour = []
    for node in last.nodes:
        stopped: dict = {}
        if node.pending and follower.stops_fairly(node.state):
            for i in bits(node.pending):
                stopped.setdefault(follower.pairs[i][0], events)
        for history in histories.of[(last.number, node)]:
            found = dict(history)
            for name, event in stopped.items():
                found.setdefault(name, event)
            found_per_behaviour.append(found)
    every = set.intersection(*(set(found) for found in found_per_behaviour))
    some = set().union(*(set(found) for found in found_per_behaviour))
    order = [name for name in list(follower.model.invariants) + list(follower.model.transition_properties)
             + list(follower.model.liveness)]
    definite = {name: max(found[name] for found in found_per_behaviour) for name in order if name in every}
    possible = {name: min(found[name] for found in found_per_behaviour if name in found)
                for name in order if name in some - every}
    first_node = next(iter(last.nodes))
    path = path_to(layers, (last.number, first_node))
    behaviour = behaviour_of(follower, path)
    along = histories.along(path)
    at_state = {name: violated_at(follower, along, name) for name in definite}
    witnesses = {name: witness(follower, path, behaviour, name, at_state[name]) for name in definite}
    notes = log.notes
    ends = [follower.engine.unpack(state) for state in last.states()]
    final_states = len(ends)
    open_ = open_at_end(follower.engine, {g for g, _ in ends}, [{lids[p] for _, lids in ends} for p in range(cfg.P)])
    if len(found_per_behaviour) > 1:
        notes += (ending_note(final_states, open_),)
    return Validation(log, cfg, events, events, None, definite, possible, witnesses, at_state, final_states,
                      behaviour, layer_sizes(layers), tuple(follower.model.liveness), notes, open_)


def violated_at(follower: Follower, along: list, name: str) -> int:
    """The index on the path (its histories, `along`) of the first state by which the behaviour violates `name`."""
    if name in follower.model.liveness:
        return len(along) - 1
    return next(index for index, history in enumerate(along) if name in dict(history))


def witness(follower: Follower, path: list, behaviour: tuple, name: str, index: int) -> list[str]:
    """Why the behaviour violates `name`: the property's witness at its first violation, or
    for a leads-to property the pairs left pending where the run stops."""
    from protocol.properties import violation_words

    if name in follower.model.liveness:
        pending = path[-1][2].pending
        texts = [pair.text for i, (prop, pair) in enumerate(follower.pairs) if prop == name and pending >> i & 1]
        return [f"{text}: the premise held and the conclusion has not since, and the run stops where "
                "stopping forever is fair (no weakly fair action is enabled there)" for text in texts]
    return violation_words(Trace(name, behaviour[:index + 1]), follower.cfg)


def refused(log: Log, cfg: Config, follower: Follower, layers: list, event, number: int) -> Validation:
    """The verdict where event `number` leaves no state: how many states the model could be in
    just before it, a few of them (the nearest first), what is enabled there, and why none fits."""
    previous = layers[-1]
    packed = previous.states()
    if isinstance(event, Observation):
        distances = observation_distances(follower, event, packed)
        shown = sorted(range(len(packed)), key=distances.__getitem__)[:SHOWN_CANDIDATES]
    else:
        shown = list(range(min(SHOWN_CANDIDATES, len(packed))))
    candidates = tuple(follower.decode(packed[index]) for index in shown)
    enabled = tuple(enabled_steps(cfg, state) for state in candidates)
    if isinstance(event, Observation):
        reason = observation_reason(event, follower, packed, cfg)
        differences = tuple(observation_differences(event, state, cfg) for state in candidates)
        mismatch = Mismatch(event.line, event.where, number, "observation", reason, candidates, enabled,
                            states=len(packed), differences=differences)
    else:
        reason, nearest = step_reason(follower, event, packed, enabled)
        mismatch = Mismatch(event.line, event.where, number, "step", reason, candidates, enabled, nearest,
                            states=len(packed))
    path = path_to(layers, (previous.number, next(iter(previous.nodes))))
    return Validation(log, cfg, len(log.events), number - 1, mismatch, {}, {}, {}, {}, len(packed),
                      behaviour_of(follower, path), layer_sizes(layers))


def enabled_steps(cfg: Config, state) -> tuple:
    """((label, next state), ...) of every action instance of `cfg` enabled in `state`, trying
    only those that may be enabled there (`Action.parameters_in`), not every instance of the
    constants: a refusal at D = MaxTime = 1000 tries a thousand creates, not a million."""
    found = []
    for action in declared.ACTIONS:
        if action.where(cfg):
            for label_args, keywords in action.parameters_in(cfg, state):
                after = action.step(state, cfg=cfg, **keywords)
                if after is not None:
                    found.append((Label(action.name, *label_args), after))
    return tuple(found)


def layer_sizes(layers: list) -> tuple:
    return tuple(len(layer.states()) for layer in layers)


def observation_distances(follower: Follower, event: Observation, packed: list) -> list[int]:
    """For each packed state, how many observed values it does not have."""
    checks = [follower.observation_check(Observation(event.line, (fact,))) for fact in event.facts]
    return [sum(not holds(s) for holds in checks) for s in packed]


def observation_differences(event: Observation, state, cfg: Config) -> tuple:
    """((observed variable or entry, the observed value's text), ...) where `state` has another value;
    a variable the design held against lacks (--config) is left out: the reason names it."""
    return tuple((fact_text(name, p), _value_text(name, p, value, schema.BY_NAME[name].domain.text))
                 for name, p, value in event.facts
                 if schema.BY_NAME[name].where(cfg) and observed_value(state, name, p) != value)


def observation_reason(event: Observation, follower: Follower, packed: list, cfg: Config) -> str:
    absent = [name for name, _, _ in event.facts if not schema.BY_NAME[name].where(cfg)]
    if absent:
        return f"this configuration has no variable {absent[0]}: the log observes a design that has one"
    wrong = []
    for name, p, value in event.facts:
        held = list(dict.fromkeys(fact_values(follower, name, p, packed)))
        if value not in held:
            text = schema.BY_NAME[name].domain.text
            observed = _value_text(name, p, value, text)
            model = " or ".join(_value_text(name, p, h, text) for h in held[:4])
            wrong.append(f"{fact_text(name, p)} observed {observed}, the model has {model}")
    count = len(packed)
    if not wrong:
        return f"none of the {count:,} states the model could be in fits every observed value at once"
    where = "the state" if count == 1 else f"any of the {count:,} states"
    return f"the observation does not fit {where} the model could be in: " + "; ".join(wrong)


def fact_values(follower: Follower, name: str, p: int | None, packed: list):
    """The values variable `name` (process p's entry, or the whole) has in the packed states."""
    engine = follower.engine
    if name in engine.global_names:
        position = engine.global_names.index(name)
        return (engine.globals[s >> follower.shift][position] for s in packed)
    position = engine.local_names.index(name)
    processes = range(follower.P) if p is None else (p,)
    values = (tuple(engine.locals[(s >> (q * BITS)) & MASK][position] for q in processes) for s in packed)
    return values if p is None else (value[0] for value in values)


def _value_text(name: str, p: int | None, value, text) -> str:
    if p is None and schema.BY_NAME[name].scope == PER_PROCESS:
        return "(" + ", ".join(text(v) for v in value) + ")"
    return text(value)


def step_reason(follower: Follower, event: StepEvent, packed: list, enabled: tuple) -> tuple[str, Label | None]:
    label = event.label
    count = len(packed)
    where = "the state" if count == 1 else f"any of the {count:,} states"
    if label is None:
        return f"no action leads from {where} the model could be in to the next state", None
    if label.name not in follower.names:
        return f"{label.name} is not an action of this configuration", None
    if label not in follower.label_ids:
        return f"{label} is not an action instance of this configuration (its arguments differ)", None
    label_id = follower.label_ids[label]
    enabled_in = [s for s in packed if follower.step(s, label_id)]
    if enabled_in and event.command is not None:
        pops = sorted({text for s in enabled_in for text in [follower.applied_text(label_id, s)] if text is not None})
        return (f"{label} is enabled, but pops {' or '.join(pops) or 'no command'}, "
                f"not {event.command}"), None
    shown = "" if count <= len(enabled) else f" (of the {len(enabled)} shown)"
    nearest = nearest_label(label, list(dict.fromkeys(label for steps in enabled for label, _ in steps)))
    hint = f"; the nearest enabled{shown} is {nearest}" if nearest is not None else ""
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
        if variable.scope == PER_PROCESS:
            for p in range(len(values[0])):
                if len({v[p] for v in values}) > 1:
                    found.append(f"{variable.name}[{p}]")
        elif len(set(values)) > 1:
            found.append(variable.name)
    return found
