"""A step memoised on the variables it touches. Knows nothing of the protocol.

A local footprint may name local variables its step neither reads nor writes
(`Footprint.untouched`). Two locals that agree on every other variable (their
*core*) then step alike: the step's effect on the core is the same, and the
untouched values stay as they were. The packed engine runs such a step once per
core and projection of the globals, and builds the next local of every other
local with that core by putting its untouched values back. The engine checks
the declaration as it goes (fast.py, `local_next`). A controller footprint may
name globals the same way; validate's engine splits the globals by them
(tools/log_engine.py, `controller_successors`)."""

from __future__ import annotations

from typing import Callable

from protocol.engine import ModelError

DISABLED = -1


class Cores:
    """One family's memo: values (locals, or globals: `kind`) split into (core id, rest id),
    the step's effect per (projection id, core id), and the values rebuilt from (core id, rest id)."""

    def __init__(self, names: tuple, untouched: tuple, action: str, intern: Callable, kind: str = "local"):
        unknown = [name for name in untouched if name not in names]
        if unknown:
            raise ModelError(f"{action} leaves {unknown[0]!r} untouched, which is not a {kind} variable: "
                             f"name only some of {', '.join(names)}")
        self.names, self.action, self.kind = names, action, kind
        self.intern = intern  # (values, ids, value) -> (id, new): the engine's intern tables
        self.touched = tuple(i for i, name in enumerate(names) if name not in untouched)
        self.untouched = tuple(i for i, name in enumerate(names) if name in untouched)
        self.cores: list = []  # core id -> the values at the touched positions
        self.core_ids: dict = {}
        self.rests: list = []  # rest id -> the values at the untouched positions
        self.rest_ids: dict = {}
        self.parts: dict = {}  # local id -> (core id, rest id)
        self.memo: dict = {}  # (projection id, core id) -> the next core id, or DISABLED
        self.joined: dict = {}  # (core id, rest id) -> the local id they make up

    def parts_of(self, lid: int, local: tuple) -> tuple[int, int]:
        found = self.parts.get(lid)
        if found is None:
            found = self.parts[lid] = (self.core_id(local), self.intern(self.rests, self.rest_ids, self.rest(local))[0])
        return found

    def core_id(self, local: tuple) -> int:
        return self.intern(self.cores, self.core_ids, tuple(local[i] for i in self.touched))[0]

    def rest(self, local: tuple) -> tuple:
        return tuple(local[i] for i in self.untouched)

    def value(self, core: int, rest: int) -> tuple:
        """The value made of a core and a rest."""
        values = [None] * len(self.names)
        for position, value in zip(self.touched, self.cores[core]):
            values[position] = value
        for position, value in zip(self.untouched, self.rests[rest]):
            values[position] = value
        return tuple(values)

    def learn(self, key: tuple, rest: int, found, failing: list) -> None:
        """Memoise what a step run did from core `key[1]` under projection `key[0]` (found: the
        next local, None where disabled), after checking that it left the untouched values
        as they were and, where the core was known, did what the memo says. A step that
        fails a transition property is never memoised: it must be recorded each time."""
        if found is not None and self.rest(found) != self.rests[rest]:
            name = next(self.names[i] for i, was in zip(self.untouched, self.rests[rest]) if found[i] != was)
            raise ModelError(f"{self.action} wrote {name}, which its footprint leaves untouched: "
                             f"remove {name!r} from its footprint's untouched")
        core = DISABLED if found is None else self.core_id(found)
        known = self.memo.get(key)
        if known is None:
            if not failing:
                self.memo[key] = core
        elif known != core or failing:
            names = ", ".join(self.names[i] for i in self.untouched)
            raise ModelError(f"{self.action} acts otherwise on {self.kind}s that differ only in {names}, which its "
                             "footprint leaves untouched: remove those it reads from its footprint's untouched")

