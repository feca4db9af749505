"""What a step did, as plain data: the events an action records beside its next state.

Every action and every command's effect (protocol/model/actions.py) takes an
optional `record`, a list, and appends to it one small frozen event per
thing that happened (a peek created, a compaction held back, a hold
raised), declared there, right beside the effect that records it. Each
event kind says, itself, what happened in protocol words (`words`) and what
it draws in the sequence diagram (`drawing`), so narration
(protocol/render/narrate.py) and drawing (protocol/render/export.py) only render events:
neither computes a bound, a frontier or a guard. The search passes no
recorder (`record` is None), so it pays nothing; `protocol.model.explain`
re-runs a step with one to narrate it.

This module holds what the events are built of: the base class and its
registry `EVENT_KINDS` (every kind by name: the coverage targets of a
generated test suite), the drawing's pieces, and the phrases several
events share.
"""

from __future__ import annotations

from typing import NamedTuple

import attrs

from protocol.model import state as schema
from protocol.model.commands import COMPACT, INTERACTIVE, MAINTENANCE, command_text
from protocol.model.state import INDEX_NAMES

EVENT_KINDS: dict[str, type] = {}  # kind name -> its event class


def event(cls):
    """Declare an event kind: a frozen attrs class, registered by its name."""
    cls = attrs.frozen(cls)
    EVENT_KINDS[cls.__name__] = cls
    return cls


@attrs.frozen
class Event:
    """Something a step did. A kind defines `words` (a clause in protocol words) and
    `drawing` (the pieces below); the first event of a step heads its sentence and says
    how the words of the events after it join (`joined`)."""

    @property
    def kind(self) -> str:
        return type(self).__name__

    def words(self) -> str:
        raise NotImplementedError(f"event {self.kind} has no words")

    def drawing(self) -> tuple:
        raise NotImplementedError(f"event {self.kind} has no drawing")

    def joined(self, clauses: list[str]) -> str:
        """The words of the step's later events, as they follow this one's."""
        return "".join("; " + clause for clause in clauses)


def listed(clauses: list[str]) -> str:
    """`joined` for a head whose clauses read as a list: ", a, b, and c"."""
    if not clauses:
        return ""
    return "".join(", " + clause for clause in clauses[:-1]) + ", and " + clauses[-1]


# ------------------------------------------------------------ the drawing

CONTROLLER_LANE, MULTIPLEXER_LANE = "controller", "multiplexer"
LANES = {MAINTENANCE: "maint", INTERACTIVE: "inter"}  # a runtime's lane, before its process number


def lane(runtime: str, p: int) -> str:
    """A process's lane: its maintenance or interactive runtime, or its publisher ("pub")."""
    return f"{LANES.get(runtime, runtime)}{p}"


class StepNote(NamedTuple):
    """Where the step's note (its number and label) stands, and what it adds after them."""

    over: str
    suffix: str = ""


class Call(NamedTuple):
    """A message from one lane to another (a solid arrow)."""

    source: str
    target: str
    text: str


class Send(NamedTuple):
    """The multiplexer queues a command on the streams of `processes` (asynchronous arrows)."""

    runtime: str
    text: str
    processes: tuple


def handed(runtime: str, p: int, variable: str, words: str, old, new) -> tuple:
    """A runtime hands its publisher a changed value it reads: the arrow, or nothing."""
    if old == new:
        return ()
    return (Call(lane(runtime, p), lane("pub", p), f"{words} {value_text(variable, new)}"),)


def sent_everywhere(runtime: str, command: tuple, P: int) -> Send:
    return Send(runtime, command_text(command), tuple(range(P)))


# ------------------------------------------------------------ shared phrases


def value_text(variable: str, value) -> str:
    """A variable's value (one process's, for a per-process variable) as its domain writes it."""
    return schema.BY_NAME[variable].domain.text(value)


def index_name(i: int, indexed: bool) -> str:
    """How a sentence names index id i: `index` with one index, `X` or `Y` with two."""
    return INDEX_NAMES[i] if indexed else "index"


def processes_phrase(processes: tuple, total: int) -> str:
    if len(processes) == total:
        return "every process's" if total > 1 else "the process's"
    return " and ".join(f"process {p}'s" for p in processes)


def forwards(f: int) -> str:
    return f"the multiplexer forwards {command_text((COMPACT, f))} to every maintenance runtime"


def peeks_phrase(peeks) -> str:
    return " and ".join(f"peek {d}" for d in peeks)
