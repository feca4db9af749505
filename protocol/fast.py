"""A fast successor engine for one configuration, derived from the readable actions.

The readable model (`state.py`, `actions.py`, `model.py`) is the
specification; this module only changes how states are stored and how often
the actions run. It rests on how the state splits:

- the *globals* (policy, sent, upper, df, as_of, caps, fwd) and, per process,
  the *locals* (mq, iq, writer, standing, since, physical, readers, acq,
  released) are each interned: every distinct value gets a small integer id;
- a state is one Python int packing the locals' ids and the globals' id,
  `locals[0] | locals[1] << BITS | ... | globals << P*BITS`. Hashing and
  comparing it is a few machine words, not a walk over nested tuples.

Each action instance reads only part of a state (its *footprint*, see
`footprint`): the controller's actions read the globals and append the same
commands to every process's queues; a runtime action on process p reads and
writes p's locals (Publish also reads `upper`; with the cap, InterStep(0)
also reads and writes the globals and appends to every maintenance queue).
So the readable action is run once per distinct footprint value, on a
synthetic state assembled from the components, and its effect is memoised as
component ids. Exploring a state is then table lookups and integer
arithmetic.

The invariants are checked the same way, once per new component: every
state invariant of the spec is a conjunction of a check on the globals and a
check on each process's locals (`COMPONENT_INVARIANTS`), and NoRegression
depends only on the component each step rewrites. A state or step is handed
to the readable predicate only when one of its components failed. The
differential tests (tests/test_fast.py) check that this engine yields exactly
the readable model's reachable states and edges.
"""

from __future__ import annotations

from functools import partial
from itertools import repeat
from operator import and_, rshift
from typing import Callable

import invariants

from .checker import Guarded
from .model import RUNTIME_ACTIONS, instances
from .state import GLOBAL_VARIABLES, PROCESS_VARIABLES, State, initial

BITS = 24  # bits per interned id: up to 16.7 million distinct locals or globals
MASK = (1 << BITS) - 1

# The state invariants that are a conjunction of a check on the globals and a
# check on each process's locals; any other invariant is evaluated on the
# decoded state (correct, only slower).
COMPONENT_INVARIANTS = frozenset({"TypeOK", "I1", "PhysicalLeSince"})
# The transition properties that hold of a step exactly when they hold of the
# component the step rewrites (only frontiers compare, and each is global or local).
COMPONENT_TRANSITION_PROPERTIES = frozenset({"NoRegression"})

CONTROLLER, LOCAL, LOCAL_AND_UPPER, WIDE = "controller", "local", "local+upper", "wide"
UPPER = GLOBAL_VARIABLES.index("upper")
FOOTPRINT_SAMPLES = 4  # reachable globals each sampled local memo entry is rechecked under


def footprint(cfg, name: str, p: int | None) -> str:
    """What an action instance reads and writes (model-spec section 4)."""
    if p is None:
        return CONTROLLER  # reads the globals, appends the same commands to every process
    if name == "Publish":
        return LOCAL_AND_UPPER
    if name == "InterStep" and cfg.cap and p == 0:
        return WIDE  # process 0's frontier report retires the cap and may forward
    return LOCAL


def split(s: State) -> tuple[tuple, list[tuple]]:
    """A readable state as its globals and its per-process locals."""
    globals_ = tuple(getattr(s, name) for name in GLOBAL_VARIABLES)
    per_variable = [getattr(s, name) for name in PROCESS_VARIABLES]
    return globals_, [tuple(column[p] for column in per_variable) for p in range(len(s.mq))]


def assemble(globals_: tuple, locals_: list[tuple]) -> State:
    """The readable state with these globals and these per-process locals."""
    columns = zip(*locals_)
    return State(*globals_, *(tuple(column) for column in columns))


class Engine:
    """The packed-int successor function, invariants and decoder of one configuration."""

    def __init__(self, cfg, canonical_edge: Callable[[int, int], tuple] | None = None):
        """`canonical_edge`, when given, maps each (label id, successor) to (the label id
        extended with the permutation applied, the successor's orbit's representative):
        symmetry reduction, see symmetry.py."""
        self.cfg = cfg
        self.canonical_edge = canonical_edge
        self.P = cfg.P
        table = instances(cfg)
        self.labels = [label for label, _ in table]
        start = initial(cfg)
        self.initial_globals, initial_locals = split(start)
        self.empty_local = initial_locals[0]
        self.globals: list[tuple] = []
        self.global_ids: dict = {}
        self.locals: list[tuple] = []
        self.local_ids: dict = {}
        self._prepare_actions(table)
        self._prepare_properties()
        self.initial = self.pack(self.intern_global(self.initial_globals),
                                 [self.intern_local(loc) for loc in initial_locals])
        self.successors = self._compile_successors()
        self.decode = self._compile_decode()

    # ----------------------------------------------------------- encoding

    def pack(self, g: int, local_ids: list[int]) -> int:
        packed = g << (self.P * BITS)
        for p, lid in enumerate(local_ids):
            packed |= lid << (p * BITS)
        return packed

    def unpack(self, packed: int) -> tuple[int, list[int]]:
        return packed >> (self.P * BITS), [(packed >> (p * BITS)) & MASK for p in range(self.P)]

    def _compile_decode(self) -> Callable[[int], State]:
        """decode(packed) -> State, unrolled over processes: liveness decodes every state."""
        columns = ", ".join(f"locals_[(packed >> {p * BITS}) & {MASK}]" for p in range(self.P))
        source = (
            "def decode(packed):\n"
            "    \"\"\"The readable state a packed int stands for.\"\"\"\n"
            f"    return make(State, (*globals_[packed >> {self.P * BITS}], *zip({columns})))\n"
        )
        namespace = {"make": tuple.__new__, "State": State, "globals_": self.globals, "locals_": self.locals}
        exec(source, namespace)
        return namespace["decode"]

    def encode(self, s: State) -> int:
        globals_, locals_ = split(s)
        return self.pack(self.intern_global(globals_), [self.intern_local(loc) for loc in locals_])

    def intern_global(self, value: tuple) -> int:
        gid, new = intern(self.globals, self.global_ids, value)
        if new:
            self.controller_memo.append(None)
            self.upper_of.append(value[UPPER])
            self._check_global(value)
        return gid

    def intern_local(self, value: tuple) -> int:
        lid, new = intern(self.locals, self.local_ids, value)
        if new:
            for memo in self.local_memos.values():
                memo.append(None)
            self.publish_memo.extend([None] * (self.cfg.MaxTime + 1))
            self._check_local(value)
        return lid

    # ------------------------------------------------------------ actions

    def _prepare_actions(self, table) -> None:
        """Sort the action instances by footprint, keeping the enumeration order."""
        self.controller_steps = []  # (label id, step)
        self.process_steps: dict[str, list] = {}  # action name -> [(label id, step, footprint)] by p
        self.local_instances: dict[str, tuple] = {}  # action name -> (p, step, footprint) of its first local instance
        for label_id, (label, step) in enumerate(table):
            p = label.args[0] if label.name in RUNTIME_ACTIONS else None
            kind = footprint(self.cfg, label.name, p)
            if kind == CONTROLLER:
                self.controller_steps.append((label_id, step))
            else:
                self.process_steps.setdefault(label.name, []).append((label_id, step, kind))
                if kind != WIDE:  # the instance whose effect is memoised for every process
                    self.local_instances.setdefault(label.name, (p, step, kind))
        self.controller_memo: list = []  # global id -> [(label id, next global id, append id)]
        self.upper_of: list[int] = []  # global id -> upper
        self.local_memos = {name: [] for name in self.process_steps}  # name -> local id -> next or -1
        self.publish_memo: list = []  # local id * (MaxTime + 1) + upper -> next local id or -1
        self.wide_memo: dict = {}  # (global id, local id) -> (next global, next local, append id) or None
        self.appends: list[tuple] = [((), ())]  # append id -> (maintenance cmds, interactive cmds)
        self.append_ids: dict = {((), ()): 0}
        self.appended: list[dict] = [{}]  # append id -> {local id: local id with the commands appended}

    def controller_successors(self, g: int) -> list:
        """The controller's enabled steps from globals g: (label id, next globals, appended commands)."""
        before = assemble(self.globals[g], [self.empty_local] * self.P)
        found = []
        for label_id, step in self.controller_steps:
            after = step(before)
            if after is None:
                continue
            self._check_step(before, after)
            next_globals, next_locals = split(after)
            appended = self._appended_commands(next_locals)
            found.append((label_id, self.intern_global(next_globals), appended))
        self.controller_memo[g] = found
        return found

    def _appended_commands(self, next_locals: list[tuple]) -> int:
        """The id of the commands a step appended to every (initially empty) process's queues."""
        first = next_locals[0]
        if any(loc != first for loc in next_locals) or first[2:] != self.empty_local[2:]:
            raise AssertionError("a controller step did more than append to every queue")
        key = (first[0], first[1])
        found = self.append_ids.get(key)
        if found is None:
            found = self.append_ids[key] = len(self.appends)
            self.appends.append(key)
            self.appended.append({})
        return found

    def append_to(self, append_id: int, lid: int) -> int:
        """Local lid with the commands of `append_id` appended to its queues."""
        found = self.appended[append_id].get(lid)
        if found is None:
            mq_cmds, iq_cmds = self.appends[append_id]
            local = self.locals[lid]
            found = self.intern_local((local[0] + mq_cmds, local[1] + iq_cmds) + local[2:])
            self.appended[append_id][lid] = found
        return found

    def local_successor(self, name: str, lid: int, upper: int = 0) -> int:
        """The next local of a process after `name` on it from local lid, or -1 when disabled.

        The same for every process whose instance is local, so it is computed once,
        on the first such process: not InterStep(0) under the cap, which is wide."""
        p, step, kind = self.local_instances[name]
        globals_ = list(self.initial_globals)
        globals_[UPPER] = upper
        before = assemble(tuple(globals_), [self.locals[lid]] * self.P)
        after = step(before)
        found = -1
        if after is not None:
            self._check_step(before, after)
            next_globals, next_locals = split(after)
            others = next_locals[:p] + next_locals[p + 1:]
            if next_globals != before_globals(before) or others != [self.locals[lid]] * (self.P - 1):
                raise AssertionError(f"{name} wrote outside its process's locals")
            found = self.intern_local(next_locals[p])
        if lid & (lid - 1) == 0:  # a sample of locals, ever sparser: the hot path never pays
            self._check_footprint(name, lid, upper, found)
        if kind == LOCAL_AND_UPPER:
            self.publish_memo[lid * (self.cfg.MaxTime + 1) + upper] = found
        else:
            self.local_memos[name][lid] = found
        return found

    def _check_footprint(self, name: str, lid: int, upper: int, found: int) -> None:
        """Fail loudly if `name` reads a global its footprint says it does not: the memo
        ran it on the initial globals only, so rerun it on the globals most recently
        reached (with the same upper for Publish) and demand the same next local, or disabled alike."""
        p, step, kind = self.local_instances[name]
        expected = None if found < 0 else self.locals[found]
        for globals_ in self.globals[-FOOTPRINT_SAMPLES:]:
            if kind == LOCAL_AND_UPPER:
                globals_ = (*globals_[:UPPER], upper, *globals_[UPPER + 1:])
            after = step(assemble(globals_, [self.locals[lid]] * self.P))
            if (None if after is None else split(after)[1][p]) != expected:
                raise AssertionError(f"{name} reads a global outside its footprint ({footprint.__name__}): "
                                     f"from the same locals it does otherwise under globals {globals_}")

    def wide_successor(self, g: int, lid: int):
        """InterStep(0) under the cap: (next globals, next local 0, append id to the others) or None."""
        label_id, step, kind = self.process_steps["InterStep"][0]
        before = assemble(self.globals[g], [self.locals[lid]] + [self.empty_local] * (self.P - 1))
        after = step(before)
        found = None
        if after is not None:
            self._check_step(before, after)
            next_globals, next_locals = split(after)
            others = next_locals[1:] or [self.empty_local]
            found = (self.intern_global(next_globals), self.intern_local(next_locals[0]),
                     self._appended_commands(others))
        self.wide_memo[(g, lid)] = found
        return found

    def _compile_successors(self) -> Callable[[int], list]:
        """Generate the successor function for this P, unrolled over processes."""
        P, names = self.P, list(self.process_steps)
        lines = ["def successors(s):", "    out = []", "    append = out.append",
                 f"    g = s >> {P * BITS}", f"    rest = s & {(1 << (P * BITS)) - 1}"]
        lines += [f"    l{p} = (s >> {p * BITS}) & {MASK}" for p in range(P)]
        lines += [
            "    steps = controller_memo[g]",
            "    if steps is None:",
            "        steps = controller_successors(g)",
            "    for label, g2, app in steps:",
            "        if app:",
            "            table = appended[app]",
        ]
        for p in range(P):
            lines += [f"            n{p} = table.get(l{p})",
                      f"            if n{p} is None:",
                      f"                n{p} = append_to(app, l{p})"]
        packed_locals = " | ".join(f"(n{p} << {p * BITS})" for p in range(P))
        lines += [f"            append({self._edge('label', f'(g2 << {P * BITS}) | {packed_locals}')})",
                  "        else:",
                  f"            append({self._edge('label', f'(g2 << {P * BITS}) | rest')})"]
        namespace = {
            "controller_memo": self.controller_memo, "controller_successors": self.controller_successors,
            "appended": self.appended, "append_to": self.append_to, "upper_of": self.upper_of,
            "publish_memo": self.publish_memo, "local_successor": self.local_successor,
            "wide_memo": self.wide_memo, "wide_successor": self.wide_successor,
            "canonical_edge": self.canonical_edge,
        }
        if "Publish" in names:
            lines.append("    upper = upper_of[g]")
        for name in names:
            namespace[f"memo_{name}"] = self.local_memos[name]
            for p, (label_id, _step, kind) in enumerate(self.process_steps[name]):
                lines += self._process_step_lines(name, p, label_id, kind)
        lines.append("    return out")
        exec("\n".join(lines), namespace)
        return namespace["successors"]

    def _edge(self, label: str, state: str) -> str:
        """The (label id, successor) pair, mapped to its orbit's representative (and the
        label to the permutation applied) when reducing by symmetry."""
        return f"({label}, {state})" if self.canonical_edge is None else f"canonical_edge({label}, {state})"

    def _process_step_lines(self, name: str, p: int, label_id: int, kind: str) -> list[str]:
        shift = p * BITS
        if kind == WIDE:
            others = " | ".join(f"(append_to(app, l{q}) << {q * BITS})" for q in range(1, self.P)) or "0"
            return [
                f"    found = wide_memo.get((g, l{p}), 0)",
                "    if found == 0:",
                f"        found = wide_successor(g, l{p})",
                "    if found is not None:",
                "        g2, n, app = found",
                f"        append({self._edge(str(label_id), f'(g2 << {self.P * BITS}) | n | {others}')})",
            ]
        if kind == LOCAL_AND_UPPER:
            key = f"l{p} * {self.cfg.MaxTime + 1} + upper"
            return [
                f"    n = publish_memo[{key}]",
                "    if n is None:",
                f"        n = local_successor('{name}', l{p}, upper)",
                "    if n >= 0:",
                f"        append({self._edge(str(label_id), f's + ((n - l{p}) << {shift})')})",
            ]
        return [
            f"    n = memo_{name}[l{p}]",
            "    if n is None:",
            f"        n = local_successor('{name}', l{p})",
            "    if n >= 0:",
            f"        append({self._edge(str(label_id), f's + ((n - l{p}) << {shift})')})",
        ]

    # --------------------------------------------------------- properties

    def _prepare_properties(self) -> None:
        cfg = self.cfg
        self.readable_invariants = {
            name: (lambda pred: lambda s: pred(s, cfg))(pred)
            for name, pred in invariants.STATE_INVARIANTS.items()
        }
        self.readable_transitions = {
            name: (lambda pred: lambda a, b: pred(a, b, cfg))(pred)
            for name, pred in invariants.TRANSITION_PROPERTIES.items()
        }
        # name -> the components (or steps) that failed it: the checker's watch (checker.Guarded)
        self.failures = {name: [] for name in [*self.readable_invariants, *self.readable_transitions]}

    def _check_global(self, value: tuple) -> None:
        probe = assemble(value, [self.empty_local] * self.P)
        for name, holds in self.readable_invariants.items():
            if name in COMPONENT_INVARIANTS and not holds(probe):
                self.failures[name].append(("globals", value))

    def _check_local(self, value: tuple) -> None:
        probe = assemble(self.initial_globals, [value] * self.P)
        for name, holds in self.readable_invariants.items():
            if name in COMPONENT_INVARIANTS and not holds(probe):
                self.failures[name].append(("locals", value))

    def _check_step(self, before: State, after: State) -> None:
        for name, holds in self.readable_transitions.items():
            if name in COMPONENT_TRANSITION_PROPERTIES and not holds(before, after):
                self.failures[name].append((before, after))

    def invariant(self, name: str):
        """Invariant `name` on packed states: the readable predicate, called by the
        checker only once some component failed it (`checker.Guarded`)."""
        readable, decode = self.readable_invariants[name], self.decode
        if name not in COMPONENT_INVARIANTS:
            return lambda s: readable(decode(s))
        return Guarded(lambda s: readable(decode(s)), self.failures[name])

    def transition_property(self, name: str):
        """Transition property `name` on packed states, the same way as `invariant`."""
        readable, decode = self.readable_transitions[name], self.decode
        holds = lambda a, b: readable(decode(a), decode(b))  # noqa: E731
        if name not in COMPONENT_TRANSITION_PROPERTIES:
            return holds
        return Guarded(holds, self.failures[name])


def leads_to_masks(engine: Engine, states: list, pairs) -> list[tuple[bytearray, bytearray]]:
    """liveness.leads_to_masks for packed states, evaluating each predicate once per
    interned component where the pair says it reads only the globals or only its
    process's locals (`invariants.leads_to.LeadsTo`); other pairs decode every state."""
    from invariants.leads_to import GLOBALS, PROCESS

    from .liveness import leads_to_masks as by_state

    shift = engine.P * BITS
    global_ids = list(map(rshift, states, repeat(shift)))
    masks = []
    for pair in pairs:
        if pair.premise_reads != GLOBALS or pair.conclusion_reads != PROCESS:
            masks += by_state(map(engine.decode, states), [(pair.premise, pair.conclusion)])
            continue
        premise_of = bytes(pair.premise(assemble(g, [engine.empty_local] * engine.P)) for g in engine.globals)
        unmet_of = bytes(not pair.conclusion(assemble(engine.initial_globals, [loc] * engine.P))
                         for loc in engine.locals)
        local_ids = map(and_, map(rshift, states, repeat(pair.process * BITS)), repeat(MASK))
        unmet = bytearray(map(unmet_of.__getitem__, local_ids))
        triggers = bytearray(map(and_, map(premise_of.__getitem__, global_ids), unmet))
        masks.append((triggers, unmet))
    return masks


def intern(values: list, ids: dict, value) -> tuple[int, bool]:
    """The id of `value` in the intern table, and whether it is new there."""
    found = ids.get(value)
    if found is not None:
        return found, False
    if len(values) > MASK:
        raise OverflowError(f"more than {MASK} distinct components: raise fast.BITS")
    ids[value] = len(values)
    values.append(value)
    return ids[value], True


def before_globals(s: State) -> tuple:
    return tuple(getattr(s, name) for name in GLOBAL_VARIABLES)


def explore_config(cfg, *, symmetry: bool = False, fingerprints: bool = False, **options):
    """Explore `cfg` with the fast engine: the checker's `Exploration`, with states
    stored packed and decoded on demand (`run.state(id)`, `run.path(id)`), and the
    same ids, order, edges and verdicts as exploring the readable model.

    With `symmetry`, one representative per orbit of process permutations is
    explored (see symmetry.py); `run.reduction` then gives the unreduced counts,
    and paths are realised as real runs of the model. With `fingerprints`, only
    64-bit fingerprints of the states seen are kept (`checker.explore_fingerprinted`).
    """
    from . import symmetry as sym
    from .checker import explore
    from .model import successors_for

    canonical_edge, perms = None, None
    if symmetry:
        sym.refuse_unless_symmetric(cfg)
        perms = sym.Permutations(cfg.P)
        canonical_edge = sym.edge_canonicalizer(perms, BITS)
    engine = Engine(cfg, canonical_edge)
    successors, reduction, labels = engine.successors, None, engine.labels
    if symmetry:
        reduction = sym.Reduction(cfg.P, BITS)
        reduction.permutations = perms
        labels = perms.labels(engine.labels)  # edges' label ids carry the permutation applied
    search = fingerprinted_search(engine) if fingerprints else explore
    run = search(
        [engine.initial],
        successors,
        {name: engine.invariant(name) for name in engine.readable_invariants},
        {name: engine.transition_property(name) for name in engine.readable_transitions},
        labels=labels,
        decode=engine.decode,
        weigh=reduction.orbit_size if symmetry else None,  # max_states then bounds the unreduced count
        **options,
    )
    run.engine, run.reduction = engine, reduction
    if symmetry:
        run.realize = sym.realizer(engine, sym.canonicalizer(cfg.P, BITS), successors_for(cfg))
        run.realize_lasso = sym.lasso_realizer(engine, perms, instances(cfg))
    return run


def fingerprinted_search(engine):
    """`explore_fingerprinted` for this engine: packed ints fingerprinted, paths
    replayed through the engine's own successors."""
    from .checker import explore_fingerprinted
    from .fingerprints import fingerprint_int

    return partial(explore_fingerprinted, fingerprint=fingerprint_int, replay_successors=engine.successors)


def unreduced_counts(run) -> dict:
    """distinct_states and transitions as the spec counts them (unreduced), and the
    representatives explored when the search was reduced by symmetry."""
    if getattr(run, "reduction", None) is None:
        return {"distinct_states": run.distinct_states, "transitions": run.transitions}
    return {
        "distinct_states": run.weight,
        "transitions": run.weighted_transitions,
        "reduced_states": run.distinct_states,
    }
