"""The state of model-spec sections 3, 10.2 and 11.2, declared once, as a schema.

`VARIABLES` declares every state variable: its scope (global, or one value
per process), its domain, whether it may only rise (NoRegression), its
initial value and its one-line meaning. Its domain says how a value is
checked (TypeOK), written in protocol words and written in ITF. From the
schema come the `State` type, `initial`, TypeOK, NoRegression's variables,
the ITF codec (`protocol/tools/itf.py`), the narration of a state and the variable
table of docs/protocol.md.

A state is an immutable, hashable NamedTuple of plain tuples, small ints,
strings and frozensets. A per-process variable is a tuple indexed by
process; the partial maps `readers[p]` and `acq[p]` are tuples indexed by
peek id holding the hold's time, or None where the map has no entry. A
variable that a configuration does not have (`present` is false: the alias
variables without an alias) is None (per process: None for every process),
so it never changes and is never shown. A frontier kept per index id
(`policy`, `sent`; `writer`, `standing` with `alias = per_id`) is a tuple
indexed by id, and a plain time where there is one value (spec 10.2), so
that without an alias the valuations are exactly those of section 3.

Section 11's variables are present only where their switch leaves its
default (`pub`, `parked`, `dirty` with a seal; `reports` and `reported` with retirement reports;
`cut` with physical cuts), so the defaults keep every earlier valuation. A
writer entry that no AllowCompaction has set yet under `floor = agent` is
`BOTTOM` (-1: below every time, so that a writer rising from it to a time is
no regression and `max` and `min` order it as the spec's `⊥`).

The spec's `rep[d]` (the set of processes that reported peek d retired) is
kept as its transpose, `reported[p]` (the peeks process p reported), with the
count `reports[d]` among the globals: the same information, one valuation for
one, so the same distinct states; but no global value names a process, so
the processes stay interchangeable (symmetry reduction), and the report that
completes the set is seen by the reporting process's step alone.
"""

from __future__ import annotations

from itertools import chain
from typing import Callable, NamedTuple

import attrs

from protocol.model.commands import (
    CREATE, CREATE_INDEX, DROP, EXPORT, HELLO, INTERACTIVE, KINDS, MAINTENANCE, bare, command_from_itf, command_text, command_to_itf, epoch_of, well_formed,
)
from protocol.model.where import (  # noqa: F401
    agent_floor, everywhere, peer_may_be_absent, per_id, unpaired, with_alias, with_created_index, with_cuts,
    with_markers, with_reconnections, with_reports, with_seal, with_silent_hello, with_stateless,
)

UNBORN, LIVE, DROPPED = 0, 1, 2
DF_NAMES = ("Unborn", "Live", "Dropped")
INDEX_NAMES = ("X", "Y")  # index id 0 is X; id 1 is Y, which re-exports X (spec 10.1)
GLOBAL, PROCESS = "global", "process"
BOTTOM = -1  # ⊥: a writer entry no AllowCompaction has set (floor = agent), below every time


def index_count(cfg) -> int:
    """I of spec 10.2: two index ids with a re-export alias, else one."""
    return 1 if getattr(cfg, "alias", "none") == "none" else 2


# ------------------------------------------------------------------ domains


def _time_ok(value, cfg) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= cfg.MaxTime


def _id_ok(value, bound: int) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value < bound


def _ints_within(low: int, high: int) -> Callable:
    """A quick test of an int in low..high (a bool is not one, as in `_time_ok`)."""
    return lambda value: type(value) is int and low <= value <= high


def _tuples_of(size: int, entry_ok: Callable) -> Callable:
    return lambda value: type(value) is tuple and len(value) == size and all(map(entry_ok, value))


def _ints_between(low: int, high: int, maybe_none: bool = False) -> Callable:
    """A quick test of a collection of ints in low..high (and None, if `maybe_none`), whatever
    its length: two passes in C, its entries' types and their least and greatest."""
    types = {int, type(None)} if maybe_none else {int}

    def accepts(values) -> bool:
        if not set(map(type, values)) <= types:
            return False
        ints = set(values)
        ints.discard(None)
        return not ints or (low <= min(ints) and max(ints) <= high)

    return accepts


def _int_tuples(size: int, low: int, high: int, maybe_none: bool = False) -> Callable:
    """A quick test of a tuple of `size` ints in low..high (and None, if `maybe_none`)."""
    if size <= 4:  # an entry at a time is quicker on a few
        entry_ok = _ints_within(low, high)
        return _tuples_of(size, (lambda entry: entry is None or entry_ok(entry)) if maybe_none else entry_ok)
    between = _ints_between(low, high, maybe_none)
    return lambda value: type(value) is tuple and len(value) == size and between(value)


def _argument_ok(name: str, value, cfg) -> bool:
    """A command argument in its domain: d a peek id, i an index id, t and f times."""
    if name == "d":
        return _id_ok(value, cfg.D)
    if name == "i":
        return _id_ok(value, index_count(cfg))
    return _time_ok(value, cfg)  # t, f, and a (the index's as_of)


def _dense(mapping: dict, size: int, default=None) -> tuple:
    """The map as a tuple indexed 0..size-1; a key outside that range is not of the domain
    (a KeyError, as for a missing key), never silently dropped."""
    if any(isinstance(key, bool) or key not in range(size) for key in mapping):
        raise KeyError(f"a key outside 0..{size - 1}")
    return tuple(mapping.get(key, default) for key in range(size))


def itf_number(value):
    """Plain Python from an ITF number (`{"#bigint": "..."}` is read too)."""
    if isinstance(value, dict) and "#bigint" in value:
        return int(value["#bigint"])
    return value


def itf_map(pairs) -> dict:
    return {"#map": [[key, value] for key, value in pairs]}


def from_itf_map(encoded) -> dict:
    return {itf_number(key): value for key, value in encoded["#map"]}


class Sizes(NamedTuple):
    """What decoding an ITF value needs to know of the configuration's shape."""

    P: int
    D: int


class Time:
    """A time `0..MaxTime`."""

    def initial(self, cfg):
        return 0

    def problem(self, value, cfg) -> str | None:
        return None if _time_ok(value, cfg) else f"is not a time 0..{cfg.MaxTime}"

    # `accepts(cfg)`, on each domain: a quick test of a value, with the configuration's
    # constants bound once, that never accepts what `problem` refuses. TypeOK asks `problem`
    # only where it says no, so it may say no to a rare valid value (a bool that `problem`
    # takes as a status): it need only be quick on the values a search makes.
    def accepts(self, cfg) -> Callable:
        return _ints_within(0, cfg.MaxTime)

    def text(self, value) -> str:
        return str(value)

    def to_itf(self, value):
        return value

    def from_itf(self, encoded, sizes: Sizes):
        return itf_number(encoded)

    def entries(self, value) -> tuple:
        """The times a frontier value holds (NoRegression compares them one by one)."""
        return (value,)

    def notation(self, value) -> list:
        """What a trace's legend explains of how `value` is written: (symbol, meaning) pairs."""
        return []


def _entry_text(value) -> str:
    return "⊥" if value == BOTTOM else str(value)


def _entry_to_itf(value):
    """A frontier entry in ITF: a time, or ⊥ as the Quint-style variant `{"tag": "Bottom"}`."""
    return {"tag": "Bottom", "value": {"#tup": []}} if value == BOTTOM else value


def _entry_from_itf(encoded):
    return BOTTOM if isinstance(encoded, dict) and encoded.get("tag") == "Bottom" else itf_number(encoded)


@attrs.frozen
class Frontier(Time):
    """A time per index id where `per_index(cfg)` (a tuple indexed by id), else one time;
    where `bottom(cfg)`, an entry may also be ⊥ (BOTTOM), and starts there."""

    per_index: Callable = attrs.field(eq=False)
    bottom: Callable = attrs.field(default=lambda cfg: False, eq=False)

    def initial(self, cfg):
        entry = BOTTOM if self.bottom(cfg) else 0
        return (entry,) * index_count(cfg) if self.per_index(cfg) else entry

    def _entry_ok(self, value, cfg) -> bool:
        return _time_ok(value, cfg) or (value == BOTTOM and type(value) is int and self.bottom(cfg))

    def accepts(self, cfg) -> Callable:
        entry_ok = _ints_within(BOTTOM if self.bottom(cfg) else 0, cfg.MaxTime)
        return _tuples_of(index_count(cfg), entry_ok) if self.per_index(cfg) else entry_ok

    def problem(self, value, cfg) -> str | None:
        if not self.per_index(cfg):
            if self._entry_ok(value, cfg):
                return None
            return f"is not a time 0..{cfg.MaxTime}" + (" or ⊥" if self.bottom(cfg) else "")
        if isinstance(value, tuple) and len(value) == index_count(cfg) and all(self._entry_ok(v, cfg) for v in value):
            return None
        return f"is not a time 0..{cfg.MaxTime} per index id"

    def text(self, value) -> str:
        return "<" + ", ".join(map(_entry_text, value)) + ">" if isinstance(value, tuple) else _entry_text(value)

    def notation(self, value) -> list:
        entries = value if isinstance(value, tuple) else (value,)
        return ([("<…>", "one value per index id, X's first")] if isinstance(value, tuple) else []) \
            + ([("⊥", "no value yet, below every time")] if BOTTOM in entries else [])

    def to_itf(self, value):
        return itf_map((i, _entry_to_itf(v)) for i, v in enumerate(value)) if isinstance(value, tuple) \
            else _entry_to_itf(value)

    def from_itf(self, encoded, sizes: Sizes):
        if isinstance(encoded, dict) and "#map" in encoded:
            entries = from_itf_map(encoded)
            return _dense({i: _entry_from_itf(t) for i, t in entries.items()}, len(entries))
        return _entry_from_itf(encoded)

    def entries(self, value) -> tuple:
        return value if isinstance(value, tuple) else (value,)


@attrs.frozen
class PerPeek:
    """One value per peek id: a status (`df`), a time (`as_of`) or an index id (`ix`)."""

    what: str  # "status", "time", "index" or "count" (of processes)

    def initial(self, cfg):
        return (UNBORN if self.what == "status" else 0,) * cfg.D

    def _value_ok(self, value, cfg) -> bool:
        if self.what == "status":
            return value in range(len(DF_NAMES))
        if self.what == "time":
            return _time_ok(value, cfg)
        if self.what == "count":
            return isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= cfg.P
        return _id_ok(value, index_count(cfg))

    def problem(self, value, cfg) -> str | None:
        if isinstance(value, tuple) and len(value) == cfg.D and all(self._value_ok(v, cfg) for v in value):
            return None
        return f"is not a {self.what} per peek id"

    def accepts(self, cfg) -> Callable:
        highest = {"status": len(DF_NAMES) - 1, "time": cfg.MaxTime, "count": cfg.P}.get(self.what)
        return _int_tuples(cfg.D, 0, index_count(cfg) - 1 if highest is None else highest)

    def text(self, value) -> str:
        shown = (DF_NAMES[v] for v in value) if self.what == "status" else map(str, value)
        return "<" + ", ".join(shown) + ">"

    def notation(self, value) -> list:
        return [("<…>", "one value per peek id, peek 0's first")]

    def to_itf(self, value):
        return itf_map((d, DF_NAMES[v] if self.what == "status" else v) for d, v in enumerate(value))

    def from_itf(self, encoded, sizes: Sizes):
        entries = from_itf_map(encoded)
        if self.what == "status":
            return _dense({d: DF_NAMES.index(v) for d, v in entries.items()}, sizes.D)
        return _dense({d: itf_number(v) for d, v in entries.items()}, sizes.D)


class PeekSet:
    """A set of peek ids."""

    def initial(self, cfg):
        return frozenset()

    def problem(self, value, cfg) -> str | None:
        if isinstance(value, frozenset) and all(_id_ok(d, cfg.D) for d in value):
            return None
        return "is not a set of peek ids"

    def accepts(self, cfg) -> Callable:
        between = _ints_between(0, self.bound(cfg) - 1)
        return lambda value: type(value) is frozenset and (not value or between(value))

    def bound(self, cfg) -> int:
        return cfg.D

    def text(self, value) -> str:
        return "{" + ", ".join(map(str, sorted(value))) + "}"

    def notation(self, value) -> list:
        return [("{…}", "a set of peek ids")]

    def to_itf(self, value):
        return {"#set": sorted(value)}

    def from_itf(self, encoded, sizes: Sizes):
        return frozenset(itf_number(v) for v in encoded["#set"])


class IndexSet(PeekSet):
    """A set of index ids (0 for X, 1 for Y): a set of peek ids' text and ITF, other ids."""

    def problem(self, value, cfg) -> str | None:
        if isinstance(value, frozenset) and all(_id_ok(i, index_count(cfg)) for i in value):
            return None
        return "is not a set of index ids"

    def bound(self, cfg) -> int:
        return index_count(cfg)

    def notation(self, value) -> list:
        return [("{…}", "a set of index ids (0 for X, 1 for Y)")]


class PartialMap:
    """A partial map peek id -> hold time, stored as a tuple per peek id with None for no entry."""

    def initial(self, cfg):
        return (None,) * cfg.D

    def problem(self, value, cfg) -> str | None:
        if isinstance(value, tuple) and len(value) == cfg.D and all(v is None or _time_ok(v, cfg) for v in value):
            return None
        return "is not a map peek id -> time"

    def accepts(self, cfg) -> Callable:
        return _int_tuples(cfg.D, 0, cfg.MaxTime, maybe_none=True)

    def text(self, value) -> str:
        return "{" + ", ".join(f"{d}: {t}" for d, t in enumerate(value) if t is not None) + "}"

    def notation(self, value) -> list:
        return [("{d: t}", "a map from peek id d to time t; a peek not listed has no entry")]

    def to_itf(self, value):
        return itf_map((d, t) for d, t in enumerate(value) if t is not None)

    def from_itf(self, encoded, sizes: Sizes):
        return _dense({d: itf_number(t) for d, t in from_itf_map(encoded).items()}, sizes.D)


class Flag:
    """A bool."""

    def initial(self, cfg):
        return False

    def problem(self, value, cfg) -> str | None:
        return None if type(value) is bool else "is not a bool"

    def accepts(self, cfg) -> Callable:
        return lambda value: type(value) is bool

    def text(self, value) -> str:
        return "TRUE" if value else "FALSE"

    def notation(self, value) -> list:
        return []

    def to_itf(self, value):
        return value

    def from_itf(self, encoded, sizes: Sizes):
        return encoded


class Epoch(Time):
    """An epoch `0..E`: the reconnections taken."""

    def problem(self, value, cfg) -> str | None:
        return None if _id_ok(value, cfg.E + 1) else f"is not an epoch 0..{cfg.E}"

    def accepts(self, cfg) -> Callable:
        return _ints_within(0, cfg.E)


class IndexStatus(Time):
    """The controller's index: `Unborn` or `Live` (spec 13.2)."""

    def initial(self, cfg):
        return UNBORN

    def problem(self, value, cfg) -> str | None:
        return None if value in (UNBORN, LIVE) and type(value) is int else "is not Unborn or Live"

    def accepts(self, cfg) -> Callable:
        return _ints_within(UNBORN, LIVE)

    def text(self, value) -> str:
        return DF_NAMES[value]

    def to_itf(self, value):
        return DF_NAMES[value]

    def from_itf(self, encoded, sizes: Sizes):
        return DF_NAMES.index(encoded)


def sent_here(kind: str, runtime: str, cfg) -> bool:
    """Whether the configuration sends commands of `kind` to `runtime` (spec 13.2: a peek's create
    and drop reach maintenance only through the stateless multiplexer, the index's create only
    where it is created, Hello only with section 13's reconnections)."""
    if kind == CREATE_INDEX:
        return with_created_index(cfg)
    if kind == HELLO:
        return with_markers(cfg)
    if kind in (CREATE, DROP) and runtime == MAINTENANCE:
        return with_stateless(cfg)
    return True


@attrs.frozen
class Queue:
    """A FIFO of the commands `runtime` applies."""

    runtime: str

    def initial(self, cfg):
        return ()

    def problem(self, value, cfg) -> str | None:
        if not isinstance(value, tuple) or not all(well_formed(c, self.runtime) for c in value):
            return f"holds a command the {self.runtime} runtime cannot receive"
        for command in value:
            epoch, plain = epoch_of(command), bare(command)
            if not sent_here(plain[0], self.runtime, cfg) or (epoch is None) == with_silent_hello(cfg):
                return f"holds {command_text(command)}, which this configuration never sends the {self.runtime} runtime"
            names = KINDS[plain[0]].field_names(plain)
            if not all(_argument_ok(name, v, cfg) for name, v in zip(names, plain[1:])):
                return f"holds {command_text(command)}, an argument of which is out of range"
            if epoch is not None and not epoch <= getattr(cfg, "E", 0):
                return f"holds {command_text(command)}, whose epoch is past E = {getattr(cfg, 'E', 0)}"
        return None

    def accepts(self, cfg) -> Callable:
        seen = set()  # commands `problem` found in range: a kind and plain ints

        def queue_ok(value) -> bool:
            if type(value) is not tuple or not set(map(type, value)) <= {tuple}:
                return False
            if not set(map(type, chain.from_iterable(value))) <= {str, int}:
                return False  # a bool (equal to 1 or 0, so `seen` would take it) or other: `problem` decides
            if not seen.issuperset(value):
                for command in value:
                    if command not in seen:
                        if self.problem((command,), cfg) is not None:
                            return False
                        seen.add(command)
            return True

        return queue_ok

    def text(self, value) -> str:
        return "[" + ", ".join(command_text(c) for c in value) + "]"

    def notation(self, value) -> list:
        """The queue's brackets, then each kind of command it holds, as commands.KINDS declares it."""
        found = [("[…]", "a command stream, the next command to apply first")]
        for command in value:
            plain = bare(command)
            kind = KINDS[plain[0]]
            fields = kind.field_names(plain)
            found.append((f"{kind.name}({', '.join(fields)})" if fields else kind.name, kind.meaning))
            if epoch_of(command) is not None:
                found.append(("c@e", "command c, sent in epoch e"))
        return found

    def to_itf(self, value):
        return [command_to_itf(c) for c in value]

    def from_itf(self, encoded, sizes: Sizes):
        return tuple(command_from_itf(c) for c in encoded)


# ------------------------------------------------------------------ the schema


def initial_maintenance_queue(cfg) -> tuple:
    """With an alias, Y exists from the start and each maintenance runtime has yet to export it."""
    return ((EXPORT,),) if with_alias(cfg) else ()


@attrs.frozen
class Variable:
    name: str
    scope: str  # GLOBAL or PROCESS
    domain: object
    meaning: str  # one line, in the world's terms
    short: str = ""  # a few words for a trace's legend, the abbreviation spelled out first
    rises: bool = False  # NoRegression: no step may lower it (every entry, for a frontier per id)
    where: Callable = attrs.field(default=everywhere, eq=False)  # whether a configuration has it (model/where.py)
    initial_value: Callable | None = attrs.field(default=None, eq=False)  # cfg -> value; else the domain's

    def initial(self, cfg):
        if not self.where(cfg):
            return None
        return self.initial_value(cfg) if self.initial_value else self.domain.initial(cfg)


def initial_standing(cfg):
    """The standing hold starts at 0, or absent (⊥) where the index is created late (spec 13.2)."""
    if with_created_index(cfg):
        return BOTTOM
    return (0,) * index_count(cfg) if per_id(cfg) else 0


def initial_index_status(cfg):
    return UNBORN if with_created_index(cfg) else LIVE


def initially_published(cfg) -> bool:
    return not with_created_index(cfg)


TIME = Time()
VARIABLES = (
    # Global: the controller, the environment and the multiplexer.
    Variable("policy", GLOBAL, Frontier(with_alias), "the controller's own compaction policy for the index (how far it would let the index compact if no peek held it); one per index id with an alias",
             rises=True,
             short="the controller's compaction policy"),
    Variable("sent", GLOBAL, Frontier(with_alias),
             "the last frontier the controller issued in `AllowCompaction` for the index; one per index id with an alias", rises=True,
             short="the last frontier the controller allowed in AllowCompaction"),
    Variable("upper", GLOBAL, TIME, "the index's write frontier: how far its data is complete (one arrangement, whichever id names it)", rises=True,
             short="the index's write frontier"),
    Variable("df", GLOBAL, PerPeek("status"), "the controller's view of peek dataflow `d`: `Unborn`, `Live` (it holds a read hold), `Dropped`",
             short="dataflow: the controller's view of each peek, Unborn, Live (held) or Dropped"),
    Variable("as_of", GLOBAL, PerPeek("time"), "the time peek `d` reads at; kept after the drop, because a queued create still carries it",
             short="the time each peek reads at"),
    Variable("ix", GLOBAL, PerPeek("index"), "the index id peek `d` reads: 0 for X, 1 for Y (alias only)",
             where=with_alias,
             short="index: the index id each peek reads, 0 for X, 1 for Y"),
    Variable("reports", GLOBAL, PerPeek("count"), "how many processes have reported peek `d`'s dataflow retired (with `ctl_release = report`; which ones is `reported[p]`)",
             where=with_reports,
             short="how many processes reported each peek retired"),
    Variable("caps", GLOBAL, PeekSet(), "the multiplexer's cap: the interactive dataflows whose `as_of` still bounds forwarded compaction (retired mechanism)",
             short="the multiplexer's cap: the peeks that cap forwarded compaction"),
    Variable("fwd", GLOBAL, TIME, "the last frontier the multiplexer forwarded to maintenance under the cap (retired mechanism)", rises=True,
             short="forwarded: the last frontier the multiplexer forwarded under the cap"),
    Variable("epoch", GLOBAL, Epoch(), "the reconnections the controller has taken (with `E >= 1`)", where=with_reconnections,
             short="the reconnections the controller has taken"),
    Variable("ixs", GLOBAL, IndexStatus(), "the controller's index: `Unborn` until it creates it in the stream, then `Live` (with `index = created`)",
             where=with_created_index, initial_value=initial_index_status,
             short="index status: the controller's index, Unborn or Live"),
    Variable("ix_as_of", GLOBAL, TIME, "the index's `as_of`, the time it was created at (with `index = created`)",
             where=with_created_index,
             short="the index's as_of"),
    # Per process p.
    Variable("mq", PROCESS, Queue(MAINTENANCE), "process `p`'s maintenance command stream, as the multiplexer emitted it (FIFO); with an alias it starts with `Export`",
             initial_value=initial_maintenance_queue,
             short="maintenance queue: process p's maintenance command stream"),
    Variable("iq", PROCESS, Queue(INTERACTIVE), "process `p`'s interactive command stream (FIFO)",
             short="interactive queue: process p's interactive command stream"),
    Variable("writer", PROCESS, Frontier(per_id, agent_floor),
             "the last `AllowCompaction` frontier maintenance applied on `p`, the publisher's logical floor (the seeds' `writer_logical`); one per index id with `alias = per_id`; ⊥ until the first with `floor = agent`", rises=True,
             short="the last AllowCompaction frontier maintenance applied on p"),
    Variable("standing", PROCESS, Frontier(per_id, peer_may_be_absent),
             "the standing hold, or peer hold: the last compaction frontier `p`'s interactive runtime applied; one per index id with `alias = per_id`; ⊥ while no peer hold is registered (section 13)",
             rises=True, initial_value=initial_standing,
             short="the standing (peer) hold: the last compaction frontier p's interactive runtime applied"),
    Variable("since", PROCESS, TIME, "the published logical `since` of the shared arrangement on `p` (one publication point for both ids)", rises=True,
             short="the published logical since on p"),
    Variable("physical", PROCESS, TIME, "the physical compaction frontier `p`'s publisher forwarded",
             rises=True,
             short="the physical compaction frontier p's publisher forwarded"),
    Variable("readers", PROCESS, PartialMap(), "import registrations of dataflows rendered on `p`'s interactive runtime: dataflow -> hold",
             short="the registrations of readers rendered on p: peek -> hold"),
    Variable("acq", PROCESS, PartialMap(), "holds installed on `p`'s maintenance runtime by `AcquireHolds` (retired): dataflow -> hold",
             short="acquired: holds AcquireHolds installed on p's maintenance runtime: peek -> hold"),
    Variable("released", PROCESS, PeekSet(), "releases recorded on `p` but not yet acted on by maintenance (retired)",
             short="the releases recorded on p, not yet reclaimed"),
    Variable("stranded", PROCESS, PeekSet(),
             "readers on `p` registered in a placeholder that a re-export replaced: their import never reads (alias only)", where=with_alias,
             short="the readers on p whose placeholder a re-export replaced"),
    Variable("pub", PROCESS, TIME, "the upper `p`'s publisher sink has published: how far the chain covers (with a seal)",
             rises=True, where=with_seal,
             short="published upper: how far p's publisher sink has published"),
    Variable("parked", PROCESS, PeekSet(), "peeks rendered on `p` and not yet served: they wait for the seal (with a seal)",
             where=with_seal,
             short="the peeks rendered on p waiting for the seal"),
    Variable("dirty", PROCESS, IndexSet(), "index ids notified on `p` and not yet re-examined (with a seal)",
             where=with_seal,
             short="the index ids notified on p, not yet re-examined"),
    Variable("reported", PROCESS, PeekSet(), "the peeks whose dataflow `p` has reported retired to the controller (with `ctl_release = report`)",
             where=with_reports,
             short="the peeks p has reported retired"),
    Variable("cut", PROCESS, PartialMap(), "each registered reader's declared cut on `p`: where it lets the chain merge (with `physical = from_cuts`)",
             where=with_cuts,
             short="each registered reader's declared cut on p: peek -> cut"),
    Variable("published", PROCESS, Flag(), "maintenance on `p` has published the index (with `index = created`)",
             where=with_created_index, initial_value=initially_published,
             short="whether maintenance on p has published the index"),
    Variable("orphan", PROCESS, Frontier(lambda cfg: False, lambda cfg: True),
             "the hold `p`'s publisher registered at publication that no peer takes over, or ⊥ (with `pairing = none`)",
             rises=True, where=unpaired,
             short="the publisher's hold on p that no peer took over"),
    Variable("drop_applied", PROCESS, Flag(), "`p`'s interactive runtime applied a `Drop` since the controller last created the peek (with `hello = silent`)",
             where=with_silent_hello,
             short="whether p's interactive runtime applied a Drop since the last create"),
)


def state_type(variables) -> type:
    """The NamedTuple of a schema's variables, in the schema's order."""
    return NamedTuple("State", [(variable.name, object) for variable in variables])


def check_schema(state_class: type, variables) -> None:
    """Fail at import, naming the variable, if the state type and the schema disagree."""
    declared = tuple(variable.name for variable in variables)
    if tuple(state_class._fields) != declared:
        for position, (field, name) in enumerate(zip(state_class._fields, declared)):
            if field != name:
                raise TypeError(f"State field {position} is {field!r} but the schema declares {name!r} there")
        raise TypeError(f"State has fields {state_class._fields} but the schema declares {declared}")
    globals_seen = True
    for variable in variables:
        if variable.scope not in (GLOBAL, PROCESS):
            raise TypeError(f"variable {variable.name!r} has scope {variable.scope!r}: give GLOBAL or PROCESS")
        if variable.scope == GLOBAL and not globals_seen:
            raise TypeError(f"global variable {variable.name!r} follows a per-process one: declare globals first")
        globals_seen = variable.scope == GLOBAL


class Derived(NamedTuple):
    """What this module derives from a schema, named as the module's attributes."""

    State: type
    BY_NAME: dict
    GLOBAL_VARIABLES: tuple
    PROCESS_VARIABLES: tuple
    RISING: tuple


def derived(variables) -> Derived:
    """The state type and the variable lists of a schema, checked against each other."""
    state_class = state_type(variables)
    check_schema(state_class, variables)
    return Derived(
        state_class,
        {variable.name: variable for variable in variables},
        tuple(v.name for v in variables if v.scope == GLOBAL),
        tuple(v.name for v in variables if v.scope == PROCESS),
        tuple(v.name for v in variables if v.rises),
    )


_DERIVED: dict = {}  # id(variables) -> (variables, what they derive)


def current() -> Derived:
    """What the schema `VARIABLES` derives, computed once per schema: a schema extended
    at run time (tests/test_extending.py) is derived anew, the same one again is not
    (so `State` stays one class while the schema does)."""
    held = _DERIVED.get(id(VARIABLES))
    if held is None or held[0] is not VARIABLES:
        held = _DERIVED[id(VARIABLES)] = (VARIABLES, derived(VARIABLES))
    return held[1]


def __getattr__(name: str):
    """`State`, `BY_NAME`, `GLOBAL_VARIABLES`, `PROCESS_VARIABLES`, `RISING`: derived from the
    schema when asked for (`schema.State`), never bound at import."""
    if name in Derived._fields:
        return getattr(current(), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


current()  # fail at import, naming the variable, if the schema is inconsistent


def initial(cfg) -> State:
    """The single initial state of spec sections 3 and 10.2."""
    values = []
    for variable in VARIABLES:
        value = variable.initial(cfg)
        values.append(value if variable.scope == GLOBAL else (value,) * cfg.P)
    return current().State(*values)


def variables_table() -> str:
    """The variable table of docs/protocol.md, derived from the schema (`docs --write`)."""
    rows = ["| variable | scope | only rises | stands for |", "|---|---|---|---|"]
    for v in VARIABLES:
        name = f"`{v.name}[p]`" if v.scope == PROCESS else f"`{v.name}`"
        rows.append(f"| {name} | {v.scope} | {'yes' if v.rises else ''} | {v.meaning} |")
    return "\n".join(rows) + "\n"


def shown(state) -> list[Variable]:
    """The variables this state has (the alias variables only with an alias)."""
    return [v for v in VARIABLES if getattr(state, v.name) is not None
            and not (v.scope == PROCESS and all(x is None for x in getattr(state, v.name)))]


# ------------------------------------------------------------------ derived


def ctl_since(s: State, i: int = 0) -> int:
    """The controller's read frontier for index i: its policy, held back by the as_of of
    every peek on i whose read hold it still keeps (spec 11.2's `held`)."""
    floor = frontier_at(s.policy, i)
    for d, status in enumerate(s.df):
        if status != UNBORN and s.as_of[d] < floor and index_of_peek(s, d) == i and ctl_holds(s, d):
            floor = s.as_of[d]
    return floor


def ctl_holds(s: State, d: int) -> bool:
    """held(d) of spec 11.2: the controller keeps peek d's read hold while it is live and,
    with retirement reports, after the drop until every process has reported it retired."""
    status = s.df[d]
    if status == LIVE:
        return True
    return status == DROPPED and s.reports is not None and s.reports[d] < len(s.since)


def servable(s: State, p: int, d: int) -> bool:
    """Peek d can be served on p: its import reads the arrangement and p's published
    upper has passed its as_of (the data it reads is sealed)."""
    return backed(s, p, d) and s.pub[p] > s.as_of[d]


def ids(s: State, cfg, p: int) -> frozenset:
    """The index ids a seal on p notifies: X, and Y once exported there when a
    re-export installs its own seal signal (`seal_alias = closure`)."""
    if s.ix is not None and cfg.seal_alias == "closure" and exported(s, p):
        return frozenset((0, 1))
    return frozenset((0,))


def notify(s: State, p: int, notified) -> State:
    """notify(p, S) (part of a step): mark dirty on p every id of S that a parked peek
    reads; an id no parked peek reads is not recorded (re-examining it changes nothing)."""
    read = {index_of_peek(s, d) for d in s.parked[p]}
    marked = s.dirty[p] | (read & set(notified))
    if marked == s.dirty[p]:
        return s
    return s._replace(dirty=replace_at(s.dirty, p, frozenset(marked)))


def index_of_peek(s: State, d: int) -> int:
    """ix[d]: the index id peek d reads (0 without an alias)."""
    return 0 if s.ix is None else s.ix[d]


def exported(s: State, p: int) -> bool:
    """Process p's maintenance runtime has rendered Y's re-export (spec 10.2)."""
    return (EXPORT,) not in s.mq[p]


def stranded_on(s: State, p: int) -> frozenset:
    """stranded[p]: empty where the configuration has no alias (and so no entry)."""
    return s.stranded[p] or frozenset()


def backed(s: State, p: int, d: int) -> bool:
    """Peek d's import on p reads the published arrangement, not an empty placeholder."""
    return index_of_peek(s, d) == 0 or (exported(s, p) and d not in stranded_on(s, p))


def frontier_at(value, i: int) -> int:
    """Entry i of a frontier kept per index id; the frontier itself where there is one."""
    return value if isinstance(value, int) else value[i]


def with_frontier(value, i: int, new: int):
    """The frontier with entry i set to `new` (the whole frontier where there is one)."""
    return new if isinstance(value, int) else replace_at(value, i, new)


def held(partial_map: tuple) -> dict:
    """The entries of a partial map peek -> hold."""
    return {d: t for d, t in enumerate(partial_map) if t is not None}


def replace_at(values: tuple, index: int, value) -> tuple:
    """`values` with position `index` set to `value`."""
    return values[:index] + (value,) + values[index + 1:]


def append_all(queues: tuple, *commands) -> tuple:
    """Append `commands` to the queue of every process, in increasing p."""
    return tuple(queue + commands for queue in queues)
