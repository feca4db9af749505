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

KINDS = {
    kind.name: kind
    for kind in (
        CommandKind(CREATE, ("d", "t"), ("d", "i", "t"), (INTERACTIVE,),
                    "render peek d, reading index i at as_of t"),
        CommandKind(DROP, ("d",), ("d",), (INTERACTIVE,), "drop peek d's dataflow"),
        CommandKind(COMPACT, ("f",), ("i", "f"), (MAINTENANCE, INTERACTIVE),
                    "AllowCompaction: index i may compact up to f"),
        CommandKind(ACQUIRE, ("d", "t"), ("d", "t"), (MAINTENANCE,),
                    "install a read hold at t for peek d on the shared arrangement"),
        CommandKind(RELEASE, ("d",), ("d",), (MAINTENANCE, INTERACTIVE), "release peek d's acquired hold"),
        CommandKind(EXPORT, (), (), (MAINTENANCE,),
                    "render Y's re-export of X and publish Y on this process"),
    )
}


def fields(command: tuple) -> dict:
    """A command's arguments by name: `fields(("Create", 0, 1, 0)) == {"d": 0, "i": 1, "t": 0}`."""
    kind = KINDS[command[0]]
    return dict(zip(kind.field_names(command), command[1:]))


def well_formed(command, runtime: str) -> bool:
    """The command is of a kind `runtime` applies, with one of its kind's field lists."""
    if not isinstance(command, tuple) or not command or command[0] not in KINDS:
        return False
    kind = KINDS[command[0]]
    return runtime in kind.runtimes and len(command) - 1 in (len(kind.fields), len(kind.indexed_fields))


def index_of(command: tuple) -> int:
    """The index id a command is about: 0 where it carries none (one index)."""
    return fields(command).get("i", 0)


def command_text(command: tuple) -> str:
    """As the spec writes it: `Create(0, 0)`, `Compact(1, 2)`, `Export`."""
    kind, *args = command
    return f"{kind}({', '.join(map(str, args))})" if args else kind


# --------------------------------------------------------------- constructors
# `indexed` is True when the configuration has two index ids (spec 10.2).


def create(d: int, i: int, t: int, indexed: bool) -> tuple:
    return (CREATE, d, i, t) if indexed else (CREATE, d, t)


def compact(i: int, f: int, indexed: bool) -> tuple:
    return (COMPACT, i, f) if indexed else (COMPACT, f)


# ----------------------------------------------------------------------- ITF


def command_to_itf(command: tuple) -> dict:
    """A command as a Quint variant: `{"tag": "Create", "value": {"d": 0, "t": 0}}`."""
    return {"tag": command[0], "value": fields(command)}


def command_from_itf(encoded: dict) -> tuple:
    kind, value = KINDS[encoded["tag"]], encoded["value"]
    names = kind.indexed_fields if "i" in value else kind.fields
    return (kind.name, *(_number(value[name]) for name in names))


def _number(value):
    """Plain Python from an ITF number (`{"#bigint": "..."}` is read too)."""
    return int(value["#bigint"]) if isinstance(value, dict) and "#bigint" in value else value
