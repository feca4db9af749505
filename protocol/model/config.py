"""Configurations: the constants and mechanism switches of model-spec sections 1, 2, 10.1, 11.1, 12.1 and 13.1.

A configuration is data. `SWITCHES` declares every switch once: its values,
its default, what it means, and where it is allowed; `RULES` the combinations
refused. The switches only: the named configurations (spec sections 8, 10.5,
11.5, 12.5 and 13.5), the manifest that lists them and its schema live with
them, in `protocol/configurations/named.py`, which imports this module (never
the other way round).
"""

from __future__ import annotations

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


# The shipped design (spec section 2's defaults): every named configuration is a variation of it.
HOLDS = Config(compaction="broadcast", standing_hold=True, physical="from_since", fairness=True)
