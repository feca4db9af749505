"""Every mechanism is load-bearing: break one, and the exhaustive checker must catch it.

Each sabotage is a deliberately broken variant of one action of the model,
built here only (never among the product's configurations): a copy of
`protocol.model.next.instances(cfg)` in which the named action's functions are
replaced by a wrapper around the real one from protocol/model/actions.py, bound
with `functools.partial` to the very same arguments. The checker explores
it breadth-first (stopping at the first violation, which is therefore a
shortest one) and must report a counterexample to the named property, of
the stated length, at its base configuration's constants. The
intact configuration each sabotage starts from must hold, so the failure
is the sabotage's doing.
"""

from __future__ import annotations

from functools import lru_cache, partial

import attrs
import pytest

from helpers import checked
from protocol.model import actions
from protocol.engine.checker import explore
from protocol.configurations.named import lookup
from protocol.model.next import instances
from protocol.run import safety_properties
from protocol.model.commands import COMPACT, CREATE
from protocol.model.state import DROPPED, initial, replace_at

# ------------------------------------------------------------- the variants


@lru_cache(maxsize=None)
def variant(cfg, **changes):
    """`cfg` with some switches changed, built once (the actions read it on every step)."""
    return cfg.evolve(**changes)


def publish_ignoring_standing_hold(s, cfg, p):
    """Publish(p), but the publisher leaves the standing hold out of its bound."""
    return actions.publish(s, variant(cfg, standing_hold=False), p)


def inter_step_recording_compaction_early(s, cfg, p):
    """InterStep(p), but a queued Compact jumps ahead of the creates queued before it,
    so the standing hold is recorded before those creates are rendered."""
    queue = s.iq[p]
    first_compact = next((i for i, command in enumerate(queue) if command[0] == COMPACT), None)
    if first_compact is None:
        return actions.inter_step(s, cfg, p)
    reordered = (queue[first_compact],) + queue[:first_compact] + queue[first_compact + 1:]
    return actions.inter_step(s._replace(iq=replace_at(s.iq, p, reordered)), cfg, p)


def reclaim_before_release(s, cfg, p):
    """Reclaim(p), but an acquired hold goes as soon as its peek is dropped, before
    maintenance has seen the release that travels behind the drop."""
    early = {d for d, t in enumerate(s.acq[p]) if t is not None and s.df[d] == DROPPED}
    if not early:
        return actions.reclaim(s, cfg, p)
    acq_p = tuple(None if d in early else t for d, t in enumerate(s.acq[p]))
    return s._replace(acq=replace_at(s.acq, p, acq_p))


def publish_physical_ignoring_since(s, cfg, p):
    """Publish(p), but physical compaction follows the write frontier, not `since`."""
    return actions.publish(s, variant(cfg, physical="from_upper"), p)


def inter_step_retiring_cap_when(retire):
    """InterStep(p) where a rendered create retires the cap when `retire(state after, d)` says so.

    The model retires it on process 0's report alone. The sound variant waits
    until every process has rendered the create; the sabotage retires it on
    the first report from any process.
    """

    def inter_step(s, cfg, p):
        after = actions.inter_step(s, variant(cfg, cap=False), p)  # render, without the model's retirement
        head = s.iq[p][0] if s.iq[p] else None
        if after is None or head[0] != CREATE or not retire(after, head[1]):
            return after
        return actions.forward(after._replace(caps=after.caps - {head[1]}), cfg)

    return inter_step


def publish_bounded_by_x_only(s, cfg, p):
    """Publish(p) at a per-id alias point, but the publisher reads only X's entries of the
    writer and the standing hold, as if Y's were not there: a broken alias point."""
    x_only = s._replace(writer=replace_at(s.writer, p, s.writer[p][0]),
                        standing=replace_at(s.standing, p, s.standing[p][0]))
    after = actions.publish(x_only, cfg, p)
    return None if after is None else after._replace(writer=s.writer, standing=s.standing)


def still_queued_somewhere(s, d) -> bool:
    return any(command[:2] == (CREATE, d) for queue in s.iq for command in queue)


inter_step_retiring_cap_after_every_report = inter_step_retiring_cap_when(
    lambda after, d: not still_queued_somewhere(after, d))
inter_step_retiring_cap_on_any_report = inter_step_retiring_cap_when(lambda after, d: True)

# ------------------------------------------------------------ the machinery


def successors_with(cfg, replacements: dict):
    """The model's successor function with the named actions (TLA+ names) replaced.

    Each replacement is bound by `partial` to the arguments of the instance it
    replaces, so the enumeration order, and hence the trace BFS picks, is the model's.
    """
    table = [
        (label, partial(replacements[label.name], **step.keywords) if label.name in replacements else step)
        for label, step in instances(cfg)
    ]
    assert {label.name for label, _ in table} >= set(replacements), "a replaced action has no instance"

    def successors(s):
        return [(label, after) for label, step in table if (after := step(s)) is not None]

    return successors


def exhaustive(cfg, replacements, stop_on_violation: bool, leaving_out: str | None = None):
    state_props, transition_props = safety_properties(cfg)
    state_props = {name: prop for name, prop in state_props.items() if name != leaving_out}
    return explore([initial(cfg)], successors_with(cfg, replacements), state_props, transition_props,
                   stop_on_violation=stop_on_violation)


@attrs.frozen
class Sabotage:
    what: str
    base: str  # the named configuration it starts from
    replacements: dict = attrs.field(hash=False)
    violates: str
    length: int  # the shortest counterexample the checker gives
    # (property, length) the sabotage also gives once `violates`, a tripwire that catches it
    # sooner, is left out: the publisher's debug_assert (SinceLeStanding) fires before I1 does
    behind_tripwire: tuple = ()


SABOTAGES = [
    Sabotage("the publisher ignores the standing hold", "Holds",
             {"Publish": publish_ignoring_standing_hold}, "SinceLeStanding", 4, ("I1", 6)),
    Sabotage("the cap retires on any process's report", "HoldsCap",
             {"InterStep": inter_step_retiring_cap_on_any_report}, "I1", 7),
    Sabotage("interactive records the standing hold before rendering the creates ahead of it", "Holds",
             {"InterStep": inter_step_recording_compaction_early}, "I1", 7),
    Sabotage("a reclaim removes a hold before its release", "HoldsAcquire",
             {"Reclaim": reclaim_before_release}, "I1", 8),
    Sabotage("the physical frontier ignores since", "Holds",
             {"Publish": publish_physical_ignoring_since}, "PhysicalLeSince", 3),
    Sabotage("the alias point's publisher reads only X's frontiers", "HoldsAlias",
             {"Publish": publish_bounded_by_x_only}, "SinceLeStanding", 6, ("I1", 7)),
]
# HoldsAlias explores 53,550 states: its intact check is the slow run's.
QUICK_BASES = {"Holds", "HoldsCap", "HoldsAcquire"}

# Where a sabotage breaks a configuration that is already a refutation, its
# intact form is the sound variant built here rather than the named one.
SOUND_BASE = {
    "the cap retires on any process's report": {"InterStep": inter_step_retiring_cap_after_every_report},
}


@pytest.mark.parametrize("sabotage", SABOTAGES, ids=lambda s: s.what)
def test_the_checker_catches_each_sabotage(sabotage):
    cfg = lookup(sabotage.base).config
    run = exhaustive(cfg, sabotage.replacements, stop_on_violation=True)
    assert set(run.violations) == {sabotage.violates}, f"{sabotage.what}: violated {sorted(run.violations)}"
    trace = run.counterexample(sabotage.violates)
    assert len(trace) == sabotage.length, [str(label) for label, _ in trace[1:]]
    if sabotage.behind_tripwire:
        prop, length = sabotage.behind_tripwire
        run = exhaustive(cfg, sabotage.replacements, stop_on_violation=True, leaving_out=sabotage.violates)
        assert set(run.violations) == {prop} and len(run.counterexample(prop)) == length


@pytest.mark.parametrize("sabotage", [s if s.base in QUICK_BASES else pytest.param(s, marks=pytest.mark.slow)
                                      for s in SABOTAGES], ids=lambda s: s.what)
def test_the_intact_mechanism_holds(sabotage):
    if sabotage.what in SOUND_BASE:
        run = exhaustive(lookup(sabotage.base).config, SOUND_BASE[sabotage.what], stop_on_violation=False)
        assert run.complete and not run.violations, sorted(run.violations)
    else:
        result = checked(sabotage.base)
        assert result.complete and all(v.holds for v in result.properties.values())


def test_the_model_cap_sits_between_the_sound_variant_and_the_sabotage():
    """Retiring on process 0's report (the model's HoldsCap) fails like the any-report sabotage."""
    assert checked("HoldsCap").violation("I1").length == SABOTAGES[1].length
