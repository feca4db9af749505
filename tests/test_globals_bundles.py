"""A cell holds a set of globals values (tools/factored.py, `Cell.gs`): a run of a silent
controller step that appends nothing (`Ingest` without a tap) fills one cell instead of a
cell per value of `upper`, and the safety check still sees every globals value on the way to
the log's end, including those reached by silent steps within a cell.
"""

from __future__ import annotations

from functools import lru_cache

import pytest

from protocol.engine import ModelError
from protocol.tools import factored
from protocol.tools.bench import walk_log
from protocol.tools.log import parse
from reference_validate import outcome, reference_outcome

# The bench's 1x log: its last events come after the last `upper` it shows, so with Ingest
# silent every value of upper from there to MaxTime fits each of them.
BENCH_LOG = ("Holds", {"P": 2, "D": 60, "MaxTime": 200}, 520, 1, ("Publish", "Ingest"))


@lru_cache(maxsize=1)
def bench_log() -> str:
    """The bench's 1x log, walked once for the tests that follow it (a third of a second each)."""
    return walk_log(*BENCH_LOG)


def recorded_layers(monkeypatch) -> tuple[list, list]:
    """(each event's cells, the globals ids the safety check was given), as `follow` runs."""
    layers, checked = [], []
    close, check_safety = factored.Factored.close, factored.Factored.check_safety

    def close_recorded(search, seeds, where):
        cells = close(search, seeds, where)
        layers.append(cells)
        return cells

    def check_recorded(search, alive):
        checked.extend(g for gs, _ in alive for g in gs)  # (globals ids, sets) on the way to the end
        return check_safety(search, alive)

    monkeypatch.setattr(factored.Factored, "close", close_recorded)
    monkeypatch.setattr(factored.Factored, "check_safety", check_recorded)
    return layers, checked


@pytest.mark.slow  # about a second: the quick run stays near a CPU minute; CI runs it
def test_a_run_of_ingest_fills_one_cell_not_a_cell_per_value(monkeypatch):
    layers, _ = recorded_layers(monkeypatch)
    decided = factored.follow(parse(bench_log()))
    last = layers[-1]
    values = {g for cell in last for g in cell.gs}
    assert decided.is_behaviour and len(values) >= 100, "the log's end no longer leaves upper open"
    assert len(last) * 10 <= len(values), f"{len(last)} cells hold {len(values)} globals values"


@pytest.mark.slow  # about half a second or more: the quick run stays near a CPU minute; CI runs it
def test_every_globals_value_on_the_way_to_the_end_is_checked(monkeypatch):
    """After the log's last `upper`, every value of upper fits every event and leads to the end
    (Ingest is silent and commutes with the rest): each of them must be checked, not only those
    of one chain of cells."""
    layers, checked = recorded_layers(monkeypatch)
    text = bench_log()
    factored.follow(parse(text))
    tail = layers[-20:]
    expected = {g for cells in tail for cell in cells for g in cell.gs}
    missed = expected - set(checked)
    assert not missed, f"{len(missed)} of {len(expected)} globals values of the last 20 events were not checked"


# (MaxTime, walk length, seed). The quick run's two take the exhaustive search a quarter of a
# second each, and still fail where a controller step leaves out one of a cell's globals
# values (as the slow run's two do, at two seconds each).
@pytest.mark.parametrize("max_time, states, seed", [
    (20, 50, 16), (20, 70, 9),
    pytest.param(30, 70, 2, marks=pytest.mark.slow), pytest.param(30, 70, 7, marks=pytest.mark.slow),
])
@pytest.mark.slow  # about half a second or more: the quick run stays near a CPU minute; CI runs it
def test_cells_holding_many_globals_give_the_exhaustive_search_s_outcome(max_time, states, seed):
    text = walk_log("Holds", {"P": 2, "D": 4, "MaxTime": max_time}, states, seed, ["Publish", "Ingest"])
    assert outcome(factored.follow(parse(text))) == reference_outcome(text)


def test_a_set_lent_past_a_wrong_ceiling_is_refused(monkeypatch):
    """Lending a set to a run of values of upper checks the ceiling at the lowest value lent:
    made to say the steps differ there, the search stops with one line."""
    monkeypatch.setattr(factored.Factored, "steps_alike", lambda *args: False)
    with pytest.raises(ModelError, match="lent a set past its ceiling"):
        factored.follow(parse(bench_log()))
