"""The commands on the runtimes' queues (model-spec sections 3 and 10.2), declared once.

A command is a short tuple whose first element names its kind:
`("Create", d, t)`, `("Compact", f)`, ... With two index ids (a re-export
alias, spec section 10) the commands about an index carry its id as well:
`("Create", d, i, t)`, `("Compact", i, f)`. So a command says by its length
which form it has, and a configuration with one index keeps the commands,
and so the states and the counts, of sections 1 to 9.

Each kind declares its fields in both forms, the runtimes that apply it,
and what it means. Its effect on each runtime is one small function in
`actions.py` (`MAINTENANCE_EFFECTS`, `INTERACTIVE_EFFECTS`), its words one
in `narrate.py`; tests/test_declarations.py fails, naming the gap, when a
kind lacks either for a runtime it names.
"""

from __future__ import annotations

import attrs

MAINTENANCE, INTERACTIVE = "maintenance", "interactive"


@attrs.frozen
class CommandKind:
    name: str
    fields: tuple  # as written with one index id, e.g. ("d", "t")
    indexed_fields: tuple  # as written with two index ids, e.g. ("d", "i", "t")
    runtimes: tuple  # the runtimes whose queue may hold it
    meaning: str

    def field_names(self, command: tuple) -> tuple:
        """The names of `command`'s arguments, in the form its length says."""
        return self.indexed_fields if len(command) - 1 == len(self.indexed_fields) else self.fields


CREATE, DROP, COMPACT, ACQUIRE, RELEASE, EXPORT = "Create", "Drop", "Compact", "Acquire", "Release", "Export"
CREATE_INDEX, HELLO = "CreateIndex", "Hello"  # spec 13.2: the index's create, the reconnection marker

KINDS = {
    kind.name: kind
    for kind in (
        CommandKind(CREATE, ("d", "t"), ("d", "i", "t"), (INTERACTIVE, MAINTENANCE),
                    "render peek d, reading index i at as_of t (on maintenance, with the stateless multiplexer: "
                    "record the peek's exports as peers)"),
        CommandKind(DROP, ("d",), ("d",), (INTERACTIVE, MAINTENANCE),
                    "drop peek d's dataflow (on maintenance: forget its peer record)"),
        CommandKind(COMPACT, ("f",), ("i", "f"), (MAINTENANCE, INTERACTIVE),
                    "AllowCompaction: index i may compact up to f"),
        CommandKind(ACQUIRE, ("d", "t"), ("d", "t"), (MAINTENANCE,),
                    "install a read hold at t for peek d on the shared arrangement"),
        CommandKind(RELEASE, ("d",), ("d",), (MAINTENANCE, INTERACTIVE), "release peek d's acquired hold"),
        CommandKind(EXPORT, (), (), (MAINTENANCE,),
                    "render Y's re-export of X and publish Y on this process"),
        CommandKind(CREATE_INDEX, ("a",), ("a",), (MAINTENANCE, INTERACTIVE),
                    "the index's CreateDataflow at as_of a: maintenance renders and publishes it, the "
                    "interactive runtime records it as a peer"),
        CommandKind(HELLO, (), (), (MAINTENANCE, INTERACTIVE),
                    "a reconnection: the runtime reconciles against the new connection's history"),
    )
}

# Spec 12.6: with `hello = silent` every command carries the epoch in which the controller
# sent it, written after its arguments behind this mark: ("Create", 0, 0, "@", 1) is
# Create(0, 0)@1. No step reads it; it tells queue contents apart, as the design's own
# commands' `epoch` field does.
EPOCH_MARK = "@"


def with_epoch(command: tuple, epoch: int | None) -> tuple:
    """`command` as sent in `epoch` (unchanged where commands carry no epoch: None)."""
    return command if epoch is None else command + (EPOCH_MARK, epoch)


def epoch_of(command: tuple) -> int | None:
    """The epoch a command carries, or None."""
    return command[-1] if len(command) >= 3 and command[-2] == EPOCH_MARK else None


def bare(command: tuple) -> tuple:
    """The command without the epoch it carries (itself where it carries none)."""
    return command[:-2] if len(command) >= 3 and command[-2] == EPOCH_MARK else command


def fields(command: tuple) -> dict:
    """A command's arguments by name: `fields(("Create", 0, 1, 0)) == {"d": 0, "i": 1, "t": 0}`."""
    command = bare(command)
    kind = KINDS[command[0]]
    return dict(zip(kind.field_names(command), command[1:]))


def well_formed(command, runtime: str) -> bool:
    """The command is of a kind `runtime` applies, with one of its kind's field lists."""
    if not isinstance(command, tuple) or not command or command[0] not in KINDS:
        return False
    if len(command) >= 3 and command[-2] == EPOCH_MARK:
        if type(command[-1]) is not int or command[-1] < 0:
            return False
        command = bare(command)
    kind = KINDS[command[0]]
    return runtime in kind.runtimes and len(command) - 1 in (len(kind.fields), len(kind.indexed_fields))


def index_of(command: tuple) -> int:
    """The index id a command is about: 0 where it carries none (one index)."""
    return fields(command).get("i", 0)


def command_text(command: tuple) -> str:
    """As the spec writes it: `Create(0, 0)`, `Compact(1, 2)`, `Export`."""
    epoch = epoch_of(command)
    kind, *args = bare(command)
    text = f"{kind}({', '.join(map(str, args))})" if args else kind
    return text if epoch is None else f"{text}@{epoch}"


# --------------------------------------------------------------- constructors
# `indexed` is True when the configuration has two index ids (spec 10.2).


def create(d: int, i: int, t: int, indexed: bool) -> tuple:
    return (CREATE, d, i, t) if indexed else (CREATE, d, t)


def compact(i: int, f: int, indexed: bool) -> tuple:
    return (COMPACT, i, f) if indexed else (COMPACT, f)


# ----------------------------------------------------------------------- ITF


def command_to_itf(command: tuple) -> dict:
    """A command as a Quint variant: `{"tag": "Create", "value": {"d": 0, "t": 0}}`."""
    epoch = epoch_of(command)
    return {"tag": command[0], "value": {**fields(command), **({} if epoch is None else {"epoch": epoch})}}


def command_from_itf(encoded: dict) -> tuple:
    kind, value = KINDS[encoded["tag"]], encoded["value"]
    names = kind.indexed_fields if "i" in value else kind.fields
    command = (kind.name, *(_number(value[name]) for name in names))
    return with_epoch(command, _number(value["epoch"])) if "epoch" in value else command


def _number(value):
    """Plain Python from an ITF number (`{"#bigint": "..."}` is read too)."""
    return int(value["#bigint"]) if isinstance(value, dict) and "#bigint" in value else value
