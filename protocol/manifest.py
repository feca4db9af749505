"""The manifest, refutations/manifest.toml: read, validated as it is read, and re-pinned.

Every key a configuration's table may hold is declared once, in `KEYS`: what it
means and the check its value must pass. A manifest that does not pass is one
line naming the file, the entry and the key, with the fix (`ConfigError`,
exit 2): a misspelt key must not pass silently (`expects` would make a
refutation read as "must hold", `distinct_state` would pin nothing).

`repinned` rewrites the pinned `distinct_states` and `depth` of one entry in
the manifest's text, touching nothing else (`python -m protocol pin`).
"""

from __future__ import annotations

import difflib
import re
import tomllib
from pathlib import Path
from typing import Callable

import attrs

from . import config as configuration  # read at call time: a test may extend its declarations
from .config import CONSTANT_NAMES, ConfigError, check_constant

PINNED_KEYS = ("distinct_states", "depth")
SIZES = ("quick", "slow")


class Invalid(Exception):
    """What is wrong with one key's value (the entry and the key are added by the caller)."""


@attrs.frozen
class Key:
    name: str
    meaning: str
    check: Callable  # (value, entry name, every table) -> None, or raises Invalid


def where() -> str:
    """The manifest in use, as a reviewer names it."""
    import refutations

    path = refutations.manifest_path()
    return "refutations/manifest.toml" if path == Path(refutations.__file__).parent / "manifest.toml" else str(path)


def close_to(word: str, known) -> str:
    close = difflib.get_close_matches(word, list(known), n=1, cutoff=0.5)
    return f"did you mean `{close[0]}`?" if close else f"known: {', '.join(known)}"


# ------------------------------------------------------------------ value checks

def whole_number(low: int):
    def check(value, *_):
        if isinstance(value, bool) or not isinstance(value, int) or value < low:
            raise Invalid(f"{value!r} is not a whole number >= {low}")
    return check


def text(value, *_):
    if not isinstance(value, str) or not value.strip():
        raise Invalid(f"{value!r} is not a non-empty string")


def one_of(*values):
    def check(value, *_):
        if value not in values or not isinstance(value, str):
            raise Invalid(f"{value!r} is not one of: {', '.join(map(repr, values))}")
    return check


def table_of(check_key: Callable, check_value: Callable):
    def check(value, *context):
        if not isinstance(value, dict):
            raise Invalid(f"{value!r} is not a table {{ name = value, ... }}")
        for key, item in value.items():
            check_key(key)
            try:
                check_value(item, *context)
            except Invalid as invalid:
                raise Invalid(f"{key}: {invalid}") from None
    return check


def list_of(check_item: Callable):
    def check(value, *context):
        if not isinstance(value, list):
            raise Invalid(f"{value!r} is not a list [ ... ]")
        for item in value:
            check_item(item, *context)
    return check


def constant_name(name) -> None:
    if name not in CONSTANT_NAMES:
        raise Invalid(f"no constant `{name}`: {close_to(name, CONSTANT_NAMES)}")


def constant_value(value, *_) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise Invalid(f"{value!r} is not a whole number")


def constants(value, *context) -> None:
    table_of(constant_name, constant_value)(value, *context)
    for name, at in value.items():
        try:
            check_constant(name, at)
        except ConfigError as error:
            raise Invalid(str(error)) from None


def switches(value, *_) -> None:
    if not isinstance(value, dict):
        raise Invalid(f"{value!r} is not a table {{ switch = value, ... }}")
    declared = configuration.SWITCHES
    for name, chosen in value.items():
        if name not in declared:
            raise Invalid(f"no switch `{name}`: {close_to(name, declared)}")
        switch = declared[name]
        if chosen not in switch.values or type(chosen) is not type(switch.default):
            shown = ", ".join(str(v).lower() if isinstance(v, bool) else repr(v) for v in switch.values)
            raise Invalid(f"{name} = {chosen!r} is not one of: {shown}")


def properties(kind: str | None = None) -> dict:
    """The declared properties by name (of one kind, if given), read now: a test may add one."""
    import invariants

    return {prop.name: prop for prop in invariants.PROPERTIES if kind in (None, prop.kind)}


def property_name(kind: str | None = None):
    def check(name, *_):
        known = properties(kind)
        if name not in known:
            what = "liveness property" if kind else "property"
            raise Invalid(f"no {what} `{name}`: {close_to(name, known)}")
    return check


def needs(value, *context) -> None:
    """The least constants: `{ D = 1 }`, or per property `{ I1 = { D = 1 } }`."""
    if not isinstance(value, dict):
        raise Invalid(f"{value!r} is not a table {{ constant = least, ... }}")
    for key, least in value.items():
        if isinstance(least, dict):
            property_name()(key)
            constants(least, *context)
        else:
            constants({key: least}, *context)


def configuration_name(value, name, tables) -> None:
    if not isinstance(value, str) or value not in tables:
        raise Invalid(f"no configuration {value!r} to base [{name}] on: {close_to(str(value), tables)}")
    if value == name:
        raise Invalid(f"[{name}] cannot be based on itself")


def refutation_module(value, *_) -> None:
    import refutations

    text(value)
    try:
        why = refutations.why(value)
    except ModuleNotFoundError as error:
        if error.name != f"refutations.{value}":  # the module is there, but fails to import
            raise
        raise Invalid(f"no module refutations/{value}.py: write it, with a docstring saying why the design fails") \
            from None
    if not why.strip():
        raise Invalid(f"refutations/{value}.py has no docstring: say there why the design fails")


def liveness_name(name, *context) -> None:
    from invariants import LIVENESS

    property_name(LIVENESS)(name)


def reason(value, *_) -> None:
    text(value)


# Every key of a configuration's table, one line each.
KEYS = {key.name: key for key in (
    Key("doc", "why the design holds (a configuration without a refutation module)", text),
    Key("module", "the refutation module whose docstring says why the design fails", refutation_module),
    Key("based_on", "the configuration whose switches these change (Holds by default)", configuration_name),
    Key("switches", "switch -> value, changed relative to `based_on`", switches),
    Key("constants", "constant -> value, changed relative to the defaults", constants),
    Key("expect", "property -> its shortest counterexample's length (none: every property holds)",
        table_of(property_name(), whole_number(1))),
    Key("needs", "the least constants at which the defect can show, or per property", needs),
    Key("length_only_at", "property -> the constants at which alone its length is pinned",
        table_of(property_name(), constants)),
    Key("distinct_states", "distinct states at the configuration's own constants", whole_number(1)),
    Key("depth", "the depth at the configuration's own constants", whole_number(0)),
    Key("size", "quick or slow: whether tests over every configuration run it in the quick run", one_of(*SIZES)),
    Key("nonvacuous", "liveness properties whose premises must be reached", list_of(liveness_name)),
    Key("vacuous_ok", "liveness property -> why it may hold vacuously", table_of(liveness_name, reason)),
    Key("reachable", "states a reviewer expects to exist, each of which must be reached", list_of(reason)),
)}


# ------------------------------------------------------------------ reading

def read_tables() -> dict:
    """The manifest's tables, or one line saying why it cannot be read."""
    import refutations

    try:
        tables = refutations.manifest()
    except FileNotFoundError:
        raise ConfigError(f"{where()} does not exist: restore it (git checkout) or point "
                          f"{refutations.MANIFEST_ENV} at a manifest") from None
    except OSError as error:
        raise ConfigError(f"cannot read {where()}: {error.strerror or error}") from None
    except UnicodeDecodeError as error:
        raise ConfigError(f"{where()} is not UTF-8 text (byte {error.start} is {error.object[error.start]:#04x}): "
                          "restore it (git checkout)") from None
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"{where()} is not valid TOML: {error}") from None
    if not tables:
        raise ConfigError(f"{where()} names no configuration: add a [Name] table for each")
    for name, table in tables.items():
        if not isinstance(table, dict):
            raise ConfigError(f"{where()}: `{name} = ...` stands outside any [Name] table: move it under one")
    return tables


def validate(name: str, table: dict, tables: dict) -> None:
    """Refuse, in one line naming the entry and the key, anything `KEYS` does not allow."""
    for key, value in table.items():
        if key not in KEYS:
            raise ConfigError(f"{where()}, [{name}]: unknown key `{key}`: {close_to(key, KEYS)}")
        try:
            KEYS[key].check(value, name, tables)
        except Invalid as invalid:
            raise ConfigError(f"{where()}, [{name}], `{key}`: {invalid}") from None
    if ("doc" in table) == ("module" in table):
        raise ConfigError(f"{where()}, [{name}]: give `doc` (why it holds) or `module` (the refutation "
                          "module saying why it fails), one of them")
    if ("distinct_states" in table) != ("depth" in table):
        raise ConfigError(f"{where()}, [{name}]: pins one of `distinct_states` and `depth`: give both, "
                          f"or run `python -m protocol pin {name}`")
    for key in ("needs", "length_only_at"):
        for prop, value in table.get(key, {}).items():
            if (isinstance(value, dict) or key == "length_only_at") and prop not in table.get("expect", {}):
                raise ConfigError(f"{where()}, [{name}], `{key}`: {prop} is not in `expect`: "
                                  f"add it there or drop it here")


def config_of(name: str, tables: dict, seen: tuple = ()):
    """The configuration of entry `name`: its base's with its switches and constants applied."""
    table = tables[name]
    if name in seen:
        raise ConfigError(f"{where()}, [{name}], `based_on`: a cycle ({' -> '.join((*seen, name))}): break it")
    based_on = table.get("based_on", "Holds" if name != "Holds" else None)
    if based_on is not None and based_on not in tables:
        raise ConfigError(f"{where()}, [{name}]: no [{based_on}] to base it on: add it, or set `based_on`")
    base = config_of(based_on, tables, (*seen, name)) if based_on else configuration.Config()
    try:
        return base.evolve(**table.get("switches", {}), **{**configuration.DEFAULT_CONSTANTS, **table.get("constants", {})})
    except (TypeError, ConfigError) as error:
        raise ConfigError(f"{where()}, [{name}]: {error}") from None


def refuse_foreign_properties(name: str, table: dict, cfg) -> None:
    """A property named by an entry must belong to its configuration (ImportsBacked needs the alias)."""
    own = {prop.name for prop in properties().values() if prop.applies(cfg)}
    for key in ("expect", "nonvacuous", "vacuous_ok"):
        for prop in table.get(key, ()):
            if prop not in own:
                raise ConfigError(f"{where()}, [{name}], `{key}`: {prop} is not a property of this "
                                  f"configuration (its properties: {', '.join(sorted(own))})")


# ------------------------------------------------------------------ re-pinning

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
