"""The properties of model-spec sections 5, 10.4 and 11.4, declared once, named as in the spec.

Each `Property` names its kind (a state invariant, a transition property, or
a liveness property given as leads-to pairs), its predicate, its witnesses
(for the last row of a counterexample, in protocol words), whether the
packed engine may check it once per component, and the configurations it
belongs to: a property belongs where the switches give it meaning
(ImportsBacked only with a re-export alias, where it can fail).

State invariants take `(state, cfg)`; transition properties take
`(before, after, cfg)`; each returns True when the property holds.
"""

from __future__ import annotations

from typing import Callable

import attrs

from protocol.properties import guards as guarding
from protocol.properties.guards import guarded
from protocol.model.where import (
    everywhere, with_alias, with_cuts, with_markers, with_peer_held, with_reports, with_seal, with_standing_hold,
    without_cuts,
)
from protocol.properties.i1 import i1, i1_at, i1_witnesses
from protocol.properties.leads_to import (
    LeadsTo, compaction_not_stalled, compaction_thresholds, ctl_hold_released, ctl_hold_released_witnesses, imports_backed,
    imports_backed_witnesses, importers_retired, importers_retired_witnesses, peeks_served, peeks_served_witnesses,
)
from protocol.properties.no_regression import no_regression, no_regression_witnesses
from protocol.properties.physical_cuts import (
    physical_le_coverage, physical_le_coverage_at, physical_le_coverage_witnesses, physical_le_cut, physical_le_cut_at,
    physical_le_cut_witnesses,
)
from protocol.properties.physical_le_since import physical_le_since, physical_le_since_at, physical_le_since_witnesses
from protocol.properties.since_allowed import (
    peer_held, peer_held_at, peer_held_witnesses, since_allowed, since_allowed_at, since_allowed_witnesses,
    since_le_standing, since_le_standing_at, since_le_standing_witnesses,
)
from protocol.properties.type_ok import type_ok, type_ok_witnesses

STATE, TRANSITION, LIVENESS = "state invariant", "transition property", "liveness"
SAFETY = (STATE, TRANSITION)  # the kinds a single state or step can violate


def physical_from_cuts(cfg) -> str | None:
    """Why PhysicalLeSince does not apply: with cuts, physical compaction follows the
    readers' cuts, not since, by design."""
    return "with from_cuts" if with_cuts(cfg) else None


def never(cfg) -> None:
    return None


@attrs.frozen
class Property:
    name: str
    kind: str  # STATE, TRANSITION or LIVENESS
    check: Callable  # the predicate; for LIVENESS, cfg -> [LeadsTo]
    witnesses: Callable | None = None  # the same arguments -> [sentence]
    by_component: bool = False  # a conjunction of per-component checks (see engine.Model)
    by_pair: bool = False  # a conjunction over p of checks on the globals and p's locals (engine.Model)
    pair_reads: tuple | None = None  # with by_pair: the globals it reads (None: any of them)
    where: Callable = everywhere  # cfg -> whether the property belongs to the configuration (model/where.py)
    # cfg -> why the property, which the summary would otherwise list, does not apply here
    # (shown in its place, rather than "holds"), or None
    not_applicable: Callable = never
    # A safety property's guards (guards.py): the mechanisms that keep it from failing.
    # Where one is in place no run violates it; where the property applies and none is,
    # some run does. None for a liveness property (its refutations say where it fails).
    guards: tuple | None = None
    # A liveness property's pairs as a family judged by its form (cfg -> engine.Thresholds), for
    # an engine that decides them without listing them; None: only `check` lists them.
    family: Callable | None = None
    # A state invariant that is a conjunction over the processes: (s, p, cfg) -> whether it holds
    # of process p. Every engine then evaluates it on a view of p's entries and of the globals
    # `pair_reads` names (none, by component), so reading anything else is refused.
    per_process: Callable | None = None

    def can_fail(self, cfg) -> bool:
        """Whether some run of `cfg` violates this safety property, by its guards."""
        return self.where(cfg) and not guarded(self.guards or (), cfg)


PROPERTIES = (
    Property("TypeOK", STATE, type_ok, type_ok_witnesses, by_component=True, guards=guarding.EVERYWHERE),
    Property("I1", STATE, i1, i1_witnesses, by_component=True, guards=guarding.I1, per_process=i1_at),
    Property("PhysicalLeSince", STATE, physical_le_since, physical_le_since_witnesses, by_component=True,
             where=without_cuts, not_applicable=physical_from_cuts, guards=guarding.PHYSICAL_LE_SINCE,
             per_process=physical_le_since_at),
    Property("SinceAllowed", STATE, since_allowed, since_allowed_witnesses, by_pair=True, pair_reads=("sent",),
             guards=guarding.SINCE_ALLOWED, per_process=since_allowed_at),
    Property("SinceLeStanding", STATE, since_le_standing, since_le_standing_witnesses, by_component=True,
             where=with_standing_hold, guards=guarding.SINCE_LE_STANDING, per_process=since_le_standing_at),
    # Section 13: the peer hold exists from the publication on.
    Property("PeerHeld", STATE, peer_held, peer_held_witnesses, by_component=True, where=with_peer_held,
             guards=guarding.PEER_HELD, per_process=peer_held_at),
    Property("PhysicalLeCoverage", STATE, physical_le_coverage, physical_le_coverage_witnesses, by_component=True,
             where=with_cuts, guards=guarding.PHYSICAL_LE_COVERAGE, per_process=physical_le_coverage_at),
    Property("PhysicalLeCut", STATE, physical_le_cut, physical_le_cut_witnesses, by_component=True,
             where=with_cuts, guards=guarding.EVERYWHERE, per_process=physical_le_cut_at),
    Property("NoRegression", TRANSITION, no_regression, no_regression_witnesses, by_component=True,
             guards=guarding.NO_REGRESSION),
    Property("CompactionNotStalled", LIVENESS, compaction_not_stalled, family=compaction_thresholds),
    Property("ImportsBacked", LIVENESS, imports_backed, imports_backed_witnesses, where=with_alias),
    Property("PeeksServed", LIVENESS, peeks_served, peeks_served_witnesses, where=with_seal),
    Property("CtlHoldReleased", LIVENESS, ctl_hold_released, ctl_hold_released_witnesses, where=with_reports),
    Property("ImportersRetired", LIVENESS, importers_retired, importers_retired_witnesses, where=with_markers),
)


def properties_for(cfg, kind: str | None = None) -> list[Property]:
    """The properties that belong to `cfg` (of one kind, if given), in report order."""
    return [prop for prop in PROPERTIES if prop.where(cfg) and kind in (None, prop.kind)]


def names_for(cfg, kind: str | None = None) -> list[str]:
    """The names of the properties that belong to `cfg` (of one kind, if given), in report order."""
    return [prop.name for prop in properties_for(cfg, kind)]


def not_applicable_for(cfg) -> dict[str, str]:
    """The properties that do not apply to `cfg` but are worth saying so: name -> why."""
    return {prop.name: why for prop in PROPERTIES if not prop.where(cfg) and (why := prop.not_applicable(cfg))}


def declared(*kinds: str) -> dict[str, Property]:
    """Every declared property by name, whatever the configuration (of the given kinds, if
    any), read from PROPERTIES now: a property declared at run time is among them."""
    return {prop.name: prop for prop in PROPERTIES if not kinds or prop.kind in kinds}


def declared_names(*kinds: str) -> tuple[str, ...]:
    """The names of `declared(*kinds)`, in report order."""
    return tuple(declared(*kinds))


def by_name(name: str) -> Property:
    """The declared property `name` (whatever the configuration)."""
    return declared()[name]


def witnesses_of(name: str) -> Callable | None:
    """Property `name`'s witnesses (its arguments -> [sentence]), None where it has none
    or no property has that name."""
    prop = declared().get(name)
    return prop.witnesses if prop is not None else None


def violation_words(trace, cfg=None) -> list[str]:
    """Why the last state (or last step) of `trace` (a model.trace.Trace) breaks `trace.prop`:
    the property's witnesses. Here, below both the tools that explain a refusal and the
    renderers that draw a trace."""
    witnesses = witnesses_of(trace.prop)
    if witnesses is None or not trace.steps:
        return []
    last = trace.steps[-1].state
    try:
        if trace.prop in declared_names(TRANSITION):
            if len(trace.steps) < 2:
                return []
            return list(witnesses(trace.steps[-2].state, last, cfg))
        return list(witnesses(last, cfg))
    except AttributeError:
        return []  # this witness needs the configuration (TypeOK's domains) and none was given


__all__ = [
    "PROPERTIES", "Property", "properties_for", "names_for", "not_applicable_for", "declared", "declared_names", "by_name",
    "violation_words", "witnesses_of", "STATE", "TRANSITION", "LIVENESS", "SAFETY",
    "LeadsTo", "compaction_not_stalled", "imports_backed",
    "i1", "no_regression", "physical_le_since", "type_ok",
]
