"""The mechanism matrix: its rows, the same-system rows, and the derivation of
the minimal sufficient sets (on a hand-made table, then on the real one)."""

from __future__ import annotations

import io
import json
import itertools

import pytest

import protocol.run

from helpers import cached_check
from protocol.cli import main
from protocol.model.config import HOLDS, SWITCHES, Config, refused_switch
from protocol.configurations.named import named_configurations
from protocol.tools.matrix import (
    LIVENESS,
    Matrix,
    Outcome,
    Row,
    check_combination,
    combinations,
    derivation_record,
    derivation_summary,
    markdown,
    mechanisms,
    minimal_sufficient_sets,
    plan,
    redundant,
    remark,
    row_record,
    run_matrix,
    same_system,
    sufficient,
)
from protocol.render.terminal import console_for
import protocol.tools.matrix as matrix_tool
from protocol.render.matrix import render_matrix

IN_MATRIX = [name for name, switch in SWITCHES.items() if switch.in_matrix]
# Small enough that the whole matrix runs in seconds, large enough that every
# refutation's defect still shows (each needs only times 0 and 1).
SMALL = {"P": 2, "D": 1, "MaxTime": 1}
# One row per combination of the values of the switches declared `in_matrix`, but for the
# values that need a switch the matrix keeps at its default (physical from_cuts needs a seal).
EVERY_COMBINATION = sum(
    refused_switch(dict(zip(IN_MATRIX, values))) is None
    for values in itertools.product(*(SWITCHES[name].values for name in IN_MATRIX)))


def json_records(matrix: Matrix) -> list[dict]:
    """One record per row, then the derivation."""
    table, minimal = matrix.sufficiency(), matrix.minimal_sets()
    return [row_record(row, matrix, table, minimal) for row in matrix.rows] + [derivation_record(matrix, minimal)]


def S(*mechs):  # noqa: N802 - reads as a set literal in the tables below
    return frozenset(mechs)


def outcome(**verdicts) -> Outcome:
    """An Outcome with the given verdicts: True, False (length 5) or None."""
    props = {name: (holds, 5 if holds is False else None) for name, holds in verdicts.items()}
    return Outcome(props, distinct_states=10, transitions=20, depth=3, seconds=0.0, complete=True)


@pytest.fixture(scope="module")
def small_matrix() -> Matrix:
    return run_matrix(SMALL, jobs=1)


def row_with(matrix: Matrix, **switches) -> Row:
    """The one row whose every declared switch is at its default but those given."""
    wanted = {**{name: switch.default for name, switch in SWITCHES.items()}, **switches}
    (row,) = [r for r in matrix.rows if all(getattr(r.config, k) == v for k, v in wanted.items())]
    return row


# ------------------------------------------------------------ the derivation, by hand


def test_minimal_sets_on_a_hand_made_table():
    table = {
        S(): False,
        S("a"): False,
        S("b"): False,
        S("a", "b"): True,   # both one-smaller sets fail: minimal
        S("c"): True,        # the empty set fails: minimal
        S("a", "c"): True,   # without a it still suffices: not minimal
        S("d"): None,        # unknown
        S("c", "d"): True,   # without c the verdict is unknown: not provably minimal
        S("e", "f"): True,   # {e} and {f} are missing from the table: proves nothing
    }
    assert minimal_sufficient_sets(table) == [S("c"), S("a", "b")]
    assert redundant(S("a", "c"), table) == ["a"]
    assert redundant(S("a", "b"), table) == []


def test_a_sufficient_baseline_is_the_only_minimal_set():
    table = {S(): True, S("a"): True, S("b"): False, S("a", "b"): True}
    assert minimal_sufficient_sets(table) == [S()]


def test_sufficient_needs_both_i1_and_liveness():
    assert sufficient(outcome(I1=True, **{LIVENESS: True})) is True
    assert sufficient(outcome(I1=True, **{LIVENESS: False})) is False
    assert sufficient(outcome(I1=False, **{LIVENESS: True})) is False
    assert sufficient(outcome(I1=False)) is False  # a violation decides even without liveness
    assert sufficient(outcome(I1=True)) is None    # liveness not reported: cannot tell
    assert sufficient(outcome(I1=None, **{LIVENESS: True})) is None
    assert sufficient(None) is None


def test_remarks_on_a_hand_made_matrix():
    routed_hold = Config(standing_hold=True)
    rows = (
        Row(1, Config(), outcome=outcome(I1=False, **{LIVENESS: True})),
        Row(2, routed_hold, outcome=outcome(I1=True, **{LIVENESS: False})),
        Row(3, Config(compaction="broadcast"), outcome=outcome(I1=False, **{LIVENESS: True})),
        Row(4, HOLDS, named="Holds", outcome=outcome(I1=True, **{LIVENESS: True})),
    )
    matrix = Matrix(rows)
    assert matrix.minimal_sets() == [S("broadcast", "standing_hold")]
    assert "standing hold never learns a compaction" in remark(rows[1], matrix)
    assert remark(rows[3], matrix) == "minimal sufficient set"
    assert remark(rows[0], matrix) == ""


# ------------------------------------------------------------ combinations and same systems


def test_every_combination_once_with_fairness_on():
    configs = combinations(SMALL)
    assert len(configs) == len(set(configs)) == EVERY_COMBINATION
    assert all(cfg.fairness and cfg.constants == SMALL for cfg in configs)
    assert len({mechanisms(cfg) for cfg in configs}) == len(configs)


def test_cap_rows_point_at_the_routed_row_of_the_same_system():
    rows = plan(SMALL)
    duplicates = [row for row in rows if row.same_as is not None]
    assert duplicates and all(row.config.cap and row.config.compaction == "broadcast" for row in duplicates)
    for row in duplicates:
        original = rows[row.same_as - 1]
        assert original.same_as is None and original.number < row.number
        assert original.config == same_system(row.config) != row.config
    assert len(rows) - len(duplicates) == len({same_system(row.config) for row in rows})


def test_each_named_configuration_of_the_matrix_switches_is_exactly_one_row():
    # the matrix varies the switches declared `in_matrix` and keeps every other at its
    # default (fairness on): a named configuration that sets another one is no row
    fixed = [switch for switch in SWITCHES.values() if not switch.in_matrix]
    in_matrix = [n.name for n in named_configurations().values()
                 if all(getattr(n.config, switch.name) == switch.default for switch in fixed)]
    assert sorted(row.named for row in plan(SMALL) if row.named) == sorted(in_matrix)


# ------------------------------------------------------------ real rows


def test_holds_row_at_the_default_constants(monkeypatch):
    monkeypatch.setattr(protocol.run, "check", cached_check)  # Holds is explored by other files too
    found = check_combination(HOLDS, "Holds")
    assert (found.distinct_states, found.depth) == named_configurations()["Holds"].pinned
    assert found.holds("I1") is True
    assert found.mismatches == ()
    assert sufficient(found) is not False


@pytest.mark.slow
def test_standing_hold_with_routed_compaction_is_safe_but_stalls(small_matrix):
    row = row_with(small_matrix, standing_hold=True)
    found = small_matrix.outcome(row)
    assert found.holds("I1") is True
    assert found.holds(LIVENESS) is False
    assert "standing hold never learns a compaction" in remark(row, small_matrix)


@pytest.mark.slow
def test_a_duplicate_cap_row_is_not_run_twice(small_matrix):
    row = row_with(small_matrix, compaction="broadcast", cap=True)
    assert row.outcome is None and row.same_as is not None
    original = small_matrix.rows[row.same_as - 1]
    assert small_matrix.outcome(row) is original.outcome is not None
    assert remark(row, small_matrix).startswith(f"same system as row {original.number}")


@pytest.mark.slow
def test_the_table_reproduces_every_named_verdict(small_matrix):
    named = [row for row in small_matrix.rows if row.named]
    assert named and all(not small_matrix.outcome(row).mismatches for row in named)
    assert small_matrix.as_expected


@pytest.mark.slow
def test_the_expected_minimal_sets_are_derived(small_matrix):
    minimal = small_matrix.minimal_sets()
    assert S("broadcast", "standing_hold") in minimal
    assert S("acquire release_on_interactive") in minimal
    # the third way to restore the ordering (spec 11): the controller frees a peek's hold
    # only once every process reported it retired; with it, nothing else is needed
    assert S("ctl_release report") in minimal
    assert not [m for m in minimal if "ctl_release report" in m and len(m) > 1]
    assert len(minimal) == 3
    holds_row = row_with(small_matrix, compaction="broadcast", standing_hold=True)
    assert holds_row.named == "Holds" and remark(holds_row, small_matrix) == "minimal sufficient set"


# ------------------------------------------------------------ output


@pytest.mark.slow
def test_json_records_one_per_row_then_the_derivation(small_matrix):
    records = [json.loads(json.dumps(r)) for r in json_records(small_matrix)]
    *rows, derived = records
    assert [r["row"] for r in rows] == list(range(1, len(small_matrix.rows) + 1))
    duplicate = next(r for r in rows if r["same_as"] is not None)
    assert duplicate["properties"] is None and "same system" in duplicate["remark"]
    assert ["broadcast", "standing_hold"] in derived["minimal_sufficient_sets"]


@pytest.mark.slow
def test_markdown_and_rich_tables_show_every_row(small_matrix):
    text = markdown(small_matrix)
    table_lines = [line for line in text.splitlines() if line.startswith("| ")]
    assert len(table_lines) == len(small_matrix.rows) + 1  # a header and each row
    assert "same system as row" in text and "{broadcast, standing_hold}" in text
    out = io.StringIO()
    render_matrix(console_for(file=out, width=400), small_matrix)  # wide enough for no remark to wrap
    assert "standing hold never learns a compaction" in out.getvalue()
    assert "HoldsRouted" in out.getvalue()


def test_cli_json_and_bad_jobs(capsys, monkeypatch):
    """The command's usage line and its JSON lines, one per row and the derivation. Every
    row reads the baseline's outcome, checked once: the matrix's 96 checks are the slow
    run's (below, and `small_matrix`), about three CPU seconds."""
    assert main(["matrix", "--jobs", "0"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--jobs" in err and "1 <= N" in err
    baseline = check_combination(Config(P=1, D=1, MaxTime=1))
    monkeypatch.setattr(matrix_tool, "check_combination", lambda cfg, name=None: baseline)
    assert main(["matrix", "--json", "--jobs", "1", "-c", "P=1", "-c", "D=1", "-c", "MaxTime=1"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == EVERY_COMBINATION + 1
    assert all(isinstance(json.loads(line), dict) for line in lines)


@pytest.mark.slow  # the 96 checks, in two forkserver workers
def test_cli_json_with_two_jobs(capsys):
    assert main(["matrix", "--json", "--jobs", "2", "-c", "P=1", "-c", "D=1", "-c", "MaxTime=1"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == EVERY_COMBINATION + 1
    assert all(isinstance(json.loads(line), dict) for line in lines)


# ------------------------------------------------------------------ section 13's family

SHIPPED_SMALL = {"P": 1, "D": 1, "MaxTime": 1, "E": 1}


def test_the_shipped_family_varies_six_mechanisms_the_index_following_the_multiplexer():
    from protocol.tools.matrix import SHIPPED

    rows = plan(SHIPPED_SMALL, SHIPPED)
    # 2^6, less the 8 with the stateless multiplexer, pairing=none and peer_by=reader (13.1)
    assert len(rows) == 56
    stateless = [row for row in rows if "stateless multiplexer" in row.mechanisms]
    split = [row for row in rows if "stateless multiplexer" not in row.mechanisms]
    assert all(row.config.multiplexer == "stateless" and row.config.index == "created" for row in stateless)
    assert all(row.config.multiplexer == "split" and row.config.index == "static" for row in split)
    # without the stateless multiplexer the peer-hold switches are moot: four systems, not 32
    assert sum(row.same_as is None for row in split) == 4
    assert all(rows[row.same_as - 1].config == row.config for row in split if row.same_as)
    assert rows[0].mechanisms == {"stateless multiplexer", "publisher registers", "join", "pairing",
                                  "reconciliation", "keep on reconnect"}
    assert rows[0].named == "HoldsPeerReconnect" and rows[-1].mechanisms == set()


@pytest.mark.slow
def test_the_shipped_family_derives_the_minimal_set_of_the_shipped_design():
    from protocol.tools.matrix import SHIPPED

    matrix = run_matrix(SHIPPED_SMALL, jobs=1, family=SHIPPED)
    assert matrix.as_expected and matrix.complete
    # the index held from the first state needs none of the peer hold's mechanisms ...
    assert matrix.minimal_sets() == [frozenset({"reconciliation", "keep on reconnect"})]
    # ... the index created in the stream needs all but the join, which is redundant while the
    # publisher registers (spec 13.6) and needed where a reader registers late
    assert matrix.minimal_sets_given() == [frozenset({"stateless multiplexer", "publisher registers", "pairing",
                                                      "reconciliation", "keep on reconnect"})]
    shipped = next(row for row in matrix.rows if row.named == "HoldsPeerReconnect")
    assert remark(shipped, matrix) == "sufficient; redundant: join, stateless multiplexer"
    assert "With the stateless multiplexer, the minimal sufficient sets are: {stateless multiplexer, " \
           "publisher registers, pairing, reconciliation, keep on reconnect}" in derivation_summary(matrix)
