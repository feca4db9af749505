"""What downgrading readers teach (issue 30, point 3; docs/properties.md says it): every
named configuration keeps its verdicts and shortest lengths with `reader_downgrade` on at
its own constants, and in every design that holds no published `since` ever passes the
`as_of` of a reader still registered, so a reader's progress never bears load there. The
whole sweep is slow (about half a CPU minute); two small configurations run in the quick
run. Each configuration's row of the table in docs/properties.md is compared with what it
gives, so the page cannot drift from the model."""

from __future__ import annotations

from pathlib import Path

import pytest

from protocol.configurations.named import named_configurations
from protocol.run import check
from protocol.apps.docs import downgrading_names, downgrading_row, with_downgrading_readers

PAGE = Path(__file__).resolve().parent.parent / "docs" / "properties.md"
NAMES = downgrading_names()
QUICK = ("HoldsRoutedStanding", "HoldsCapReconnect", "HoldsSeal")


def page_rows() -> dict:
    """The table of docs/properties.md's "What downgrading readers teach", by configuration
    (`docs --write` writes it; `docs --check` holds the page to it)."""
    text = PAGE.read_text(encoding="utf-8")
    table = text.split("<!-- downgrading readers -->\n")[1].split("<!-- /downgrading readers -->")[0]
    return {cells[0]: cells for cells in
            ([cell.strip() for cell in row.strip("|").split("|")] for row in table.splitlines())}


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
    assert downgrading_row(named, result) == page_rows()[name]


def test_a_reader_the_publisher_followed_is_reached_where_routing_alone_fails():
    result = check(with_downgrading_readers(named_configurations()["HoldsRouted"]))
    assert result.reachable["SincePastReaderAsOf"] == 8
