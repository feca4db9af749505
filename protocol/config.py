"""Configurations: the constants and mechanism switches of model-spec sections 1, 2, 10.1 and 11.1.

A configuration is data. `SWITCHES` declares every switch once: its values,
its default, what it means, and where it is allowed. The named
configurations (spec sections 8 and 10.5) and what they must give are listed
in `refutations/manifest.toml`; `named_configurations` reads them.
"""

from __future__ import annotations

import difflib
from typing import Callable, Mapping

import attrs

CONSTANT_NAMES = ("P", "D", "MaxTime")
CONSTANT_MINIMUM = {"P": 1, "D": 0, "MaxTime": 0}
DEFAULT_CONSTANTS = {"P": 2, "D": 1, "MaxTime": 2}
# The largest value of each constant, and why: what the engine can represent.
# The fast engine interns each process's part of a state in 24 bits
# (fast.BITS), and a state is one int packing P such parts; symmetry
# reduction canonicalises over all P! permutations of the processes.
CONSTANT_MAXIMUM = {"P": 8, "D": 1_000, "MaxTime": 1_000_000}
CONSTANT_LIMIT_WHY = {
    "P": "--symmetry tries all P! orders of the processes (40,320 at P=8)",
    "D": "every peek id multiplies the action instances listed in memory",
    "MaxTime": "every time multiplies the action instances listed in memory",
}
# Every (peek id, time) pair is a CreatePeek instance, listed in memory before
# the search starts (about 200 bytes each): 2^20 of them take about 200 MB.
INSTANCE_LIMIT = 2**20


class ConfigError(ValueError):
    """A bad configuration name or constant: one line naming it and the fix."""


@attrs.frozen
class Switch:
    """One mechanism switch. `only_with` is where it may leave its default (spec 10.1:
    no run shows a switch that cannot act); `shown` says whether a configuration
    lists it at its default (the section-10 switches are listed only when set)."""

    name: str
    values: tuple
    default: object
    meaning: str
    only_with: Callable | None = attrs.field(default=None, eq=False)  # cfg -> bool
    only_with_text: str = ""
    shown: bool = True
    in_matrix: bool = False  # varied by `python -m protocol matrix`
    section: int = 2  # the spec section that brings the switch (2, 10 or 11)
    # value -> ((cfg -> bool, what it needs), ...): a value allowed only where more holds
    # (spec 11.1: report=silent_cancel needs a seal; physical=from_cuts a seal and no alias).
    value_needs: dict = attrs.field(factory=dict, eq=False)

    def refusal(self, cfg) -> str | None:
        """Why `cfg` may not give this switch its value (one usage line), or None."""
        value = getattr(cfg, self.name)
        if value == self.default:
            return None
        needs = ([(self.only_with, self.only_with_text)] if self.only_with else []) + list(
            self.value_needs.get(value, ()))
        for holds, text in needs:
            if not holds(cfg):
                return (f"switch {self.name}={value} needs {text}: "
                        f"drop {self.name} or set {text.split(' ')[0]}")
        return None


SWITCHES = {
    switch.name: switch
    for switch in (
        Switch("compaction", ("routed", "broadcast"), "routed",
               "where AllowCompaction goes: the maintenance stream only, or both streams", in_matrix=True),
        Switch("standing_hold", (False, True), False,
               "the interactive runtime's applied frontier bounds the publisher", in_matrix=True),
        Switch("cap", (False, True), False,
               "the multiplexer caps forwarded compaction until process 0 renders the peek",
               only_with=lambda cfg: cfg.alias == "none", only_with_text="alias=none (the cap is for one index)",
               in_matrix=True),
        Switch("acquire", ("none", "release_on_interactive", "release_on_maintenance"), "none",
               "Acquire with each create and Release with each drop, on the named stream", in_matrix=True),
        Switch("physical", ("from_since", "from_upper", "from_cuts"), "from_since",
               "how the publisher derives the physical compaction frontier", in_matrix=True,
               value_needs={"from_cuts": ((lambda cfg: cfg.seal != "none", "seal sink or tap"),
                                          (lambda cfg: cfg.alias == "none", "alias=none"))}),
        Switch("fairness", (True, False), True, "weak fairness on the runtime actions"),
        Switch("alias", ("none", "per_id", "shared"), "none",
               "a second index id Y re-exporting X, sharing its publication point", shown=False, section=10),
        Switch("reexport", ("adopt", "overwrite"), "adopt",
               "publishing Y backs a reader's placeholder in place, or replaces the slot",
               only_with=lambda cfg: cfg.alias != "none", only_with_text="alias per_id or shared", shown=False, section=10),
        Switch("reconnect", (False, True), False,
               "the controller may reconnect, discarding the multiplexer's cap",
               only_with=lambda cfg: cfg.cap, only_with_text="cap=True", shown=False, section=10),
        # Section 11: seal waits, retirement reports, the publisher's bound, physical cuts.
        Switch("seal", ("none", "sink", "tap"), "none",
               "peeks wait for the published upper to pass their as_of; who notifies them: "
               "the publisher's sink, after it publishes, or a tap upstream of it", shown=False, section=11),
        Switch("seal_alias", ("closure", "source"), "closure",
               "a seal notifies every id re-exporting the point, or only X's",
               only_with=lambda cfg: cfg.seal != "none", only_with_text="seal sink or tap", shown=False,
               value_needs={"source": ((lambda cfg: cfg.alias != "none", "alias per_id or shared"),)}, section=11),
        Switch("ctl_release", ("cancel", "report"), "cancel",
               "the controller frees a dropped peek's hold at the cancel, or once every process reported it retired",
               shown=False, in_matrix=True, section=11),
        Switch("report", ("sound", "owner_filter", "silent_cancel"), "sound",
               "every Drop is reported, the multiplexer filters the report, or a parked peek is cancelled silently",
               only_with=lambda cfg: cfg.ctl_release == "report", only_with_text="ctl_release=report",
               shown=False,
               value_needs={"silent_cancel": ((lambda cfg: cfg.seal != "none", "seal sink or tap"),)}, section=11),
        Switch("floor", ("adoption", "agent"), "adoption",
               "the publisher's writer floor before any AllowCompaction: captured at adoption, or absent",
               shown=False, section=11),
        Switch("reader_bound", (True, False), True,
               "the readers' registrations bound the publisher", shown=False, section=11),
        Switch("cut_floor", ("coverage", "upper"), "coverage",
               "a reader's declared cut starts at the chain's coverage, or at the write frontier",
               only_with=lambda cfg: cfg.physical == "from_cuts", only_with_text="physical=from_cuts",
               shown=False, section=11),
    )
}
SWITCH_VALUES = {name: switch.values for name, switch in SWITCHES.items()}


def _one_of(name: str):
    def check(_instance, _attribute, value):
        if value not in SWITCH_VALUES[name] or type(value) is not type(SWITCHES[name].default):
            allowed = ", ".join(map(str, SWITCH_VALUES[name]))
            raise ConfigError(f"switch {name}={value!r} is not one of: {allowed}")

    return check


def _switch(name: str):
    return attrs.field(default=SWITCHES[name].default, validator=_one_of(name))


@attrs.frozen
class Config:
    """One transition system: the constants and every mechanism switch."""

    P: int = DEFAULT_CONSTANTS["P"]
    D: int = DEFAULT_CONSTANTS["D"]
    MaxTime: int = DEFAULT_CONSTANTS["MaxTime"]
    compaction: str = _switch("compaction")
    standing_hold: bool = _switch("standing_hold")
    cap: bool = _switch("cap")
    acquire: str = _switch("acquire")
    physical: str = _switch("physical")
    fairness: bool = _switch("fairness")
    alias: str = _switch("alias")
    reexport: str = _switch("reexport")
    reconnect: bool = _switch("reconnect")
    seal: str = _switch("seal")
    seal_alias: str = _switch("seal_alias")
    ctl_release: str = _switch("ctl_release")
    report: str = _switch("report")
    floor: str = _switch("floor")
    reader_bound: bool = _switch("reader_bound")
    cut_floor: str = _switch("cut_floor")

    def __attrs_post_init__(self):
        for name in CONSTANT_NAMES:
            check_constant(name, getattr(self, name))
        for switch in SWITCHES.values():
            refusal = switch.refusal(self)
            if refusal:
                raise ConfigError(refusal)
        creates = self.D * (1 if self.alias == "none" else 2) * (self.MaxTime + 1)  # one per (d, i, t)
        if creates > INSTANCE_LIMIT:
            raise ConfigError(
                f"D={self.D} and MaxTime={self.MaxTime} give {creates:,} CreatePeek "
                f"instances, more than the {INSTANCE_LIMIT:,} listed in memory: D x index ids x (MaxTime+1) "
                f"must be <= {INSTANCE_LIMIT:,}")

    @property
    def constants(self) -> dict:
        return {name: getattr(self, name) for name in CONSTANT_NAMES}

    @property
    def switches(self) -> dict:
        """Every switch of sections 1 to 9, and a section-10 or 11 switch where it is set."""
        return {name: getattr(self, name) for name, switch in SWITCHES.items()
                if switch.shown or getattr(self, name) != switch.default}

    @property
    def effective_compaction(self) -> str:
        """With the cap, compaction is routed to maintenance whatever the switch says."""
        return "routed" if self.cap else self.compaction

    def evolve(self, **changes) -> "Config":
        return attrs.evolve(self, **changes)


def refused_switch(switches: Mapping[str, object]) -> str | None:
    """The first switch whose value `switches` (the others at their defaults) refuses, or None."""
    from types import SimpleNamespace

    chosen = SimpleNamespace(**{**{name: switch.default for name, switch in SWITCHES.items()}, **switches})
    return next((name for name, switch in SWITCHES.items() if switch.refusal(chosen)), None)


def without_refused(switches: Mapping[str, object]) -> dict:
    """`switches` with every value that cannot act put back to its default, one at a time
    (a combination that is valid is returned unchanged)."""
    chosen = dict(switches)
    while (name := refused_switch(chosen)) is not None:
        chosen[name] = SWITCHES[name].default
    return chosen


def check_constant(name: str, value) -> int:
    if name not in CONSTANT_MINIMUM:
        known = ", ".join(CONSTANT_NAMES)
        raise ConfigError(f"unknown constant {name!r}: the constants are {known}")
    if isinstance(value, bool) or not isinstance(value, int):
        raise ConfigError(
            f"constant {name}={value!r} is not an integer: give {name} >= {CONSTANT_MINIMUM[name]}"
        )
    if value < CONSTANT_MINIMUM[name]:
        raise ConfigError(
            f"constant {name}={value} is out of range: {name} must be >= {CONSTANT_MINIMUM[name]}"
        )
    if value > CONSTANT_MAXIMUM[name]:
        raise ConfigError(
            f"constant {name}={value} is out of range: {name} must be <= {CONSTANT_MAXIMUM[name]:,} "
            f"({CONSTANT_LIMIT_WHY[name]})"
        )
    return value


def parse_constant(text: str, option: str = "-c") -> tuple[str, int]:
    """Parse one `NAME=VALUE` constant given with `option` (`-c P=3`, `--rung P=3,...`)."""
    name, sep, raw = text.partition("=")
    name, raw = name.strip(), raw.strip()
    if not sep or not name:
        raise ConfigError(f"{option} {text!r} is not NAME=VALUE: write for example {option} P=3")
    if name not in CONSTANT_MINIMUM:
        known = ", ".join(CONSTANT_NAMES)
        raise ConfigError(f"unknown constant {name!r} in {option} {text}: the constants are {known}")
    try:
        if len(raw) > 30:  # no constant has 30 digits; int() of thousands of digits raises anyway
            raise ValueError
        value = int(raw)
    except ValueError:
        raise ConfigError(
            f"constant {name}={raw!r} is not an integer: give {name} >= {CONSTANT_MINIMUM[name]}"
        ) from None
    return name, check_constant(name, value)


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


def _config_of(name: str, table: dict, tables: dict) -> Config:
    based_on = table.get("based_on", "Holds" if name != "Holds" else None)
    base = _config_of(based_on, tables[based_on], tables) if based_on else Config()
    constants = {**DEFAULT_CONSTANTS, **table.get("constants", {})}
    try:
        return base.evolve(**table.get("switches", {}), **constants)
    except (TypeError, ConfigError) as error:
        raise ConfigError(f"refutations/manifest.toml, [{name}]: {error}") from None


def _named_from(name: str, table: dict, tables: dict) -> NamedConfig:
    import refutations

    doc = refutations.why(table["module"]) if "module" in table else table.get("doc", "")
    pinned = (table["distinct_states"], table["depth"]) if "distinct_states" in table else None
    return NamedConfig(name, _config_of(name, table, tables), table.get("expect", {}), table.get("needs", {}),
                       table.get("length_only_at", {}), " ".join(doc.split()), pinned)


def named_configurations() -> dict[str, NamedConfig]:
    """Every named configuration of the manifest, in its order (spec sections 8 and 10.5)."""
    global _NAMED
    if _NAMED is None:
        import refutations

        tables = refutations.manifest()
        _NAMED = {name: _named_from(name, table, tables) for name, table in tables.items()}
    return dict(_NAMED)


_NAMED: dict | None = None
HOLDS = Config(compaction="broadcast", standing_hold=True, physical="from_since", fairness=True)


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
