"""The tools know section 12's actions from their declarations: a run of the design's
TLA+ model, with AllowCompaction, ReaderDowngrade and a drop that sends nothing, is
narrated, drawn, exported to ITF and read back, validated as a log (and refused by a
design that has no such action), covered by `generate`, offered by the explorer and
shown on the review page."""

from __future__ import annotations

import pytest

import json

from helpers import checked, generated
from protocol.configurations.named import lookup
from protocol.model.next import model_for, replay
from protocol.model.trace import Trace
from protocol.render.export import trace_markdown, trace_mermaid
from protocol.render.narrate import narrate
from protocol.render.report import report_html
from protocol.apps.explorer import Explorer
from protocol.tools.itf import from_itf, trace_itf
from protocol.tools.log import header_line, parse, step_line
from protocol.tools.validate import applied_command, recorded_step, validate

RUN = ["CreatePeek(0, 0)", "InterStep(0)", "ReaderDowngrade(0, 2)", "DropPeek(0)", "AllowCompaction(2)",
       "MaintStep(0)"]


def tla_run():
    cfg = lookup("TlaHolds").config
    return cfg, replay(cfg, RUN)


def test_each_new_step_is_said_in_protocol_words():
    cfg, steps = tla_run()
    said = {str(after.action): narrate(after.action, before.state, after.state, cfg)
            for before, after in zip(steps, steps[1:])}
    assert said["ReaderDowngrade(0, 2)"] == ("process 0's reader of peek 0 has made progress: its import's "
                                             "registration rises from 0 to 2")
    assert said["AllowCompaction(2)"].startswith("the controller allows the index to compact to 2")
    assert "AllowCompaction(index, 2) is sent to every process's maintenance runtime and interactive runtime" \
        in said["AllowCompaction(2)"]
    assert said["DropPeek(0)"].endswith("and no AllowCompaction is sent (a free controller allows compaction "
                                        "later, in a command of its own)")


def test_the_drawing_and_the_markdown_show_the_new_steps():
    cfg, steps = tla_run()
    trace = Trace("I1", tuple(steps))
    drawn = trace_mermaid(trace, cfg)
    assert "peek 0's reader at 2" in drawn  # ReaderDowngrade's note on inter0
    assert "readers {0: 2}" in drawn  # and what it hands the publisher
    assert "AllowCompaction(index, 2)" in drawn
    assert "**`ReaderDowngrade(0, 2)`**" in trace_markdown(trace, cfg)


def test_an_itf_export_of_the_run_is_read_back_and_validated():
    cfg, steps = tla_run()
    document = trace_itf(Trace("I1", tuple(steps)), source="TlaHolds")
    assert [state["#meta"].get("action", {}).get("name") for state in document["states"]][1:] == [
        label.split("(")[0] for label in RUN]
    assert from_itf(json.dumps(document)).steps == tuple(steps)
    found = validate(parse(json.dumps(document), "TlaHolds"))
    assert found.is_behaviour


def steps_log(name: str, cfg, steps) -> str:
    by_label = {instance.label: instance for instance in model_for(cfg).instances}
    lines = [header_line(name, cfg, ())]
    for before, step in zip(steps, steps[1:]):
        command = applied_command(recorded_step(by_label[step.action], before.state)[1])
        lines.append(step_line(step.action, command))
    return "\n".join(lines) + "\n"


def test_a_log_with_allow_compaction_and_reader_downgrade_lines_validates_and_holds_refuses_it():
    cfg, steps = tla_run()
    text = steps_log("TlaHolds", cfg, steps)
    assert '"action": "ReaderDowngrade", "args": [0, 2]' in text
    assert validate(parse(text)).is_behaviour
    refused = validate(parse(text, "Holds"))
    assert not refused.is_behaviour and refused.mismatch.line == 4  # the header, then the 3rd step


@pytest.mark.slow  # about a second: the quick run stays near a CPU minute; CI runs it
def test_generate_covers_every_new_action_instance():
    coverage = generated("TlaHolds")
    covered = {target.name for target in coverage.covered if target.kind == "action"}
    wanted = {str(label) for label in model_for(lookup("TlaHolds").config).labels
              if label.name in ("AllowCompaction", "ReaderDowngrade")}
    assert len(wanted) == 6 and wanted <= covered


def test_the_explorer_offers_reader_downgrade_once_a_reader_is_rendered():
    cfg, steps = tla_run()
    explorer = Explorer(lookup("TlaHolds"))
    rendered = explorer.id_of(steps[2].state)
    offered = [str(label) for label, _ in explorer.successors(rendered)]
    assert offered[-2:] == ["ReaderDowngrade(0, 1)", "ReaderDowngrade(0, 2)"]


def test_the_review_page_tells_the_tla_counterexample():
    page = report_html([checked("TlaHoldsRouted")])
    assert "AllowCompaction(1)" in page and "no AllowCompaction is sent" in page
