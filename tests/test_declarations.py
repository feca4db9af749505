"""The model declared once: every action, command kind, variable and property has
each of the pieces the rest of the tool derives from it, and nothing else names them.

Each check names what is missing, so that adding a mechanism and forgetting a
piece fails here, not as a crash or a silently degraded narration elsewhere.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import inspect
import pkgutil
from functools import lru_cache
from pathlib import Path

import attrs
import pytest

from protocol import properties
import protocol
from protocol.model import actions
from protocol.model import commands
from protocol.model.config import SWITCHES, Config
from protocol.engine import Footprint
from protocol.model.state import VARIABLES, State, check_schema, state_type

ROOT = Path(protocol.__file__).resolve().parent
EVERY_CONFIG = [Config(), Config(alias="per_id", reexport="overwrite", P=1), Config(cap=True, reconnect=True),
                Config(acquire="release_on_maintenance")]


def records(function) -> bool:
    """The step or effect takes the `record` list its events go to (protocol/model/events.py)."""
    return "record" in inspect.signature(function).parameters


def missing_pieces_of_actions() -> list[str]:
    found = []
    for action in actions.ACTIONS:
        for piece in ("step", "parameters", "footprint"):
            if getattr(action, piece) is None:
                found.append(f"action {action.name} has no {piece}")
        if action.step is not None and not records(action.step):
            found.append(f"action {action.name}'s step takes no record for its events")
        for cfg in EVERY_CONFIG:
            if not action.where(cfg):
                continue
            for label_args, keywords in action.parameters(cfg):
                footprint = action.footprint(cfg, keywords.get("p"))
                if not isinstance(footprint, Footprint):
                    found.append(f"action {action.name}'s footprint is not a Footprint under {cfg}")
    return found


def missing_pieces_of_commands() -> list[str]:
    found = []
    for kind in commands.KINDS.values():
        if not kind.meaning:
            found.append(f"command {kind.name} has no meaning")
        for runtime, effects in (
            (commands.MAINTENANCE, actions.MAINTENANCE_EFFECTS),
            (commands.INTERACTIVE, actions.INTERACTIVE_EFFECTS),
        ):
            if runtime in kind.runtimes and kind.name not in effects:
                found.append(f"command {kind.name} is applied by {runtime} but has no effect there")
            elif runtime in kind.runtimes and not records(effects[kind.name]):
                found.append(f"command {kind.name}'s effect on {runtime} takes no record for its events")
            if runtime not in kind.runtimes and kind.name in effects:
                found.append(f"command {kind.name} has a {runtime} effect but {runtime} never receives it")
    return found


def test_every_action_has_its_step_parameters_and_footprint_and_records_its_events():
    assert missing_pieces_of_actions() == []


def test_every_command_kind_has_an_effect_that_records_its_events_on_each_runtime_it_names():
    assert missing_pieces_of_commands() == []


def test_the_completeness_check_names_an_action_whose_step_records_nothing(monkeypatch):
    at = actions.ACTIONS.index(actions.by_name("Ingest"))
    monkeypatch.setattr(actions, "ACTIONS", actions.ACTIONS[:at] + (
        attrs.evolve(actions.ACTIONS[at], step=lambda s, cfg: actions.ingest(s, cfg)),) + actions.ACTIONS[at + 1:])
    assert missing_pieces_of_actions() == ["action Ingest's step takes no record for its events"]


def test_the_completeness_check_names_an_effect_that_records_nothing(monkeypatch):
    monkeypatch.setitem(actions.INTERACTIVE_EFFECTS, commands.RELEASE, lambda s, cfg, p, command: s)
    assert missing_pieces_of_commands() == ["command Release's effect on interactive takes no record for its events"]


def test_the_completeness_check_names_a_command_without_an_effect(monkeypatch):
    monkeypatch.setitem(commands.KINDS, "Flush", commands.CommandKind(
        "Flush", (), (), (commands.MAINTENANCE,), "a toy command"))
    assert missing_pieces_of_commands() == ["command Flush is applied by maintenance but has no effect there"]


def test_every_variable_has_a_meaning_and_a_domain_that_checks_its_initial_value():
    for variable in VARIABLES:
        assert variable.meaning, variable.name
        for cfg in EVERY_CONFIG:
            value = variable.initial(cfg)
            if variable.where(cfg):
                assert variable.domain.problem(value, cfg) is None, (variable.name, cfg)
            else:
                assert value is None, variable.name


def test_a_state_type_that_disagrees_with_the_schema_fails_naming_the_variable():
    swapped = list(VARIABLES)
    swapped[0], swapped[1] = swapped[1], swapped[0]
    with pytest.raises(TypeError, match="State field 0 is 'policy' but the schema declares 'sent'"):
        check_schema(State, swapped)
    check_schema(state_type(VARIABLES), VARIABLES)  # and the derived one agrees


def test_every_property_has_a_kind_and_a_docstring_or_witnesses():
    for prop in properties.PROPERTIES:
        assert prop.kind in (properties.STATE, properties.TRANSITION, properties.LIVENESS), prop.name
        assert prop.check.__doc__, prop.name
        if prop.kind != properties.LIVENESS:
            assert prop.witnesses is not None, f"{prop.name} has no witnesses"


def test_a_property_belongs_only_where_its_switches_give_it_meaning():
    assert "ImportsBacked" not in properties.names_for(Config())
    assert "ImportsBacked" in properties.names_for(Config(alias="per_id"))


def test_every_switch_has_values_a_default_among_them_and_a_meaning():
    for switch in SWITCHES.values():
        assert switch.default in switch.values and switch.meaning, switch.name


def engine_modules() -> list[str]:
    package = importlib.import_module("protocol.engine")
    return ["protocol.engine"] + [m.name for m in pkgutil.walk_packages(package.__path__, "protocol.engine.")]


@lru_cache(maxsize=None)
def imported_names(module: str, with_names: bool = False) -> frozenset[str]:
    """Every module `module` imports, at its top or inside a function, made absolute; with
    `with_names`, also `x.y` for each name y of `from x import y` (a submodule, if it is one).
    Read once per module: several tests ask about every module."""
    path = Path(importlib.util.find_spec(module).origin)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package
            for _ in range(max(node.level - 1, 0)):
                base = base.rpartition(".")[0]
            name = f"{base}.{node.module}" if node.level and node.module else (node.module or base)
            found.add(name)
            if with_names:
                found.update(f"{name}.{alias.name}" for alias in node.names)
    return frozenset(found)


@pytest.mark.parametrize("module", engine_modules())
def test_the_engine_imports_nothing_of_the_protocol(module):
    forbidden = {"protocol.model.state", "protocol.model.actions", "protocol.model.commands", "protocol.model.next", "protocol.properties",
                 "protocol.model.config", "protocol.configurations"}  # the named ones among them
    assert not {name for name in imported_names(module)
                if any(name == f or name.startswith(f + ".") for f in forbidden)}


def test_no_module_imports_one_that_imports_it_back():
    """No import cycle among the package's modules, counting imports inside functions."""
    import networkx as nx

    names = ["protocol"] + [m.name for m in pkgutil.walk_packages([str(ROOT)], "protocol.")]
    graph = nx.DiGraph()
    for name in names:
        for imported in imported_names(name):
            target = next((n for n in names if imported == n), None)
            if target and target != name:
                graph.add_edge(name, target)
    cycles = [cycle for cycle in nx.simple_cycles(graph)
              if not set(cycle) <= {"protocol.engine", *engine_modules()}]  # a package and its submodules
    assert cycles == []


def test_check_imports_no_other_subcommand_module():
    """`python -m protocol check Holds` imports its own subcommand module and the shared
    helpers (common, main, options), so one broken exporter or report cannot stop `check`."""
    import subprocess
    import sys

    probe = ("import sys; from protocol.cli import main; "
             "main(['check', 'Holds', '-c', 'MaxTime=0', '--no-trace']); "
             "print(sorted(m for m in sys.modules if m.startswith('protocol.cli.')))")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True,
                          cwd=ROOT.parent)
    assert done.stdout.strip().splitlines()[-1] == ("['protocol.cli.check', 'protocol.cli.common', 'protocol.cli.main', "
                                                     "'protocol.cli.options']")
