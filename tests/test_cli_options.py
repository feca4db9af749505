"""The command line is parsed once into typed options at the boundary (protocol/cli/options.py):
each subcommand gets an attrs frozen instance, and no code below protocol/cli/ reads an
argparse namespace (tests/test_layout.py: nor imports argparse)."""

from __future__ import annotations

import argparse
import ast
import sys
from pathlib import Path

import attrs
import pytest

from helpers import cli  # noqa: F401  (a fixture)

PROTOCOL = Path(__file__).resolve().parent.parent / "protocol"
NAMESPACE_NAMES = {"args", "namespace", "ns", "parsed", "arguments"}


def below_cli() -> list[Path]:
    return [path for path in sorted(PROTOCOL.rglob("*.py")) if "cli" not in path.relative_to(PROTOCOL).parts]


def namespace_reads(tree: ast.AST) -> list[str]:
    """Each function's reads of an attribute of a parameter named as a namespace is (`args.x`),
    and each parameter annotated as one."""
    found = []
    for function in (node for node in ast.walk(tree) if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))):
        parameters = [*function.args.posonlyargs, *function.args.args, *function.args.kwonlyargs]
        named = {parameter.arg for parameter in parameters} & NAMESPACE_NAMES
        for parameter in parameters:
            if parameter.annotation is not None and "Namespace" in ast.unparse(parameter.annotation):
                found.append(f"{function.name}({parameter.arg}: {ast.unparse(parameter.annotation)})")
        for node in ast.walk(function):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in named:
                found.append(f"{function.name}: {node.value.id}.{node.attr}")
    return found


def test_no_function_below_cli_reads_a_namespace():
    found = {str(path.relative_to(PROTOCOL)): reads for path in below_cli()
             if (reads := namespace_reads(ast.parse(path.read_text())))}
    assert found == {}


def test_the_check_finds_a_namespace_read():
    # It can fail: a function reading args.symmetry, as check.py's callers once did.
    tree = ast.parse("def explore(cfg, args):\n    return args.symmetry\n"
                     "def render(x, options: argparse.Namespace):\n    return x\n")
    assert namespace_reads(tree) == ["explore: args.symmetry", "render(options: argparse.Namespace)"]


class PoisonedNamespace(argparse.Namespace):
    """A namespace whose attributes only protocol/cli/ (and argparse itself) may read."""

    def __getattribute__(self, name):
        caller = sys._getframe(1).f_globals.get("__name__", "")
        if not (caller.startswith(("protocol.cli", "argparse")) or name.startswith("__")):
            raise AssertionError(f"{caller} read the namespace's {name!r}")
        return super().__getattribute__(name)


@pytest.fixture
def poisoned_namespace(monkeypatch):
    """protocol's parser returning a PoisonedNamespace."""
    from protocol.cli.common import Parser

    parse = Parser.parse_args
    monkeypatch.setattr(Parser, "parse_args", lambda self, args=None, namespace=None: parse(
        self, args, namespace if namespace is not None else PoisonedNamespace()))


def test_the_poisoned_namespace_can_fail(poisoned_namespace):
    from protocol.cli.main import build_parser

    parsed = build_parser("list").parse_args(["list"])
    assert isinstance(parsed, PoisonedNamespace)
    with pytest.raises(AssertionError, match="read the namespace's 'command'"):
        parsed.command  # noqa: B018 - read from tests/, outside protocol/cli/


@pytest.mark.parametrize("argv", [
    ("check", "HoldsRouted", "-c", "MaxTime=1", "--symmetry", "--no-liveness"),
    ("check", "HoldsRouted", "-c", "MaxTime=1", "--format", "markdown"),
    ("check", "HoldsRouted", "-c", "MaxTime=1", "--json", "--workers", "2"),
    ("list",),
    ("simulate", "Holds", "--walks", "3", "--depth", "5", "--seed", "1"),
    ("graph", "HoldsRouted", "-c", "MaxTime=1", "--format", "dot"),
], ids=lambda argv: "-".join(argv[:2] + argv[-1:]))
def test_a_namespace_is_read_only_in_protocol_cli(cli, poisoned_namespace, argv):  # noqa: F811
    code, out, err = cli(*argv)
    assert code in (0, 1) and "Traceback" not in err, err
    assert out


def test_a_subcommand_gets_typed_frozen_options(cli, monkeypatch):  # noqa: F811
    import protocol.cli.check as check

    received = []
    monkeypatch.setattr(check, "run", lambda options: received.append(options) or 0)
    assert cli("check", "Holds", "-c", "MaxTime=1", "-c", "D=0", "--no-liveness")[0] == 0
    (options,) = received
    assert type(options).__name__ == "CheckOptions" and attrs.has(type(options))
    assert not isinstance(options, argparse.Namespace)
    assert options.names == ("Holds",) and options.constant == ("MaxTime=1", "D=0") and options.no_liveness is True
    fields = attrs.fields_dict(type(options))
    assert fields["symmetry"].type is bool and fields["constant"].type is tuple
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        options.symmetry = True
