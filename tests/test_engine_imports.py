"""The engine knows nothing of the protocol: every module under protocol/engine/ imports
only the standard library, the few libraries the engine is built on, and itself.

An allowlist, not a denylist: a new import of anything else fails here, whatever it is.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

ENGINE = Path(__file__).resolve().parent.parent / "protocol" / "engine"
# What the engine may build on besides the standard library; ray only for the
# optional cluster (engine/cluster.py, pip install '.[cluster]').
ALLOWED = {"attrs", "networkx", "numpy", "scipy", "ray"}


def imported(path: Path) -> list[tuple[int, str]]:
    """(line, the absolute module name) of every import in the file, relative ones resolved."""
    package = "protocol.engine"
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = ".".join(package.split(".")[: len(package.split(".")) - node.level + 1])
                names = [node.module] if node.module else [alias.name for alias in node.names]
                found += [(node.lineno, f"{base}.{name}") for name in names]
            else:
                found.append((node.lineno, node.module))
    return found


def allowed(module: str) -> bool:
    top = module.split(".")[0]
    return (module == "protocol.engine" or module.startswith("protocol.engine.")
            or top in sys.stdlib_module_names or top in ALLOWED or top == "__future__")


@pytest.mark.parametrize("path", sorted(ENGINE.rglob("*.py")), ids=lambda path: str(path.relative_to(ENGINE)))
def test_the_engine_imports_nothing_of_the_protocol(path):
    foreign = [f"{path.name}:{line} imports {module}" for line, module in imported(path) if not allowed(module)]
    assert foreign == []


def test_the_allowlist_catches_an_import_of_the_protocol(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("from .. import config\nimport invariants\nfrom .fast import Engine\n")
    assert [module for _, module in imported(bad) if not allowed(module)] == ["protocol.config", "invariants"]


def attribute_probes(path) -> list[str]:
    """The hasattr/getattr calls in a module: how code asks an object what kind it is."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [f"{path.name}:{node.lineno} {node.func.id}" for node in ast.walk(tree)
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
            and node.func.id in ("hasattr", "getattr")]


def test_run_py_asks_a_run_only_what_the_run_interface_declares():
    assert attribute_probes(ENGINE.parent / "run.py") == []


def test_the_probe_finds_a_getattr(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("x = getattr(run, 'engine', None)\nif hasattr(run, 'pair_masks'):\n    pass\n")
    assert attribute_probes(bad) == ["bad.py:1 getattr", "bad.py:2 hasattr"]
