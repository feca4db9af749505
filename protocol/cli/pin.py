"""`protocol pin NAME ... | --all`: explore named configurations at their own constants
and rewrite the distinct states and depth the manifest pins for them.

TLC users re-pin the tlaplus/Examples manifest with a script; this is that
script. Only the two figures of each entry change: comments, order and every
other byte of the manifest stay, and the file is replaced in one rename.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from protocol import run as checking
from protocol.configurations.named import manifest_where as where
from protocol.configurations.pin import PINNED_KEYS, repinned
from protocol.cli.common import (
    EXIT_AS_EXPECTED, RunFailure, UsageError, add_constants_option, output_to, selected_configurations,
)


def add_parser(subparsers, name: str, help: str) -> None:
    parser = subparsers.add_parser(
        name, help=help,
        description="Explore each named configuration at its own constants and rewrite the distinct "
                    "states and depth protocol/configurations/manifest.toml pins for it ($PROTOCOL_MANIFEST names "
                    "another manifest), printing what changed.",
    )
    parser.add_argument("names", nargs="*", metavar="NAME", help="configuration names (see `list`)")
    parser.add_argument("--all", action="store_true", help="re-pin every named configuration")
    add_constants_option(parser)  # only to refuse it: the figures are pinned at the own constants alone
    parser.set_defaults(run=run)


def explored_figures(named) -> dict[str, int]:
    """Distinct states and depth of a complete search at the configuration's own constants."""
    result = checking.check(named, liveness=False)  # the counts do not depend on liveness
    if result.interrupted:  # the signal's own ending: one line, 128 + the signal, nothing written
        raise KeyboardInterrupt
    if not result.complete:
        raise RunFailure(f"{named.name}: the search did not complete; nothing written")
    return dict(zip(PINNED_KEYS, (result.distinct_states, result.depth)))


def change_words(name: str, before: tuple | None, after: dict) -> str:
    if before is None:
        return f"{name}: pinned distinct states {after['distinct_states']:,}, depth {after['depth']}"
    changes = [f"{label} {old:,} -> {new:,}" for label, old, new
               in zip(("distinct states", "depth"), before, after.values()) if old != new]
    return f"{name}: " + ", ".join(changes)


def run(args) -> int:
    from protocol import configurations as configs
    if args.constant:
        raise UsageError("pin explores each configuration at the constants the manifest defines it at, "
                         "where alone its figures are pinned: drop -c")
    chosen = selected_configurations(args)
    path = configs.manifest_path()
    try:
        source = path.read_bytes().decode("utf-8")  # as it is: no newline translation
    except (OSError, UnicodeDecodeError) as error:  # read once already: it changed under us
        raise RunFailure(f"cannot read {where()}: {error}") from None
    text, changed = source, []
    with output_to(None) as sink:
        for named in chosen:
            figures = explored_figures(named)
            if named.pinned == tuple(figures.values()):
                continue
            text = repinned(text, named.name, figures)
            changed.append(change_words(named.name, named.pinned, figures))
        if not changed:
            which = chosen[0].name if len(chosen) == 1 else f"each of the {len(chosen)} configurations"
            print(f"nothing changed: {where()} already pins the distinct states and depth of {which}", file=sink)
            return EXIT_AS_EXPECTED
        replace_atomically(path, text)
        for line in changed:
            print(line, file=sink)
        print(f"wrote {where()}: review the diff and commit it with the change that moved the counts",
              file=sink)
    return EXIT_AS_EXPECTED


def replace_atomically(path: Path, text: str) -> None:
    """Write `text` to a temporary file beside `path` and rename it onto `path` (same mode):
    a reader sees the old manifest or the new one, never half of one."""
    try:
        handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".partial")
    except OSError as error:  # a read-only file system, a directory we may not write
        raise RunFailure(f"cannot write {where()}: {error.strerror or error}; left as it was") from None
    try:
        with os.fdopen(handle, "w", encoding="utf-8", newline="") as stream:
            stream.write(text)
            stream.flush()
            os.fsync(stream.fileno())
        os.chmod(temporary, path.stat().st_mode & 0o7777)
        os.replace(temporary, path)
    except OSError as error:
        raise RunFailure(f"cannot write {where()}: {error.strerror or error}; left as it was") from None
    finally:
        if os.path.exists(temporary):
            os.unlink(temporary)
