"""Section 11's properties are load-bearing too: break one mechanism, and the checker
must report the property that guards it, with its shortest length.

As in tests/test_sabotage.py, each sabotage wraps the real action of
protocol/model/actions.py; here the model's action table is patched for the one
check, so the packed engine and the liveness checker (the two new properties
are leads-to) run on the broken model exactly as `check` runs on a named one.
Each check stops at the first violation, breadth-first the shortest: the one the
mechanism's property must be. The intact base configurations hold (tests/test_manifest.py).
"""

from __future__ import annotations

import attrs
import pytest

from helpers import replace_action
from protocol.model import actions
from protocol.configurations.named import lookup
from protocol.run import check
from protocol.model.state import BOTTOM, held, replace_at


def publish_without_writer_floor(s, cfg, p, record=None):
    """Publish(p), but the writer floor is left out as if no AllowCompaction had come."""
    floorless = s._replace(writer=replace_at(s.writer, p, BOTTOM))
    after = actions.publish(floorless, cfg, p)
    return None if after is None else after._replace(writer=s.writer)


def publish_ignoring_standing_hold(s, cfg, p, record=None):
    """Publish(p), but the standing hold is left out of the bound."""
    return actions.publish(s, attrs.evolve(cfg, standing_hold=False), p)


def publish_merging_to_upper(s, cfg, p, record=None):
    """Publish(p) with cuts, but physical compaction follows upper when no reader is registered."""
    after = actions.publish(s, cfg, p)
    if held(s.cut[p]) or s.physical[p] >= s.upper:
        return after
    base = s if after is None else after
    return base._replace(physical=replace_at(base.physical, p, s.upper))


def publish_ignoring_cuts(s, cfg, p, record=None):
    """Publish(p) with cuts, but physical compaction goes to the coverage whatever the cuts say."""
    after = actions.publish(s._replace(cut=replace_at(s.cut, p, (None,) * len(s.cut[p]))), cfg, p)
    return None if after is None else after._replace(cut=s.cut)


def wake_serving_nothing(s, cfg, p, record=None):
    """Wake(p), but the notifications are consumed without re-examining any parked peek."""
    if not s.dirty[p]:
        return None
    return s._replace(dirty=replace_at(s.dirty, p, frozenset()))


def inter_step_losing_reports(s, cfg, p, record=None):
    """InterStep(p), but process 0's retirement reports never arrive."""
    if p == 0 and s.iq[p] and s.iq[p][0][0] == "Drop":
        return actions.inter_step(s, attrs.evolve(cfg, report="owner_filter"), p)
    return actions.inter_step(s, cfg, p)


SABOTAGES = [
    ("the publisher has no writer floor before the first AllowCompaction", "HoldsAcquire",
     "Publish", publish_without_writer_floor, "SinceAllowed", 4),
    ("the publisher ignores the standing hold", "Holds", "Publish", publish_ignoring_standing_hold,
     "SinceLeStanding", 4),
    ("with no reader, the publisher merges up to upper", "HoldsCuts", "Publish", publish_merging_to_upper,
     "PhysicalLeCoverage", 3),
    ("the publisher merges past the readers' cuts", "HoldsCuts", "Publish", publish_ignoring_cuts,
     "PhysicalLeCut", 6),
    ("a wakeup serves nothing", "HoldsSeal", "Wake", wake_serving_nothing, "PeeksServed", 6),
    ("process 0's retirement reports are lost", "HoldsReport", "InterStep", inter_step_losing_reports,
     "CtlHoldReleased", 7),
]


@pytest.mark.quick  # each explores a named configuration of at most 43,301 states once
@pytest.mark.parametrize("what, base, action, broken, violates, length", SABOTAGES, ids=[s[0] for s in SABOTAGES])
def test_the_checker_catches_each_section_11_sabotage(monkeypatch, what, base, action, broken, violates, length):
    replace_action(monkeypatch, action, broken)
    result = check(lookup(base), stop_on_violation=True)
    failed = {prop: verdict.trace_length for prop, verdict in result.properties.items() if verdict.holds is False}
    assert violates in failed, f"{what}: violated {failed}"
    assert failed[violates] == length, f"{what}: {violates} in {failed[violates]} states"
