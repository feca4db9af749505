"""Configurations: the constants and mechanism switches of model-spec sections 1 and 2.

A configuration is data. The named configurations of spec section 8 are
`Holds` and `HoldsAcquire` (defined here, both must hold) plus the
refutations, one small file each under `refutations/`.
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

SWITCH_VALUES = {
    "compaction": ("routed", "broadcast"),
    "standing_hold": (False, True),
    "cap": (False, True),
    "acquire": ("none", "release_on_interactive", "release_on_maintenance"),
    "physical": ("from_since", "from_upper"),
    "fairness": (True, False),
}


class ConfigError(ValueError):
    """A bad configuration name or constant: one line naming it and the fix."""


def _one_of(name: str):
    def check(_instance, _attribute, value):
        if value not in SWITCH_VALUES[name]:
            allowed = ", ".join(map(str, SWITCH_VALUES[name]))
            raise ConfigError(f"switch {name}={value!r} is not one of: {allowed}")

    return check


@attrs.frozen
class Config:
    """One transition system: the constants and every mechanism switch."""

    P: int = DEFAULT_CONSTANTS["P"]
    D: int = DEFAULT_CONSTANTS["D"]
    MaxTime: int = DEFAULT_CONSTANTS["MaxTime"]
    compaction: str = attrs.field(default="routed", validator=_one_of("compaction"))
    standing_hold: bool = attrs.field(default=False, validator=_one_of("standing_hold"))
    cap: bool = attrs.field(default=False, validator=_one_of("cap"))
    acquire: str = attrs.field(default="none", validator=_one_of("acquire"))
    physical: str = attrs.field(default="from_since", validator=_one_of("physical"))
    fairness: bool = attrs.field(default=True, validator=_one_of("fairness"))

    def __attrs_post_init__(self):
        for name in CONSTANT_NAMES:
            check_constant(name, getattr(self, name))
        if self.D * (self.MaxTime + 1) > INSTANCE_LIMIT:
            raise ConfigError(
                f"D={self.D} and MaxTime={self.MaxTime} give {self.D * (self.MaxTime + 1):,} CreatePeek "
                f"instances, more than the {INSTANCE_LIMIT:,} listed in memory: D x (MaxTime+1) must be "
                f"<= {INSTANCE_LIMIT:,}")

    @property
    def constants(self) -> dict:
        return {name: getattr(self, name) for name in CONSTANT_NAMES}

    @property
    def switches(self) -> dict:
        return {name: getattr(self, name) for name in SWITCH_VALUES}

    @property
    def effective_compaction(self) -> str:
        """With the cap, compaction is routed to maintenance whatever the switch says."""
        return "routed" if self.cap else self.compaction

    def evolve(self, **changes) -> "Config":
        return attrs.evolve(self, **changes)


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
    """A named configuration and the verdict it is expected to give.

    `violates` is None for a configuration that must hold, else the property it
    must violate; `length` is that counterexample's shortest length. Where `applies` is false for the constants in use (for
    example HoldsCap with one process) the mechanism's defect cannot show, and
    the configuration is expected to hold.
    """

    name: str
    config: Config
    violates: str | None = None
    length: int | None = None
    applies: Callable[[Config], bool] = attrs.field(default=lambda cfg: True, eq=False)
    doc: str = attrs.field(default="", eq=False)

    def with_constants(self, constants: Mapping[str, int]) -> "NamedConfig":
        return attrs.evolve(self, config=self.config.evolve(**constants))

    def expected_violation(self) -> str | None:
        """The property this run must violate, or None if every property must hold."""
        return self.violates if self.applies(self.config) else None

    def expected_length(self) -> int | None:
        """The pinned shortest length, wherever the defect can show.

        The spec states it at the default constants. More processes, peeks or
        times add runs but cannot shorten the defect's essential steps, and
        measured at P=1..3, D=1..2, MaxTime=1..3 the shortest length is the
        same, so it is compared at every constant where `applies` holds: a
        wider run that found a shorter counterexample would be news.
        """
        if self.expected_violation() is None:
            return None
        return self.length


HOLDS = Config(compaction="broadcast", standing_hold=True, physical="from_since", fairness=True)


def refutation(name: str, doc: str, violates: str, length: int, applies=None, **changes) -> NamedConfig:
    """A refutation: `Holds` with `changes`, expected to violate `violates`."""
    return NamedConfig(
        name=name,
        config=HOLDS.evolve(**changes),
        violates=violates,
        length=length,
        applies=applies or (lambda cfg: True),
        doc=" ".join((doc or "").split()),
    )


def named_configurations() -> dict[str, NamedConfig]:
    """Every named configuration of spec section 8, in the spec's order."""
    import refutations  # the refutations import this module: import late

    sound = [
        NamedConfig(
            "Holds",
            HOLDS,
            doc="The shipped design: compaction broadcast to both runtimes, and the "
            "interactive runtime's applied frontier (the standing hold) bounds the publisher.",
        ),
        NamedConfig(
            "HoldsAcquire",
            HOLDS.evolve(compaction="routed", standing_hold=False, acquire="release_on_interactive"),
            doc="The retired but sound design: the multiplexer acquires a hold on maintenance "
            "with each create and releases it on the interactive stream after the drop.",
        ),
    ]
    ordered = sound + list(refutations.ALL)
    return {named.name: named for named in ordered}


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
