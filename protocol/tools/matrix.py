"""The mechanism matrix: every combination of the mechanism switches, checked,
and the minimal sets of mechanisms under which the protocol is safe and live.

A combination is named by its *mechanisms*: the switches that differ from the
baseline (routed compaction, no standing hold, no cap, no acquisition,
physical from_since). Switching a mechanism off means putting its switch
back to the baseline, so on mechanism sets it is plain set difference, and
the derivation of the minimal sufficient sets (`minimal_sufficient_sets`) is
a pure function of a table `mechanisms -> sufficient?`.
"""

from __future__ import annotations

import itertools
import time
from concurrent.futures import as_completed
from typing import Callable, Iterable, Mapping

import attrs

from protocol.model.config import DEFAULT_CONSTANTS, SWITCHES, Config, ConfigError
from protocol.configurations.named import NamedConfig, lookup, named_configurations
from protocol.lifecycle import deferred, forkserver_context, process_pool

# The switches the matrix varies (those declared `in_matrix`): the mechanisms of spec
# section 2 that restore the lost ordering, and section 11's third way to restore it,
# the controller freeing a peek's hold only once every process reported it retired. Fairness stays on (the liveness verdict
# needs it); the alias switches of section 10 stay at their defaults, since they
# describe another system (two index ids, one process) rather than a way to restore it.


def matrix_switches() -> tuple:
    """The switches the matrix varies (`Switch.in_matrix`), in declaration order."""
    return tuple(name for name, switch in SWITCHES.items() if switch.in_matrix)


def baseline() -> dict:
    """Each matrix switch at its default: the design with no mechanism added."""
    return {name: SWITCHES[name].default for name in matrix_switches()}  # Config()'s, without building one per switch


LIVENESS = "CompactionNotStalled"
# A set of mechanisms is sufficient when the protocol is both safe and live with it.
REQUIRED = ("I1", LIVENESS)


@attrs.frozen
class Family:
    """A family of combinations the matrix checks: the switches it varies, what it holds
    fixed, the properties a sufficient set must keep, and how a mechanism is named.

    `on` is None for section 2's family, whose mechanisms are the switches set away from
    their defaults; otherwise it maps each varied switch to the value that *is* the
    mechanism (on) and the value that switches it off, and `labels` names it."""

    name: str
    meaning: str
    varied: Callable  # () -> the switches varied, in order
    required: tuple
    fixed: dict = attrs.field(factory=dict)
    constants: dict = attrs.field(factory=dict)  # over Config()'s defaults
    on: dict | None = None  # switch -> (its value with the mechanism on, with it off)
    labels: dict = attrs.field(factory=dict)  # switch -> the mechanism's name
    tied: Callable = lambda switches: switches  # switches -> those with what follows from them
    note: str = ""  # what the derivation cannot show, in words
    same_because: str = "the cap routes compaction"  # why two combinations are one system
    given: str | None = None  # a mechanism the design is committed to: minimal sets are also derived with it


MECHANISMS = Family("mechanisms", "the mechanisms that restore the lost ordering (sections 2 and 11)",
                    lambda: matrix_switches(), REQUIRED)
# Section 13's design as shipped, at one process with one reconnection: the stateless multiplexer
# (with which the controller creates the index in the stream), the peer hold's registrar, its
# value, its pairing, and what a reconnection does. Without the stateless multiplexer the index
# cannot be created (13.1, refusal 2): such a row is sections 1 to 12's index, published and held
# at 0 from the first state, and the three peer-hold switches do not apply to it.
_PEER_HOLD = ("peer_by", "peer_at", "pairing")


def _shipped_tied(switches: dict) -> dict:
    """The index follows the multiplexer; under the split one the peer-hold switches are moot."""
    if switches["multiplexer"] == "stateless":
        return {**switches, "index": "created"}
    return {**switches, "index": "static", **{name: SWITCHES[name].default for name in _PEER_HOLD}}


SHIPPED = Family(
    "shipped", "the design as shipped (section 13): the stateless multiplexer, who registers the "
               "peer hold, where, its pairing, and what a reconnection keeps",
    lambda: ("multiplexer", *_PEER_HOLD, "reconcile", "peer_reset"),
    ("I1", "PeerHeld", "ImportersRetired", LIVENESS),
    fixed={"compaction": "broadcast", "standing_hold": True},
    constants={"P": 1, "E": 1},
    on={"multiplexer": ("stateless", "split"), "peer_by": ("publisher", "reader"),
        "peer_at": ("join", "as_of"), "pairing": ("fifo", "none"),
        "reconcile": ("drop", "none"), "peer_reset": ("keep", "clear")},
    labels={"multiplexer": "stateless multiplexer", "peer_by": "publisher registers", "peer_at": "join",
            "pairing": "pairing", "reconcile": "reconciliation", "peer_reset": "keep on reconnect"},
    tied=_shipped_tied,
    given="stateless multiplexer",
    same_because="without the stateless multiplexer the index is static and the peer-hold switches "
                 "do not apply",
    note="without the stateless multiplexer the index is not created in the stream but exists, "
         "published and held at 0, from the first state (sections 1 to 12); HoldsStatelessUnheld "
         "shows the hold the stateless multiplexer needs beside")
FAMILIES = {family.name: family for family in (MECHANISMS, SHIPPED)}


# ------------------------------------------------------------ combinations


def mechanism_label(switch: str, value) -> str:
    """How a switch set away from the baseline is named: `broadcast`, `cap`, `acquire release_on_interactive`."""
    if switch == "compaction":
        return value
    if isinstance(value, bool):
        return switch
    return f"{switch} {value}"


def chosen_mechanisms(chosen: Mapping[str, object], family: Family) -> frozenset[str]:
    """The mechanisms a family with named mechanisms (`on`) has on in the values chosen."""
    return frozenset(family.labels[name] for name, value in chosen.items() if value == family.on[name][0])


def mechanisms(cfg: Config, family: Family = MECHANISMS) -> frozenset[str]:
    """The mechanisms `cfg` switches on, relative to the family's baseline."""
    if family.on is not None:
        return chosen_mechanisms({name: getattr(cfg, name) for name in family.varied()}, family)
    return frozenset(
        mechanism_label(name, getattr(cfg, name))
        for name, default in baseline().items()
        if getattr(cfg, name) != default
    )


def combinations(constants: Mapping[str, int], family: Family = MECHANISMS) -> list[Config]:
    """Every combination of the matrix switches, fairness on, in a fixed order."""
    return [cfg for _, cfg in chosen_combinations(constants, family)]


def chosen_combinations(constants: Mapping[str, int], family: Family = MECHANISMS,
                        refusals: dict | None = None) -> list[tuple]:
    """Every combination as (the mechanisms chosen, its configuration), fairness on, in a fixed order.

    Compaction varies slowest among the switches of section 2, routed first, so
    a combination that is the same system as another (see `same_system`) always
    comes after it; the controller's release (`ctl_release`, section 11) varies
    slower still, so the combinations of section 2 come first, in their order.
    The mechanisms are those chosen, before `family.tied` settles what follows
    from them: two choices may be one system (see `plan`). A choice the configuration
    refuses is no combination; `refusals`, when given, counts them by reason.
    """
    if family.on is not None:
        switches, values = family.varied(), [family.on[name] for name in family.varied()]
    else:
        switches = sorted(matrix_switches(), key=lambda name: SWITCHES[name].shown)  # section 11's vary slowest
        values = [SWITCHES[name].values for name in switches]
    found = []
    for chosen in itertools.product(*values):
        try:
            cfg = Config(**constants, fairness=True, **family.fixed, **family.tied(dict(zip(switches, chosen))))
        except ConfigError as refusal:
            # a value that needs a switch the matrix does not vary (physical from_cuts needs a seal),
            # or one the constants refuse (E >= 1 with the marker hello needs broadcast compaction)
            if refusals is not None:
                refusals[str(refusal)] = refusals.get(str(refusal), 0) + 1
            continue
        found.append((chosen_mechanisms(dict(zip(switches, chosen)), family) if family.on
                      else mechanisms(cfg, family), cfg))
    return found


def refused_by_constants(constants: Mapping[str, int], family: Family = MECHANISMS) -> tuple[int, int, list[str]]:
    """(the combinations the family has at its default constants, how many of them `constants`
    refuse, the reasons why): `matrix -c E=2` checks 2 of the 96, and says so before it starts."""
    at_defaults: dict = {}
    here: dict = {}
    total = len(chosen_combinations({**DEFAULT_CONSTANTS, **family.constants}, family, at_defaults))
    chosen_combinations(constants, family, here)
    reasons = [reason for reason, count in here.items() if count > at_defaults.get(reason, 0)]
    return total, max(0, sum(here.values()) - sum(at_defaults.values())), reasons


def same_system(cfg: Config) -> Config:
    """The canonical combination with the same transition system as `cfg`.

    With the cap, compaction is routed whatever the switch says, so the
    broadcast switch is moot there.
    """
    return cfg.evolve(compaction=cfg.effective_compaction)


def named_for(constants: Mapping[str, int]) -> dict[Config, NamedConfig]:
    """The named configurations at `constants`, by their configuration (those the constants
    refuse, as D=2 refuses the design's one-dataflow reconnection, are no row)."""
    found = {}
    for named in named_configurations().values():
        try:
            widened = named.with_constants(constants)
        except ConfigError:
            continue
        found[widened.config] = widened
    return found


# ------------------------------------------------------------ running one


@attrs.frozen
class Outcome:
    """What checking one combination found: small and picklable, for worker processes.

    `properties` maps each property to `(holds, trace_length)`; `mismatches`
    is empty unless the combination is a named configuration whose verdicts
    differ from what it expects.
    """

    properties: dict
    distinct_states: int
    transitions: int
    depth: int
    seconds: float
    complete: bool  # the search went to the end and every verdict was decided
    mismatches: tuple = ()
    interrupted: bool = False

    def holds(self, prop: str) -> bool | None:
        """The verdict of `prop`; None when unknown or not reported by the checker."""
        return self.properties.get(prop, (None, None))[0]


def check_combination(cfg: Config, name: str | None = None) -> Outcome:
    """Explore one combination with `protocol.run.check` (runs in a worker process).

    A named combination is checked as its named configuration, so that its
    mismatches come back too; any other expects nothing (only verdicts are read).
    """
    from protocol.run import check

    named = lookup(name).with_constants(cfg.constants) if name else None
    result = check(named or NamedConfig(name="matrix", config=cfg))
    return Outcome(
        properties={
            prop: (verdict.holds, getattr(verdict, "trace_length", None))
            for prop, verdict in result.properties.items()
        },
        distinct_states=result.distinct_states,
        transitions=result.transitions,
        depth=result.depth,
        seconds=result.seconds,
        # Ctrl-C while liveness was decided leaves a complete search with unknown
        # verdicts: that is not complete, or the unknowns would feed the derivation.
        complete=result.complete and not result.interrupted,
        mismatches=tuple(result.mismatches()) if named else (),
        interrupted=result.interrupted,
    )


# ------------------------------------------------------------ the table


@attrs.frozen
class Row:
    """One combination: its number (from 1), the named configuration it is, and
    either its own outcome or the number of the row that is the same system."""

    number: int
    config: Config
    named: str | None = None
    same_as: int | None = None
    outcome: Outcome | None = None
    family: Family = MECHANISMS
    chosen: frozenset | None = None  # the mechanisms chosen, when the family ties others to them

    @property
    def mechanisms(self) -> frozenset[str]:
        return self.chosen if self.chosen is not None else mechanisms(self.config, self.family)


@attrs.frozen
class Matrix:
    rows: tuple  # of Row, in combination order
    seconds: float = 0.0
    interrupted: bool = False
    family: Family = MECHANISMS

    def outcome(self, row: Row) -> Outcome | None:
        """The row's outcome, or that of the row it is the same system as."""
        if row.same_as is not None:
            return self.rows[row.same_as - 1].outcome
        return row.outcome

    def sufficiency(self) -> dict[frozenset[str], bool | None]:
        """mechanisms -> whether the family's required properties (I1 and CompactionNotStalled) hold with them."""
        return {row.mechanisms: sufficient(self.outcome(row), self.family.required) for row in self.rows}

    def minimal_sets(self) -> list[frozenset[str]]:
        """The minimal sufficient sets; none unless every combination was checked to the end."""
        return minimal_sufficient_sets(self.sufficiency()) if self.complete else []

    def minimal_sets_given(self) -> list[frozenset[str]]:
        """The minimal sufficient sets among those with the family's `given` mechanism, each
        minimal against switching off one of the others (none when the family gives none)."""
        if self.family.given is None or not self.complete:
            return []
        given = self.family.given
        table = {mechs - {given}: ok for mechs, ok in self.sufficiency().items() if given in mechs}
        return [mechs | {given} for mechs in minimal_sufficient_sets(table)]

    @property
    def complete(self) -> bool:
        """Every combination that is its own system was checked to the end."""
        return all(row.outcome is not None and row.outcome.complete
                   for row in self.rows if row.same_as is None)

    @property
    def as_expected(self) -> bool:
        """Every run complete and every named configuration's verdicts as it expects."""
        run = [row.outcome for row in self.rows if row.same_as is None]
        return self.complete and not any(o.mismatches for o in run)

    @property
    def refuted(self) -> bool:
        """Some combination checked to the end is not as its named configuration expects
        (not as expected however many of the others were left unchecked)."""
        return any(row.outcome is not None and row.outcome.complete and row.outcome.mismatches
                   for row in self.rows if row.same_as is None)


def plan(constants: Mapping[str, int], family: Family = MECHANISMS) -> list[Row]:
    """The rows before running: which are named, which are the same system as an earlier one."""
    named = named_for(constants)
    number_of: dict[Config, int] = {}
    rows = []
    for number, (chosen, cfg) in enumerate(chosen_combinations(constants, family), start=1):
        canonical = same_system(cfg)
        same_as = number_of.setdefault(canonical, number)
        rows.append(Row(number, cfg, named[cfg].name if cfg in named and same_as == number else None,
                        same_as if same_as != number else None, family=family, chosen=chosen))
    return rows


def run_matrix(
    constants: Mapping[str, int],
    jobs: int = 1,
    on_done: Callable[[Row], None] | None = None,
    family: Family = MECHANISMS,
) -> Matrix:
    """Check every combination that is its own system, `jobs` at a time."""
    started = time.perf_counter()
    rows = plan(constants, family)
    todo = [row for row in rows if row.same_as is None]
    outcomes = {}
    interrupted = False
    try:
        for number, outcome in run_rows(todo, jobs, on_done or (lambda row, outcome: None)):
            outcomes[number] = outcome
            interrupted = interrupted or outcome.interrupted
    except KeyboardInterrupt:
        interrupted = True  # Ctrl-C: report what was checked; `complete` says the rest is missing
    done = tuple(attrs.evolve(row, outcome=outcomes.get(row.number)) for row in rows)
    return Matrix(done, seconds=time.perf_counter() - started, interrupted=interrupted, family=family)


def run_rows(todo: list[Row], jobs: int, on_done) -> Iterable[tuple[int, Outcome]]:
    if jobs <= 1:
        for row in todo:
            outcome = check_combination(row.config, row.named)
            on_done(row, outcome)
            yield row.number, outcome
            if outcome.interrupted:
                return  # check() caught a Ctrl-C and cut this search short: stop the matrix too
        return
    # forkserver, not fork: the progress bar's refresh thread is running, and a
    # forked worker could inherit a lock that thread holds.
    with deferred():  # the server and the workers start whole, or an interrupt would find them half started
        context = forkserver_context()
    with process_pool(jobs, context) as pool:
        with deferred():
            futures = {pool.submit(check_combination, row.config, row.named): row for row in todo}
        for future in as_completed(futures):
            outcome = future.result()
            on_done(futures[future], outcome)
            yield futures[future].number, outcome
            if outcome.interrupted:  # a worker's search cut short ends the matrix as the parent's would
                raise KeyboardInterrupt


# ------------------------------------------------------------ the estimate

# A matrix past the default constants can run for hours, so it first says so: the
# baseline's safety search, cut at PROBE_STATES (about a second), times the combinations
# to check is a lower bound (the other combinations add mechanisms, most add states,
# and liveness comes on top).
PROBE_STATES = 250_000


@attrs.frozen
class Estimate:
    """What the probe found: the baseline's safety search at the matrix's constants."""

    constants: dict
    combinations: int  # the rows that are their own system: those checked
    states: int  # distinct states the probe reached
    seconds: float
    complete: bool  # the baseline was explored to the end within the probe
    rows: int = 0  # every combination, those the same system as another too (what the table counts)

    @property
    def at_least_seconds(self) -> float:
        return self.seconds * self.combinations


def estimate(constants: Mapping[str, int], family: Family = MECHANISMS) -> Estimate | None:
    """The probe, at constants past the defaults; None at or below them (seconds anyway)."""
    defaults = {**DEFAULT_CONSTANTS, **family.constants}
    if all(constants.get(name, 0) <= defaults.get(name, 0) for name in {*DEFAULT_CONSTANTS, *constants}):
        return None
    from protocol.run import check

    rows = plan(constants, family)
    todo = [row for row in rows if row.same_as is None]
    probe = check(NamedConfig(name="matrix", config=todo[0].config), max_states=PROBE_STATES)
    if probe.interrupted:
        raise KeyboardInterrupt  # Ctrl-C during the probe: the matrix has not begun
    return Estimate(dict(constants), len(todo), probe.distinct_states, probe.seconds, probe.complete, len(rows))


# ------------------------------------------------------------ the derivation


def sufficient(outcome: Outcome | None, required: Iterable[str] = REQUIRED) -> bool | None:
    """True when every required property holds, False when one is violated,
    None when that cannot be told (a verdict missing or unknown)."""
    if outcome is None:
        return None
    verdicts = [outcome.holds(prop) for prop in required]
    if False in verdicts:
        return False
    return None if None in verdicts else True


def minimal_sufficient_sets(table: Mapping[frozenset[str], bool | None]) -> list[frozenset[str]]:
    """The sufficient sets from which switching off any one mechanism breaks sufficiency.

    `table` maps a set of mechanisms to whether it is sufficient (None: not
    known). A set is minimal only when each one-smaller set is known to be
    insufficient; a missing or unknown neighbour proves nothing.
    """
    return sorted(
        (
            mechs
            for mechs, ok in table.items()
            if ok is True and all(table.get(mechs - {m}) is False for m in mechs)
        ),
        key=lambda mechs: (len(mechs), in_switch_order(mechs)),
    )


def redundant(mechs: frozenset[str], table: Mapping[frozenset[str], bool | None]) -> list[str]:
    """The mechanisms of a sufficient set that can be switched off keeping it sufficient."""
    return sorted(m for m in mechs if table.get(mechs - {m}) is True)


def remark(row: Row, matrix: Matrix, table=None, minimal=None) -> str:
    """Why the row is interesting, in words: duplicate, degenerate, minimal, redundant."""
    if row.same_as is not None:
        return f"same system as row {row.same_as} ({matrix.family.same_because})"
    outcome = matrix.outcome(row)
    if outcome is None or not outcome.complete:
        return "not checked to the end (interrupted)"
    table = matrix.sufficiency() if table is None else table
    minimal = matrix.minimal_sets() if minimal is None else minimal
    safe = all(outcome.holds(prop) is True for prop in matrix.family.required if prop != LIVENESS)
    live = outcome.holds(LIVENESS)
    if safe and live is False and matrix.family is MECHANISMS:
        if row.config.standing_hold and row.config.effective_compaction == "routed":
            return ("standing hold never learns a compaction: safe only because "
                    "the index never compacts again")
        return "safe, but compaction stalls"
    if row.mechanisms in minimal:
        return "minimal sufficient set"
    if row.mechanisms in matrix.minimal_sets_given():
        return f"minimal sufficient set with the {matrix.family.given}"
    if table.get(row.mechanisms) is True:
        extra = redundant(row.mechanisms, table)
        return "sufficient" + (f"; redundant: {', '.join(extra)}" if extra else "")
    return ""


# ------------------------------------------------------------ output


def in_switch_order(mechs: Iterable[str]) -> list[str]:
    """Mechanisms listed in the order of the switches (compaction first), not alphabetically."""
    order = [mechanism_label(name, value) for name in matrix_switches() for value in SWITCHES[name].values]
    order += [label for family in FAMILIES.values() for label in family.labels.values()]
    return sorted(mechs, key=lambda m: (order.index(m) if m in order else len(order), m))


def mechanisms_text(mechs: Iterable[str]) -> str:
    return " + ".join(in_switch_order(mechs)) or "baseline"


def property_names(matrix: Matrix) -> list[str]:
    """The properties the checker reported, in its order, always with the liveness column."""
    names: list[str] = []
    for row in matrix.rows:
        for prop in (row.outcome.properties if row.outcome else ()):
            if prop not in names:
                names.append(prop)
    return names


def verdict_words(outcome: Outcome | None, prop: str) -> str:
    if outcome is None or prop not in outcome.properties:
        return "not checked"
    holds, length = outcome.properties[prop]
    return {True: "holds", None: "unknown"}.get(holds, f"violated ({length})")


def named_words(row: Row, matrix: Matrix) -> str:
    if row.named is None:
        return ""
    outcome = matrix.outcome(row)
    if outcome is None or not outcome.mismatches:
        return row.named
    return f"{row.named} (NOT as expected: {'; '.join(outcome.mismatches)})"


def named_as_expected(row: Row, matrix: Matrix) -> bool | None:
    """For a named row: whether its verdicts are the expected ones (None when not named or not run)."""
    outcome = matrix.outcome(row)
    if row.named is None or outcome is None:
        return None
    return outcome.complete and not outcome.mismatches


def row_record(row: Row, matrix: Matrix, table=None, minimal=None) -> dict:
    """One row's JSON record (a duplicate row carries `same_as`, no verdicts)."""
    table = matrix.sufficiency() if table is None else table
    outcome = row.outcome
    return {
        "row": row.number,
        "constants": row.config.constants,
        "switches": {name: getattr(row.config, name) for name in matrix.family.varied()},
        "mechanisms": in_switch_order(row.mechanisms),
        "named": row.named,
        "same_as": row.same_as,
        "distinct_states": outcome.distinct_states if outcome else None,
        "transitions": outcome.transitions if outcome else None,
        "depth": outcome.depth if outcome else None,
        "seconds": round(outcome.seconds, 3) if outcome else None,
        "complete": outcome.complete if outcome else (None if row.same_as else False),
        "properties": {
            prop: {"holds": holds, "trace_length": length}
            for prop, (holds, length) in outcome.properties.items()
        } if outcome else None,
        "sufficient": table[row.mechanisms],
        "as_expected": named_as_expected(row, matrix),
        "remark": remark(row, matrix, table, minimal),
    }


def derivation_record(matrix: Matrix, minimal=None) -> dict:
    """The last JSON record: the minimal sufficient sets, derived only from a complete matrix."""
    minimal = matrix.minimal_sets() if minimal is None else minimal
    return {
        "family": matrix.family.name,
        "minimal_sufficient_sets": [in_switch_order(m) for m in minimal],
        **({"given": matrix.family.given,
            "minimal_sufficient_sets_given": [in_switch_order(m) for m in matrix.minimal_sets_given()]}
           if matrix.family.given else {}),
        "required": list(matrix.family.required),
        "derived": matrix.complete,
        "complete": matrix.complete,
        "seconds": round(matrix.seconds, 3),
        "as_expected": matrix.as_expected,
    }


def markdown(matrix: Matrix) -> str:
    """The table as GitHub-flavoured Markdown, then the minimal sufficient sets."""
    props = property_names(matrix)
    table, minimal = matrix.sufficiency(), matrix.minimal_sets()
    header = ["#", "mechanisms", *props, "distinct states", "named", "remark"]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for row in matrix.rows:
        outcome = row.outcome
        cells = [str(row.number), mechanisms_text(row.mechanisms)]
        if outcome is None:
            cells += ["" for _ in props] + [""]
        else:
            cells += [verdict_words(outcome, p) for p in props] + [f"{outcome.distinct_states:,}"]
        cells += [named_words(row, matrix), remark(row, matrix, table, minimal)]
        lines.append("| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |")
    lines += ["", derivation_summary(matrix, minimal)]
    return "\n".join(lines)


def derivation_summary(matrix: Matrix, minimal=None) -> str:
    """One paragraph: the minimal sufficient sets, or why they could not be derived."""
    if not matrix.complete:
        checked = sum(matrix.outcome(row) is not None and matrix.outcome(row).complete for row in matrix.rows)
        why = "interrupted" if matrix.interrupted else "cut short"
        return (f"INCOMPLETE ({why}): {checked} of {len(matrix.rows)} combinations checked to the end; "
                "minimal sufficient sets not derived.")
    minimal = matrix.minimal_sets() if minimal is None else minimal
    sets = ", ".join("{" + ", ".join(in_switch_order(m)) + "}" for m in minimal) or "none"
    required = matrix.family.required
    held = " and ".join(required) if len(required) <= 2 else ", ".join(required[:-1]) + " and " + required[-1]
    note = f" ({matrix.family.note})" if matrix.family.note else ""
    given = ""
    if matrix.family.given:
        with_given = ", ".join("{" + ", ".join(in_switch_order(m)) + "}" for m in matrix.minimal_sets_given())
        given = f" With the {matrix.family.given}, the minimal sufficient sets are: {with_given or 'none'}."
    return (f"Minimal sufficient sets ({held} hold; switching off any one "
            f"mechanism breaks one of them): {sets}{note}.{given} {len(matrix.rows)} combinations, "
            f"{matrix.seconds:.1f} s.")
