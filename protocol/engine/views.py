"""Views: a step sees only what its footprint declares.

An engine that stores a state as components runs a per-process step once per
distinct value of what the step reads (its process's locals and the globals its
footprint names), on a state laid out as that one process's locals copied to
every process. A step that reads anything else (another process's entry, a
global it does not declare, a local it says it leaves untouched) would then
silently read a copy or an initial value, and every fast engine would agree on
wrong figures. So every engine, the readable search included, hands a
per-process step a `View` of the state: reading outside the footprint raises a
`ModelError` naming the action, the variable and the fix, at the first
evaluation that reads it. `checked_step` also refuses a write outside it.

Knows nothing of the protocol: it reads the layout and the footprint.
"""

from __future__ import annotations

from typing import Callable

from protocol.engine import CONTROLLER, LOCAL, WIDE, Footprint, Layout, ModelError


SEEN, ENTRY, HIDDEN = 0, 1, 2  # what a view does with a variable: hand it over, its entry p, refuse it


class View:
    """The state as step `owner` on process `p` may see it: a per-process variable is its
    entry `p` alone (`ProcessEntries`), a global only where the footprint names it, a local
    it leaves untouched not at all. `_replace` gives a view of the new state, with the same
    limits. `kinds` maps each variable to SEEN, ENTRY or HIDDEN; a global missing from it is
    undeclared."""

    __slots__ = ("_state", "_p", "_owner", "_kinds", "_iterable", "_declared")

    def __init__(self, state, p: int, owner: str, kinds: dict, iterable: bool,
                 declared: tuple = ("its footprint", "its footprint's reads")):
        self._state, self._p, self._owner, self._kinds, self._iterable = state, p, owner, kinds, iterable
        self._declared = declared  # where the globals it reads are declared, and where to add one

    def __getattr__(self, name: str):
        kind = self._kinds.get(name)
        if kind == ENTRY:
            return ProcessEntries(getattr(self._state, name), self._p, self._owner, name, self._iterable,
                                  self._declared[0] == "its footprint")
        if kind == SEEN:
            return getattr(self._state, name)
        value = getattr(self._state, name, None)
        if kind == HIDDEN:  # sliced to be copied, as a write of another variable's entry does; never read
            return ProcessEntries(value, None, self._owner, name, False)
        if value is None or name.startswith("_"):
            if value is None and not hasattr(self._state, name):
                raise AttributeError(name)
            return value  # a variable absent from this configuration: nothing to read
        raise ModelError(f"{self._owner} reads the global {name} outside {self._declared[0]}: "
                         f"add {name!r} to {self._declared[1]}")

    def _replace(self, **changes) -> "View":
        # a variable handed back whole (`_replace(x=s.x)`) is written as it is, not read
        written = {name: value._values if type(value) is ProcessEntries else value for name, value in changes.items()}
        return View(self._state._replace(**written), self._p, self._owner, self._kinds, self._iterable,
                    self._declared)

    @property
    def _fields(self) -> tuple:
        return self._state._fields

    def __repr__(self) -> str:
        return repr(self._state)


class ProcessEntries:
    """A per-process variable as process `p`'s step sees it: its own entry; a slice copies
    (to replace one entry); another process's entry is refused. A wide step, which appends
    to every process's queues, may iterate. With `p` None (a local the footprint leaves
    untouched) no entry may be read, only copied."""

    __slots__ = ("_values", "_p", "_owner", "_name", "_iterable", "_or_wide")

    def __init__(self, values: tuple, p: int, owner: str, name: str, iterable: bool, step: bool = True):
        self._values, self._p, self._owner, self._name, self._iterable = values, p, owner, name, iterable
        self._or_wide = ", or give it a wide footprint" if step else ""  # a property has no footprint to widen

    def __getitem__(self, index):
        if index == self._p:
            return self._values[index]
        if isinstance(index, slice):
            return self._values[index]
        if self._p is None:
            raise ModelError(f"{self._owner} reads the local {self._name}, which its footprint leaves untouched: "
                             f"remove {self._name!r} from its footprint's untouched variables")
        if index < 0 and index + len(self._values) == self._p:
            return self._values[index]
        raise ModelError(f"{self._owner} reads {self._name}[{index}], another process's entry, from process "
                         f"{self._p}'s step: read {self._name}[p] only{self._or_wide}")

    def __len__(self) -> int:
        return len(self._values)  # how many processes there are: no process's state

    def __iter__(self):
        if not self._iterable:
            raise ModelError(f"{self._owner} reads every entry of {self._name} from process {self._p}'s step: "
                             f"read {self._name}[p] only{self._or_wide}")
        return iter(self._values)

    def __add__(self, other):
        return self._values + other

    def __eq__(self, other):
        raise ModelError(f"{self._owner} compares the whole of {self._name} from process {self._p}'s step: "
                         f"compare {self._name}[p] only")

    __hash__ = None


def unwrapped(state):
    """The state a step returned, out of the view it may have been built through."""
    return state._state if isinstance(state, View) else state


def viewer(layout: Layout, footprint: Footprint, p: int | None, owner: str) -> Callable | None:
    """state -> the view a step of `footprint` on process `p` is handed; None where the step
    sees the whole state (a controller step, or one run whole)."""
    if p is None or footprint.kind not in (LOCAL, WIDE):
        return None
    seen = footprint.reads if footprint.kind == LOCAL else layout.globals
    hidden = footprint.untouched if footprint.kind == LOCAL else ()
    kinds = {**{name: SEEN for name in seen}, **{name: HIDDEN if name in hidden else ENTRY for name in layout.locals}}
    iterable = footprint.kind == WIDE
    return lambda state: View(state, p, owner, kinds, iterable)


def write_checker(layout: Layout, footprint: Footprint, p: int) -> Callable | None:
    """(before, after) -> what a per-process step wrote outside its footprint, or None: a
    local step may change only its own process's locals, and not those it leaves untouched."""
    if footprint.kind != LOCAL:
        return None
    count = len(layout.globals)
    names = layout.locals
    untouched = frozenset(footprint.untouched)

    def problem(before, after) -> str | None:
        if before[:count] != after[:count]:
            name = next(n for n, o, a in zip(layout.globals, before, after) if o != a)
            return f"writes the global {name!r}, outside its process's locals: give it a wide footprint"
        for name, old, new in zip(names, before[count:], after[count:]):
            if old is new or old == new:
                continue
            if old[:p] != new[:p] or old[p + 1:] != new[p + 1:]:
                return f"writes {name} of another process: write {name}[p] only, or give it a wide footprint"
            if name in untouched:
                return (f"wrote {name}, which its footprint leaves untouched: remove {name!r} from its footprint's "
                        "untouched variables")
        return None

    return problem


def controller_checker(layout: Layout, initial) -> Callable:
    """(step, state, after) -> what a controller step did that its footprint does not allow, or
    None. A controller step reads the globals alone and appends alike to every process's
    locals, so an engine runs it once per globals, on the initial locals: the same step from
    the initial locals must enable alike, leave the same globals and append the same."""
    count = len(layout.globals)
    initial_locals = tuple(initial)[count:]

    def problem(step, state, after, keywords) -> str | None:
        probe = state if tuple(state)[count:] == initial_locals else \
            type(state)(*tuple(state)[:count], *initial_locals)
        if probe is state:
            return None
        alone = step(probe, **keywords)
        if (alone is None) != (after is None):
            return "is enabled by what the processes hold, not by the globals alone: give it a wide or whole footprint"
        if after is None:
            return None
        if tuple(alone)[:count] != tuple(after)[:count]:
            return "reads the processes' locals to decide the globals: give it a wide or whole footprint"
        for name, base, now, old, new in zip(layout.locals, initial_locals, tuple(alone)[count:],
                                             tuple(state)[count:], tuple(after)[count:]):
            appended = [entry[len(start):] if isinstance(entry, tuple) else None for start, entry in zip(base, now)]
            for q, (o, n) in enumerate(zip(old, new)):
                if n != o and not (isinstance(o, tuple) and n == o + appended[q]):
                    return f"does more than append to {name}: give it a wide or whole footprint"
        return None

    return problem


def checked_step(step: Callable, layout: Layout, footprint: Footprint, p: int | None, owner: str,
                 initial=None) -> Callable:
    """`step`, handed a view of the state and its writes checked (as `viewer` and `write_checker`
    say); a controller step checked against the same step from the initial locals."""
    if getattr(step, "checked_by_its_footprint", False) or layout is None:
        return step  # checked once (a model built again from another's instances); or no layout to check by
    view = viewer(layout, footprint, p, owner)
    if view is None:
        if footprint.kind != CONTROLLER or initial is None:
            return step
        controller_problem = controller_checker(layout, initial)

        def deciding_by_the_globals(state, **keywords):
            after = step(state, **keywords)
            problem = controller_problem(step, state, after, keywords)
            if problem is not None:
                raise ModelError(f"{owner} {problem}")
            return after

        deciding_by_the_globals.checked_by_its_footprint = True
        return deciding_by_the_globals
    wrote_outside = write_checker(layout, footprint, p)

    def seeing_only_what_it_declares(state, **keywords):
        after = step(view(state), **keywords)
        if after is None:
            return None
        after = after._state if type(after) is View else after
        if wrote_outside is not None:
            problem = wrote_outside(state, after)
            if problem is not None:
                raise ModelError(f"{owner} {problem}")
        return after

    seeing_only_what_it_declares.checked_by_its_footprint = True
    return seeing_only_what_it_declares


def each_process(holds_at: Callable, layout: Layout, reads: tuple, processes: int, owner: str) -> Callable:
    """state -> whether `holds_at(view, p)` holds for every process p, each handed a view of its
    own process's entries and of the globals in `reads`: a per-process property that reads
    another process, or a global it does not declare, is one ModelError line (engines that judge
    it once per pair of globals and one process's locals would otherwise judge a copy)."""
    kinds = {**{name: SEEN for name in reads}, **{name: ENTRY for name in layout.locals}}
    declared = ("the globals it declares", "its pair_reads")

    def holds(state) -> bool:
        return all(holds_at(View(state, p, owner, kinds, False, declared), p) for p in range(processes))

    return holds


# The readable search checks its steps' every evaluation until it has made this many of a step,
# then one in SAMPLE_EVERY: a step that reads past its footprint usually does so on its first
# evaluations, and the engines that would count it wrong check every memo entry they fill.
CHECKED_FIRST, SAMPLE_EVERY = 4096, 8


def sampled(raw: Callable, checked: Callable) -> Callable:
    """`checked` for the first CHECKED_FIRST evaluations and one in SAMPLE_EVERY after, `raw` (the
    same step unchecked, which gives the same successor) for the others."""
    if raw is checked:
        return raw
    count = 0

    def step(state, **keywords):
        nonlocal count
        count += 1
        if count <= CHECKED_FIRST or count % SAMPLE_EVERY == 0:
            return checked(state, **keywords)
        return raw(state, **keywords)

    return step
