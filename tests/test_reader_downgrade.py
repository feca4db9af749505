"""What downgrading readers teach (issue 30, point 3; docs/properties.md says it): every
named configuration keeps its verdicts and shortest lengths with `reader_downgrade` on at
its own constants, and in every design that holds no published `since` ever passes the
`as_of` of a reader still registered, so a reader's progress never bears load there. The
whole sweep is slow (about half a CPU minute); one small configuration of each kind runs
in the quick run."""

from __future__ import annotations

import attrs
import pytest

from protocol.model.config import named_configurations
from protocol.run import check

NAMES = [name for name, named in named_configurations().items() if not named.config.reader_downgrade]
QUICK = ("HoldsRoutedStanding", "HoldsCapReconnect", "HoldsSeal")


def with_downgrading_readers(named):
    """The configuration with reader_downgrade on, its expected verdicts kept, its pinned
    counts dropped (the states grow), and the state where I1's second clause checks a
    registration above its as_of asked for."""
    return attrs.evolve(named, config=named.config.evolve(reader_downgrade=True), pinned=None,
                        reachable=("SincePastReaderAsOf",))


@pytest.mark.parametrize("name", [n if n in QUICK else pytest.param(n, marks=pytest.mark.slow) for n in NAMES])
def test_downgrading_readers_change_no_verdict_and_bear_no_load_where_the_design_holds(name):
    named = named_configurations()[name]
    result = check(with_downgrading_readers(named))
    violated = {prop: verdict.trace_length for prop, verdict in result.properties.items() if verdict.holds is False}
    assert violated == named.expected_violations()
    assert result.distinct_states > named.pinned[0]  # the readers did move
    if not violated:
        assert result.reachable["SincePastReaderAsOf"] is None


def test_a_registration_above_its_as_of_is_reached_where_routing_alone_fails():
    result = check(with_downgrading_readers(named_configurations()["HoldsRouted"]))
    assert result.reachable["SincePastReaderAsOf"] == 7
