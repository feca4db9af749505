"""Traces in the reviewer's vocabulary (issue 57, point 6): the design's TLA+ action names
where a configuration mirrors its model, a legend of every abbreviation and notation a trace
uses, and, in a lasso, what keeps each disabled fair action disabled."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from helpers import checked, cli  # noqa: F401  (a fixture)
from protocol.model import tla
from protocol.model.actions import ACTIONS
from protocol.configurations.named import lookup, named_configurations
from protocol.render.narrate import legend, story
from protocol.render.terminal import legend_table, plain_text, result_traces, trace_table

ROOT = Path(__file__).resolve().parent.parent
DESIGN_NAMES = ("CtlCreate(0)", "CtlDrop", "CtlCompact(1)", "MaintStep(0)", "MaintRefresh(0)")


def only_trace(result, prop=None):
    return next(v.trace for name, v in result.properties.items() if v.trace is not None and prop in (None, name))


# ------------------------------------------------------------------ the design's names


def test_a_tla_configuration_names_its_actions_as_the_design_does():
    """TlaHoldsRouted's six states, as docs/tla.md gives them action for action."""
    result = checked("TlaHoldsRouted")
    trace = only_trace(result, "I1")
    told = story(trace, result.config, "tla")
    assert [step.action for step in told.steps[1:]] == list(DESIGN_NAMES)
    text = plain_text(trace_table(trace, cfg=result.config, names="tla"), 100)
    assert "Publish(0)" not in text and "MaintRefresh(0)" in text and "CtlCompact(1)" in text


def test_by_default_a_tla_configuration_shows_both_names_and_ours_only_where_they_differ():
    result = checked("TlaHoldsRouted")
    told = story(only_trace(result, "I1"), result.config)
    assert [step.action for step in told.steps[1:]] == [
        "CreatePeek(0, 0) (TLA+ CtlCreate(0))", "DropPeek(0) (TLA+ CtlDrop)",
        "AllowCompaction(1) (TLA+ CtlCompact(1))", "MaintStep(0)", "Publish(0) (TLA+ MaintRefresh(0))"]
    ours = story(only_trace(result, "I1"), result.config, "ours")
    assert [step.action for step in ours.steps[1:]] == [
        "CreatePeek(0, 0)", "DropPeek(0)", "AllowCompaction(1)", "MaintStep(0)", "Publish(0)"]


def test_every_tla_configuration_mirrors_the_design_and_no_other_does():
    for name, named in named_configurations().items():
        assert tla.mirrors(named.config) == name.startswith("Tla"), name


@pytest.mark.parametrize("name, constants, switches, departs", [
    ("Holds", {}, {}, "controller=policy"),
    ("HoldsRoutedStanding", {}, {}, "controller=policy"),
    ("TlaHoldsRouted", {"D": 2}, {}, "D=2"),
    ("TlaHoldsRouted", {}, {"standing_hold": True}, "compaction=routed with standing_hold=True"),
    ("TlaHolds", {}, {"acquire": "release_on_interactive"}, "acquire=release_on_interactive"),
])
def test_elsewhere_the_design_names_are_refused_naming_what_departs(name, constants, switches, departs):
    cfg = lookup(name).with_constants(constants).config.evolve(**switches)
    assert tla.naming(cfg, None) is str  # the default falls back to ours, silently
    assert tla.naming(cfg, "ours") is str
    for names in ("tla", "both"):
        with pytest.raises(tla.NamingError, match=re.escape(departs)):
            tla.naming(cfg, names)


def test_the_cli_refuses_tla_names_elsewhere_in_one_line(cli):
    code, out, err = cli("check", "Holds", "--names", "tla")
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1
    assert "controller=policy" in err and "Tla*" in err
    code, out, err = cli("check", "--all", "--names", "both")
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1
    code, out, err = cli("check", "TlaHoldsRouted", "--names", "tla", "--json")
    assert code == 2 and "--json" in err


def test_the_cli_names_a_tla_trace_as_asked(cli):
    code, out, err = cli("check", "TlaHoldsRouted", "--names", "tla")
    assert (code, err) == (0, "")
    assert all(name in out for name in DESIGN_NAMES) and "Publish(0)" not in out
    code, out, err = cli("check", "TlaHoldsRouted", "--names", "ours")
    assert (code, err) == (0, "") and "MaintRefresh" not in out and "Publish(0)" in out
    code, out, err = cli("check", "TlaHoldsRouted", "--format", "html", "--names", "tla")
    assert code == 0 and "MaintRefresh(0)" in out and "Publish(0)" not in out


def test_the_design_names_are_declared_once_and_docs_tla_md_shows_them():
    """docs/tla.md's table is what the declarations generate (`docs --write`)."""
    from protocol.apps.docs import tla_doc

    stored = (ROOT / "docs" / "tla.md").read_text(encoding="utf-8")
    assert tla_doc(stored) == stored
    table = tla.mapping_table()
    for ours, theirs in [("CreatePeek(d, t)", "CtlCreate(t)"), ("DropPeek(d)", "CtlDrop"),
                         ("AllowCompaction(t)", "CtlCompact(t)"), ("Publish(p)", "MaintRefresh(p)"),
                         ("Reconnect", "Hello"), ("ReaderDowngrade(p, t)", "ReaderDowngrade(p, t)")]:
        assert f"| `{ours}` | `{theirs}` |" in table
    # every action a mirroring configuration has, the design's model has too
    cfg = lookup("TlaHoldsReconnect").config
    assert all(action.tla is not None for action in ACTIONS if action.where(cfg))


# ------------------------------------------------------------------ the legend


def changed_variables(told) -> set:
    return {change.variable for step in told.steps for _, found in step.changed for change in found}


def test_the_legend_explains_every_variable_and_notation_a_trace_shows():
    result = checked("TlaHoldsRouted")
    told = story(only_trace(result, "I1"), result.config)
    terms = dict(legend([told]))
    assert changed_variables(told) <= set(terms)
    for abbreviation in ("df", "iq", "mq"):
        assert terms[abbreviation]
    assert "maintenance queue" in terms["mq"] and "interactive queue" in terms["iq"]
    assert "per peek id" in terms["<…>"] and "command stream" in terms["[…]"]
    assert {"Create(d, t)", "Drop(d)", "Compact(f)", "a → b", "A (TLA+ B)"} <= set(terms)


def test_the_legend_of_full_explains_every_variable_of_every_state():
    from protocol.render.narrate import grouped_variables

    result = checked("TlaHoldsRouted")
    told = story(only_trace(result, "I1"), result.config)
    terms = dict(legend([told], full=True))
    shown = {name for step in told.steps for _, variables in grouped_variables(step.state) for name, _ in variables}
    assert shown <= set(terms)
    assert "a → b" not in terms  # --full lists values, not changes


def test_the_legend_names_bottom_and_epochs_where_a_trace_writes_them():
    result = checked("TlaHoldsReconnect", P=1)
    terms = dict(legend([story(only_trace(result), result.config)], full=True))
    assert "c@e" in terms and "epoch" in terms


def test_the_legend_is_on_the_terminal_the_review_page_and_full(cli):
    code, out, err = cli("check", "HoldsRoutedStanding")
    assert code == 0 and re.search(r"^legend$", out, re.M)
    assert re.search(r"^standing\s+the standing \(peer\) hold", out, re.M)
    code, out, err = cli("check", "HoldsRoutedStanding", "--full")
    assert code == 0 and re.search(r"^readers\s+the registrations", out, re.M)
    code, out, err = cli("check", "HoldsRoutedStanding", "--format", "html")
    assert code == 0 and '<div class="legend">' in out and "<dt><code>mq</code></dt>" in out
    code, out, err = cli("check", "HoldsRoutedStanding", "--format", "markdown")
    assert code == 0 and "**Legend**" in out and "- `iq`: interactive queue" in out
    code, out, err = cli("check", "Holds")
    assert code == 0 and "legend" not in out  # no trace, nothing to explain
    code, out, err = cli("check", "HoldsRoutedStanding", "--no-trace")
    assert code == 0 and "legend" not in out


@pytest.mark.parametrize("width", [60, 80])
def test_the_legend_fits_the_width_without_cutting_a_word(width):
    result = checked("TlaHoldsRouted")
    entries = legend([story(only_trace(result, "I1"), result.config)], full=True)
    text = plain_text(legend_table(entries), width)
    assert max(len(line) for line in text.splitlines()) <= width, text
    flowing = " ".join(text.split())
    for term, meaning in entries:
        assert term in text and " ".join(meaning.split()) in flowing, (term, text)


# ------------------------------------------------------------------ why a fair action is disabled


def test_a_lasso_says_the_standing_hold_keeps_publish_disabled():
    """HoldsRoutedStanding: no compaction reaches the interactive runtime, so the standing
    hold stays at 0 and the publisher cannot follow the writer to 1."""
    notes = only_trace(checked("HoldsRoutedStanding"), "CompactionNotStalled").notes
    assert ("Publish(0) is disabled in state 3: its least hold, standing 0, keeps since at 0 "
            "(other holds: writer 1); physical compaction is at its bound, 0") in notes
    assert "MaintStep(0) is disabled in state 3: its stream mq[0] is empty" in notes
    assert "InterStep(0) is disabled in state 3: its stream iq[0] is empty" in notes


@pytest.mark.slow
def test_every_disabled_fair_action_of_every_lasso_says_why():
    """Every fair action declares its reason, and every named lasso at quick size gives one."""
    assert all(action.why_disabled is not None for action in ACTIONS if action.fair)
    for name in ("HoldsRoutedStanding", "HoldsSealTap", "HoldsAliasOverwrite", "HoldsUnfair"):
        for verdict in checked(name).properties.values():
            if verdict.trace is not None and verdict.trace.is_lasso:
                disabled = [note for note in verdict.trace.notes if " is disabled in state " in note]
                assert all(re.search(r" is disabled in state \d+: \S", note) for note in disabled), name


def test_a_tla_lasso_names_the_disabled_action_as_the_design_does_and_says_why():
    result = checked("TlaHoldsReconnect", P=1)
    trace = only_trace(result, "CompactionNotStalled")
    told = story(trace, result.config, "tla")
    note = next(note for note in told.notes if note.startswith("MaintRefresh(0) is disabled"))
    assert "its least hold, peek 0's reader 0, keeps since at 0" in note
    assert not any("Publish(0)" in note for note in told.notes)
    both = story(trace, result.config)
    assert any(note.startswith("Publish(0) (TLA+ MaintRefresh(0)) is disabled") for note in both.notes)


def test_the_terminal_trace_at_80_columns_keeps_the_reasons_whole():
    result = checked("HoldsRoutedStanding")
    text = "".join(plain_text(table, 80) for table in result_traces(result))
    assert max(len(line) for line in text.splitlines()) <= 80
    assert "its least hold, standing 0, keeps since at 0" in " ".join(text.split())
