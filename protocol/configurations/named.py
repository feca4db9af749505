"""The named configurations (spec sections 8, 10.5, 11.5, 12.5 and 13.5) and the manifest's schema.

Every named configuration is an entry of `manifest.toml` beside this module: its switches
and constants (protocol/model/config.py declares them), what it must violate and how soon,
its pinned counts. `named_configurations` reads them, checking every entry against the
manifest's schema (`MANIFEST_KEYS`) as it does; `lookup` finds one by name.
"""

from __future__ import annotations

import difflib
import tomllib
from pathlib import Path
from typing import Callable, Mapping

import attrs

from protocol.model import config as switches  # read through the module: a walk-through extends it in place
from protocol.model.config import Config, ConfigError


@attrs.frozen
class NamedConfig:
    """A named configuration and the verdicts it is expected to give.

    `expect` maps each property it must violate to that counterexample's
    shortest length (empty: every property must hold). Where the constants
    in use are below `needs` (for example HoldsCap with one process) the
    defect cannot show, and the configuration is expected to hold. `needs`
    names the least constants for every expected property, or per property
    (`{"I1": {"MaxTime": 1}, "NoRegression": {"MaxTime": 2}}`). `pinned` is
    (distinct states, depth) at the configuration's own constants.
    """

    name: str
    config: Config
    expect: Mapping[str, int] = attrs.field(factory=dict, converter=lambda m: tuple(dict(m).items()))
    needs: Mapping = attrs.field(factory=dict, converter=lambda m: tuple(
        (key, tuple(value.items()) if isinstance(value, Mapping) else value) for key, value in dict(m).items()))
    # prop -> constants at which alone its length is pinned: a lasso that must let every
    # process settle grows with P (HoldsAliasOverwrite's ImportsBacked: 4 states at P=1,
    # 6 at P=2); elsewhere only the violation is expected.
    length_only_at: Mapping = attrs.field(factory=dict, converter=lambda m: tuple(
        (prop, tuple(dict(at).items())) for prop, at in dict(m).items()))
    doc: str = attrs.field(default="", eq=False)
    pinned: tuple | None = attrs.field(default=None, eq=False)
    # The constants the manifest defines it at: where alone `pinned` is compared.
    own_constants: Mapping | None = attrs.field(default=None, eq=False,
                                                converter=lambda m: None if m is None else tuple(dict(m).items()))
    size: str | None = attrs.field(default=None, eq=False)  # the manifest's `size`, if it says
    # Vacuity (read here, checked by the run): the liveness properties whose premises must
    # be reached, property -> why it may hold vacuously, the states that must be reached.
    nonvacuous: tuple = attrs.field(default=(), eq=False, converter=tuple)
    vacuous_ok: Mapping = attrs.field(factory=dict, eq=False, converter=lambda m: tuple(dict(m).items()))
    reachable: tuple = attrs.field(default=(), eq=False, converter=tuple)

    @property
    def size_class(self) -> str:
        """"quick" or "slow": the manifest's `size`, else quick when its pinned distinct
        states are at most QUICK_STATES (tests over every configuration run the quick
        ones in the quick run, the others with `-m slow`)."""
        if self.size is not None:
            return self.size
        return "quick" if self.pinned is not None and self.pinned[0] <= switches.QUICK_STATES else "slow"

    def at_own_constants(self) -> bool:
        """Whether it is run at the constants the manifest defines it at (and pins counts for)."""
        return self.own_constants is not None and self.config.constants == dict(self.own_constants)

    def pinned_differences(self, distinct_states: int, depth: int) -> list[str]:
        """How a complete search's counts differ from the pinned ones: compared only at
        the configuration's own constants, where the manifest pins them."""
        if self.pinned is None or not self.at_own_constants():
            return []
        fix = f"if the change is intended, run `python -m protocol pin {self.name}`"
        return [f"{what} {found:,}, but the manifest pins {pinned:,} ({fix})"
                for what, found, pinned in zip(("distinct states", "depth"), (distinct_states, depth), self.pinned)
                if found != pinned]

    def with_constants(self, constants: Mapping[str, int]) -> "NamedConfig":
        return attrs.evolve(self, config=self.config.evolve(**constants))

    def applies(self, cfg: Config | None = None, prop: str | None = None) -> bool:
        """Whether the defect (of `prop`, or every one) can show at `cfg`'s constants
        (this configuration's by default)."""
        cfg = cfg or self.config
        least = {name: value for name, value in self.needs if not isinstance(value, tuple)}
        for name, value in self.needs:
            if isinstance(value, tuple) and (prop is None or name == prop):
                least.update({constant: max(least.get(constant, 0), at) for constant, at in value})
        return all(getattr(cfg, name) >= at for name, at in least.items())

    def expected_violations(self) -> dict[str, int | None]:
        """Property -> the shortest length this run must violate it with (empty: must hold;
        None: violated, at a length not pinned at these constants).

        The spec states the lengths at the configuration's own constants. More
        processes, peeks or times add runs but cannot shorten the defect's
        essential steps (measured at P=1..3, D=1..2, MaxTime=1..3, the shortest
        length is the same), so they are compared wherever `needs` is met: a
        wider run that found a shorter counterexample would be news.
        """
        pinned_at = dict(self.length_only_at)
        return {prop: (length if all(getattr(self.config, name) == value for name, value in pinned_at.get(prop, ()))
                       else None)
                for prop, length in self.expect if self.applies(prop=prop)}

    def expected_violation(self) -> str | None:
        """The first property this run must violate, or None if every property must hold."""
        return next(iter(self.expected_violations()), None)

    def expected_length(self, prop: str | None = None) -> int | None:
        """The pinned shortest length of `prop` (the first expected violation by default)."""
        expected = self.expected_violations()
        return expected.get(prop if prop is not None else self.expected_violation())

    @property
    def violates(self) -> str | None:
        """The first property named in the manifest, whatever the constants."""
        return next((name for name, _ in self.expect), None)

    @property
    def length(self) -> int | None:
        return dict(self.expect).get(self.violates)


def _named_from(name: str, table: dict, tables: dict) -> NamedConfig:
    """Entry `name` of the manifest, validated against the manifest's schema (MANIFEST_KEYS)."""
    from protocol import configurations as configs
    validate_entry(name, table, tables)
    cfg = config_of(name, {**tables, name: table})
    refuse_foreign_properties(name, table, cfg)
    doc = configs.why(table["module"]) if "module" in table else table.get("doc", "")
    pinned = (table["distinct_states"], table["depth"]) if "distinct_states" in table else None
    return NamedConfig(name, cfg, table.get("expect", {}), table.get("needs", {}),
                       table.get("length_only_at", {}), " ".join(doc.split()), pinned,
                       own_constants=cfg.constants, size=table.get("size"),
                       nonvacuous=table.get("nonvacuous", ()), vacuous_ok=table.get("vacuous_ok", {}),
                       reachable=table.get("reachable", ()))


def named_configurations() -> dict[str, NamedConfig]:
    """Every named configuration of the manifest, in its order (spec sections 8, 10.5, 11.5 and 12.5).

    Read again only when the manifest changes ($PROTOCOL_MANIFEST names another one, for tests,
    or a test replaces `configs.manifest`)."""
    global _NAMED, _NAMED_FROM
    from protocol import configurations as configs
    path = configs.manifest_path()
    try:
        stat = path.stat()
        version = (path, stat.st_ino, stat.st_mtime_ns, stat.st_size)  # re-read once pinned or edited
    except OSError:
        version = (path,)  # read_tables says why it cannot be read
    version = (configs.manifest, *version)  # the reader too: tests/test_extending.py replaces it
    if _NAMED is None or _NAMED_FROM != version:
        tables = read_tables()
        _NAMED = {name: _named_from(name, table, tables) for name, table in tables.items()}
        _NAMED_FROM = version
    return dict(_NAMED)


_NAMED_FROM = None
_NAMED: dict | None = None


def lookup(name: str) -> NamedConfig:
    """The named configuration `name`, or a ConfigError listing the known names."""
    known = named_configurations()
    if name in known:
        return known[name]
    folded = {key.lower(): key for key in known}
    if name.lower() in folded:
        return known[folded[name.lower()]]
    close = difflib.get_close_matches(name, known, n=1, cutoff=0.5)
    hint = f" Did you mean {close[0]}?" if close else ""
    raise ConfigError(
        f"unknown configuration {name!r}.{hint} Known: {', '.join(known)}"
    )


# ------------------------------------------------------------------ the manifest's schema
#
# Every key a configuration's table in the manifest may hold is declared once, in
# `MANIFEST_KEYS`: what it means and the check its value must pass. A manifest
# that does not pass is one line naming the file, the entry and the key, with the
# fix (ConfigError, exit 2): a misspelt key must not pass silently (`expects`
# would make a refutation read as "must hold", `distinct_state` would pin nothing).

SIZES = ("quick", "slow")


class Invalid(Exception):
    """What is wrong with one key's value (the entry and the key are added by the caller)."""


@attrs.frozen
class ManifestKey:
    name: str
    meaning: str
    check: Callable  # (value, entry name, every table) -> None, or raises Invalid; its `schema`, the JSON Schema

    def schema(self) -> dict:
        """The key's JSON Schema, with its meaning (`docs --write` writes the manifest's)."""
        return {"description": self.meaning, **self.check.schema()}


def schema(of: Callable):
    """Give a value check its JSON Schema (`of()`, read when asked: the properties and
    switches may grow), so that a manifest key's check and its schema are declared once."""
    def give(check):
        check.schema = of
        return check
    return give


def manifest_where() -> str:
    """The manifest in use, as a reviewer names it."""
    from protocol import configurations as configs
    path = configs.manifest_path()
    return "protocol/configurations/manifest.toml" if path == Path(configs.__file__).parent / "manifest.toml" else str(path)


def close_to(word: str, known) -> str:
    close = difflib.get_close_matches(word, list(known), n=1, cutoff=0.5)
    return f"did you mean `{close[0]}`?" if close else f"known: {', '.join(known)}"


# ------------------------------------------------------------------ value checks

def whole_number_at_least(low: int):
    @schema(lambda: {"type": "integer", "minimum": low})
    def check(value, *_):
        if isinstance(value, bool) or not isinstance(value, int) or value < low:
            raise Invalid(f"{value!r} is not a whole number >= {low}")
    return check


@schema(lambda: {"type": "string", "pattern": r"\S"})
def nonempty_text(value, *_):
    if not isinstance(value, str) or not value.strip():
        raise Invalid(f"{value!r} is not a non-empty string")


def one_of_words(*values):
    @schema(lambda: {"enum": list(values)})
    def check(value, *_):
        if value not in values or not isinstance(value, str):
            raise Invalid(f"{value!r} is not one of: {', '.join(map(repr, values))}")
    return check


def table_of(check_key: Callable, check_value: Callable):
    @schema(lambda: {"type": "object", "propertyNames": check_key.schema(), "additionalProperties": check_value.schema()})
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
    @schema(lambda: {"type": "array", "items": check_item.schema()})
    def check(value, *context):
        if not isinstance(value, list):
            raise Invalid(f"{value!r} is not a list [ ... ]")
        for item in value:
            check_item(item, *context)
    return check


@schema(lambda: {"enum": list(switches.CONSTANT_NAMES)})
def constant_name(name) -> None:
    if name not in switches.CONSTANT_NAMES:
        raise Invalid(f"no constant `{name}`: {close_to(name, switches.CONSTANT_NAMES)}")


@schema(lambda: {"type": "integer"})
def constant_value(value, *_) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise Invalid(f"{value!r} is not a whole number")


@schema(lambda: {"type": "object", "additionalProperties": False, "properties": {
    name: {"type": "integer", "minimum": switches.CONSTANT_MINIMUM[name]} for name in switches.CONSTANT_NAMES}})
def constants_table(value, *context) -> None:
    table_of(constant_name, constant_value)(value, *context)
    for name, at in value.items():
        try:
            switches.check_constant(name, at)
        except ConfigError as error:
            raise Invalid(str(error)) from None


@schema(lambda: {"type": "object", "additionalProperties": False, "properties": {
    name: {"enum": list(switch.values)} for name, switch in switches.SWITCHES.items()}})
def switches_table(value, *_) -> None:
    if not isinstance(value, dict):
        raise Invalid(f"{value!r} is not a table {{ switch = value, ... }}")
    for name, chosen in value.items():
        if name not in switches.SWITCHES:
            raise Invalid(f"no switch `{name}`: {close_to(name, switches.SWITCHES)}")
        switch = switches.SWITCHES[name]
        if chosen not in switch.values or type(chosen) is not type(switch.default):
            shown = ", ".join(str(v).lower() if isinstance(v, bool) else repr(v) for v in switch.values)
            raise Invalid(f"{name} = {chosen!r} is not one of: {shown}")


def declared_properties(kind: str | None = None) -> dict:
    """The declared properties by name (of one kind, if given), read now: a test may add one."""
    from protocol import properties as props
    return props.declared(*([kind] if kind else []))


def property_name(kind: str | None = None):
    @schema(lambda: {"enum": list(declared_properties(kind))})
    def check(name, *_):
        known = declared_properties(kind)
        if name not in known:
            what = "liveness property" if kind else "property"
            raise Invalid(f"no {what} `{name}`: {close_to(name, known)}")
    return check


@schema(lambda: {"type": "object", "additionalProperties": False, "properties": {
    **{name: {"type": "integer", "minimum": switches.CONSTANT_MINIMUM[name]} for name in switches.CONSTANT_NAMES},
    **{prop: constants_table.schema() for prop in declared_properties()}}})
def least_constants(value, *context) -> None:
    """The least constants: `{ D = 1 }`, or per property `{ I1 = { D = 1 } }`."""
    if not isinstance(value, dict):
        raise Invalid(f"{value!r} is not a table {{ constant = least, ... }}")
    for key, least in value.items():
        if isinstance(least, dict):
            property_name()(key)
            constants_table(least, *context)
        else:
            constants_table({key: least}, *context)


@schema(lambda: {"type": "string", "description": "another entry of the manifest"})
def configuration_name(value, name, tables) -> None:
    if not isinstance(value, str) or value not in tables:
        raise Invalid(f"no configuration {value!r} to base [{name}] on: {close_to(str(value), tables)}")
    if value == name:
        raise Invalid(f"[{name}] cannot be based on itself")


@schema(lambda: {"type": "string", "pattern": "^[a-z_][a-z0-9_]*$",
                 "description": "a module of protocol/configurations/ with a docstring"})
def refutation_module(value, *_) -> None:
    from protocol import configurations as configs
    nonempty_text(value)
    try:
        why = configs.why(value)
    except ModuleNotFoundError as error:
        if error.name != f"protocol.configurations.{value}":  # the module is there, but fails to import
            raise
        raise Invalid(f"no module protocol/configurations/{value}.py: write it, with a docstring saying why "
                      "the design fails") from None
    if not why.strip():
        raise Invalid(f"protocol/configurations/{value}.py has no docstring: say there why the design fails")


@schema(lambda: property_name(LIVENESS_KIND).schema())
def liveness_name(name, *context) -> None:
    from protocol.properties import LIVENESS

    property_name(LIVENESS)(name)


@schema(lambda: {"enum": list(reachable_names())})
def reachable_name(name, *context) -> None:
    """A state predicate of protocol/properties/reachable.py."""
    from protocol.properties.reachable import REACHABLE

    if not isinstance(name, str) or name not in REACHABLE:
        raise Invalid(f"no reachable state `{name}` (protocol/properties/reachable.py): {close_to(str(name), REACHABLE)}")


LIVENESS_KIND = "liveness"  # properties.LIVENESS, which config.py does not import at import time


def reachable_names() -> tuple:
    from protocol.properties.reachable import REACHABLE

    return tuple(REACHABLE)


# Every key of a configuration's table in the manifest, one line each.
MANIFEST_KEYS = {key.name: key for key in (
    ManifestKey("doc", "why the design holds (a configuration without a refutation module)", nonempty_text),
    ManifestKey("module", "the refutation module whose docstring says why the design fails", refutation_module),
    ManifestKey("based_on", "the configuration whose switches these change (Holds by default)", configuration_name),
    ManifestKey("switches", "switch -> value, changed relative to `based_on` (Holds itself: relative to the "
                "switches' defaults)", switches_table),
    ManifestKey("constants", "constant -> value, changed relative to the defaults P=2, D=1, MaxTime=2",
                constants_table),
    ManifestKey("expect", "property -> its shortest counterexample's length, a lasso's for a liveness property "
                "(none: every property holds)", table_of(property_name(), whole_number_at_least(1))),
    ManifestKey("needs", "the least constants at which the defect can show, or per property: the length is "
                "compared wherever they are met, and below them the configuration must hold", least_constants),
    ManifestKey("length_only_at", "property -> the constants at which alone its length is pinned (elsewhere "
                "only the violation is expected: a lasso that lets every process settle grows with P)",
                table_of(property_name(), constants_table)),
    ManifestKey("distinct_states", "distinct states at the configuration's own constants, compared by `check "
                "NAME` and rewritten by `pin NAME`", whole_number_at_least(1)),
    ManifestKey("depth", "the depth at the configuration's own constants (with `distinct_states`)",
                whole_number_at_least(0)),
    ManifestKey("size", "quick or slow: whether tests over every configuration run it in the quick run "
                "(by default quick when its pinned distinct states are at most QUICK_STATES)",
                one_of_words(*SIZES)),
    ManifestKey("nonvacuous", "liveness properties whose premises must be reached", list_of(liveness_name)),
    ManifestKey("vacuous_ok", "liveness property -> why it may hold vacuously (every leads-to property "
                "expected to hold is here or in `nonvacuous`)", table_of(liveness_name, nonempty_text)),
    ManifestKey("reachable", "states a reviewer expects to exist (predicates of "
                "protocol/properties/reachable.py), each of which must be reached", list_of(reachable_name)),
)}


# ------------------------------------------------------------------ reading

def read_tables() -> dict:
    """The manifest's tables, or one line saying why it cannot be read."""
    from protocol import configurations as configs
    try:
        tables = configs.manifest()
    except FileNotFoundError:
        raise ConfigError(f"{manifest_where()} does not exist: restore it (git checkout) or point "
                          f"{configs.MANIFEST_ENV} at a manifest") from None
    except OSError as error:
        raise ConfigError(f"cannot read {manifest_where()}: {error.strerror or error}") from None
    except UnicodeDecodeError as error:
        byte = f"byte {error.start} is {error.object[error.start]:#04x}"
        raise ConfigError(f"{manifest_where()} is not UTF-8 text ({byte}): restore it (git checkout)") from None
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"{manifest_where()} is not valid TOML: {error}") from None
    if not tables:
        raise ConfigError(f"{manifest_where()} names no configuration: add a [Name] table for each")
    for name, table in tables.items():
        if not isinstance(table, dict):
            raise ConfigError(f"{manifest_where()}: `{name} = ...` stands outside any [Name] table: "
                              "move it under one")
    return tables


def manifest_schema() -> dict:
    """The manifest's JSON Schema, from MANIFEST_KEYS (`docs --write` writes it to
    protocol/schemas/manifest.schema.json): each entry's keys, their values, and the rules
    between them; what it cannot say (a `based_on` that names an entry, a module that
    exists) `named_configurations` checks when it reads the manifest."""
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "https://protocol.invalid/schemas/manifest.schema.json",
        "title": "protocol's manifest of named configurations (protocol/configurations/manifest.toml)",
        "description": "Generated by `python -m protocol docs --write` from MANIFEST_KEYS in "
                       "protocol/configurations/named.py; do not edit by hand.",
        "type": "object",
        "minProperties": 1,
        "additionalProperties": {
            "type": "object",
            "properties": {key.name: key.schema() for key in MANIFEST_KEYS.values()},
            "additionalProperties": False,
            "oneOf": [{"required": ["doc"]}, {"required": ["module"]}],
            "dependentRequired": {"distinct_states": ["depth"], "depth": ["distinct_states"]},
        },
    }


def validate_entry(name: str, table: dict, tables: dict) -> None:
    """Refuse, in one line naming the entry and the key, anything `MANIFEST_KEYS` does not allow."""
    for key, value in table.items():
        if key not in MANIFEST_KEYS:
            raise ConfigError(f"{manifest_where()}, [{name}]: unknown key `{key}`: "
                              f"{close_to(key, MANIFEST_KEYS)}")
        try:
            MANIFEST_KEYS[key].check(value, name, tables)
        except Invalid as invalid:
            raise ConfigError(f"{manifest_where()}, [{name}], `{key}`: {invalid}") from None
    if ("doc" in table) == ("module" in table):
        raise ConfigError(f"{manifest_where()}, [{name}]: give `doc` (why it holds) or `module` (the refutation "
                          "module saying why it fails), one of them")
    if ("distinct_states" in table) != ("depth" in table):
        raise ConfigError(f"{manifest_where()}, [{name}]: pins one of `distinct_states` and `depth`: give both, "
                          f"or run `python -m protocol pin {name}`")
    for key in ("needs", "length_only_at"):
        for prop, value in table.get(key, {}).items():
            if (isinstance(value, dict) or key == "length_only_at") and prop not in table.get("expect", {}):
                raise ConfigError(f"{manifest_where()}, [{name}], `{key}`: {prop} is not in `expect`: "
                                  f"add it there or drop it here")


def config_of(name: str, tables: dict, seen: tuple = ()):
    """The configuration of entry `name`: its base's with its switches and constants applied."""
    table = tables[name]
    if name in seen:
        cycle = " -> ".join((*seen, name))
        raise ConfigError(f"{manifest_where()}, [{name}], `based_on`: a cycle ({cycle}): break it")
    based_on = table.get("based_on", "Holds" if name != "Holds" else None)
    if based_on is not None and based_on not in tables:
        raise ConfigError(f"{manifest_where()}, [{name}]: no [{based_on}] to base it on: add it, or set `based_on`")
    base = config_of(based_on, tables, (*seen, name)) if based_on else switches.Config()
    try:
        return base.evolve(**table.get("switches", {}), **{**switches.EVERY_DEFAULT_CONSTANT, **table.get("constants", {})})
    except (TypeError, ConfigError) as error:
        raise ConfigError(f"{manifest_where()}, [{name}]: {error}") from None


def refuse_foreign_properties(name: str, table: dict, cfg) -> None:
    """A property named by an entry must belong to its configuration (ImportsBacked needs the alias)."""
    own = {prop.name for prop in declared_properties().values() if prop.where(cfg)}
    for key in ("expect", "nonvacuous", "vacuous_ok"):
        for prop in table.get(key, ()):
            if prop not in own:
                raise ConfigError(f"{manifest_where()}, [{name}], `{key}`: {prop} is not a property of this "
                                  f"configuration (its properties: {', '.join(sorted(own))})")
