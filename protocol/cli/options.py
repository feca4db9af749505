"""The command line, parsed once into typed options at the boundary.

`dispatch` (main.py) parses argv with argparse and hands the subcommand an instance
of an attrs frozen class made from the subcommand's parser (`CheckOptions`,
`ListOptions`, ...): one field per option, typed by what argparse parses it as
(a flag a bool, a repeated or multiple option a tuple), immutable. No argparse
namespace goes further: a subcommand reads its options, and passes plain values to
protocol/run.py, protocol/render/ and protocol/tools/ (tests/test_layout.py checks
that no module below protocol/cli/ reads one).
"""

from __future__ import annotations

import argparse
import typing
import attrs

# What argparse adds to a namespace that is no option: the subcommand's name and its function.
NOT_OPTIONS = ("command", "run")


def field_type(action: argparse.Action) -> object:
    """The type of the value argparse parses `action` into (after lists become tuples)."""
    if isinstance(action, (argparse._StoreTrueAction, argparse._StoreFalseAction)):
        return bool
    if isinstance(action, (argparse._AppendAction, argparse._ExtendAction)) or action.nargs not in (None, "?"):
        return tuple
    if isinstance(action.type, type):
        return action.type | None if action.default is None else action.type
    try:
        returns = typing.get_type_hints(action.type).get("return") if callable(action.type) else None
    except (NameError, TypeError):  # a parse function whose hints name what is not importable here
        returns = None
    if returns is not None:
        return returns | None if action.default is None else returns
    return object


def frozen(value):
    """A parsed value made immutable: a list as a tuple."""
    return tuple(frozen(item) for item in value) if isinstance(value, list) else value


def options_class(command: str, parser: argparse.ArgumentParser) -> type:
    """The attrs frozen class of `command`'s options, from its parser's actions."""
    fields = {}
    for action in parser._actions:  # argparse keeps no public list of a parser's options
        if action.dest in (argparse.SUPPRESS, *NOT_OPTIONS) or action.dest in fields:
            continue
        fields[action.dest] = attrs.field(type=field_type(action))
    for name, value in parser._defaults.items():  # set_defaults: what a subcommand fixes, not asks
        if name not in NOT_OPTIONS and name not in fields:
            fields[name] = attrs.field(type=type(value))
    name = "".join(part.capitalize() for part in command.split("-")) + "Options"
    return attrs.make_class(name, fields, frozen=True, slots=True)


def typed(command: str, parser: argparse.ArgumentParser, namespace: argparse.Namespace):
    """`namespace` (what `parser` parsed for `command`) as `options_class`'s instance."""
    cls = options_class(command, parser)
    values = vars(namespace)
    return cls(**{field.name: frozen(values.get(field.name)) for field in attrs.fields(cls)})
