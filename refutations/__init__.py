"""The refutations: retired designs that must keep failing.

Every named configuration, sound or refutation, is listed in
`manifest.toml` beside this file: its switches, constants, the properties it
must violate with their shortest lengths, and its pinned counts. Each
refutation also has a module here whose docstring says why the mechanism
fails. A refutation that stops failing, or fails with another shortest
length, fails `python -m protocol check`.
"""

from __future__ import annotations

import importlib
import tomllib
from importlib import resources


def manifest() -> dict:
    """The manifest: configuration name -> its table, in the file's order."""
    return tomllib.loads(resources.files(__package__).joinpath("manifest.toml").read_text(encoding="utf-8"))


def why(module: str) -> str:
    """The docstring of refutation module `module`: why that design fails."""
    return importlib.import_module(f".{module}", __package__).__doc__ or ""
