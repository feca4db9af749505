"""The terminal trace: protocol words, changes grouped by process, witnesses, lassos, no ANSI off a terminal.

Rendered through rich's own consoles (a StringIO console for plain text, a
recording console for styles), so what is tested is what a reviewer sees.
"""

from __future__ import annotations

import io
import os
import re
import subprocess
import sys

import pytest
from rich.console import Console

from helpers import checked
from protocol.model.config import HOLDS
from protocol.configurations.named import lookup
from protocol.render.narrate import initial_words, narrate, story
from protocol.render.terminal import plain_text, render_result, trace_table
from protocol.model.state import initial
from protocol.model.next import replay
from protocol.model.trace import Trace

WIDTH = 100
ROW = re.compile(r"^ {1,3}(\d+) {2,3}\S")  # a row's number; the step's own lines are indented further


def routed_trace():
    return checked("HoldsRouted").violation("I1")


ROUTED = lookup("HoldsRouted").config


def rendered(trace, width=WIDTH, cfg=ROUTED, **options) -> str:
    return plain_text(trace_table(trace, cfg=cfg, **options), width)


def step_block(text: str, number: int) -> str:
    """The lines of step `number` (from its row to the next row) in a rendered trace."""
    lines = text.splitlines()
    rows = [i for i, line in enumerate(lines) if ROW.match(line)] + [len(lines)]
    start = next(i for i in rows if ROW.match(lines[i]).group(1) == str(number))
    return "\n".join(lines[start:rows[rows.index(start) + 1]])


# ------------------------------------------------------------- the steps


def test_the_initial_state_is_one_sentence_not_every_variable():
    text = rendered(routed_trace())
    first = step_block(text, 1)
    assert "every frontier at 0, every queue empty, no peek created" in first
    assert "policy" not in first and "released" not in first
    assert len([line for line in first.splitlines() if line.strip()]) <= 4


def test_each_step_says_what_happened_in_protocol_words():
    text = rendered(routed_trace())
    assert "the controller creates peek 0 reading at as_of 0" in step_block(text, 2)
    assert "the controller drops peek 0: its read hold at 0 goes" in step_block(text, 3)
    policy = " ".join(step_block(text, 4).split())
    assert "AllowCompaction(index, 1) is sent to every process's maintenance runtime" in policy
    assert "process 0's maintenance runtime applies Compact(1)" in " ".join(step_block(text, 5).split())
    assert "process 0's publisher raises the published since from 0 to 1" in " ".join(step_block(text, 6).split())


def test_only_the_variables_a_step_changed_are_shown():
    block = step_block(rendered(routed_trace()), 5)  # MaintStep(0): mq[0] and writer[0]
    assert "writer" in block and "mq" in block
    for untouched in ("since", "iq", "policy", "process 1"):
        assert untouched not in block


def test_changes_are_grouped_global_first_then_by_process():
    block = step_block(rendered(routed_trace()), 2)  # CreatePeek: df, then iq of each process
    positions = [block.index(group) for group in ("global:", "process 0:", "process 1:")]
    assert positions == sorted(positions)
    assert block.count("process 0:") == 1  # a group is named once, not per variable


def test_the_last_state_explains_the_violation_with_its_witnesses():
    text = " ".join(rendered(routed_trace()).split())
    assert ("I1 violated: since[0] = 1 is past as_of 0 of Create(0, 0), "
            "still queued on process 0's interactive stream") in text


def test_a_transition_property_is_explained_from_the_last_step():
    cfg = HOLDS
    steps = replay(cfg, ["AdvancePolicy"])
    fallen = steps[1].state._replace(policy=0)  # a step that lowers the policy
    trace = Trace("NoRegression", (steps[0], steps[1]._replace(state=fallen), steps[1]))
    assert "policy fell from 0 to 1" not in rendered(trace, cfg=cfg)
    backwards = Trace("NoRegression", (steps[0], steps[1], steps[1]._replace(state=fallen)))
    assert "policy fell from 1 to 0" in rendered(backwards, cfg=cfg)


def test_full_shows_every_variable_of_every_state():
    trace = routed_trace()
    text = rendered(trace, full=True)
    P = len(trace.steps[0].state.since)
    for variable in ("policy", "caps", "fwd"):
        assert text.count(f"  {variable}  ") == trace.length, variable
    for variable in ("released", "standing", "physical"):
        assert text.count(f"  {variable}  ") == trace.length * P, variable


def test_changed_values_are_highlighted_on_a_terminal():
    console = Console(file=io.StringIO(), width=WIDTH, record=True, force_terminal=True,
                      color_system="standard")
    console.print(trace_table(routed_trace(), cfg=ROUTED))
    styled = console.export_text(styles=True)
    assert "\x1b[1;33m[Create(0, 0)]" in styled  # the new queue, bold yellow
    assert "\x1b[2m[]" in styled  # the old one, dim


# ---------------------------------------------------------------- lassos


def stuttering_lasso():
    steps = replay(HOLDS.evolve(fairness=False), ["AdvancePolicy"])
    return Trace("CompactionNotStalled", tuple(steps), loop=1, stutters=True,
                 notes=("MaintStep(0): taken in the cycle",))


def test_a_stuttering_lasso_says_where_it_stutters_forever():
    text = rendered(stuttering_lasso(), cfg=HOLDS.evolve(fairness=False))
    assert "stutters forever in state 2" in text
    assert "the cycle starts here" in step_block(text, 2)
    assert "MaintStep(0): taken in the cycle" in text


def test_a_cycling_lasso_says_which_state_it_returns_to():
    steps = replay(HOLDS, ["CreatePeek(0, 0)", "InterStep(0)"])
    trace = Trace("CompactionNotStalled", tuple(steps), loop=1)
    text = rendered(trace, cfg=HOLDS)
    assert "back to state 2" in text and "stutters" not in text
    assert "the cycle starts here" in step_block(text, 2)


# ----------------------------------------------------------- narration


def test_a_compaction_held_back_by_a_live_peek_says_so():
    cfg = HOLDS.evolve(D=2)
    before, after = [s.state for s in replay(cfg, ["CreatePeek(0, 0)", "AdvancePolicy"])][1:]
    words = narrate(("AdvancePolicy",), before, after, cfg)
    assert "read frontier stays at 0, held by peek 0" in words
    assert "AllowCompaction(index" not in words


def test_broadcast_without_a_standing_hold_ignores_the_interactive_compact():
    broadcast = lookup("HoldsBroadcast").config
    steps = replay(broadcast, ["AdvancePolicy", "InterStep(0)"])
    assert "ignores it" in narrate(steps[2].action, steps[1].state, steps[2].state, broadcast)
    steps = replay(HOLDS, ["AdvancePolicy", "InterStep(0)"])
    assert "standing hold rises to 1" in narrate(steps[2].action, steps[1].state, steps[2].state, HOLDS)


def test_a_state_that_is_not_initial_is_described_by_its_values():
    moved = initial(HOLDS)._replace(policy=1)
    assert "policy = 1" in initial_words(moved)
    assert "policy" not in initial_words(initial(HOLDS))


def test_the_story_of_a_trace_has_one_entry_per_state():
    told = story(routed_trace(), ROUTED)
    assert [s.number for s in told.steps] == list(range(1, 7))
    assert told.steps[0].changed == [] and all(s.changed for s in told.steps[1:])


# ------------------------------------------------------ widths and ANSI


@pytest.mark.parametrize("width", [60, 100, 140])
def test_lines_follow_the_width(width):
    lines = rendered(routed_trace(), width=width).splitlines()
    assert max(map(len, lines)) <= width
    assert max(map(len, lines)) > width - 25  # and use it: long sentences wrap at the edge


def test_render_result_to_a_file_has_no_ansi_codes():
    buffer = io.StringIO()
    render_result(Console(file=buffer, width=WIDTH), checked("HoldsCap"))
    assert "\x1b" not in buffer.getvalue()
    assert "Counterexample to I1: 7 states" in buffer.getvalue()


@pytest.mark.slow  # about half a second or more: the quick run stays near a CPU minute; CI runs it
def test_the_cli_through_a_pipe_has_no_ansi_codes_and_follows_columns():
    env = dict(os.environ, COLUMNS="72")
    env.pop("FORCE_COLOR", None)
    done = subprocess.run([sys.executable, "-m", "protocol", "check", "HoldsRouted"],
                          capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "\x1b" not in done.stdout
    assert max(len(line) for line in done.stdout.splitlines()) <= 72
    assert "still queued on process 0's" in done.stdout
