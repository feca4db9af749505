"""A fast successor engine for one model, derived from its readable actions.

The readable model is the specification; this module only changes how
states are stored and how often the actions run. It rests on how the state
splits (the model's `Layout`):

- the *globals* and, per process, the *locals* are each interned: every
  distinct value gets a small integer id;
- a state is one Python int packing the locals' ids and the globals' id,
  `locals[0] | locals[1] << BITS | ... | globals << P*BITS`. Hashing and
  comparing it is a few machine words, not a walk over nested tuples.

Each action instance reads only part of a state (its `Footprint`): a
controller instance reads the globals and appends the same values to every
process's locals; a local instance on process p reads and writes p's locals
(and reads the few globals its footprint names); a wide instance reads and
writes its process's locals and the globals, and appends to the others. So
the readable action is run once per distinct footprint value, on a
synthetic state assembled from the components, and its effect is memoised
as component ids. Exploring a state is then table lookups and integer
arithmetic. A whole instance (a step that reads every process's locals) is
run on the decoded state, in its place in the enumeration, wherever that is;
so is an each instance (an Ingest that notifies every process by its own
locals), which the vector engine memoises per pair instead (vector/whole.py). The local instances of one family (the
label without its process: `Publish(p)`, `ReaderDowngrade(p, 0, 1)`) act alike
on their own process, so they share one memo; a sample of memo entries is
rechecked under other globals and on the family's other processes, so a
footprint that omits a global, or instances that act otherwise per process,
fail loudly instead of being memoised wrongly.

The properties the model declares `by_component` are checked the same way,
once per new component; a state or step is handed to the readable predicate
only when one of its components failed. The differential tests
(tests/test_fast.py) check that this engine yields exactly the readable
model's reachable states and edges.
"""

from __future__ import annotations

from functools import partial
from itertools import count, repeat
from operator import and_, rshift
from typing import Callable, NamedTuple, Protocol

from protocol.engine import CONTROLLER, EACH, GLOBALS, LOCAL, PROCESS, WHOLE, WIDE, Model, ModelError, Refusal, pair_permutation
from protocol.engine.checker import Exploration, Guarded, explore
from protocol.engine.cores import DISABLED, Cores

class Successor(NamedTuple):
    """One successor in the generated successor code (`Engine.successor_body`): each field
    is a Python expression over the generated function's locals, to be pasted into code."""

    label: str  # its label id (an int literal, or the name `label` in the controller's loop)
    state: str  # the packed successor
    globals_id: str | None  # its globals' id; None where the step leaves them as in `s` (`g`)
    first_locals_id: str | None  # its process 0's locals' id; None where left as in `s` (`l0`)


class Emit(Protocol):
    """What `Engine.successor_body` asks of its caller: the lines (not indented; the body
    indents them) that hand one successor on, e.g. `append((label, state))`. The lines
    run once per successor in the hot loop, so they should be a few operations."""

    def __call__(self, successor: Successor) -> list[str]: ...


class SuccessorBody(NamedTuple):
    """The generated code of `Engine.successor_body`: `lines`, indented once (a function
    body), read the packed state `s`, set `g` (its globals' id) and `l0`..`l{P-1}` (its
    processes' locals' ids), and hand every successor to the emitted lines in the
    instances' enumeration order; `namespace` binds the names they use (the engine's
    memo tables and the methods that fill them), to be given to `exec`."""

    lines: list[str]
    namespace: dict


GLOBALS_KIND, LOCALS_KIND = "globals", "locals"  # what an interning observer is told was interned

BITS = 24  # bits per interned id: up to 16.7 million distinct locals or globals
MASK = (1 << BITS) - 1
# An evaluation a helper left to the engine itself (Ellipsis: it pickles as itself).
UNEVALUATED = Ellipsis
PAIR_MEMO = 1 << 20  # pairs of component ids a by-pair invariant remembers the verdict of
FOOTPRINT_SAMPLES = 4  # reachable globals each sampled local memo entry is rechecked under


class Engine:
    """The packed-int successor function, invariants and decoder of one model."""

    def __init__(self, model: Model, canonical_edge: Callable[[int, int], tuple] | None = None):
        """`canonical_edge`, when given, maps each (label id, successor) to (the label id
        extended with the permutation applied, the successor's orbit's representative):
        symmetry reduction, see symmetry.py."""
        self.model = model
        self.canonical_edge = canonical_edge
        self.P = model.processes
        layout = model.layout
        if tuple(layout.state_type._fields) != tuple(layout.globals) + tuple(layout.locals):
            raise ValueError("the layout must list the state's fields, globals first")
        self.state_type, self.global_names, self.local_names = layout
        self.labels = model.labels
        self.initial_globals, initial_locals = self.split(model.initial_states[0])
        self.empty_local = initial_locals[0]
        self.globals: list[tuple] = []
        self.global_ids: dict = {}
        self.locals: list[tuple] = []
        self.local_ids: dict = {}
        # Called (kind, id, value) whenever a new component is interned, after the engine's
        # own tables have it (`observe_interning`).
        self.interning_observers: list[Callable[[str, int, tuple], None]] = []
        # Checks done ahead by helper processes (vector/helpers.py), taken when the value
        # is interned instead of checking it again: locals value -> the by-component
        # invariants it fails.
        self.checked: dict = {}
        self._prepare_actions(model.instances)
        self._prepare_properties()
        self.initial = self.encode(model.initial_states[0])
        self.successors = self._compile_successors()
        self.decode = self._compile_decode()

    # ----------------------------------------------------------- encoding

    def split(self, s) -> tuple[tuple, list[tuple]]:
        """A readable state as its globals and its per-process locals."""
        globals_ = tuple(getattr(s, name) for name in self.global_names)
        columns = [getattr(s, name) for name in self.local_names]
        return globals_, [tuple(column[p] for column in columns) for p in range(self.P)]

    def assemble(self, globals_: tuple, locals_: list[tuple]):
        """The readable state with these globals and these per-process locals."""
        return self.state_type(*globals_, *zip(*locals_))  # zip gives each column as a tuple

    def pack(self, g: int, local_ids: list[int]) -> int:
        packed = g << (self.P * BITS)
        for p, lid in enumerate(local_ids):
            packed |= lid << (p * BITS)
        return packed

    def unpack(self, packed: int) -> tuple[int, list[int]]:
        return packed >> (self.P * BITS), [(packed >> (p * BITS)) & MASK for p in range(self.P)]

    def _compile_decode(self) -> Callable[[int], object]:
        """decode(packed) -> state, unrolled over processes: liveness decodes every state."""
        columns = ", ".join(f"locals_[(packed >> {p * BITS}) & {MASK}]" for p in range(self.P))
        source = (
            "def decode(packed):\n"
            "    \"\"\"The readable state a packed int stands for.\"\"\"\n"
            f"    return make(State, (*globals_[packed >> {self.P * BITS}], *zip({columns})))\n"
        )
        namespace = {"make": tuple.__new__, "State": self.state_type, "globals_": self.globals,
                     "locals_": self.locals}
        exec(source, namespace)
        return namespace["decode"]

    def encode(self, s) -> int:
        globals_, locals_ = self.split(s)
        return self.pack(self.intern_global(globals_), [self.intern_local(loc) for loc in locals_])

    def observe_interning(self, observer: Callable[[str, int, tuple], None]) -> None:
        """Have `observer(kind, id, value)` called for every component interned from now on
        (kind GLOBALS_KIND or LOCALS_KIND), e.g. to name components across processes."""
        self.interning_observers.append(observer)

    def intern_global(self, value: tuple) -> int:
        gid, new = intern(self.globals, self.global_ids, value)
        if new:
            for memo in self.controller_memos:
                memo.append(None)
            for family, positions in self.local_reads.items():
                self.projection_of[family].append(self._projection(family, value, positions))
            self._check_global(value)
            for observe in self.interning_observers:
                observe(GLOBALS_KIND, gid, value)
        return gid

    def local_successor_at(self, family, lid: int, globals_: tuple) -> int:
        """`local_successor` under globals values `globals_`, interned or not (validate asks
        what a step does at a value of a global no state it holds has)."""
        projection = self._projection(family, globals_, self.local_reads[family])
        found = self.local_memos[family][projection][lid]
        return self.local_successor(family, lid, projection) if found is None else found

    def _projection(self, family, value: tuple, positions: tuple) -> int:
        """The id of what instance family `family` reads of globals `value`; a new one gets its memo row."""
        pid, new = intern(self.projections[family], self.projection_ids[family], tuple(value[i] for i in positions))
        if new:
            self.local_memos[family].append([None] * len(self.locals))
        return pid

    def intern_local(self, value: tuple) -> int:
        lid, new = intern(self.locals, self.local_ids, value)
        if new:
            for rows in self.local_memos.values():
                for row in rows:
                    row.append(None)
            self._check_local(value)
            for observe in self.interning_observers:
                observe(LOCALS_KIND, lid, value)
        return lid

    # ------------------------------------------------------------ actions

    def _prepare_actions(self, instances) -> None:
        """Sort the action instances by footprint, keeping the enumeration order.

        A local instance's effect is memoised per *family* (its label without the
        process, `family_of`): every instance of a family acts alike on its own process,
        so the memo is computed on the family's first instance and shared by the others
        (`local_successor` samples that it is). Each family has its own memo, however
        many instances an action has per process."""
        # In enumeration order: ("memo", segment index) for a run of memoised controller
        # instances, ("whole", (label id, step)) for an instance run on the decoded state,
        # ("process", index into process_order) for a local or wide instance.
        self.controller_segments: list[list] = []  # segment index -> [(label id, step)]
        self.order: list[tuple] = []
        # (label id, step, kind, p, family) of each local or wide instance, in enumeration order
        self.process_order: list[tuple] = []
        self.local_instances: dict = {}  # family -> (p, step) of its first local instance
        self.family_steps: dict = {}  # family -> {p: step}, each process's instance
        self.local_reads: dict = {}  # family -> positions of the globals it reads
        self.core_memos: dict = {}  # family -> its Cores, where its footprint leaves locals untouched
        for label_id, instance in enumerate(instances):
            kind = instance.footprint.kind
            if kind in (WHOLE, EACH):  # an each instance too: run whole, it is exact
                self.order.append(("whole", (label_id, instance.step)))
            elif kind == CONTROLLER:
                if not self.order or self.order[-1][0] != "memo":
                    self.order.append(("memo", len(self.controller_segments)))
                    self.controller_segments.append([])
                self.controller_segments[-1].append((label_id, instance.step))
            else:
                family = family_of(instance.label)
                self.order.append(("process", len(self.process_order)))
                self.process_order.append((label_id, instance.step, kind, instance.process, family))
                if kind == LOCAL:
                    self.family_steps.setdefault(family, {})[instance.process] = instance.step
                    if family not in self.local_instances:  # memoised for every process
                        self.local_instances[family] = (instance.process, instance.step)
                        self.local_reads[family] = tuple(self.global_names.index(g) for g in instance.footprint.reads)
                        if instance.footprint.untouched:
                            self.core_memos[family] = Cores(self.local_names, instance.footprint.untouched,
                                                            family_text(family), intern)
            self._check_untouched(instance)
            ceiling_problem = self._ceiling_problem(instance.footprint)
            if ceiling_problem:
                raise ModelError(f"{instance.label} {ceiling_problem}")
        # segment index -> global id -> [(label id, next global id, append id)]
        self.controller_memos: list[list] = [[] for _ in self.controller_segments]
        # family -> projection id -> local id -> next local id, or -1 where disabled
        self.local_memos: dict = {family: [] for family in self.local_reads}
        self.projections: dict = {family: [] for family in self.local_reads}
        self.projection_ids: dict = {family: {} for family in self.local_reads}
        self.projection_of: dict = {family: [] for family in self.local_reads}  # global id -> projection id
        for family, positions in self.local_reads.items():  # every memo has at least row 0
            self._projection(family, self.initial_globals, positions)
        self.reading: dict = {}  # (family, projection id) -> the globals a local step of it runs under
        self.wide_memo: dict = {}  # (wide index, global id, local id) -> (next global, next local, append id) or None
        self.wide_steps = [entry for entry in self.process_order if entry[2] == WIDE]
        nothing = tuple(() for _ in self.local_names)
        self.appends: list[tuple] = [nothing]  # append id -> per local field, what is appended
        self.append_ids: dict = {nothing: 0}
        self.appended: list[dict] = [{}]  # append id -> {local id: local id with it appended}

    def _check_untouched(self, instance) -> None:
        """A local footprint's untouched variables are locals (cores.py checks them); a
        controller's are globals, which validate's engine splits by (log_engine.py); no
        other footprint may name any."""
        untouched, kind = instance.footprint.untouched, instance.footprint.kind
        if not untouched or kind == LOCAL:
            return
        if kind != CONTROLLER:
            raise ModelError(f"{instance.label} declares untouched variables, which only a local or controller "
                             "footprint may: remove `untouched` from its footprint")
        unknown = [name for name in untouched if name not in self.global_names]
        if unknown:
            raise ModelError(f"{instance.label} leaves {unknown[0]!r} untouched, which is not a global variable: "
                             f"name only some of {', '.join(self.global_names)}")

    @staticmethod
    def _ceiling_problem(footprint) -> str | None:
        """What is wrong with a footprint's `ceiling`, with the fix; None where nothing is."""
        if not footprint.ceiling:
            return None
        if footprint.kind != LOCAL:
            return "declares a ceiling, which only a local footprint may: remove `ceiling` from its footprint"
        if len(footprint.ceiling) != 2 or not callable(footprint.ceiling[1]):
            return "declares a ceiling that is not (a global it reads, a bound): give it as (name, function)"
        if footprint.ceiling[0] not in footprint.reads:
            return (f"declares a ceiling on {footprint.ceiling[0]!r}, which its footprint does not read: "
                    "name a global among its reads")
        return None

    def controller_successors(self, segment: int, g: int) -> list:
        """The enabled steps of one segment of the controller's instances from globals g:
        (label id, next globals, appended)."""
        before = self.assemble(self.globals[g], [self.empty_local] * self.P)
        found = []
        for label_id, step in self.controller_segments[segment]:
            after = step(before)
            if after is None:
                continue
            self._check_step(before, after)
            next_globals, next_locals = self.split(after)
            appended = self._appended(next_locals)
            found.append((label_id, self.intern_global(next_globals), appended))
        self.controller_memos[segment][g] = found
        return found

    def whole_successor(self, step: Callable, s: int) -> int | None:
        """A whole instance from packed state s: the packed successor, or None if disabled."""
        before = self.decode(s)
        after = step(before)
        if after is None:
            return None
        self._check_step(before, after)
        return self.encode(after)

    def each_successor(self, step: Callable, g: int, lid: int) -> tuple | None:
        """An each instance (engine.EACH) from globals g with every process's locals lid:
        (next globals, each process's next locals), ids, or None where it is disabled."""
        before = self.assemble(self.globals[g], [self.locals[lid]] * self.P)
        after = step(before)
        if after is None:
            return None
        self._check_step(before, after)
        next_globals, next_locals = self.split(after)
        return self.intern_global(next_globals), [self.intern_local(local) for local in next_locals]

    def _appended(self, next_locals: list[tuple]) -> int:
        """The id of what a step appended alike to every process's locals, each of which
        was `empty_local` before (a local field that changed must have grown at its end)."""
        first = next_locals[0]
        if any(loc != first for loc in next_locals):
            raise AssertionError("a controller step did not append alike to every process")
        suffixes = []
        for base, now in zip(self.empty_local, first):
            if now == base:
                suffixes.append(())
            elif isinstance(base, tuple) and isinstance(now, tuple) and now[:len(base)] == base:
                suffixes.append(now[len(base):])
            else:
                raise AssertionError("a controller step did more than append to every process's queues")
        key = tuple(suffixes)
        found = self.append_ids.get(key)
        if found is None:
            found = self.append_ids[key] = len(self.appends)
            self.appends.append(key)
            self.appended.append({})
        return found

    def append_to(self, append_id: int, lid: int) -> int:
        """Local lid with what `append_id` stands for appended to it."""
        found = self.appended[append_id].get(lid)
        if found is None:
            found = self.appended[append_id][lid] = self.intern_local(self.appended_value(append_id, lid))
        return found

    def appended_value(self, append_id: int, lid: int) -> tuple:
        """The value of local lid with what `append_id` stands for appended to it."""
        return tuple(value + extra if extra else value for value, extra in zip(self.locals[lid], self.appends[append_id]))

    def _globals_reading(self, family, projection: int, globals_: tuple | None = None) -> tuple:
        """`globals_` (the initial globals by default) with what `family` reads set to `projection`."""
        return with_values(self.initial_globals if globals_ is None else globals_, self.local_reads[family],
                           self.projections[family][projection])

    def local_successor(self, family, lid: int, projection: int = 0, next_local=UNEVALUATED) -> int:
        """The next local of a process after an instance of `family` on it from local lid,
        under the globals it reads given by `projection`, or -1 when disabled. The same for
        every process whose instance is local, so it is computed once, on the first such process.
        (`next_local`: what `local_next` answers, where a helper evaluated it.)"""
        found = self._known_by_core(family, lid, projection) if next_local is UNEVALUATED else None
        if found is None:
            if next_local is UNEVALUATED:
                next_local = self.local_next(family, lid, projection)
            found = -1 if next_local is None else self.intern_local(next_local)
        if lid & (lid - 1) == 0:  # a sample of locals, ever sparser: the hot path never pays
            self._check_footprint(family, lid, projection, found)
            self._check_alike(family, lid, self._reading(family, projection), found)
        self.local_memos[family][projection][lid] = found
        return found

    def _known_by_core(self, family, lid: int, projection: int) -> int | None:
        """`local_successor` where the family's core memo knows the step from lid's core, with
        lid's untouched values put back; None where it does not, or lid is one of the sample
        that `local_next` runs regardless."""
        cores = self.core_memos.get(family)
        if cores is None:
            return None
        core, rest = cores.parts_of(lid, self.locals[lid])
        known = cores.memo.get((projection, core))
        if known is None or lid & (lid - 1) == 0:
            return None
        if known == DISABLED:
            return -1
        found = cores.joined.get((known, rest))
        if found is None:
            found = cores.joined[(known, rest)] = self.intern_local(cores.value(known, rest))
        return found

    def local_next(self, family, lid: int, projection: int, record: bool = True):
        """What `local_successor` interns: the next local of the family's memo process, or
        None where the step is disabled. It records the by-component transition properties
        the step fails, and raises where the step writes outside its process's locals;
        with `record` false (a helper's evaluation, which leaves the engine as it was) it
        answers UNEVALUATED there instead, and the recording engine runs the step again.

        A family whose footprint leaves some locals untouched runs once per value of the
        others (its core, cores.py). So that this is never silently wrong, every step run
        must leave the untouched values as they were, and locals at a sample of ids (ever
        sparser) are run even where their core is known, and must agree with the memo."""
        cores = self.core_memos.get(family)
        if cores is None:
            return self._local_next(family, lid, projection, record)[0]
        core, rest = cores.parts_of(lid, self.locals[lid])
        known = cores.memo.get((projection, core))
        if known is not None and lid & (lid - 1):
            return None if known == DISABLED else cores.value(known, rest)
        found, failing = self._local_next(family, lid, projection, record)
        if found is not UNEVALUATED:
            cores.learn((projection, core), rest, found, failing)
        return found

    def _local_next(self, family, lid: int, projection: int, record: bool) -> tuple:
        """`local_next` run: (its answer, the transition properties the step fails)."""
        p, step = self.local_instances[family]
        globals_ = self._reading(family, projection)
        local = self.locals[lid]
        before = self.assemble(globals_, [local] * self.P)
        after = step(before)
        if after is None:
            return None, []
        failing = self._check_step(before, after) if record else self._failing_step(before, after)
        if failing and not record:
            return UNEVALUATED, failing
        next_globals, next_locals = self.split(after)
        if next_globals != globals_ or any(next_locals[q] != local for q in range(self.P) if q != p):
            if not record:
                return UNEVALUATED, failing
            raise ModelError(f"{family_text(family)} wrote outside its process's locals: "
                             "give it a wide footprint")
        return next_locals[p], failing

    def _reading(self, family, projection: int) -> tuple:
        """The globals a local step of `family` under `projection` runs on (memoised)."""
        globals_ = self.reading.get((family, projection))
        if globals_ is None:
            globals_ = self.reading[(family, projection)] = self._globals_reading(family, projection)
        return globals_

    def _check_alike(self, family, lid: int, globals_: tuple, found: int) -> None:
        """Fail loudly if the instances of one family act otherwise on their own processes
        (the memo computed on the first would then be wrong for the others)."""
        expected = None if found < 0 else self.locals[found]
        local = self.locals[lid]
        for q, step in self.family_steps[family].items():
            after = step(self.assemble(globals_, [local] * self.P))
            if (None if after is None else self.split(after)[1][q]) != expected:
                first = self.local_instances[family][0]
                raise ModelError(f"{family_text(family)} acts otherwise on process {q} than on process {first} "
                                 "from the same locals: give the instances that differ their own label "
                                 "arguments, or a wide footprint")

    def _check_footprint(self, family, lid: int, projection: int, found: int) -> None:
        """Fail loudly if `name` reads a global its footprint does not name: the memo ran
        it on the initial globals (but for those it reads), so rerun it on the globals
        most recently reached, with the same read ones, and demand the same next local."""
        expected = None if found < 0 else self.locals[found]
        memoised = self._globals_reading(family, projection)
        for globals_ in self.globals[-FOOTPRINT_SAMPLES:]:
            globals_ = self._globals_reading(family, projection, globals_)
            if self._local_after(family, lid, globals_) != expected:
                raise ModelError(self._footprint_breach(family, lid, memoised, globals_, expected))

    def _local_after(self, family, lid: int, globals_: tuple):
        """The next local of the process `family`'s memo runs on, from local lid under `globals_`."""
        p, step = self.local_instances[family]
        after = step(self.assemble(globals_, [self.locals[lid]] * self.P))
        return None if after is None else self.split(after)[1][p]

    def _footprint_breach(self, family, lid: int, memoised: tuple, other: tuple, expected) -> str:
        """One line naming the global `family` reads outside its footprint: the first whose
        value alone, changed from `memoised` to `other`, changes what `family` does."""
        name = family_text(family)
        differing = [i for i, (a, b) in enumerate(zip(memoised, other)) if a != b]
        for i in differing:
            probe = memoised[:i] + (other[i],) + memoised[i + 1:]
            if self._local_after(family, lid, probe) != expected:
                variable = self.global_names[i]
                return (f"{name} reads the global {variable} outside its footprint (it acts otherwise with "
                        f"{variable} = {other[i]!r} than with {memoised[i]!r}): add {variable!r} to its footprint's reads")
        names = ", ".join(self.global_names[i] for i in differing)
        return f"{name} reads globals outside its footprint (some of {names}): add them to its footprint's reads"

    def wide_successor(self, label_index: int, g: int, lid: int):
        """A wide instance: (next globals, next local of its process, append id to the others) or None."""
        label_id, step, _kind, p, _family = self.wide_steps[label_index]
        locals_ = [self.empty_local] * self.P
        locals_[p] = self.locals[lid]
        before = self.assemble(self.globals[g], locals_)
        after = step(before)
        found = None
        if after is not None:
            self._check_step(before, after)
            next_globals, next_locals = self.split(after)
            others = next_locals[:p] + next_locals[p + 1:] or [self.empty_local]
            found = (self.intern_global(next_globals), self.intern_local(next_locals[p]), self._appended(others))
        self.wide_memo[(label_index, g, lid)] = found
        return found

    def _compile_successors(self) -> Callable[[int], list]:
        """Generate the successor function for this P, unrolled over processes.

        It yields the successors in the enumeration order of the instances, whatever
        their footprints (so the search picks the readable model's shortest trace)."""
        lines, namespace = self.successor_body(lambda successor: [f"append({self._edge(successor.label, successor.state)})"])
        source = ["def successors(s):", "    out = []", "    append = out.append",
                  *lines, "    return out"]
        exec("\n".join(source), namespace)
        return namespace["successors"]

    def successor_body(self, emit: Emit) -> SuccessorBody:
        """The generated code that computes every successor of the packed state `s`, in
        the instances' enumeration order, handing each to the lines `emit(Successor(...))`
        returns (see `SuccessorBody` for what the lines read and set, `Successor` for
        the expressions each successor is given by). The sequential search's successor
        function and a partition's expansion loop (partition.py) are both built on it."""
        P = self.P
        lines = [f"    g = s >> {P * BITS}", f"    rest = s & {(1 << (P * BITS)) - 1}"]
        lines += [f"    l{p} = (s >> {p * BITS}) & {MASK}" for p in range(P)]
        namespace = {
            "controller_successors": self.controller_successors, "whole_successor": self.whole_successor,
            "appended": self.appended, "append_to": self.append_to,
            "local_successor": self.local_successor,
            "wide_memo": self.wide_memo, "wide_successor": self.wide_successor,
            "canonical_edge": self.canonical_edge,
        }
        families = {family: index for index, family in enumerate(self.local_reads)}
        rows_read = set()  # the families whose memo row for this state's globals is read already
        for kind, which in self.order:  # the enumeration order, whatever the footprints
            if kind == "whole":
                label_id, step = which
                namespace[f"whole_{label_id}"] = step
                lines += [f"    whole = whole_successor(whole_{label_id}, s)",
                          "    if whole is not None:",
                          *indent(emit(Successor(str(label_id), "whole", f"(whole >> {P * BITS})",
                                                 f"(whole & {MASK})")), 8)]
            elif kind == "memo":
                namespace[f"controller_memo_{which}"] = self.controller_memos[which]
                lines += self._controller_segment_lines(which, emit)
            else:
                label_id, _step, step_kind, p, family = self.process_order[which]
                if step_kind == WIDE:
                    lines += self._wide_step_lines(self.wide_steps.index(self.process_order[which]), p, label_id, emit)
                    continue
                index = families[family]
                if index not in rows_read:
                    rows_read.add(index)
                    lines += self._family_row_lines(index, family, namespace)
                lines += self._local_step_lines(index, bool(self.local_reads[family]), p, label_id, emit)
        return SuccessorBody(lines, namespace)

    def _family_row_lines(self, index: int, family, namespace: dict) -> list[str]:
        """Bind family `index`'s memo, and the line that picks its row for this state's globals."""
        namespace[f"family_{index}"] = family
        namespace[f"memo_{index}"] = self.local_memos[family]
        namespace[f"projection_{index}"] = self.projection_of[family]
        namespace[f"row_{index}"] = self.local_memos[family][0]  # the only row where nothing is read
        return [f"    row_{index} = memo_{index}[projection_{index}[g]]"] if self.local_reads[family] else []

    def _controller_segment_lines(self, segment: int, emit: Emit) -> list[str]:
        """The lines that emit one segment's memoised controller steps from globals g."""
        P = self.P
        lines = [
            f"    steps = controller_memo_{segment}[g]",
            "    if steps is None:",
            f"        steps = controller_successors({segment}, g)",
            "    for label, g2, app in steps:",
            "        if app:",
            "            table = appended[app]",
        ]
        for p in range(P):
            lines += [f"            n{p} = table.get(l{p})",
                      f"            if n{p} is None:",
                      f"                n{p} = append_to(app, l{p})"]
        packed_locals = " | ".join(f"(n{p} << {p * BITS})" for p in range(P))
        return lines + [*indent(emit(Successor("label", f"(g2 << {P * BITS}) | {packed_locals}", "g2", "n0")), 12),
                        "        else:",
                        *indent(emit(Successor("label", f"(g2 << {P * BITS}) | rest", "g2", None)), 12)]

    def _edge(self, label: str, state: str) -> str:
        """The (label id, successor) pair, mapped to its orbit's representative (and the
        label to the permutation applied) when reducing by symmetry."""
        return f"({label}, {state})" if self.canonical_edge is None else f"canonical_edge({label}, {state})"

    def _wide_step_lines(self, wide: int, p: int, label_id: int, emit: Emit) -> list[str]:
        """The lines that emit wide instance number `wide` (on process p) from globals g."""
        shift = p * BITS
        others = [q for q in range(self.P) if q != p]
        packed_others = " | ".join(f"(m{q} << {q * BITS})" for q in others) or "0"
        return [
            f"    found = wide_memo.get(({wide}, g, l{p}), 0)",
            "    if found == 0:",
            f"        found = wide_successor({wide}, g, l{p})",
            "    if found is not None:",
            "        g2, n, app = found",
            *[f"        m{q} = append_to(app, l{q})" for q in others],
            *indent(emit(Successor(str(label_id), f"(g2 << {self.P * BITS}) | (n << {shift}) | {packed_others}",
                                   "g2", "n" if p == 0 else "m0")), 8),
        ]

    def _local_step_lines(self, index: int, reads_globals: bool, p: int, label_id: int, emit: Emit) -> list[str]:
        """The lines that emit a local instance of family `index` on process p, through its memo."""
        shift = p * BITS
        projection = f"projection_{index}[g]" if reads_globals else "0"
        return [
            f"    n = row_{index}[l{p}]",
            "    if n is None:",
            f"        n = local_successor(family_{index}, l{p}, {projection})",
            "    if n >= 0:",
            *indent(emit(Successor(str(label_id), f"s + ((n - l{p}) << {shift})", None, "n" if p == 0 else None)), 8),
        ]

    # --------------------------------------------------------- properties

    def _prepare_properties(self) -> None:
        self.readable_invariants = dict(self.model.invariants)
        self.readable_transitions = dict(self.model.transition_properties)
        self.by_component = self.model.by_component
        # name -> the components (or steps) that failed it: the checker's watch (checker.Guarded)
        self.failures = {name: [] for name in [*self.readable_invariants, *self.readable_transitions]}

    def _check_global(self, value: tuple) -> None:
        probe = self.assemble(value, [self.empty_local] * self.P)
        for name, holds in self.readable_invariants.items():
            if name in self.by_component and not holds(probe):
                self.failures[name].append(("globals", value))

    def _check_local(self, value: tuple) -> None:
        failing = self.checked.pop(value, None) if self.checked else None
        for name in self.failing_local(value) if failing is None else failing:
            self.failures[name].append(("locals", value))

    def failing_local(self, value: tuple) -> tuple:
        """The by-component invariants locals `value` fails (on every process, under the initial globals)."""
        probe = self.assemble(self.initial_globals, [value] * self.P)
        return tuple(name for name, holds in self.readable_invariants.items()
                     if name in self.by_component and not holds(probe))

    def _check_step(self, before, after) -> list:
        """Record the step's failures of the by-component transition properties; they are answered."""
        failing = self._failing_step(before, after)
        for name in failing:
            self.failures[name].append((before, after))
        return failing

    def _failing_step(self, before, after) -> list:
        return [name for name, holds in self.readable_transitions.items()
                if name in self.by_component and not holds(before, after)]

    def invariant(self, name: str):
        """Invariant `name` on packed states: the readable predicate, called by the
        checker only once some component failed it (`checker.Guarded`), or once per
        pair of globals and one process's locals (`Model.by_pair`)."""
        readable, decode = self.readable_invariants[name], self.decode
        if name in self.model.by_pair:
            return self._by_pair(readable)
        if name not in self.by_component:
            return lambda s: readable(decode(s))
        return Guarded(lambda s: readable(decode(s)), self.failures[name])

    def _by_pair(self, readable) -> Callable[[int], bool]:
        """A conjunction over the processes of checks on (globals, one process's locals),
        on packed states: each pair of component ids is checked once, on a state whose
        every process has those locals (the memo is emptied when it grows past PAIR_MEMO,
        bounding its memory on wide searches)."""
        memo: dict = {}
        shift, P, assemble, globals_, locals_ = self.P * BITS, self.P, self.assemble, self.globals, self.locals

        def holds(s: int) -> bool:
            g = s >> shift
            for p in range(P):
                lid = (s >> (p * BITS)) & MASK
                key = (g << BITS) | lid
                ok = memo.get(key)
                if ok is None:
                    if len(memo) >= PAIR_MEMO:
                        memo.clear()
                    ok = memo[key] = readable(assemble(globals_[g], [locals_[lid]] * P))
                if not ok:
                    return False
            return True

        return holds

    def transition_property(self, name: str):
        """Transition property `name` on packed states, the same way as `invariant`."""
        readable, decode = self.readable_transitions[name], self.decode
        holds = lambda a, b: readable(decode(a), decode(b))  # noqa: E731
        if name not in self.by_component:
            return holds
        return Guarded(holds, self.failures[name])


def leads_to_masks(engine: Engine, states: list, pairs) -> list[tuple[bytearray, bytearray]]:
    """liveness.leads_to_masks for packed states, evaluating each predicate once per
    interned component where the pair says it reads only the globals or only its
    process's locals (`engine.LeadsTo`); other pairs decode every state."""
    from protocol.engine.liveness import leads_to_masks as by_state

    shift = engine.P * BITS
    global_ids = list(map(rshift, states, repeat(shift)))
    masks = []
    for pair in pairs:
        if pair.premise_reads != GLOBALS or pair.conclusion_reads != PROCESS:
            masks += by_state(map(engine.decode, states), [(pair.premise, pair.conclusion)])
            continue
        premise_of = bytes(pair.premise(engine.assemble(g, [engine.empty_local] * engine.P))
                           for g in engine.globals)
        unmet_of = bytes(not pair.conclusion(engine.assemble(engine.initial_globals, [loc] * engine.P))
                         for loc in engine.locals)
        local_ids = map(and_, map(rshift, states, repeat(pair.process * BITS)), repeat(MASK))
        unmet = bytearray(map(unmet_of.__getitem__, local_ids))
        triggers = bytearray(map(and_, map(premise_of.__getitem__, global_ids), unmet))
        masks.append((triggers, unmet))
    return masks


def family_of(label) -> tuple:
    """The instance family of a per-process instance: its label without the process (its
    first argument). `Publish(1)` and `Publish(0)` are one family; `ReaderDowngrade(0, 0, 1)`
    and `ReaderDowngrade(0, 0, 2)` are two."""
    return (label.name, *label.args[1:])


def family_text(family: tuple) -> str:
    """A family as a reader names it: `Publish`, or `ReaderDowngrade(p, 0, 1)`."""
    name, *rest = family
    return name if not rest else f"{name}(p, {', '.join(map(str, rest))})"


def indent(lines: list[str], spaces: int) -> list[str]:
    return [" " * spaces + line for line in lines]


def with_values(values: tuple, positions, replaced) -> tuple:
    """`values` with the entries at `positions` replaced, in order, by `replaced`."""
    found = list(values)
    for position, value in zip(positions, replaced):
        found[position] = value
    return tuple(found)


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


class ReducedLiveness:
    """What deciding liveness asks of a run reduced by symmetry (its `permutations` set,
    see symmetry.py), shared by the engines: each pair followed through the permutation
    every edge applied (`liveness.find_violation_reduced`), a representative's premises
    standing for its orbit's, lassos realised as real runs (`lasso_realizer`)."""

    permutations = None
    lasso_realizer = None

    def orbit_premises(self, name: str, pairs, reached: tuple) -> tuple:
        """A representative stands for its orbit: pair j is reached where any pair
        its orbit's renamings send it to is reached on a representative."""
        maps = self._pair_maps(name, pairs)
        return tuple(any(reached[mapping[j]] for mapping in maps) for j in range(len(pairs)))

    def reduced_violation(self, decide: Callable, name: str, pairs):
        """`decide(symmetry)` (a liveness.Symmetry for these labels and pairs), with a
        stall that may go round a cycle of the reduced graph refused in one line."""
        from protocol.engine.liveness import QuotientCycle, Symmetry

        perms = self.permutations
        symmetry = Symmetry([perms.split(label)[1] for label in range(len(self.labels))],
                            self._pair_maps(name, pairs))
        try:
            return decide(symmetry)
        except QuotientCycle:
            raise Refusal(f"{name} under --symmetry: a stall may go round a cycle of the reduced graph, "
                          "where one state per orbit cannot judge fairness; drop --symmetry") from None

    def _pair_maps(self, name: str, pairs) -> list:
        """Where each renaming of the processes sends each pair (a refusal where the
        pairs do not permute with the processes)."""
        try:
            return [pair_permutation(pairs, rename) for rename in self.permutations.renames]
        except ValueError as error:
            raise Refusal(f"{name} under --symmetry: {error}; drop --symmetry") from None

    def realized_lasso(self, lasso, packed_state: Callable[[int], int]) -> tuple[list, object]:
        """The lasso over representatives' ids as the real run it stands for, and its back label."""
        steps, _ = self.lasso_realizer([(label, packed_state(state_id)) for label, state_id in lasso.steps])
        return steps, None if lasso.back is None else self.labels[lasso.back]


class PackedExploration(ReducedLiveness, Exploration):
    """The `Run` of the packed engine: states stored packed and decoded on demand, the
    leads-to masks and premises evaluated per interned component where a pair allows.

    With a `reduction` (symmetry, see symmetry.py) the stored states are one
    representative per orbit: the counts are the unreduced ones (the checker
    weighs each state by its orbit), paths are realised as real runs, and
    liveness follows each pair through the permutation every edge applied
    (`ReducedLiveness`)."""

    def __init__(self, engine: Engine, reduction=None, permutations=None, lasso_realizer=None,
                 realize: Callable | None = None):
        super().__init__(realize)
        self.engine = engine
        self.reduction = reduction
        self.permutations = permutations
        self.lasso_realizer = lasso_realizer

    def pair_masks(self, name: str, pairs) -> list:
        return leads_to_masks(self.engine, self.states, pairs)

    def premises_reached(self, name: str, pairs, masks) -> tuple:
        reached = premises_reached(self.engine, self.states, pairs, masks)
        return reached if self.reduction is None else self.orbit_premises(name, pairs, reached)

    def find_violation(self, graph, initial, masks, name: str, pairs):
        if self.reduction is None:
            return super().find_violation(graph, initial, masks, name, pairs)
        from protocol.engine import liveness

        return self.reduced_violation(
            lambda symmetry: liveness.find_violation_reduced(graph, initial, masks, symmetry), name, pairs)

    def lasso_steps(self, lasso) -> tuple[list, object]:
        if self.reduction is None:
            return super().lasso_steps(lasso)
        return self.realized_lasso(lasso, self.states.__getitem__)


def premises_reached(engine: Engine, states: list, pairs, masks) -> tuple:
    """Per pair, whether its premise holds in one of the packed `states`: a trigger in its
    masks is one; else, for a premise on the globals, some interned globals among the
    states' that satisfy it; else some decoded state."""
    from protocol.engine.interface import any_premise

    reached = [any(triggers) for triggers, _ in masks]
    unsettled = [i for i, found in enumerate(reached) if not found]
    if any(pairs[i].premise_reads == GLOBALS for i in unsettled):
        global_ids = set(map(rshift, states, repeat(engine.P * BITS)))
        for i in [i for i in unsettled if pairs[i].premise_reads == GLOBALS]:
            reached[i] = any(pairs[i].premise(engine.assemble(engine.globals[g], [engine.empty_local] * engine.P))
                             for g in global_ids)
    decoded = [i for i in unsettled if pairs[i].premise_reads != GLOBALS]
    if decoded:
        found = any_premise(map(engine.decode, states), [pairs[i] for i in decoded], [(b"", b"")] * len(decoded))
        for i, answer in zip(decoded, found):
            reached[i] = answer
    return tuple(reached)


def explore_model(model: Model, *, symmetry: bool = False, fingerprints: bool = False,
                  expand_at_most: int | None = None, **options) -> Exploration:
    """Explore `model` with the fast engine: a `PackedExploration` (a `FingerprintedExploration`
    with `fingerprints`), with states stored packed and decoded on demand (`run.state(id)`,
    `run.path(id)`), and the same ids, order, edges and verdicts as exploring the readable model.
    With `expand_at_most`, only that many states (the first, in id order) are expanded: the
    levels before a given depth, where the partitioned search finds one worker's traces again.

    With `symmetry`, one representative per orbit of process permutations is
    explored (see symmetry.py); the run's counts are then the unreduced ones,
    and paths are realised as real runs of the model. With `fingerprints`, only
    64-bit fingerprints of the states seen are kept (`checker.explore_fingerprinted`).
    """
    from protocol.engine import symmetry as sym

    canonical_edge, perms, realize, step_target = None, None, None, None
    if symmetry:
        model.refuse_unless_symmetric()
        perms = sym.Permutations(model.processes)
        canonical_edge = sym.edge_canonicalizer(perms, BITS)
    engine = Engine(model, canonical_edge)
    labels, weigh = engine.labels, None
    if symmetry:
        reduction = sym.Reduction(model.processes, BITS)
        labels = perms.labels(engine.labels)  # edges' label ids carry the permutation applied
        weigh = reduction.orbit_size  # max_states then bounds the unreduced count
        realize = sym.realizer(engine, sym.canonicalizer(model.processes, BITS), model.successors)
        step_target = sym.step_target(engine, perms)
    invariants = {name: engine.invariant(name) for name in engine.readable_invariants}
    transitions = {name: engine.transition_property(name) for name in engine.readable_transitions}
    if fingerprints:
        return fingerprinted_search(engine)([engine.initial], engine.successors, invariants, transitions,
                                            labels=labels, decode=engine.decode, weigh=weigh, realize=realize,
                                            step_target=step_target, **options)
    run = PackedExploration(engine, reduction if symmetry else None, perms,
                            sym.lasso_realizer(engine, perms, model.instances) if symmetry else None, realize)
    successors = engine.successors if expand_at_most is None else at_most(engine.successors, expand_at_most)
    return explore([engine.initial], successors, invariants, transitions, labels=labels,
                   decode=engine.decode, weigh=weigh, run=run, step_target=step_target, **options)


def at_most(successors: Callable, expansions: int) -> Callable:
    """`successors` for the first `expansions` states it is asked about, none for the rest."""
    asked = count(1)
    return lambda packed: successors(packed) if next(asked) <= expansions else ()


def fingerprinted_search(engine):
    """`explore_fingerprinted` for this engine: packed ints fingerprinted, paths
    replayed through the engine's own successors."""
    from protocol.engine.checker import explore_fingerprinted
    from protocol.engine.fingerprints import fingerprint_int

    return partial(explore_fingerprinted, fingerprint=fingerprint_int, replay_successors=engine.successors)


def unreduced_counts(run) -> dict:
    """distinct_states and transitions as the spec counts them (unreduced), and the
    representatives explored when the search was reduced by symmetry."""
    counts = run.counts()
    found = {"distinct_states": counts.distinct_states, "transitions": counts.transitions}
    if counts.reduced_states is not None:
        found["reduced_states"] = counts.reduced_states
    return found
