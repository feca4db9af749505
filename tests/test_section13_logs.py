"""Logs of section 13's design (issue 55, point 6): the stateless multiplexer, the created index
and its peer hold, reconnection with Hello. The transcriptions of Materialize's own tests under
docs/examples/ (docs/logs.md says which test each comes from) validate, or are refused at the
line docs/logs.md explains; a hand-written log using every new action and command validates;
and `generate HoldsPeerReconnect` covers the new actions, each of its logs validating."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

import pytest

from helpers import cli  # noqa: F401  (a fixture)
from protocol.tools.log import parse
from protocol.tools.validate import validate

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "docs" / "examples"
BOTTOM = {"tag": "Bottom", "value": {"#tup": []}}


def lines(*events) -> str:
    return "\n".join(json.dumps(event) for event in events) + "\n"


def verdict(text: str, config: str | None = None):
    return validate(parse(text, config))


# ------------------------------------------------------------ the transcriptions


def test_every_command_but_peeks_reaches_both_runtimes_is_a_behaviour_of_holds_peer_reconnect(cli):
    code, out, _ = cli("validate", str(EXAMPLES / "stateless-every-command.jsonl"), "--json")
    record = json.loads(out)
    assert (code, record["behaviour"], record["events"], record["violations"]) == (0, True, 7, {})
    # Nothing is silent and no runtime pops (the test's runtimes are mocks): one state fits.
    assert (record["final_states"], record["open_at_end"]) == (1, {})


def test_a_peek_and_its_cancellation_are_refused_at_the_peek_the_model_does_not_have(cli):
    code, out, err = cli("validate", str(EXAMPLES / "stateless-peeks.jsonl"), "--json")
    assert (code, out) == (2, "")
    assert "stateless-peeks.jsonl, line 3: iq[0]" in err
    assert "'Peek' is not a command the model has" in err


def test_the_peer_hold_pins_the_index_until_the_importing_runtime_applies(cli):
    code, out, _ = cli("validate", str(EXAMPLES / "peer-hold-pins.jsonl"), "--json")
    record = json.loads(out)
    assert (code, record["behaviour"], record["events"], record["violations"]) == (0, True, 18, {})
    assert record["possible_violations"] == {}


def test_a_peer_recorded_above_the_since_is_refused_by_the_shipped_design_and_fits_the_reader_registered_one(cli):
    path = str(EXAMPLES / "peer-hold-below-since.jsonl")
    code, out, _ = cli("validate", path, "--json")
    mismatch = json.loads(out)["mismatch"]
    assert (code, mismatch["line"], mismatch["kind"]) == (1, 6, "observation")
    assert "since[0] observed 2, the model has 1" in mismatch["reason"]
    # The publisher registering no hold, the reading runtime registering it at the join when it
    # records the peer: the test's timeline, and what that design loses.
    code, out, _ = cli("validate", path, "--json", "--config", "HoldsPeerByReader")
    record = json.loads(out)
    assert (code, record["behaviour"], record["violations"]) == (1, True, {"PeerHeld": 3})


# ------------------------------------------------------------ every new action and command


HEADER = {"format": "protocol-log/1", "config": "HoldsPeerReconnect", "constants": {"D": 2},
          "silent": ["Publish", "Ingest"]}
BOTH = ["CreateIndex(0)", "Create(0, 0)", "Drop(0)", "Create(1, 0)"]
SECTION13 = [
    {"observe": {"ixs": "Unborn", "epoch": 0, "standing[0]": BOTTOM, "published[0]": False}},
    {"action": "CreateIndex", "args": [0]},
    {"action": "CreatePeek", "args": [0, 0]},
    {"action": "DropPeek", "args": [0]},
    {"action": "CreatePeek", "args": [1, 0]},
    {"observe": {"ixs": "Live", "ix_as_of": 0, "mq[0]": BOTH, "iq[0]": BOTH}},
    {"action": "MaintStep", "args": [0], "command": "CreateIndex(0)"},
    {"observe": {"published[0]": True, "standing[0]": 0}},
    {"action": "MaintStep", "args": [0], "command": "Create(0, 0)"},  # peer records
    {"action": "MaintStep", "args": [0], "command": "Drop(0)"},
    {"action": "MaintStep", "args": [0], "command": {"tag": "Create", "value": {"d": 1, "t": 0}}},
    {"observe": {"mq[0]": [], "readers[0]": {"#map": []}}},
    {"action": "InterStep", "args": [0], "command": "CreateIndex(0)"},
    {"action": "InterStep", "args": [0], "command": "Create(0, 0)"},
    {"action": "InterStep", "args": [0], "command": "Drop(0)"},
    {"action": "InterStep", "args": [0], "command": "Create(1, 0)"},
    {"observe": {"readers[0]": {"#map": [[1, 0]]}, "iq[0]": []}},
    {"action": "Reconnect"},
    {"observe": {"epoch": 1, "df": ["Dropped", "Dropped"], "mq[0]": ["Hello"], "iq": [["Hello"]]}},
    {"action": "MaintStep", "args": [0], "command": "Hello"},
    {"action": "InterStep", "args": [0], "command": "Hello"},
    {"observe": {"readers[0]": {"#map": []}, "mq[0]": [], "iq[0]": [], "standing": [0]}},
]


def test_a_log_with_the_index_create_peer_records_reconnect_and_hello_pops_validates():
    result = verdict(lines(HEADER, *SECTION13))
    assert result.is_behaviour and result.matched == result.events == len(SECTION13)
    assert result.violations == {} and result.possible == {}


def test_hello_popped_out_of_its_place_is_refused_at_that_line():
    events = list(SECTION13)
    events[8] = {"action": "MaintStep", "args": [0], "command": "Hello"}  # Hello is not yet queued
    result = verdict(lines(HEADER, *events))
    assert result.mismatch.line == 10 and "pops Create(0, 0), not Hello" in result.mismatch.reason


def test_bottom_may_be_written_null_and_a_peer_recorded_first_registers_the_hold():
    result = verdict(lines(
        {"format": "protocol-log/1", "config": "HoldsPeerReconnect"},
        {"observe": {"standing[0]": None, "standing": [None]}},
        {"action": "CreateIndex", "args": [1]},
        {"action": "InterStep", "args": [0], "command": "CreateIndex(1)"},
        {"observe": {"standing": [1], "published[0]": False}}))
    assert result.is_behaviour and result.violations == {}


def test_commands_carrying_their_epoch_are_read_as_the_generated_logs_write_them():
    header = {"format": "protocol-log/1", "config": "TlaHoldsReconnect", "constants": {"P": 1}}
    events = [
        {"action": "CreatePeek", "args": [0, 0]},
        {"observe": {"iq[0]": ["Create(0, 0)@0"]}},
        {"action": "InterStep", "args": [0], "command": "Create(0, 0)@0"},
        {"action": "Reconnect"},
        {"action": "CreatePeek", "args": [0, 0]},
        {"observe": {"epoch": 1, "iq[0]": ["Create(0, 0)@1"]}},
        {"action": "InterStep", "args": [0], "command": {"tag": "Create", "value": {"d": 0, "t": 0, "epoch": 1}}},
    ]
    assert verdict(lines(header, *events)).is_behaviour
    events[2] = {"action": "InterStep", "args": [0], "command": "Create(0, 0)"}  # without its epoch
    assert "pops Create(0, 0)@0, not Create(0, 0)" in verdict(lines(header, *events)).mismatch.reason


def test_a_variable_the_design_held_against_lacks_is_named_not_a_crash(cli):
    path = EXAMPLES / "stateless-every-command.jsonl"
    code, out, _ = cli("validate", str(path), "--config", "HoldsReconnect")
    assert code == 1
    assert "this configuration has no variable ixs: the log observes a design that has one" in out


# ------------------------------------------------------------ generate


@pytest.fixture(scope="module")
def generated_runs(tmp_path_factory):
    """`generate HoldsPeerReconnect -c MaxTime=1 --output DIR --json`: its report and the logs it wrote
    (MaxTime=1 keeps it to seconds; at its own constants, half a minute, it runs with the slow tests)."""
    from protocol.cli import main

    where = tmp_path_factory.mktemp("gen") / "runs"
    where.mkdir()
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["generate", "HoldsPeerReconnect", "-c", "MaxTime=1", "--output", str(where), "--json"]) == 0
    return json.loads(out.getvalue()), sorted(where.glob("run-*.jsonl"))


def test_generate_covers_the_index_create_reconnect_and_the_hello_pops(generated_runs):
    report, _ = generated_runs
    covered = set(report["covered"])
    assert {"action CreateIndex(0)", "action CreateIndex(1)", "action Reconnect",
            "command maintenance applies CreateIndex", "command interactive applies CreateIndex",
            "command maintenance applies Hello", "command interactive applies Hello",
            "command maintenance applies Create", "command maintenance applies Drop",
            "effect IndexPublished", "effect PeerTaken", "effect PeerRecorded", "effect ReconnectedWithHello",
            "effect Reconciled"} <= covered


def test_every_log_generate_writes_for_holds_peer_reconnect_validates(generated_runs):
    _, paths = generated_runs
    assert len(paths) >= 3
    popped = set()
    for path in paths:
        text = path.read_text()
        result = verdict(text)
        assert result.is_behaviour and result.violations == {} and result.possible == {}, path.name
        popped |= {json.loads(line).get("command") for line in text.splitlines()[1:]}
    assert {"CreateIndex(0)", "Hello"} <= popped


def test_the_schema_accepts_the_header_generate_writes_with_reconnections(generated_runs):
    schema = json.loads((ROOT / "protocol" / "schemas" / "protocol-log-1.schema.json").read_text())
    allowed = schema["$defs"]["header"]["properties"]["constants"]["properties"]
    _, paths = generated_runs
    header = json.loads(paths[0].read_text().splitlines()[0])
    assert header["constants"].get("E") == 1 and set(header["constants"]) <= set(allowed)
