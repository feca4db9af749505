"""Issue 32, point 3: every malformed log is one line and exit 2, never a traceback and never
exit 1 (which a CI gate reads as a protocol violation). The corpus holds the issue's cases and
the low items' (a #map key outside the processes, Python's own words in the error text, a
command on a controller step, a one-line ITF document over 1 MiB, Quint's --mbt variables,
`validate -`, a FIFO with no writer); a Hypothesis fuzzer of log shapes (slow) mutates valid
logs and asserts the exit class of every one."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from protocol.cli.main import main

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "docs" / "examples" / "multiplexer.jsonl"
HEADER = EXAMPLE.read_text().splitlines()[0]


def validated(capsys, path) -> tuple[int, str, str]:
    code = main(["validate", str(path)])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def one_line_exit_2(capsys, path) -> str:
    code, out, err = validated(capsys, path)
    assert code == 2 and out == "" and err.count("\n") == 1 and err.startswith("protocol: "), (code, err)
    return err


def itf_trace(tmp_path) -> dict:
    target = tmp_path / "trace.json"
    assert main(["check", "HoldsRouted", "-c", "MaxTime=1", "--format", "itf", "--output", str(target)]) == 0
    return json.loads(target.read_text())


EVENTS = {  # the event after the example's header, and a word the one line must have
    "action as a list": ('{"action": ["Ingest"]}', "unknown action"),
    "action as an object": ('{"action": {"name": "Ingest"}}', "unknown action"),
    "number over 4,300 digits": ('{"observe": {"since": [' + "1" * 5000 + ", 0]}}", "thousands of digits"),
    "since[²]": ('{"observe": {"since[²]": 0}}', "the process must be"),
    "#map key 7 at P=2": ('{"observe": {"since": {"#map": [[7, 0], [0, 0]]}}}', "keys must be the processes"),
    "a line that is null": ("null", "is a JSON null, not an object"),
    "df an unknown status": ('{"observe": {"df": ["Bogus"]}}', "is not a value of its domain"),
    "command on a controller step": ('{"action": "CreatePeek", "args": [0, 0], "command": "Compact(1)"}',
                                     "pops no command"),
    "command of an unknown kind": ('{"action": "MaintStep", "args": [0], "command": "Bogus(1)"}',
                                   "is not a command"),
    "bigint not a number": ('{"observe": {"since[0]": {"#bigint": "1e999"}}}', "is not a value of its domain"),
    # issue 57: a key named twice was read as its last value, exit 0; a list read as a partial map
    "args named twice": ('{"action": "CreatePeek", "args": [0, 0], "args": [0, 1]}', 'names the key "args" twice'),
    "since[0] observed twice": ('{"observe": {"since[0]": 0, "since[0]": 1}}', 'names the key "since[0]" twice'),
    "readers[0] as a list": ('{"observe": {"readers[0]": [0]}}', "a partial map is written"),
}


@pytest.mark.parametrize("event", EVENTS, ids=list(EVENTS))
def test_a_malformed_event_is_one_line_and_exit_2(capsys, tmp_path, event):
    line, says = EVENTS[event]
    path = tmp_path / "run.jsonl"
    path.write_text(HEADER + "\n" + line + "\n")
    err = one_line_exit_2(capsys, path)
    assert says in err, err
    for python_words in ("tuple.index", "NoneType", "set_int_max_str_digits", "invalid literal", " at at "):
        assert python_words not in err, err


def test_an_itf_action_that_is_a_string_is_one_line_and_exit_2(capsys, tmp_path):
    document = itf_trace(tmp_path)
    document["states"][1]["#meta"]["action"] = "CreatePeek"
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(document))
    assert "#meta action must be an object" in one_line_exit_2(capsys, path)


def test_quints_mbt_variables_are_ignored_and_a_one_line_document_may_pass_1_mib(capsys, tmp_path):
    """Quint writes one line, --mbt adds mbt::actionTaken and mbt::nondetPicks to every state."""
    document = itf_trace(tmp_path)
    for state in document["states"]:
        state["mbt::actionTaken"], state["mbt::nondetPicks"] = "step", {}
    document["#meta"]["padding"] = "x" * (1 << 20)
    path = tmp_path / "quint.itf.json"
    path.write_text(json.dumps(document))
    code, out, err = validated(capsys, path)
    assert code == 1 and "a behaviour of the model" in out and "violates I1" in out, err  # HoldsRouted's refutation


def test_validate_dash_reads_standard_input(capsys, monkeypatch):
    import io
    import sys

    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(EXAMPLE.read_bytes())))
    code, out, err = validated(capsys, "-")
    assert code == 0 and "a behaviour of the model" in out, err


def test_a_fifo_with_no_writer_is_an_empty_log_not_a_wait(capsys, tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    assert "the log is empty" in one_line_exit_2(capsys, fifo)


# ------------------------------------------------------------------ the fuzzer of log shapes

def valid_lines() -> list[str]:
    return EXAMPLE.read_text().splitlines()


ODD_VALUES = st.sampled_from([None, True, -1, 0, 1, 2, 10**30, 1.5, "", "x", "Create(0, 0)", "²", [], [None],
                              {}, {"#map": []}, {"#map": [[7, 0]]}, {"#set": [0, 0]}, {"#bigint": "x"},
                              {"#bigint": "9" * 40}, {"tag": "Nope", "value": {}}, [[[[]]]], ["Ingest"]])


def mutated(line: str, draw) -> str:
    """One line of a valid log, changed: a value replaced, a key renamed or removed, the text cut."""
    how = draw(st.sampled_from(["value", "key", "drop", "cut", "duplicate", "raw"]))
    if how == "cut":
        return line[:draw(st.integers(0, max(len(line) - 1, 0)))]
    if how == "raw":
        return draw(st.sampled_from(["null", "[]", "1", '"x"', "{", "1" * 5000, "{}", '{"observe": {}}']))
    try:
        event = json.loads(line)
    except ValueError:
        return line
    if how == "duplicate" or not isinstance(event, dict) or not event:
        return line
    key = draw(st.sampled_from(sorted(event)))
    if how == "drop":
        event.pop(key)
    elif how == "key":
        event[draw(st.sampled_from(["action", "args", "command", "observe", "since[9]", "since[²]", "bogus"]))] = \
            event.pop(key)
    elif isinstance(event[key], dict) and event[key] and draw(st.booleans()):
        inner = draw(st.sampled_from(sorted(event[key])))
        event[key][inner] = draw(ODD_VALUES)
    else:
        event[key] = draw(ODD_VALUES)
    return json.dumps(event)


@st.composite
def mutated_logs(draw) -> str:
    lines = valid_lines()
    for _ in range(draw(st.integers(1, 3))):
        index = draw(st.integers(0, len(lines) - 1))
        lines[index] = mutated(lines[index], draw)
    return "\n".join(lines) + "\n"


@pytest.mark.slow
@settings(max_examples=400, database=None, derandomize=True)
@given(mutated_logs())
def test_every_mutated_log_is_a_verdict_or_one_line_and_exit_2(text):
    """The exit class of any log: 0 or 1 with a verdict on stdout, or 2 with one line; never a
    traceback (an exception out of main fails the test)."""
    import contextlib
    import io
    import tempfile

    with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False) as handle:
        handle.write(text)
    out, err = io.StringIO(), io.StringIO()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(["validate", handle.name])
    finally:
        os.unlink(handle.name)
    if code == 2:
        assert out.getvalue() == "" and err.getvalue().count("\n") == 1, err.getvalue()
        assert "tuple.index" not in err.getvalue() and "NoneType" not in err.getvalue(), err.getvalue()
    else:
        assert code in (0, 1) and err.getvalue() == "" and out.getvalue(), (code, err.getvalue())
