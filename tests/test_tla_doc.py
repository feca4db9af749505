"""docs/tla.md's table of counts at other constants is what our model gives: every row
(configuration, P, and per MaxTime the distinct states, depth and transitions) is checked
again here, the small ones in the quick run. The same figures came from an independent
reading of the design's TLA+ model, so a change that moved them would part the two."""

from __future__ import annotations

from pathlib import Path

import pytest

from protocol.configurations.named import lookup
from protocol.run import check

PAGE = Path(__file__).resolve().parent.parent / "docs" / "tla.md"
QUICK_STATES = 10_000


def numbers(cell: str) -> list[int]:
    return [int(value.replace(",", "")) for value in cell.split(", ")]


def rows() -> list[tuple]:
    """(name, P, MaxTime, distinct states, depth, transitions), one per figure of the table."""
    text = PAGE.read_text(encoding="utf-8").split("**Other constants.**")[1].split("\n\n")[1]
    found = []
    for line in text.splitlines()[2:]:
        name, P, times, states, depths, transitions = (cell.strip() for cell in line.strip("|").split("|"))
        for row in zip(numbers(times), numbers(states), numbers(depths), numbers(transitions)):
            found.append((name.strip("`"), int(P), *row))
    return found


def test_the_table_has_both_configurations_at_one_to_three_processes():
    assert {(name, P) for name, P, *_ in rows()} == {(name, P) for name in ("TlaHolds", "TlaHoldsRouted")
                                                    for P in (1, 2, 3)}


@pytest.mark.parametrize("name, P, MaxTime, states, depth, transitions", [
    row if row[3] <= QUICK_STATES else pytest.param(*row, marks=pytest.mark.slow) for row in rows()])
def test_each_figure_is_what_the_model_gives(name, P, MaxTime, states, depth, transitions):
    result = check(lookup(name).with_constants({"P": P, "MaxTime": MaxTime}), liveness=False)
    assert (result.distinct_states, result.depth, result.transitions) == (states, depth, transitions)


@pytest.mark.slow
def test_the_figure_where_the_tla_models_queue_constraint_starts_to_prune():
    """TLC's constraint prunes from Times = 0..4; the page gives ours there, unpruned."""
    sentence = "`check TlaHolds -c MaxTime=4` gives 480,982, depth 28"
    assert sentence in " ".join(PAGE.read_text(encoding="utf-8").split())
    result = check(lookup("TlaHolds").with_constants({"MaxTime": 4}), liveness=False)
    assert (result.distinct_states, result.depth) == (480_982, 28)
