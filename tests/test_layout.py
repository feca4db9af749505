"""The package is laid out by role, and each folder keeps to its side of the layering:
the model knows no rendering, tool or command line; the tools know no rendering,
rendering draws what the tools compute, and the applications (apps/) use both; none of
them knows the command line; nothing below `protocol/cli/` parses arguments. One rule a folder, each
checked on every module in it, imports inside functions included."""

from __future__ import annotations

import importlib.util
import pkgutil

import pytest

import protocol
from test_declarations import imported_names

# folder -> the folders of the package its modules may not import
FORBIDDEN = {
    "model": {"render", "tools", "apps", "cli", "run"},
    "properties": {"render", "tools", "apps", "cli", "run", "configurations"},
    "configurations": {"tools", "apps", "cli"},
    "render": {"apps", "cli"},  # rendering draws what the tools compute: it may import them
    "tools": {"render", "apps", "cli"},  # never the other way round (issue 56, point 5)
    "apps": {"cli"},  # the documents and the explorer, which both compute and draw
    "run": {"render", "tools", "apps", "cli"},
}


def modules() -> list[str]:
    return [m.name for m in pkgutil.walk_packages(protocol.__path__, "protocol.")]


def imported(module: str) -> set[str]:
    """Every module of the package `module` imports (`from protocol import x` names protocol.x)."""
    return imported_names(module, with_names=True) & set(modules())


def folder(module: str) -> str:
    return module.split(".")[1]


# The one import across a rule, and why: `bench --validate` times a refusal's explanation as
# the terminal draws it, and counts its lines (issue 57), in the fresh child process it measures in.
EXCEPTIONS = {"protocol.tools.bench": {"protocol.render.validate"}}


def breaches(module: str) -> list[str]:
    forbidden = FORBIDDEN.get(folder(module), set())
    return sorted(f"{module} imports {name}" for name in imported(module)
                  if folder(name) in forbidden and name not in EXCEPTIONS.get(module, ()))


@pytest.mark.parametrize("module", [m for m in modules() if folder(m) in FORBIDDEN])
def test_each_folder_imports_only_what_its_role_allows(module):
    assert breaches(module) == []


def test_the_rule_catches_a_model_module_that_imports_rendering(tmp_path, monkeypatch):
    (tmp_path / "leak.py").write_text("from protocol.render import terminal\nimport protocol.cli.common\n")
    spec = importlib.util.spec_from_file_location("protocol.model.leak", tmp_path / "leak.py")
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a, _real=importlib.util.find_spec: spec if name == "protocol.model.leak" else _real(name))
    assert breaches("protocol.model.leak") == ["protocol.model.leak imports protocol.cli.common",
                                               "protocol.model.leak imports protocol.render",
                                               "protocol.model.leak imports protocol.render.terminal"]


@pytest.mark.parametrize("module", [m for m in modules() if not m.startswith("protocol.cli")])
def test_nothing_below_the_command_line_parses_arguments(module):
    assert "argparse" not in {name.split(".")[0] for name in imported_names(module)}, module

