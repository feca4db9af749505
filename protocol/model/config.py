"""Configurations: the constants and mechanism switches of model-spec sections 1, 2, 10.1, 11.1 and 12.1.

A configuration is data. `SWITCHES` declares every switch once: its values,
its default, what it means, and where it is allowed. The named
configurations (spec sections 8, 10.5, 11.5 and 12.5) and what they must give are listed
in `protocol/configurations/manifest.toml`; `named_configurations` reads them, checking
every entry against the manifest's schema (`MANIFEST_KEYS`) as it does.
"""

from __future__ import annotations

import difflib
import tomllib
from pathlib import Path
from typing import Callable, Mapping

import attrs

CONSTANT_NAMES = ("P", "D", "MaxTime", "E")
CONSTANT_MINIMUM = {"P": 1, "D": 0, "MaxTime": 0, "E": 0}
DEFAULT_CONSTANTS = {"P": 2, "D": 1, "MaxTime": 2}
# E (spec 13.1): the reconnections the controller may take. At its default 0 it is not
# shown among a configuration's constants, so sections 1 to 12 print as they did.
HIDDEN_CONSTANTS = {"E": 0}
EVERY_DEFAULT_CONSTANT = {**DEFAULT_CONSTANTS, **HIDDEN_CONSTANTS}
# The largest value of each constant, and why. P is bounded by the search itself,
# whatever the options: each process multiplies the reachable states (measured, Holds
# at D=0, MaxTime=1: 2,070,243 states at P=8, 12,030,823 at P=9), and symmetry
# reduction would canonicalise over all P! orders. The reason names no option, since
# none lifts the bound (--symmetry does not: its P! orders are 40,320 at P=8).
CONSTANT_MAXIMUM = {"P": 8, "D": 1_000, "MaxTime": 1_000_000, "E": 1_000}
CONSTANT_LIMIT_WHY = {
    "P": "each process multiplies the reachable states, about sixfold even at D=0, MaxTime=1, "
         "where P=8 has 2,070,243",
    "D": "every peek id multiplies the action instances listed in memory",
    "MaxTime": "every time multiplies the action instances listed in memory",
    "E": "every reconnection queues a Hello on every stream, and the queues grow with it",
}
# Every (peek id, time) pair is a CreatePeek instance, listed in memory before
# the search starts (about 200 bytes each): 2^20 of them take about 200 MB.
INSTANCE_LIMIT = 2**20
# A named configuration of at most this many distinct states (pinned) explores in a
# fraction of a second in every mode: the tests over every configuration run it in the
# quick run, the others in the slow one. The manifest's `size` overrides it.
QUICK_STATES = 10_000


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
    section: int = 2  # the spec section that brings the switch (2, 10, 11 or 12)
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
        # Section 12: the design's own TLA+ model's abstractions.
        Switch("controller", ("policy", "free"), "policy",
               "the controller advances a policy one time at a time, or allows compaction to any later "
               "time its own read holds permit in one command (AllowCompaction)", shown=False, section=12),
        Switch("reader_downgrade", (False, True), False,
               "a rendered import's registration may rise as its reader makes progress (ReaderDowngrade)",
               shown=False, section=12),
        Switch("ingest", (True, False), True,
               "new data may arrive (Ingest); without it upper and physical compaction stay at 0",
               shown=False, section=12,
               value_needs={False: ((lambda cfg: cfg.seal == "none", "seal=none"),
                                    (lambda cfg: cfg.physical == "from_since", "physical=from_since"))}),
        # Section 12.6: the design's own reconnection, which queues nothing.
        Switch("hello", ("marker", "silent"), "marker",
               "a reconnection queues Hello on every stream for reconciliation (section 13), or queues nothing "
               "and lets the controller create its one peek again (the design's TLA+ Hello)",
               only_with=lambda cfg: reconnections(cfg) >= 1, only_with_text="E>=1 (a reconnection to take)",
               shown=False, section=12),
        # Section 13: the design as shipped.
        Switch("multiplexer", ("split", "stateless"), "split",
               "the multiplexer splits the stream (creates and drops to the interactive runtime), or forwards "
               "every command to both runtimes", shown=False, section=13),
        Switch("index", ("static", "created"), "static",
               "the index exists and is held from the start, or the controller creates it in the stream and a "
               "peer hold is registered when it is published", shown=False, section=13),
        Switch("peer_by", ("publisher", "reader"), "publisher",
               "whichever runtime pops the index's create first registers the peer hold, or only the reading "
               "(interactive) runtime does", only_with=lambda cfg: cfg.index == "created",
               only_with_text="index=created", shown=False, section=13),
        Switch("peer_at", ("join", "as_of", "minimum"), "join",
               "a peer hold is registered at the join of the create's as_of and the published since, at the "
               "bare as_of, or at the minimum time", only_with=lambda cfg: cfg.index == "created",
               only_with_text="index=created", shown=False, section=13),
        Switch("since_rule", ("rise", "meet"), "rise",
               "the publisher's since only rises, or is the meet of its holds (the trace's rule)",
               only_with=lambda cfg: cfg.index == "created", only_with_text="index=created", shown=False,
               section=13),
        Switch("pairing", ("fifo", "none"), "fifo",
               "a publication is paired with its peer, which takes the hold over, or the publisher's hold is "
               "an orphan nobody moves", only_with=lambda cfg: cfg.index == "created",
               only_with_text="index=created", shown=False, section=13,
               value_needs={"none": ((lambda cfg: cfg.peer_by == "publisher", "peer_by=publisher"),)}),
        Switch("reconcile", ("drop", "none"), "drop",
               "at Hello the interactive runtime drops every reader the new connection does not know, or keeps them",
               only_with=lambda cfg: marker_reconnections(cfg), only_with_text="E>=1 with hello=marker",
               shown=False, section=13),
        Switch("peer_reset", ("keep", "clear"), "keep",
               "the peer hold survives a reconnection, or the interactive runtime's Hello clears it",
               only_with=lambda cfg: marker_reconnections(cfg), only_with_text="E>=1 with hello=marker",
               shown=False, section=13),
    )
}


def reconnections(cfg) -> int:
    """E: the reconnections a configuration lets the controller take (0 where not given)."""
    return getattr(cfg, "E", 0)


def marker_reconnections(cfg) -> bool:
    """Reconnections as section 13 has them: a Hello queued on every stream."""
    return reconnections(cfg) >= 1 and getattr(cfg, "hello", "marker") == "marker"


def uses_section_13(cfg) -> bool:
    """Spec 13.1: the stateless multiplexer, the created index, or reconnections with Hello markers."""
    return (getattr(cfg, "multiplexer", "split") == "stateless" or getattr(cfg, "index", "static") == "created"
            or marker_reconnections(cfg))


@attrs.frozen
class Rule:
    """A combination of switches a configuration may not give (spec 13.1 and 12.6): where
    `refuses(cfg)` holds, the usage line `message`, naming `switch`, the one to drop."""

    switch: str
    refuses: Callable = attrs.field(eq=False)
    message: str


# The switches of sections 10 to 12 that section 13 does not combine with yet (13.1, refusal 6),
# each at a value other than its default; and those of sections 10 and 11 that 12.6's silent
# reconnection refuses.
LATER_SWITCHES = ("alias", "reexport", "reconnect", "seal", "seal_alias", "ctl_release", "report", "floor",
                  "reader_bound", "physical", "cut_floor", "controller", "reader_downgrade", "ingest")
SECTIONS_10_11 = tuple(name for name in LATER_SWITCHES if name not in ("controller", "reader_downgrade", "ingest"))


def _set(cfg, name: str) -> bool:
    """Whether switch `name` leaves its default (physical counts only as from_cuts: from_upper is section 2's)."""
    value = getattr(cfg, name, SWITCHES[name].default)
    return value == "from_cuts" if name == "physical" else value != SWITCHES[name].default


def _later_switch_rule(name: str) -> Rule:
    return Rule(name, lambda cfg: uses_section_13(cfg) and _set(cfg, name),
                f"switch {name} does not combine with section 13 (multiplexer=stateless, index=created or E>=1 "
                f"with hello=marker) yet: drop {name}, or those")


def _silent_rule(name: str) -> Rule:
    return Rule(name, lambda cfg: _silent(cfg) and _set(cfg, name),
                f"switch {name} does not combine with hello=silent (the design's reconnection has none): "
                f"drop {name}, or hello")


def _silent(cfg) -> bool:
    return reconnections(cfg) >= 1 and getattr(cfg, "hello", "marker") == "silent"


RULES = (
    # 13.1, refusal 1: the stateless multiplexer broadcasts compaction and synthesizes nothing.
    Rule("multiplexer", lambda cfg: cfg.multiplexer == "stateless" and cfg.compaction == "routed",
         "switch multiplexer=stateless forwards every command to both runtimes, so it needs "
         "compaction=broadcast: set compaction=broadcast or drop multiplexer"),
    Rule("multiplexer", lambda cfg: cfg.multiplexer == "stateless" and cfg.cap,
         "switch multiplexer=stateless keeps no state, so it has no cap: drop cap or multiplexer"),
    Rule("multiplexer", lambda cfg: cfg.multiplexer == "stateless" and cfg.acquire != "none",
         "switch multiplexer=stateless synthesizes no Acquire or Release: set acquire=none or drop multiplexer"),
    # Refusal 2: the created index needs the stateless multiplexer, and its peer hold is the standing hold.
    Rule("index", lambda cfg: cfg.index == "created" and cfg.multiplexer == "split",
         "switch index=created needs multiplexer=stateless (both runtimes receive the index's create): "
         "set multiplexer=stateless or drop index"),
    Rule("index", lambda cfg: cfg.index == "created" and not cfg.standing_hold,
         "switch index=created needs standing_hold=True (the peer hold is the standing hold, registered late): "
         "set standing_hold or drop index"),
    # Refusal 4: section 13's reconnection broadcasts compaction behind the standing hold.
    Rule("E", lambda cfg: marker_reconnections(cfg) and cfg.compaction == "routed",
         "constant E>=1 with hello=marker needs compaction=broadcast: set compaction=broadcast, or E=0"),
    Rule("E", lambda cfg: marker_reconnections(cfg) and not cfg.standing_hold,
         "constant E>=1 with hello=marker needs standing_hold=True: set standing_hold, or E=0"),
    Rule("E", lambda cfg: marker_reconnections(cfg) and cfg.cap,
         "constant E>=1 with hello=marker does not combine with cap (section 10's reconnect is the cap's): "
         "drop cap, or set E=0"),
    Rule("E", lambda cfg: marker_reconnections(cfg) and cfg.acquire != "none",
         "constant E>=1 with hello=marker needs acquire=none: set acquire=none, or E=0"),
    # Refusal 6: no switch of sections 10 to 12 combines with section 13 yet.
    *(_later_switch_rule(name) for name in LATER_SWITCHES),
    # 12.6: the design's silent reconnection, as its Holds.tla has it.
    Rule("hello", lambda cfg: _silent(cfg) and cfg.controller == "policy",
         "switch hello=silent needs controller=free (the design's controller has no policy): "
         "set controller=free or drop hello"),
    Rule("hello", lambda cfg: _silent(cfg) and cfg.D != 1,
         "switch hello=silent needs D=1 (the design's model has one dataflow): set D=1 or drop hello"),
    Rule("hello", lambda cfg: _silent(cfg) and (cfg.multiplexer != "split" or cfg.index != "static"),
         "switch hello=silent queues no Hello, which multiplexer=stateless and index=created act on: "
         "drop them or hello"),
    Rule("hello", lambda cfg: _silent(cfg) and (cfg.cap or cfg.acquire != "none"),
         "switch hello=silent does not combine with cap or acquire: drop them or hello"),
    *(_silent_rule(name) for name in SECTIONS_10_11),
)


def combination_refusal(cfg) -> Rule | None:
    """The first rule of `RULES` that `cfg` breaks, or None."""
    return next((rule for rule in RULES if rule.refuses(cfg)), None)




def _one_of(name: str):
    def check(_instance, _attribute, value):
        if value not in SWITCHES[name].values or type(value) is not type(SWITCHES[name].default):
            allowed = ", ".join(map(str, SWITCHES[name].values))
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
    controller: str = _switch("controller")
    reader_downgrade: bool = _switch("reader_downgrade")
    ingest: bool = _switch("ingest")
    E: int = HIDDEN_CONSTANTS["E"]
    hello: str = _switch("hello")
    multiplexer: str = _switch("multiplexer")
    index: str = _switch("index")
    peer_by: str = _switch("peer_by")
    peer_at: str = _switch("peer_at")
    since_rule: str = _switch("since_rule")
    pairing: str = _switch("pairing")
    reconcile: str = _switch("reconcile")
    peer_reset: str = _switch("peer_reset")

    def __attrs_post_init__(self):
        for name in CONSTANT_NAMES:
            check_constant(name, getattr(self, name))
        for switch in SWITCHES.values():
            refusal = switch.refusal(self)
            if refusal:
                raise ConfigError(refusal)
        broken = combination_refusal(self)
        if broken is not None:
            raise ConfigError(broken.message)
        creates = self.D * (1 if self.alias == "none" else 2) * (self.MaxTime + 1)  # one per (d, i, t)
        if creates > INSTANCE_LIMIT:
            raise ConfigError(
                f"D={self.D} and MaxTime={self.MaxTime} give {creates:,} CreatePeek "
                f"instances, more than the {INSTANCE_LIMIT:,} listed in memory: D x index ids x (MaxTime+1) "
                f"must be <= {INSTANCE_LIMIT:,}")
        downgrades = self.P * self.D * self.MaxTime if self.reader_downgrade else 0  # one per (p, d, t > 0)
        if creates + downgrades > INSTANCE_LIMIT:
            raise ConfigError(
                f"P={self.P}, D={self.D} and MaxTime={self.MaxTime} give {creates:,} CreatePeek and "
                f"{downgrades:,} ReaderDowngrade instances, more than the {INSTANCE_LIMIT:,} listed in memory: "
                f"lower D or MaxTime, or drop reader_downgrade")

    @property
    def constants(self) -> dict:
        """The constants, E only where it is not 0 (sections 1 to 12 print as they did)."""
        return {name: getattr(self, name) for name in CONSTANT_NAMES
                if getattr(self, name) != HIDDEN_CONSTANTS.get(name, getattr(self, name) + 1)}

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

    chosen = SimpleNamespace(**{**EVERY_DEFAULT_CONSTANT, **{name: switch.default for name, switch in SWITCHES.items()},
                                **switches})
    found = next((name for name, switch in SWITCHES.items() if switch.refusal(chosen)), None)
    if found is None and (broken := combination_refusal(chosen)) is not None:
        found = broken.switch
    return found


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
        return "quick" if self.pinned is not None and self.pinned[0] <= QUICK_STATES else "slow"

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


@schema(lambda: {"enum": list(CONSTANT_NAMES)})
def constant_name(name) -> None:
    if name not in CONSTANT_NAMES:
        raise Invalid(f"no constant `{name}`: {close_to(name, CONSTANT_NAMES)}")


@schema(lambda: {"type": "integer"})
def constant_value(value, *_) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise Invalid(f"{value!r} is not a whole number")


@schema(lambda: {"type": "object", "additionalProperties": False, "properties": {
    name: {"type": "integer", "minimum": CONSTANT_MINIMUM[name]} for name in CONSTANT_NAMES}})
def constants_table(value, *context) -> None:
    table_of(constant_name, constant_value)(value, *context)
    for name, at in value.items():
        try:
            check_constant(name, at)
        except ConfigError as error:
            raise Invalid(str(error)) from None


@schema(lambda: {"type": "object", "additionalProperties": False, "properties": {
    name: {"enum": list(switch.values)} for name, switch in SWITCHES.items()}})
def switches_table(value, *_) -> None:
    if not isinstance(value, dict):
        raise Invalid(f"{value!r} is not a table {{ switch = value, ... }}")
    for name, chosen in value.items():
        if name not in SWITCHES:
            raise Invalid(f"no switch `{name}`: {close_to(name, SWITCHES)}")
        switch = SWITCHES[name]
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
    **{name: {"type": "integer", "minimum": CONSTANT_MINIMUM[name]} for name in CONSTANT_NAMES},
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
                       "protocol/model/config.py; do not edit by hand.",
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
    base = config_of(based_on, tables, (*seen, name)) if based_on else Config()
    try:
        return base.evolve(**table.get("switches", {}), **{**EVERY_DEFAULT_CONSTANT, **table.get("constants", {})})
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
