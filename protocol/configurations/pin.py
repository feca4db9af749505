"""Re-pinning: the manifest's text with one entry's pinned `distinct_states` and
`depth` rewritten, every other byte kept (`python -m protocol pin`). The
manifest's schema, and its reading, are in protocol/configurations/named.py."""

from __future__ import annotations

import re
import tomllib

from protocol.model.config import ConfigError
from protocol.configurations.named import manifest_where as where

PINNED_KEYS = ("distinct_states", "depth")


HEADER = re.compile(r"^\s*\[\s*(?P<name>[A-Za-z0-9_-]+)\s*\]\s*(#.*)?$")
ANY_HEADER = re.compile(r"^\s*\[")


def entry_lines(lines: list[str], name: str) -> tuple[int, int]:
    """The line range [start, end) of `[name]`'s table: its header to the next header."""
    start = next((i for i, line in enumerate(lines) if (m := HEADER.match(line)) and m["name"] == name), None)
    if start is None:
        raise ConfigError(f"{where()}: no [{name}] header on a line of its own to re-pin")
    end = next((i for i in range(start + 1, len(lines)) if ANY_HEADER.match(lines[i])), len(lines))
    return start, end


def repinned(source: str, name: str, figures: dict[str, int]) -> str:
    """`source` with `[name]`'s pinned figures (`distinct_states`, `depth`) set to `figures`:
    each `key = N` line has its number replaced, a missing key is added after the
    table's last line; every other byte stays as it was."""
    lines = source.splitlines(keepends=True)
    start, end = entry_lines(lines, name)
    for key, value in figures.items():
        pattern = re.compile(rf"^(\s*{key}\s*=\s*)[0-9_]+(\s*(#.*)?\r?\n?)$")
        found = [i for i in range(start + 1, end) if pattern.match(lines[i])]
        if found:
            lines[found[0]] = pattern.sub(lambda m: f"{m[1]}{value}{m[2]}", lines[found[0]])
            continue
        last = max(i for i in range(start, end) if lines[i].strip() and not lines[i].lstrip().startswith("#"))
        if not lines[last].endswith("\n"):
            lines[last] += "\n"
        lines.insert(last + 1, f"{key} = {value}\n")
        end += 1
    text = "".join(lines)
    before, after = tomllib.loads(source), tomllib.loads(text)
    if after != {**before, name: {**before[name], **figures}}:
        raise ConfigError(f"{where()}, [{name}]: cannot re-pin in place (write `distinct_states = N` and "
                          "`depth = N` on lines of their own)")
    return text
