"""Section 11 in every rendering: PhysicalLeSince is said not to apply with physical cuts
(never "holds"), and the new steps speak their own words in text, Markdown and Mermaid."""

from __future__ import annotations

import json

from helpers import checked
from protocol.render.export import summary_markdown, trace_mermaid
from protocol.render.terminal import plain_text, summary_table
from protocol.render.report import verdicts_html
from protocol.cli.check import json_line


def test_physical_le_since_does_not_apply_with_cuts_in_every_summary():
    result = checked("HoldsCuts")
    assert "PhysicalLeSince" not in result.properties
    terminal = plain_text(summary_table(result), 120)
    assert "PhysicalLeSince" in terminal and "does not apply" in terminal
    assert "| PhysicalLeSince | does not apply (with from_cuts) |" in summary_markdown(result)
    assert json.loads(json_line(result))["not_applicable"] == {"PhysicalLeSince": "with from_cuts"}
    assert "does not apply" in verdicts_html(result)


def test_a_summary_without_cuts_says_nothing_of_it():
    result = checked("HoldsSealTap")
    assert "does not apply" not in plain_text(summary_table(result), 120)
    assert "not_applicable" not in json.loads(json_line(result))


def test_the_lost_wakeup_reads_and_draws_as_such():
    trace = checked("HoldsSealTap").violation("PeeksServed")
    from protocol.render.narrate import story

    words = [step.words for step in story(trace, checked("HoldsSealTap").config).steps]
    assert "the peek reads the published upper 0 and parks" in words[3]
    assert "nothing notifies the parked peek" in words[4]
    diagram = trace_mermaid(trace, checked("HoldsSealTap").config)
    assert "peek 0 parks: published upper 0" in diagram and "publishes upper 1" in diagram


def test_a_filtered_report_is_said_and_drawn():
    trace = checked("HoldsReportOwnerFilter").violation("CtlHoldReleased")
    from protocol.render.narrate import story

    words = story(trace, checked("HoldsReportOwnerFilter").config).steps[-1].words
    assert "the report of process 0 is filtered: the multiplexer no longer owns peek 0" in words
    assert "no report of peek 0 reaches the controller" in trace_mermaid(trace, checked("HoldsReportOwnerFilter").config)


def test_without_a_writer_floor_a_second_peek_breaks_i1_too():
    """Spec 11.5: HoldsAcquireFloorAgent violates SinceAllowed in 4 states, and with D >= 2
    also I1 in 5 (the manifest's `needs` says so per property)."""
    result = checked("HoldsAcquireFloorAgent", P=1, D=2, MaxTime=1)
    assert {prop: v.trace_length for prop, v in result.properties.items() if v.holds is False} == {
        "SinceAllowed": 4, "I1": 5}
    assert result.as_expected
