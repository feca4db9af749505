"""What downgrading readers teach (issue 30, point 3; docs/properties.md says it): every
named configuration keeps its verdicts and shortest lengths with `reader_downgrade` on at
its own constants, and in every design that holds no published `since` ever passes the
`as_of` of a reader still registered, so a reader's progress never bears load there. The
whole sweep is slow (about half a CPU minute); two small configurations run in the quick
run. Each configuration's row of the table in docs/properties.md is compared with what it
gives, so the page cannot drift from the model."""

from __future__ import annotations

from pathlib import Path

import attrs
import pytest

from protocol.model.config import ConfigError, named_configurations
from protocol.run import check

PAGE = Path(__file__).resolve().parent.parent / "docs" / "properties.md"

def takes_downgrading_readers(named) -> bool:
    """Whether the configuration accepts reader_downgrade (section 13's refuse it: spec 13.1, refusal 6)."""
    try:
        named.config.evolve(reader_downgrade=True)
    except ConfigError:
        return False
    return True


NAMES = [name for name, named in named_configurations().items()
         if not named.config.reader_downgrade and takes_downgrading_readers(named)]
QUICK = ("HoldsRoutedStanding", "HoldsCapReconnect", "HoldsSeal")


def with_downgrading_readers(named):
    """The configuration with reader_downgrade on, its expected verdicts kept, its pinned
    counts dropped (the states grow), and the state where I1's second clause checks a
    registration above its as_of asked for."""
    return attrs.evolve(named, config=named.config.evolve(reader_downgrade=True), pinned=None,
                        reachable=("SincePastReaderAsOf",))


def page_rows() -> dict:
    """The table of docs/properties.md's "What downgrading readers teach", by configuration."""
    text = PAGE.read_text(encoding="utf-8")
    table = text.split("<!-- downgrading readers -->\n")[1].split("<!-- /downgrading readers -->")[0]
    return {cells[0]: cells[1:] for cells in
            ([cell.strip() for cell in row.strip("|").split("|")] for row in table.splitlines())}


def row_of(named, result) -> list[str]:
    """The page's row for `named`: its verdicts, its states without and with, the depth."""
    violated = {prop: verdict.trace_length for prop, verdict in result.properties.items() if verdict.holds is False}
    verdicts = ", ".join(f"{prop} {length}" for prop, length in violated.items()) or "holds"
    depth = result.reachable["SincePastReaderAsOf"]
    return [verdicts, f"{named.pinned[0]:,} → {result.distinct_states:,}",
            "never" if depth is None else f"at depth {depth}"]


def test_the_page_has_a_row_for_every_configuration():
    assert list(page_rows()) == NAMES


@pytest.mark.parametrize("name", [n if n in QUICK else pytest.param(n, marks=pytest.mark.slow) for n in NAMES])
def test_downgrading_readers_change_no_verdict_and_bear_no_load_where_the_design_holds(name):
    named = named_configurations()[name]
    result = check(with_downgrading_readers(named))
    violated = {prop: verdict.trace_length for prop, verdict in result.properties.items() if verdict.holds is False}
    assert violated == named.expected_violations()
    assert result.distinct_states > named.pinned[0]  # the readers did move
    if not violated:
        assert result.reachable["SincePastReaderAsOf"] is None
    assert row_of(named, result) == page_rows()[name]


def test_a_reader_the_publisher_followed_is_reached_where_routing_alone_fails():
    result = check(with_downgrading_readers(named_configurations()["HoldsRouted"]))
    assert result.reachable["SincePastReaderAsOf"] == 8
