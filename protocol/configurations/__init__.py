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
import os
import tomllib
from pathlib import Path

# Names another manifest to read instead of the one beside this file (the tests
# point it at a temporary copy, so that `pin` can rewrite that copy).
MANIFEST_ENV = "PROTOCOL_MANIFEST"


def manifest_path() -> Path:
    """The manifest in use: $PROTOCOL_MANIFEST if set, else `manifest.toml` beside this file."""
    return Path(os.environ.get(MANIFEST_ENV) or Path(__file__).parent / "manifest.toml")


def manifest() -> dict:
    """The manifest: configuration name -> its table, in the file's order. Reading errors
    (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) are the caller's to word."""
    return tomllib.loads(manifest_path().read_text(encoding="utf-8"))


def why(module: str) -> str:
    """The docstring of refutation module `module`: why that design fails."""
    return importlib.import_module(f".{module}", __package__).__doc__ or ""
