"""Trace validation by components: the states that fit a log, kept as products of per-process sets.

The silent actions a recorder cannot see are mostly the runtimes' own steps, each of which
reads and writes one process's locals (and reads a few globals). Between two logged events
any number of them may happen on every process, so the states that fit are, for each
globals value, every combination of what each process may have done: a product. This
search keeps that product as it is (a `Cell`: a set of globals ids and, per process, a set
of local ids), closes each process's set under its own silent steps apart, and multiplies
nothing out. A controller step maps a cell's globals and appends alike to every local; an
observation filters the globals and each process's set; a wide step (one that reads and
writes the globals and its process's locals) splits a cell by the globals it reaches. The count of
states is exact (a union of products, counted without listing it).

A cell holds several globals values where the same sets fit each: a silent controller step
that appends nothing (`Ingest` without a tap) moves the globals alone, so the values a run
of it reaches join the cell they start from (`_spread`) rather than each making a cell, and
a step, an observation or the closure splits the cell only where its globals values make
the sets differ (`split`; past a ceiling, by comparing the value the ceiling bounds).

A frontier the schema marks as rising never falls (NoRegression), so a state whose frontier has
passed the value the log shows of it next cannot meet that observation: the cells and local ids
that have passed it are dropped as soon as they appear (`Lookahead`), not carried to it. With
`Ingest` silent, every value of `upper` up to MaxTime would otherwise be a product of its own
until the next `upper` the log shows. That rests on NoRegression: every step taken is checked
not to lower a rising frontier, and the exact search decides the log where one does.

It answers where its answer is plain: the log is a behaviour and, on every state and step
the log can reach (every state held after each event, not only those on the way to its end:
judging more only sends a log to the exact search), no property can fail. That is decided per component too: each globals
and local value is checked once by the properties declared a conjunction over components
(`by_component`), each pair of globals and one process's locals by those declared `by_pair`;
a liveness pair is pending only where its premise holds and its conclusion does not, as
long as no step the log can take makes a premise false again (checked on every step, by
the pair's form for a family such as CompactionNotStalled's, never listing its pairs). Any
other case (a refusal, a component that fails a property, a premise that can fall, a
property or step that reads the whole state) raises `Exact`, and the exact search
(validate.py) decides it, with its witnesses and the behaviour it shows.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from math import prod

import attrs

from protocol import properties as props
from protocol.engine import CONTROLLER, EACH, GLOBALS, LOCAL, PAIR, PROCESS, WHOLE, WIDE, ModelError
from protocol.engine.fast import BITS, family_of, with_values
from protocol.model import state as schema
from protocol.model import actions
from protocol.model.commands import command_text
from protocol.model.next import action_instances, model_with
from protocol.model.trace import Step
from protocol.tools.log import Observation
from protocol.tools.log_engine import (
    LogEngine, TooAmbiguous, Validation, applied_command, ending_note, log_instances, open_at_end, recorded_step,
)

# More products than this fitting the log at once: the log pins almost nothing down.
MAX_CELLS = 100_000
# The products hold many more states than they take to hold: too ambiguous is where both the
# states that fit pass the exact search's bound and what holds them passes this many times it.
HELD_PER_STATE_BOUND = 10
OBSERVED = -1  # a cell's label where an observation made it: no step
# Whose a cell's set of a process is (Cell.shared): its own, to grow in place; its parent's
# closed set, each id reached as itself; or one that other cells hold too (made once for
# cells that differ only in globals no step on it reads), each id reached as it records.
OWN, PARENTS, BORROWED = 0, 1, 2
# How many of the sets made last for other globals `Factored.once` tries to lend past a ceiling
# before making its own: the cells of a layer come in order of the global the ceiling bounds,
# so the first made at or above every bound lends to the rest; a few bound the cost per cell.
BOUNDED_TRIED = 4
# How many globals values a cell must hold for `Factored.split` to lend past a ceiling by
# comparing values rather than asking `once` for each: below it the sort costs more than it saves.
LENDING_FROM = 8


class Exact(Exception):
    """This search does not decide the log alone (why): the exact search must."""


class Cell:
    """A product of states: globals values `gs` (a tuple of ids) and, per process, the local ids
    it may have; every globals value holds every combination. Each local id maps to how it was
    reached: (label id, previous local id) by a silent step of its process within the cell, or
    (None, the local id in the parent cell it came from). A process's set left as the parent's
    closed set (`shared[p]` is PARENTS) is the parent's own dict, each id reached as itself; one
    BORROWED is held by other cells too. Either is copied before it grows. `came` maps each
    globals id to how it was reached: (None, the parent's globals id it came from by the cell's
    own step), or (label id, a globals id of this cell) by a silent controller step that
    appended nothing, within the cell. None: each came from the parent's same globals id."""

    __slots__ = ("gs", "coords", "parent", "label", "shared", "came")

    def __init__(self, gs: tuple, coords: list, parent, label, shared=None, came=None):
        self.gs, self.coords, self.parent, self.label, self.came = gs, coords, parent, label, came
        self.shared = shared or [OWN] * len(coords)

    @property
    def g(self) -> int:
        """The first of its globals values: the one a set is made at for all (see `Factored.split`)."""
        return self.gs[0]

    def parent_globals(self, g: int) -> int:
        """The parent's globals id that g came from, through the silent steps within the cell."""
        if self.came is None:
            return g
        label, g = self.came[g]
        while label is not None:
            label, g = self.came[g]
        return g

    def sibling(self, gs: tuple) -> "Cell":
        """The same cell at some of its globals values only, its sets shared, not to be grown."""
        shared = [BORROWED if whose == OWN else whose for whose in self.shared]
        return Cell(gs, list(self.coords), self.parent, self.label, shared, self.came)

    def within(self, other: "Cell") -> bool:
        return all(mine is theirs or mine.keys() <= theirs.keys() for mine, theirs in zip(self.coords, other.coords))

    def origin(self, p: int, lid: int) -> tuple:
        return (None, lid) if self.shared[p] == PARENTS else self.coords[p][lid]

    def own(self, p: int) -> dict:
        """Process p's set, to grow: a copy where it is the parent's or borrowed."""
        if self.shared[p] != OWN:
            self.coords[p] = entries(self.coords[p]) if self.shared[p] == PARENTS else dict(self.coords[p])
            self.shared[p] = OWN
        return self.coords[p]


def entries(lids) -> dict:
    return {lid: (None, lid) for lid in lids}


def kept(cell: "Cell", touched: int | None, coord: dict | None, gs: tuple | None = None, label=None,
         whose: int = OWN, came: dict | None = None) -> "Cell":
    """The cell `cell` becomes where only process `touched`'s set changes (to `coord`, `whose` it
    is), and perhaps its globals (to `gs`, from those `came` names): every other process's set
    is shared with it."""
    coords = [coord if q == touched else c for q, c in enumerate(cell.coords)]
    shared = [whose if q == touched else PARENTS for q in range(len(coords))]
    return Cell(cell.gs if gs is None else gs, coords, cell, label, shared, came)


class Lookahead:
    """For each event, the value the log shows next (at a later event) of each rising frontier:
    on the globals ((position, value), ...), and on each process's locals, per process. Only
    whole numbers: a frontier kept per index id is not bounded."""

    def __init__(self, events, global_names: tuple, local_names: tuple, processes: int):
        rising = set(schema.RISING)
        self.global_positions = {name: i for i, name in enumerate(global_names) if name in rising}
        self.local_positions = {name: i for i, name in enumerate(local_names) if name in rising}
        self.on_globals: list = [()] * (len(events) + 1)  # event number -> limits after it
        self.on_locals: list = [()] * (len(events) + 1)  # event number -> limits per process
        globals_next: dict = {}
        locals_next: dict = {}
        for number in range(len(events), -1, -1):
            self.on_globals[number] = tuple(globals_next.items())
            self.on_locals[number] = tuple(tuple((position, value) for (q, position), value in locals_next.items()
                                                 if q == p) for p in range(processes))
            if number and isinstance(events[number - 1], Observation):
                self._note(events[number - 1], processes, globals_next, locals_next)

    def _note(self, event, processes: int, globals_next: dict, locals_next: dict) -> None:
        for name, q, value in event.facts:
            if name in self.global_positions and isinstance(value, int):
                globals_next[self.global_positions[name]] = value
            elif name in self.local_positions:
                values = dict(enumerate(value)) if q is None else {q: value}
                for p, entry in values.items():
                    if isinstance(entry, int) and p < processes:
                        locals_next[(p, self.local_positions[name])] = entry



class Factored:
    """The model of one configuration, packed, followed cell by cell."""

    def __init__(self, cfg, silent, labels):
        self.cfg = cfg
        self.model = model_with(cfg, log_instances(cfg, frozenset(silent), labels), lazy_liveness=True)
        model = self.model
        self._refuse_whole_properties()
        self.engine = engine = LogEngine(model)
        self.P, self.shift = cfg.P, cfg.P * BITS
        self.instances = model.instances
        self.label_ids = {instance.label: index for index, instance in enumerate(self.instances)}
        self.segment_of = {entries_[0][0]: index for index, entries_ in enumerate(engine.controller_segments)}
        self.wide_of = {entry[0]: index for index, entry in enumerate(engine.wide_steps)}
        self.silent_local = [[] for _ in range(self.P)]  # p -> [label id]
        self.silent_other = []  # label ids of the silent controller, wide and whole instances
        self.silent_controller = []  # those of the controller's
        for label_id, instance in enumerate(self.instances):
            if instance.label.name in silent:
                if instance.footprint.kind == LOCAL:
                    self.silent_local[instance.process].append(label_id)
                else:
                    self.silent_other.append(label_id)
                    if instance.footprint.kind == CONTROLLER:
                        self.silent_controller.append(label_id)
        self.local_family = {}  # label id -> (its family, globals id -> projection id, or None)
        for label_id, instance in enumerate(self.instances):
            if instance.footprint.kind == LOCAL:
                family = family_of(instance.label)
                self.local_family[label_id] = (family, engine.projection_of[family] if engine.local_reads[family] else None)
        # label id -> (position of the global it reads up to a bound, the bound, the positions
        # of the other globals it reads), for the local instances whose footprint has a ceiling
        self.ceilings: dict = {}
        for label_id, instance in enumerate(self.instances):
            if instance.footprint.kind == LOCAL and instance.footprint.ceiling:
                name, bound = instance.footprint.ceiling
                others = tuple(engine.global_names.index(read) for read in instance.footprint.reads if read != name)
                self.ceilings[label_id] = (engine.global_names.index(name), bound, others)
        self._bounds: dict = {}  # (label id, local id) -> its ceiling's bound there
        self._samples: dict = {}  # id of a set of local ids -> (the set, its ids that are powers of two)
        self._shared_sets: dict = {}  # what the cells of one event made once: see `once`
        self._one_ceiling: dict = {}  # label ids -> `one_ceiling`
        self.global_steps: set = set()  # (g, next g) of every step taken
        self.local_steps: set = set()  # (p, lid, next lid) of every step taken
        self._applied: dict = {}
        self._globals_states: dict = {}  # g -> globals_state(g)
        self._local_states: dict = {}  # lid -> local_state(lid)
        self._prepare_liveness()
        self.lookahead: Lookahead | None = None  # where `follow` may rely on NoRegression
        self.globals_limits: tuple = ()  # the lookahead's limits after the current event
        self.locals_limits: tuple = ((),) * self.P  # per process
        self._passed: list = [{} for _ in range(self.P)]  # per process: local id -> past its limits

    def _refuse_whole_properties(self) -> None:
        model = self.model
        whole = [name for name in model.invariants if name not in model.by_component | model.by_pair]
        whole += [name for name in model.transition_properties if name not in model.by_component]
        if whole:
            raise Exact(f"{whole[0]} reads the whole state")

    # ----------------------------------------------------------- component steps

    def local_next(self, label_id: int, g: int, lid: int) -> int:
        family, projection_of = self.local_family[label_id]
        projection = projection_of[g] if projection_of is not None else 0
        found = self.engine.local_memos[family][projection][lid]
        if found is None:
            found = self.engine.local_successor(family, lid, projection)
        return found

    def controller_next(self, label_id: int, g: int) -> list:
        segment = self.segment_of[label_id]
        found = self.engine.controller_memos[segment][g]
        return found if found is not None else self.engine.controller_successors(segment, g)

    def wide_next(self, label_id: int, g: int, lid: int):
        index = self.wide_of[label_id]
        found = self.engine.wide_memo.get((index, g, lid), 0)
        return self.engine.wide_successor(index, g, lid) if found == 0 else found

    def appended(self, app: int, coord: dict, p: int) -> dict:
        """Process p's set with append `app` made (once for every cell that holds it: BORROWED)."""
        return self.once(("append", app, p), coord, -1, (), lambda: (self._appended(app, coord, p), ()))

    def _appended(self, app: int, coord: dict, p: int) -> dict:
        if not app:
            return entries(coord)
        found = {}
        for lid in coord:
            grown = self.engine.append_to(app, lid)
            self.local_steps.add((p, lid, grown))
            found[grown] = (None, lid)
        return found

    def applied_text(self, label_id: int, g: int, lid: int | None) -> str | None:
        """The command instance `label_id` pops from globals g and its process's locals lid."""
        if label_id in self.local_family:  # a local step reads its process's locals and what it projects
            key = (label_id, self.reading(label_id, g), lid)
        else:
            key = (label_id, g, lid)
        if key not in self._applied:
            engine = self.engine
            local = engine.empty_local if lid is None else engine.locals[lid]
            state = engine.assemble(engine.globals[g], [local] * self.P)
            command = applied_command(recorded_step(self.instances[label_id], state)[1])
            self._applied[key] = None if command is None else command_text(command)
        return self._applied[key]

    # ----------------------------------------------------------- sets made once

    # The cells of one layer often hold the same set of a process's local ids under globals
    # that differ only in a value no step on that set reads (`upper` past every publisher's
    # since, with Ingest silent): what a step, an observation or the closure makes of such a
    # set is then made once and held by each of those cells (BORROWED), never grown in place.

    def forget(self) -> None:
        """A new event: the sets made for the last one are not shared with this one's."""
        self._shared_sets = {}

    def once(self, key: tuple, held: dict, g: int, label_ids, make):
        """What `make()` makes of set `held` at globals g (keyed by `key` and the set's identity),
        made once for every globals value at which each instance of `label_ids` steps alike on
        the local ids `make()` names beside what it makes (those it steps from)."""
        # held is kept alive (its id is the key); what was made, by what the steps read of the
        # globals, and the latest made where a ceiling may lend it to other globals too
        _, by_reading, bounded = self._shared_sets.setdefault((key, id(held)), (held, {}, []))
        reading = tuple([self.reading(label_id, g) for label_id in label_ids]) if label_ids else ()
        made = by_reading.get(reading, by_reading)  # the dict itself: nothing made yet (None is a result)
        if made is not by_reading:
            return made
        for made_at, bounds, made, over in reversed(bounded[-BOUNDED_TRIED:]):
            if all(self.steps_alike(label_id, made_at, g, bounds.get(label_id), over) for label_id in label_ids):
                by_reading[reading] = made
                return made
        made, over = make()
        by_reading[reading] = made
        bounds = {label_id: self.bound_over(label_id, g, over) for label_id in label_ids if label_id in self.ceilings}
        if bounds and all(self.past_bound(label_id, g, bound) for label_id, bound in bounds.items()):
            bounded.append((g, bounds, made, over))  # may be lent: g is at or above every bound
        return made

    def split(self, gs: tuple, key: tuple, held: dict, label_ids, make) -> list:
        """[(globals ids, what `make(g)` makes of set `held` at them)] over `gs`: `once` for each
        group of them that the instances `label_ids` read alike, groups given the same set joined."""
        if len(gs) == 1 or not label_ids:
            return [(gs, self.once(key, held, gs[0], label_ids, lambda: make(gs[0])))]
        ceiling = self.one_ceiling(label_ids) if len(gs) >= LENDING_FROM else None
        if ceiling is not None:
            return self._split_past_ceiling(gs, key, held, label_ids, make, *ceiling)
        groups: dict = {}
        for g in gs:
            groups.setdefault(tuple([self.reading(label_id, g) for label_id in label_ids]), []).append(g)
        joined: dict = {}  # id of what was made -> (globals ids, it)
        for members in groups.values():
            first = members[0]
            made = self.once(key, held, first, label_ids, lambda: make(first))
            joined.setdefault(id(made), ([], made))[0].extend(members)
        return [(tuple(members), made) for members, made in joined.values()]

    def one_ceiling(self, label_ids) -> tuple | None:
        """(position, positions of the other globals read) where every instance of `label_ids`
        reads one global up to a ceiling, the same one, and nothing else of the globals but those."""
        found = self._one_ceiling.get(tuple(label_ids), 0)
        if found == 0:
            ceilings = [self.ceilings.get(label_id) for label_id in label_ids]
            found = None
            if None not in ceilings and len({position for position, _, _ in ceilings}) == 1:
                found = (ceilings[0][0], tuple(sorted({i for _, _, others in ceilings for i in others})))
            self._one_ceiling[tuple(label_ids)] = found
        return found

    def _split_past_ceiling(self, gs, key, held, label_ids, make, position, others) -> list:
        """`split` where the steps read one global up to a ceiling: the globals values that read
        the rest alike, from the highest value of that global down, are lent what was made at
        the highest once they are all at or above its bounds, checked (`steps_alike`) at the
        lowest lent, so a run of `upper` costs a comparison per value, not a `once`."""
        values = self.engine.globals
        classes: dict = {}
        for g in gs:
            classes.setdefault(tuple([values[g][i] for i in others]), []).append(g)
        joined: dict = {}  # id of what was made -> (globals ids, it)
        for members in classes.values():
            members.sort(key=lambda g: values[g][position], reverse=True)
            lender, lowest = None, None  # (made at, bounds, made, over): see `once`
            for g in members:
                if lender is not None and all(values[g][position] >= bound for bound in lender[1].values()):
                    joined[id(lender[2])][0].append(g)
                    lowest = g
                    continue
                made = self.once(key, held, g, label_ids, lambda: make(g))
                joined.setdefault(id(made), ([], made))[0].append(g)
                if lender is not None and lowest is not None:
                    self._check_lent(label_ids, lender, lowest)
                lender, lowest = self._lender(key, held, made), None
            if lender is not None and lowest is not None:
                self._check_lent(label_ids, lender, lowest)
        return [(tuple(members), made) for members, made in joined.values()]

    def _lender(self, key: tuple, held: dict, made) -> tuple | None:
        """The latest entry of `once` that may lend `made` past a ceiling (None: none may)."""
        found = self._shared_sets.get((key, id(held)))
        if found is not None:
            for entry in reversed(found[2][-BOUNDED_TRIED:]):
                if entry[2] is made and None not in entry[1].values():
                    return entry
        return None

    def _check_lent(self, label_ids, lender: tuple, g: int) -> None:
        made_at, bounds, _, over = lender
        for label_id in label_ids:
            if not self.steps_alike(label_id, made_at, g, bounds[label_id], over):
                raise ModelError(f"{self.instances[label_id].label} was lent a set past its ceiling where it "
                                 "does not step alike: report this as a bug in the search by components")

    def past_bound(self, label_id: int, g: int, bound: int | None) -> bool:
        """Whether globals g hold the global instance `label_id`'s ceiling bounds at or above `bound`."""
        value = self.engine.globals[g][self.ceilings[label_id][0]]
        return bound is not None and isinstance(value, int) and value >= bound

    def bound_over(self, label_id: int, g: int, lids) -> int | None:
        """The greatest bound of instance `label_id`'s ceiling over local ids `lids` (None: no bound),
        each checked where it is first asked for, at globals g (`_check_bound`)."""
        bound = self.ceilings[label_id][1]
        p = self.instances[label_id].process
        greatest = -1
        for lid in lids:
            found = self._bounds.get((label_id, lid), -2)
            if found == -2:
                found = self._bounds[(label_id, lid)] = bound(self.local_state(lid), self.cfg, p)
                if not (found is None or type(found) is int):
                    raise ModelError(f"{self.instances[label_id].label}'s ceiling gave {found!r}, not a time or None: "
                                     "make its bound return one")
                self._check_bound(label_id, g, lid, found)
            if found is None:
                return None
            greatest = max(greatest, found)
        return greatest

    def _check_bound(self, label_id: int, g: int, lid: int, bound: int | None) -> None:
        """Where globals g hold the ceiling's global above the bound on local id lid, the step
        there must be the step at the bound itself, or the declared bound is wrong."""
        position = self.ceilings[label_id][0]
        value = self.engine.globals[g][position]
        if bound is None or not isinstance(value, int) or value <= bound:
            return
        family = self.local_family[label_id][0]
        at_bound = self.engine.local_successor_at(family, lid, with_values(self.engine.globals[g], (position,), (bound,)))
        if at_bound != self.local_next(label_id, g, lid):
            self._wrong_ceiling(label_id, position, value, bound, bound)

    def _wrong_ceiling(self, label_id: int, position: int, one, two, bound: int):
        name = self.engine.global_names[position]
        raise ModelError(f"{self.instances[label_id].label} steps otherwise with {name} = {one} than with {name} = {two}, "
                         f"both at or above its ceiling's bound {bound}: correct the bound, or remove `ceiling` "
                         "from its footprint")

    def steps_alike(self, label_id: int, g: int, other: int, bound: int | None, lids) -> bool:
        """Whether local instance `label_id` steps alike at globals g and `other` on local ids
        `lids`, whose ceiling's greatest bound is `bound`: it reads the same of both, or they
        differ only in the global it reads up to its bound, at or above it in both. The second is
        checked on a sample of `lids` (ids that are powers of two), or the ceiling is wrong."""
        if self.reading(label_id, g) == self.reading(label_id, other):
            return True
        if label_id not in self.ceilings:
            return False
        position, _, others = self.ceilings[label_id]
        one, two = self.engine.globals[g], self.engine.globals[other]
        if not (self.past_bound(label_id, g, bound) and self.past_bound(label_id, other, bound)
                and all(one[i] == two[i] for i in others)):
            return False
        for lid in self._sample(lids):
            if self.local_next(label_id, g, lid) != self.local_next(label_id, other, lid):
                self._wrong_ceiling(label_id, position, one[position], two[position], bound)
        return True

    # ----------------------------------------------------------- cell steps

    def step(self, cell: Cell, label_id: int, command: str | None = None) -> list:
        """The cells instance `label_id` leads to from `cell` (popping `command`, if given)."""
        instance = self.instances[label_id]
        kind, p = instance.footprint.kind, instance.process
        if kind == LOCAL:
            held = cell.coords[p]
            made = self.split(cell.gs, ("step", label_id, command), held, (label_id,),
                              lambda g: (self._local_step(cell, label_id, command, g), held))
            return [kept(cell, p, coord, gs, label_id, BORROWED) for gs, coord in made if coord]
        if kind == CONTROLLER:
            return self._controller_step(cell, label_id, command)
        if kind == WIDE:
            return [found for g in cell.gs for found in self._wide_step(cell, label_id, command, g)]
        raise Exact(f"{instance.label} reads the whole state")  # (a seal's tap: PeeksServed asks the exact search anyway)

    def _controller_step(self, cell: Cell, label_id: int, command: str | None, covered=()) -> list:
        """A controller step from each of the cell's globals values: one cell per append made,
        holding every globals value it reaches with that append (but those of `covered` reached
        appending nothing: the cell holds their states already)."""
        reached: dict = {}  # append -> {globals id reached: the one it came from}
        for g in cell.gs:
            if command is not None and self.applied_text(label_id, g, None) != command:
                continue
            for _, after, app in self.controller_next(label_id, g):
                self.global_steps.add((g, after))
                if not app and after in covered:
                    continue
                reached.setdefault(app, {}).setdefault(after, (None, g))
        return [Cell(tuple(came), [self.appended(app, c, q) for q, c in enumerate(cell.coords)], cell, label_id,
                     [BORROWED] * self.P, came) if app else kept(cell, None, None, tuple(came), label_id, came=came)
                for app, came in reached.items()]

    def _wide_step(self, cell: Cell, label_id: int, command: str | None, g: int) -> list:
        """A wide step from globals g of the cell: one cell per globals value and append it reaches."""
        p, groups = self.instances[label_id].process, {}
        for lid in cell.coords[p]:
            found = self.wide_next(label_id, g, lid)
            if found is None or (command is not None and self.applied_text(label_id, g, lid) != command):
                continue
            after, local, app = found
            self.global_steps.add((g, after))
            self.local_steps.add((p, lid, local))
            groups.setdefault((after, app), {}).setdefault(local, (None, lid))
        return [Cell((after,), [coord if q == p else self.appended(app, c, q) for q, c in enumerate(cell.coords)],
                     cell, label_id, [OWN if q == p else BORROWED for q in range(self.P)], {after: (None, g)})
                for (after, app), coord in groups.items()]

    def _local_step(self, cell: Cell, label_id: int, command: str | None, g: int) -> dict:
        p, coord = self.instances[label_id].process, {}
        for lid in cell.coords[p]:
            after = self.local_next(label_id, g, lid)
            if after >= 0 and (command is None or self.applied_text(label_id, g, lid) == command):
                self.local_steps.add((p, lid, after))
                coord.setdefault(after, (None, lid))
        return coord

    def observer(self, event: Observation):
        """cell -> the cell of its states that have every observed value, or None."""
        engine = self.engine
        on_globals = [(engine.global_names.index(name), value) for name, _, value in event.facts
                      if name in engine.global_names]
        on_locals = [self._local_facts(event, p) for p in range(self.P)]
        locals_ = engine.locals

        def observe(cell: Cell):
            gs = cell.gs
            if on_globals:
                gs = tuple([g for g in gs if all(engine.globals[g][position] == value for position, value in on_globals)])
                if not gs:
                    return None
            coords, shared = [], []
            for p, coord in enumerate(cell.coords):
                facts = on_locals[p]
                if not facts:
                    coords.append(coord)
                    shared.append(PARENTS)
                    continue
                found = self.once(("observe", p), coord, gs[0], (), lambda: ({
                    lid: (None, lid) for lid in coord if all(locals_[lid][position] == value for position, value in facts)},
                    ()))
                if not found:
                    return None
                coords.append(found)
                shared.append(BORROWED)
            return Cell(gs, coords, cell, OBSERVED, shared)

        return observe

    def _local_facts(self, event: Observation, p: int) -> list:
        engine, facts = self.engine, []
        for name, q, value in event.facts:
            if name in engine.local_names:
                position = engine.local_names.index(name)
                if q is None:
                    facts.append((position, value[p]))
                elif q == p:
                    facts.append((position, value))
        return facts

    # ----------------------------------------------------------- layers

    def close(self, seeds: list, where: str) -> list:
        """Every cell the silent steps reach from `seeds`, none within another at the same globals."""
        cells, at, products = [], defaultdict(list), 0
        work = list(seeds)
        while work:
            cell = work.pop()  # a cell just made: its globals and sets may still be narrowed
            if self.globals_limits:
                cell.gs = tuple([g for g in cell.gs if not self.passed_globals(g)])
                if not cell.gs:
                    continue
            if not self.drop_passed(cell):
                continue
            cell.gs = tuple([g for g in cell.gs if not any(cell.within(other) for other in at[g])])
            if not cell.gs:
                continue
            if self.silent_controller:
                self._spread(cell, at)
            for part in self._close_locally(cell):
                products += len(part.gs)
                if products > MAX_CELLS:
                    raise TooAmbiguous(f"{where}: more than {MAX_CELLS:,} products of model states fit the log "
                                       "here: observe more variables or silence fewer actions")
                cells.append(part)
                for g in part.gs:
                    at[g].append(part)
                for label_id in self.silent_other:
                    if label_id in self.silent_controller:  # not to the part's own values: it holds them
                        work += self._controller_step(part, label_id, None, set(part.gs))
                    else:
                        work += self.step(part, label_id)
        self._bound(cells, where)
        return cells

    def _bound(self, cells: list, where: str) -> None:
        """Too ambiguous where the states that fit pass the exact search's bound
        (validate.MAX_FITTING_STATES) and what holds them passes HELD_PER_STATE_BOUND times it:
        the log pins almost nothing down."""
        bound = self.bound
        held = sum(len(cell.gs) * (1 + sum(map(len, cell.coords))) for cell in cells)
        if held > HELD_PER_STATE_BOUND * bound and self.count(cells) > bound:
            raise TooAmbiguous(f"{where}: more than {bound:,} model states fit the log here: "
                               "observe more variables or silence fewer actions")

    # ----------------------------------------------------------- lookahead

    def look_ahead_from(self, number: int) -> None:
        """Bound the frontiers by the values the log shows after event `number` (0: the header)."""
        if self.lookahead is not None:
            self.globals_limits = self.lookahead.on_globals[number]
            limits = self.lookahead.on_locals[number]
            self._passed = [known if limits[p] == self.locals_limits[p] else {} for p, known in enumerate(self._passed)]
            self.locals_limits = limits

    def passed_globals(self, g: int) -> bool:
        """Whether globals g have a rising frontier past the value the log shows of it next."""
        values = self.engine.globals[g]
        return any(passed(values[position], limit) for position, limit in self.globals_limits)

    def passed_local(self, p: int, lid: int) -> bool:
        """Whether process p's locals lid have a rising frontier past its limit (kept until the limits change)."""
        known = self._passed[p]
        found = known.get(lid)
        if found is None:
            values = self.engine.locals[lid]
            found = known[lid] = any(passed(values[position], limit) for position, limit in self.locals_limits[p])
        return found

    def drop_passed(self, cell: Cell) -> bool:
        """Drop from each process's set the local ids past a limit; False where a set empties.
        A local id kept must not have been reached within the cell from one dropped: that step
        lowered a rising frontier."""
        for p, limits in enumerate(self.locals_limits):
            if not limits:
                continue
            held = cell.coords[p]
            kept_ = self.once(("drop", p, cell.shared[p]), held, cell.g, (), lambda: (self._unpassed(cell, p), ()))
            if kept_ is None:
                return False
            if kept_ is not held:
                cell.coords[p], cell.shared[p] = kept_, BORROWED
        return True

    def _unpassed(self, cell: Cell, p: int) -> dict | None:
        """Process p's set of the cell without the ids past a limit (None where none is left)."""
        coord = cell.coords[p]
        dropped = {lid for lid in coord if self.passed_local(p, lid)}
        if not dropped:
            return coord
        if len(dropped) == len(coord):
            return None
        kept_ = {lid: cell.origin(p, lid) for lid in coord if lid not in dropped}
        if any(label is not None and previous in dropped for label, previous in kept_.values()):
            raise Exact("a step lowered a rising frontier")
        return kept_

    def check_rising(self) -> None:
        """No step taken lowered a frontier the lookahead bounds (else it would not be sound)."""
        if self.lookahead is None:
            return
        on_globals = tuple(self.lookahead.global_positions.values())
        on_locals = tuple(self.lookahead.local_positions.values())
        globals_, locals_ = self.engine.globals, self.engine.locals
        for g, after in self.global_steps:
            if any(passed(globals_[g][i], globals_[after][i]) for i in on_globals):
                raise Exact("a step lowered a rising frontier")
        for _, lid, after in self.local_steps:
            if any(passed(locals_[lid][i], locals_[after][i]) for i in on_locals):
                raise Exact("a step lowered a rising frontier")

    def _spread(self, cell: Cell, at: dict) -> None:
        """Add to the cell's globals every value the silent controller steps that append nothing
        reach from them, before its sets are closed: they move the globals alone, so the cell
        holds the states they reach (a globals value whose states other cells hold already ends
        the walk there). A run of `Ingest` then fills one cell, not a cell per value of `upper`."""
        gs, came = cell.gs, {}  # came: the values reached, each from which
        start = set(gs)
        frontier = gs
        while frontier:
            reached = []
            for g in frontier:
                for label_id in self.silent_controller:
                    for _, after, app in self.controller_next(label_id, g):
                        self.global_steps.add((g, after))
                        if app or after in came or after in start or (self.globals_limits and self.passed_globals(after)):
                            continue
                        if any(cell.within(other) for other in at[after]):
                            continue
                        came[after] = (label_id, g)
                        reached.append(after)
            frontier = reached
        if came:
            before = cell.came if cell.came is not None else {g: (None, g) for g in gs}
            cell.gs, cell.came = gs + tuple(came), {**before, **came}

    def _close_locally(self, cell: Cell) -> list:
        """Each process's set closed under its own silent steps (apart: they commute), once for
        every cell that holds the same set under globals its steps read alike: the cell, or its
        globals values split where their closed sets differ."""
        parts = [cell]
        for p, label_ids in enumerate(self.silent_local):
            if not label_ids:
                continue
            split = []
            for part in parts:
                held = part.coords[p]
                made = self.split(part.gs, ("close", p, part.shared[p]), held, label_ids,
                                  lambda g: (self._closed(part, p, label_ids, g),) * 2)
                for gs, closed in made:
                    piece = part if len(made) == 1 else part.sibling(gs)
                    if closed is not held:
                        piece.coords[p], piece.shared[p] = closed, BORROWED
                    split.append(piece)
            parts = split
        return parts

    def _closed(self, cell: Cell, p: int, label_ids: list, g: int) -> dict:
        """Process p's set of the cell closed under its silent steps `label_ids` at globals g
        (a new set where it grows). A set shared with the parent is closed already under the
        steps that read the same globals there as here: only the others run on it."""
        held, shared = cell.coords[p], cell.shared[p]
        if shared == PARENTS:
            before = cell.parent_globals(g)
            label_ids = [label_id for label_id in label_ids if self.reading(label_id, g) != self.reading(label_id, before)]
            if not label_ids:
                return held
        coord = held
        frontier = [(lid, label_ids) for lid in held]
        limited = bool(self.locals_limits[p])
        every = self.silent_local[p]
        while frontier:
            reached = []
            for lid, running in frontier:
                for label_id in running:
                    after = self.local_next(label_id, g, lid)
                    if after >= 0:
                        self.local_steps.add((p, lid, after))
                        if after not in coord and not (limited and self.passed_local(p, after)):
                            if coord is held:
                                coord = entries(held) if shared == PARENTS else dict(held)
                            coord[after] = (label_id, lid)
                            reached.append((after, every))
            frontier = reached
        return coord

    def reading(self, label_id: int, g: int) -> int:
        """What local instance `label_id` reads of globals g (its projection's id; 0 where nothing)."""
        family, projection_of = self.local_family[label_id]
        return projection_of[g] if projection_of is not None else 0

    def count(self, cells: list) -> int:
        """How many distinct states the cells hold."""
        at = defaultdict(list)
        for cell in cells:
            for g in cell.gs:
                at[g].append(cell)
        sizes: dict = {}  # the cells at a globals value -> how many states they hold there
        total = 0
        for group in at.values():
            key = tuple(map(id, group))
            size = sizes.get(key)
            if size is None:
                size = sizes[key] = union_size([cell.coords for cell in group])
            total += size
        return total

    # ----------------------------------------------------------- properties

    def check_safety(self, held_products: list) -> None:
        """No state or step the search held may violate a property (`held_products`: (globals
        ids, sets) of every cell of every event, each state consistent with the log so far, so
        every state on the way to the log's end among them): each globals and local value
        checked once by the properties declared per component, each (globals, one process's
        locals) by those declared per pair, and each step taken between such components by the
        transition properties, on the component it rewrites."""
        model = self.model
        on_components = [holds for name, holds in model.invariants.items() if name in model.by_component]
        on_pairs = [name for name in model.invariants if name in model.by_pair]
        on_steps = list(model.transition_properties.values())  # each declared per component (or refused)
        locals_seen: dict = {}  # id of a set -> it (kept while its id is a key)
        globals_ = {g for gs, _ in held_products for g in gs}
        locals_ = {p: set() for p in range(self.P)}
        held = {}  # (globals, process, id of its set) -> the set: many cells share them
        for gs, coords in held_products:
            for p, coord in enumerate(coords):
                if id(coord) not in locals_seen:
                    locals_seen[id(coord)] = coord
                    locals_[p].update(coord)
                for g in gs:
                    held[(g, p, id(coord))] = coord
        if not all(self.pairs_hold(name, held) for name in on_pairs):
            raise Exact("a state may violate a property")
        every_local = set().union(*locals_.values())
        if not all(holds(self.globals_state(g)) for g in globals_ for holds in on_components):
            raise Exact("a globals value may violate a property")
        if not all(holds(self.local_state(lid)) for lid in every_local for holds in on_components):
            raise Exact("a local value may violate a property")
        self.global_steps = {(g, after) for g, after in self.global_steps if g in globals_ and after in globals_}
        self.local_steps = {(p, lid, after) for p, lid, after in self.local_steps
                            if lid in locals_[p] and after in locals_[p]}
        for g, after in self.global_steps:
            if not all(holds(self.globals_state(g), self.globals_state(after)) for holds in on_steps):
                raise Exact("a step may violate a property")
        for _, lid, after in self.local_steps:
            if not all(holds(self.local_state(lid), self.local_state(after)) for holds in on_steps):
                raise Exact("a step may violate a property")

    def pairs_hold(self, name: str, held: dict) -> bool:
        """By-pair invariant `name` on every (globals id, local id) pair of `held` ((globals id,
        process, key) -> a set of local ids): once per value of the globals it declares it reads
        (`Model.pair_reads`) and local, on the initial globals but those, and once per such value
        and set. A failing verdict, and a sample of the others (local ids that are powers of two),
        is judged on the pair's own globals too, and must agree, or the declaration is wrong."""
        holds = self.model.invariants[name]
        reads = self.model.pair_reads.get(name)
        if reads is None:
            pairs = {(g, lid) for (g, _, _), coord in held.items() for lid in coord}
            return all(holds(self.pair_state(g, lid)) for g, lid in pairs)
        engine = self.engine
        positions = [engine.global_names.index(read) for read in reads]
        judged: dict = {}  # (values read, local id) -> verdict
        sets_judged: set = set()  # (values read, id of a set) whose every local id holds
        for (g, _, set_id), coord in held.items():
            read = tuple(engine.globals[g][i] for i in positions)
            if (read, set_id) not in sets_judged:
                for lid in coord:
                    verdict = judged.get((read, lid))
                    if verdict is None:
                        globals_ = with_values(engine.initial_globals, positions, read)
                        verdict = judged[(read, lid)] = bool(holds(engine.assemble(globals_, [engine.locals[lid]] * self.P)))
                    if not verdict:
                        self._check_pair_reads(name, reads, holds, g, lid, verdict)
                        return False
                sets_judged.add((read, set_id))
            for lid in self._sample(coord):
                self._check_pair_reads(name, reads, holds, g, lid, True)
        return True

    def _sample(self, coord: dict) -> list:
        """The local ids of a set that are powers of two (kept per set and size: many cells hold it)."""
        found = self._samples.get(id(coord))
        if found is None or found[0] is not coord or found[1] != len(coord):
            found = self._samples[id(coord)] = (coord, len(coord), [lid for lid in coord if lid & (lid - 1) == 0])
        return found[2]

    def _check_pair_reads(self, name: str, reads, holds, g: int, lid: int, verdict: bool) -> None:
        if bool(holds(self.pair_state(g, lid))) != verdict:
            raise ModelError(f"{name} reads globals it does not declare (it judges otherwise with the globals "
                             f"but {', '.join(reads)} as they were first): add them to its pair_reads")

    def _prepare_liveness(self) -> None:
        """The leads-to pairs, each family by its form, the rest listed; refuse a pair whose
        sides read more than the globals and the locals of its process."""
        self.families: list = []  # Thresholds
        self.pairs: list = []  # LeadsTo
        for name in self.model.liveness:
            family = props.by_name(name).family
            if family is not None:
                self.families.append(family(self.cfg))
                continue
            for pair in self.model.liveness[name]:
                if pair.premise_reads not in (GLOBALS, PROCESS) or pair.conclusion_reads not in (GLOBALS, PROCESS, PAIR):
                    raise Exact(f"{pair.text} reads the whole state")
                if pair.process is None and (pair.premise_reads, pair.conclusion_reads) != (GLOBALS, GLOBALS):
                    raise Exact(f"{pair.text} names no process")
                self.pairs.append(pair)

    def globals_state(self, g: int):
        """Globals g, every process's locals empty (the state they are judged on alone); kept,
        since each value is judged once and again on every step from or to it."""
        found = self._globals_states.get(g)
        if found is None:
            found = self._globals_states[g] = self.engine.assemble(self.engine.globals[g], [self.engine.empty_local] * self.P)
        return found

    def local_state(self, lid: int):
        """Every process's locals lid under the initial globals; kept, as `globals_state`."""
        found = self._local_states.get(lid)
        if found is None:
            found = self._local_states[lid] = self.engine.assemble(self.engine.initial_globals,
                                                                   [self.engine.locals[lid]] * self.P)
        return found

    def pair_state(self, g: int, lid: int):
        return self.engine.assemble(self.engine.globals[g], [self.engine.locals[lid]] * self.P)

    def check_premises_stay(self) -> None:
        """No step taken makes a premise false: then a pair is pending exactly where its premise
        holds and its conclusion does not, whatever the path (the premise held all along since)."""
        for family in self.families:
            value = family.premise_value
            for g, after in self.global_steps:
                if value(self.globals_state(after)) < value(self.globals_state(g)):
                    raise Exact("a premise may become false")
        for pair in self.pairs:
            if pair.premise_reads == GLOBALS:
                for g, after in self.global_steps:
                    if pair.premise(self.globals_state(g)) and not pair.premise(self.globals_state(after)):
                        raise Exact(f"the premise of {pair.text} may become false")
            else:
                for p, lid, after in self.local_steps:
                    if p == pair.process and pair.premise(self.local_state(lid)) and not pair.premise(self.local_state(after)):
                        raise Exact(f"the premise of {pair.text} may become false")

    def check_stops(self, cells: list) -> None:
        """No state where the log may end, and stopping is fair, leaves a pair pending."""
        if not self.families and not self.pairs:
            return
        fair = self._fair_instances()
        self.forget()
        for cell in cells:
            for g in cell.gs:
                stopping = [self._stopping(fair, g, p, coord) for p, coord in enumerate(cell.coords)]
                if not all(stopping):
                    continue
                if any(fair_step(self.instances_all[i], self.globals_state(g)) for i in fair[None]):
                    continue
                if self._pending_somewhere(g, stopping):
                    raise Exact("a liveness property may be violated where the run stops")

    def _fair_instances(self) -> dict:
        """process (None: the controller's) -> indices into `instances_all` of the fair instances."""
        self.instances_all = [instance for action in actions.ACTIONS if action.fair and action.where(self.cfg)
                              for instance in action_instances(self.cfg, action)] if self.cfg.fairness else []
        found: dict = {None: []}
        for index, instance in enumerate(self.instances_all):
            if instance.family is None:
                continue
            kind = instance.footprint.kind
            if kind in (WHOLE, EACH) or (kind != CONTROLLER and instance.process is None):
                raise Exact("a fair action reads the whole state")
            found.setdefault(instance.process if kind != CONTROLLER else None, []).append(index)
        # index -> the label id of the same local instance among the engine's (else None)
        self.local_label = [label_id if label_id in self.local_family else None
                            for label_id in (self.label_ids.get(instance.label) for instance in self.instances_all)]
        return found

    def _stopping(self, fair: dict, g: int, p: int, coord: dict) -> list:
        """The local ids of process p's set where none of its fair instances is enabled at globals
        g; found once for every cell that holds the set where they are all local and read alike."""
        label_ids = [self.local_label[index] for index in fair.get(p, ())]
        make = lambda: ([lid for lid in coord if self._stops(fair, g, p, lid)], coord)  # noqa: E731
        if None in label_ids:
            return make()[0]
        return self.once(("stops", p), coord, g, label_ids, make)

    def _stops(self, fair: dict, g: int, p: int, lid: int) -> bool:
        """No fair instance of process p is enabled at globals g and its locals lid: a local
        one is asked of the engine's memo (most were run while closing), the others run."""
        state = None
        for index in fair.get(p, ()):
            label_id = self.local_label[index]
            if label_id is not None:
                if self.local_next(label_id, g, lid) >= 0:
                    return False
                continue
            state = state or self.pair_state(g, lid)
            if fair_step(self.instances_all[index], state):
                return False
        return True

    def _pending_somewhere(self, g: int, stopping: list) -> bool:
        globals_ = self.globals_state(g)
        for family in self.families:
            premise = family.premise_value(globals_)
            for p, lids in enumerate(stopping):
                if any(family.pending_times(premise, family.conclusion_value(self.local_state(lid), p)) for lid in lids):
                    return True
        for pair in self.pairs:
            if pair.process is None:
                if pair.premise(globals_) and not pair.conclusion(globals_):
                    return True
                continue
            for lid in stopping[pair.process]:
                state = self.pair_state(g, lid)
                if pair.premise(state) and not pair.conclusion(state):
                    return True
        return False

    # ----------------------------------------------------------- a behaviour

    def behaviour(self, cell: Cell) -> tuple:
        """One behaviour that ends in the cell's first state: (label or None, readable state) steps."""
        g, lids = cell.g, [next(iter(coord)) for coord in cell.coords]
        found = []
        while cell is not None:
            for p in reversed(range(self.P)):
                label, previous = cell.origin(p, lids[p])
                while label is not None:
                    found.append((label, self.engine.pack(g, lids)))
                    lids[p] = previous
                    label, previous = cell.origin(p, lids[p])
            while cell.came is not None and cell.came[g][0] is not None:  # silent controller steps within it
                found.append((cell.came[g][0], self.engine.pack(g, lids)))
                g = cell.came[g][1]
            found.append((cell.label, self.engine.pack(g, lids)))
            lids = [cell.origin(p, lids[p])[1] for p in range(self.P)]
            g = cell.parent_globals(g)
            cell = cell.parent
        found.reverse()
        steps = [Step(None, self.engine.decode(found[0][1]))]
        steps += [Step(self.instances[label].label, self.engine.decode(s)) for label, s in found[1:]
                  if label is not None and label != OBSERVED]
        return tuple(steps)


def frontiers_never_fall(cfg, model) -> bool:
    """Whether the lookahead may rely on NoRegression: the model checks it, and no named
    configuration with these switches is known to violate it (HoldsAliasShared lowers a writer).
    Elsewhere every step taken is checked (`check_rising`)."""
    from protocol.configurations.named import named_configurations

    if "NoRegression" not in model.transition_properties:
        return False
    return not any("NoRegression" in dict(named.expect) and switches(named.config) == switches(cfg)
                   for named in named_configurations().values())


def switches(cfg) -> dict:
    from protocol.model.config import CONSTANT_NAMES

    return {name: value for name, value in attrs.asdict(cfg).items() if name not in CONSTANT_NAMES}


def passed(value, limit) -> bool:
    """Whether a frontier's value is past `limit` (only whole numbers compare: a frontier kept
    per index id, or not yet set, is never past one)."""
    return isinstance(value, int) and isinstance(limit, int) and value > limit


def fair_step(instance, state) -> bool:
    return instance.step(state) is not None


def union_size(products: list) -> int:
    """How many tuples the union of products (each a list of per-position sets) holds: the values
    at the first position grouped by which products hold them, each group counted on the rest."""
    if len(products) == 1:
        return prod(len(coord) for coord in products[0])
    if not products[0]:
        return 1
    holders = defaultdict(list)
    for index, coords in enumerate(products):
        for value in coords[0]:
            holders[value].append(index)
    groups = Counter(tuple(indices) for indices in holders.values())
    return sum(times * union_size([products[i][1:] for i in indices]) for indices, times in groups.items())


def distinct_ids(cells: list, p: int) -> set:
    """Process p's local ids in any of `cells`, each set read once however many cells share it."""
    sets = {id(cell.coords[p]): cell.coords[p] for cell in cells}
    return set().union(*sets.values())


def follow(log, progress=None, bound: int = 200_000) -> Validation:
    """The verdict on `log` where this search decides it alone, else `Exact`. Too ambiguous where
    more than `bound` states fit at once (and what holds them passes HELD_PER_STATE_BOUND times it)."""
    from protocol.tools.log import StepEvent

    cfg = log.design
    labels = {event.label for event in log.events if isinstance(event, StepEvent)}
    search = Factored(cfg, log.silent, labels)
    search.bound = bound
    engine = search.engine
    if frontiers_never_fall(cfg, search.model):
        search.lookahead = Lookahead(log.events, engine.global_names, engine.local_names, cfg.P)
    search.look_ahead_from(0)
    initial = Cell((engine.unpack(engine.initial)[0],), [{lid: (None, None)} for lid in engine.unpack(engine.initial)[1]],
                   None, None)
    cells = search.close([initial], "the header")
    held = [cells]
    sizes = [search.count(cells)]
    for number, event in enumerate(log.events, 1):
        search.look_ahead_from(number)
        search.forget()
        if isinstance(event, Observation):
            observe = search.observer(event)
            seeds = [found for cell in cells if (found := observe(cell)) is not None]
        else:
            if event.label is None:
                chosen = range(len(search.instances))
            elif event.label in search.label_ids:
                chosen = (search.label_ids[event.label],)
            else:
                raise Exact("refused")
            seeds = [found for cell in cells for label_id in chosen for found in search.step(cell, label_id, event.command)]
        if not seeds:
            raise Exact("refused")
        cells = search.close(seeds, event.where)
        held.append(cells)
        sizes.append(search.count(cells))
        if progress is not None:
            progress(number, len(log.events), sizes[-1])
    search.check_rising()
    # every state held, not only those a chain of parents leads back from the end: two chains of
    # silent steps may reach one state, and the one kept is not the only way through
    search.check_safety([(cell.gs, cell.coords) for layer in held for cell in layer])
    search.check_premises_stay()
    search.check_stops(cells)
    events = len(log.events)
    notes = log.notes
    open_ = open_at_end(engine, {g for cell in cells for g in cell.gs}, [distinct_ids(cells, p) for p in range(cfg.P)])
    if sizes[-1] > 1:
        notes += (ending_note(sizes[-1], open_),)
    return Validation(log, cfg, events, events, None, {}, {}, {}, {}, sizes[-1], search.behaviour(cells[0]),
                      tuple(sizes), tuple(search.model.liveness), notes, open_)
