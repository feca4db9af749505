"""Issue 57's corners of input: explanations that cost what they show, not the constants;
one reading of every log; `generate` owning only what it wrote; no traceback left."""

from __future__ import annotations

import io
import json
from collections import deque
from pathlib import Path

import pytest
from rich.console import Console

from helpers import cli  # noqa: F401  (a fixture)
from protocol.configurations.named import lookup
from protocol.model.explain import explain
from protocol.model.next import model_for
from protocol.render.narrate import runs_elided
from protocol.tools.log import parse
from protocol.tools.validate import enabled_steps, validate

ROOT = Path(__file__).resolve().parent.parent

# ------------------------------------------------------------------ 2. explanations that scale


def two_line_log(D: int, MaxTime: int) -> str:
    """A header at wide constants and a step the initial state does not enable."""
    header = {"format": "protocol-log/1", "config": "Holds", "constants": {"D": D, "MaxTime": MaxTime}}
    return json.dumps(header) + "\n" + json.dumps({"action": "DropPeek", "args": [0]}) + "\n"


def explained(text: str) -> str:
    from protocol.render.validate import render_validation

    sink = io.StringIO()
    render_validation(Console(file=sink, width=100, color_system=None), validate(parse(text)), "two.jsonl")
    return sink.getvalue()


def reachable(cfg, limit: int) -> list:
    """The first `limit` states a breadth-first search of `cfg` reaches."""
    model = model_for(cfg)
    seen = {model.initial_states[0]}
    frontier, found = deque(seen), []
    while frontier and len(found) < limit:
        state = frontier.popleft()
        found.append(state)
        for _, after in model.successors(state):
            if after not in seen:
                seen.add(after)
                frontier.append(after)
    return found


@pytest.mark.quick  # the first 1,500 states of each
@pytest.mark.parametrize("name, constants", [
    ("Holds", {"D": 3, "MaxTime": 3}),
    ("HoldsReaderDowngrade", {}),  # ReaderDowngrade's candidates: the registered readers
    ("HoldsAliasShared", {}),  # CreatePeek(d, i, t): two index ids
    ("TlaHoldsRouted", {}),
])
@pytest.mark.slow  # about half a second or more: the quick run stays near a CPU minute; CI runs it
def test_the_instances_tried_in_a_state_are_every_enabled_one(name, constants):
    """`enabled_steps` tries only the instances that may be enabled (`Action.parameters_in`):
    it finds exactly the model's successors, in the same order, and explain finds each step."""
    cfg = lookup(name).with_constants(constants).config
    model = model_for(cfg)
    for state in reachable(cfg, 1500):
        expected = [(str(label), after) for label, after in model.successors(state)]
        found = enabled_steps(cfg, state)
        assert [(str(label), after) for label, after in found] == expected
        for label, after in found[:4]:
            assert explain(cfg, label, state, after)


def test_a_refusal_at_wide_constants_shows_a_few_of_each_action_and_elides_long_vectors():
    """Issue 57: at D = MaxTime = 300 the explanation narrated 301 creates and printed `df`
    as 300 `Unborn`s (1,228 lines, 82 s)."""
    from protocol.render.validate import enabled_text, render_validation

    result = validate(parse(two_line_log(300, 300)))
    enabled = enabled_text(result, 0).plain.splitlines()
    assert [line.split(":")[0] for line in enabled] == [
        "CreatePeek(0, 0)", "CreatePeek(0, 1)", "CreatePeek(0, 2)",
        "\u2026 and 298 more CreatePeek instances, CreatePeek(0, 3) to CreatePeek(0, 300)", "AdvancePolicy", "Ingest"]
    sink = io.StringIO()
    render_validation(Console(file=sink, width=100, color_system=None), result, "two.jsonl")
    text = sink.getvalue()
    assert "df = <300 \u00d7 Unborn>" in text and "as_of = <300 \u00d7 0>" in text
    assert len(text.splitlines()) < 60


def test_runs_of_equal_entries_are_counted_in_long_vectors_only():
    assert runs_elided("<Live, Unborn, Unborn>") == "<Live, Unborn, Unborn>"
    assert runs_elided("<" + ", ".join(["Live"] + ["Unborn"] * 9) + ">") == "<Live, 9 \u00d7 Unborn>"
    assert runs_elided("<1, 2, 1, 2, 1, 2, 1, 2, 1>") == "<1, 2, 1, 2, 1, 2, 1, 2, 1>"
    assert runs_elided("{0: 1}") == "{0: 1}"


def every_instance_refused(monkeypatch, name: str) -> None:
    """Action `name` refuses to list every instance its constants allow: whatever asks for them
    pays for D x MaxTime, where an explanation should pay for what is enabled."""
    import attrs

    from protocol.model import actions

    def refused(cfg):
        raise AssertionError(f"{name}'s every instance was enumerated at {cfg.constants}")

    monkeypatch.setattr(actions, "ACTIONS", tuple(attrs.evolve(action, parameters=refused) if action.name == name
                                                  else action for action in actions.ACTIONS))


# How long these take is `bench --validate`'s to measure (docs/checker.md), not a test's: the tests
# show that the cost follows what is enabled, by refusing the enumeration that made it D x MaxTime.
def test_a_two_line_refusal_at_d_and_maxtime_1000_is_explained_from_what_is_enabled(monkeypatch):
    every_instance_refused(monkeypatch, "CreatePeek")
    text = explained(two_line_log(1000, 1000))
    assert "CreatePeek(0, 0)" in text and "df = <1000 \u00d7 Unborn>" in text


def test_the_explorers_successors_of_the_initial_state_at_d_and_maxtime_200_follow_what_is_enabled(monkeypatch):
    from protocol.apps.explorer import Explorer

    explorer = Explorer(lookup("Holds").with_constants({"D": 200, "MaxTime": 200}))  # the model, built once
    every_instance_refused(monkeypatch, "CreatePeek")  # then each request: what is enabled only
    record = explorer.successors_record(explorer.initial)
    assert len(record["successors"]) == 203  # 201 creates, AdvancePolicy, Ingest


def test_an_interrupted_explanation_says_the_verdict_is_out(cli, tmp_path, monkeypatch):  # noqa: F811
    """Issue 57: SIGTERM while explaining said "before any result; nothing written" with the
    verdict already on standard output."""
    import protocol.render.validate as render

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(render, "render_mismatch", interrupted)
    log = tmp_path / "two.jsonl"
    log.write_text(two_line_log(2, 2))
    code, out, err = cli("validate", str(log))
    assert code == 130  # interrupted comes first of the classes (docs/checker.md, "Exit codes")
    assert "NOT a behaviour of the model" in " ".join(out.split())  # a long path wraps the line
    assert err == ("protocol: interrupted (Ctrl-C): the verdict above is complete; its explanation was cut "
                   "short\n")


# ------------------------------------------------------------------ 3. one reading of every log

HEADER = {"format": "protocol-log/1", "config": "Holds", "constants": {"P": 2, "D": 1, "MaxTime": 1}}
TWICE = {  # a log line naming a key twice (json keeps the last: the line read as the second)
    "the header's config": (1, '{"format": "protocol-log/1", "config": "HoldsRouted", "config": "Holds"}', "config"),
    "the header's constants": (1, '{"format": "protocol-log/1", "config": "Holds", "constants": {"P": 2}, '
                                  '"constants": {"P": 1}}', "constants"),
    "a constant": (1, '{"format": "protocol-log/1", "config": "Holds", "constants": {"P": 2, "P": 1}}', "P"),
    "a step's action": (2, '{"action": "DropPeek", "action": "CreatePeek", "args": [0, 0]}', "action"),
    "a step's args": (2, '{"action": "CreatePeek", "args": [0, 1], "args": [0, 0]}', "args"),
    "an observation": (2, '{"observe": {"since": [1, 1], "since": [0, 0]}}', "since"),
    "an observation's #map": (2, '{"observe": {"df": {"#map": [[0, "Live"]], "#map": [[0, "Unborn"]]}}}', "#map"),
}


@pytest.mark.parametrize("where", TWICE, ids=list(TWICE))
def test_a_key_named_twice_anywhere_in_a_log_line_is_refused_naming_it_and_the_line(cli, tmp_path, where):  # noqa: F811
    number, line, key = TWICE[where]
    lines = [json.dumps(HEADER), '{"observe": {"since": [0, 0]}}']
    lines[number - 1] = line
    log = tmp_path / "twice.jsonl"
    log.write_text("\n".join(lines) + "\n")
    code, out, err = cli("validate", str(log))
    assert (code, out) == (2, "")
    assert err == (f"protocol: {log}, line {number}: names the key \"{key}\" twice in one object: JSON readers "
                   "differ on which one counts, so give it once\n")


@pytest.mark.parametrize("observed", ['{"readers[0]": [0]}', '{"acq[1]": [1]}', '{"readers": [{"#map": []}, [0]]}'])
def test_a_list_is_not_read_as_a_partial_map(cli, tmp_path, observed):  # noqa: F811
    """Issue 57: `"readers[0]": [0]` was read as {0: 0}, a reader of peek 0 registered at 0."""
    log = tmp_path / "list.jsonl"
    header = {**HEADER, "switches": {"acquire": "release_on_maintenance"}}
    log.write_text(json.dumps(header) + "\n" + '{"observe": ' + observed + "}\n")
    code, out, err = cli("validate", str(log))
    assert (code, out) == (2, "")
    assert "line 2:" in err and "a partial map is written {\"#map\": [[d, t], ...]}" in err and len(err.splitlines()) == 1


def test_a_partial_map_in_its_map_form_is_still_read(cli, tmp_path):  # noqa: F811
    log = tmp_path / "map.jsonl"
    log.write_text(json.dumps(HEADER) + "\n" + '{"observe": {"readers[0]": {"#map": []}, "readers": [{"#map": []}, '
                   '{"#map": []}]}}\n')
    code, out, err = cli("validate", str(log))
    assert (code, err) == (0, "")


# ------------------------------------------------------------------ 4. generate owns what it wrote


RECORDED = '{"format": "protocol-log/1", "config": "Holds"}\n{"action": "CreatePeek", "args": [0, 0]}\n'


@pytest.mark.parametrize("name", ["run-01.jsonl", "run-42.jsonl"])
def test_generate_leaves_a_recorded_log_alone_though_it_has_the_header(cli, tmp_path, name):  # noqa: F811
    """Issue 57: every recorded log has the protocol-log/1 header generate took for its mark:
    run-01.jsonl was overwritten and run-42.jsonl deleted, exit 0."""
    (tmp_path / name).write_text(RECORDED)
    code, out, err = cli("generate", "HoldsRouted", "-c", "MaxTime=1", "--output", str(tmp_path))
    assert (code, out) == (2, "")
    assert err == (f"protocol: --output {tmp_path} holds {name}, which generate did not write: give an empty or "
                   "new directory\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == [name] and (tmp_path / name).read_text() == RECORDED


def test_generates_runs_carry_its_mark_validate_and_are_replaced_by_the_next_generate(cli, tmp_path):  # noqa: F811
    out_dir = tmp_path / "runs"
    assert cli("generate", "HoldsRouted", "-c", "MaxTime=1", "--output", str(out_dir))[0] == 0
    runs = sorted(out_dir.glob("run-*.jsonl"))
    assert runs and all(json.loads(run.read_text().splitlines()[0])["generator"] == "protocol generate"
                        for run in runs)
    assert cli("validate", str(runs[-1]))[0] in (0, 1)
    assert cli("validate", str(runs[-1]), "--json")[2] == ""
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads((ROOT / "protocol" / "schemas" / "protocol-log-1.schema.json").read_text())
    validator = jsonschema.Draft202012Validator(schema)
    for line in runs[0].read_text().splitlines():
        validator.validate(json.loads(line))
    (out_dir / "run-42.jsonl").write_text(runs[0].read_text())  # an earlier, longer set's run: generate's own
    assert cli("generate", "HoldsRouted", "-c", "MaxTime=1", "--output", str(out_dir))[0] == 0
    assert not (out_dir / "run-42.jsonl").exists()


def test_generate_refuses_a_dangling_link_as_check_refuses_it(cli, tmp_path):  # noqa: F811
    """Issue 57: generate --output through a dangling link created the link's target directory."""
    link = tmp_path / "runs"
    link.symlink_to("/nonexistent-issue-57/runs")
    code, out, err = cli("check", "HoldsRouted", "-c", "MaxTime=1", "--output", str(link))
    assert (code, out) == (2, "")
    assert err == f"protocol: --output {link}: directory /nonexistent-issue-57 does not exist; create it first\n"
    assert cli("generate", "HoldsRouted", "-c", "MaxTime=1", "--output", str(link)) == (2, "", err)
    assert link.is_symlink() and not link.exists() and sorted(tmp_path.iterdir()) == [link]


# ------------------------------------------------------------------ 5. no traceback left


@pytest.mark.parametrize("command", [["check", "HoldsRouted"], ["report", "HoldsRouted"], ["graph", "HoldsRouted"],
                                     ["generate", "HoldsRouted"]])
@pytest.mark.parametrize("length", [256, 249])  # 249: the temporary name beside it passes 255 bytes
def test_an_output_name_the_file_system_cannot_hold_is_one_line(cli, tmp_path, command, length):  # noqa: F811
    """Issue 57: an OSError traceback (File name too long), exit 1."""
    target = tmp_path / ("a" * length)
    code, out, err = cli(*command, "-c", "MaxTime=1", "--output", str(target))
    assert (code, out) == (2, "")
    assert err.startswith(f"protocol: --output {target}: its name is {length} bytes; the file system takes names of "
                          "at most 255") and err.count("\n") == 1, err
    assert err.endswith(" bytes\n") and "give a name of at most" in err
    assert list(tmp_path.iterdir()) == []


def test_a_directory_name_too_long_in_the_output_path_is_one_line(cli, tmp_path):  # noqa: F811
    target = tmp_path / ("d" * 300) / "out.txt"
    code, out, err = cli("check", "HoldsRouted", "-c", "MaxTime=1", "--output", str(target))
    assert (code, out) == (2, "")
    assert err == f"protocol: cannot write --output {target}: File name too long: give another path\n"


@pytest.mark.slow  # a fresh interpreter under a memory limit
@pytest.mark.serial
@pytest.mark.parametrize("options", [[], ["--no-liveness", "--engine", "packed"]])
def test_a_memory_limit_too_low_for_scipy_is_one_line(options):
    """Issue 57: under `ulimit -v 200000` scipy's import failed with an ImportError traceback
    (here its OpenBLAS retried its allocation for ever)."""
    import os
    import resource
    import subprocess
    import sys

    def limited():
        resource.setrlimit(resource.RLIMIT_AS, (200_000 << 10, 200_000 << 10))

    done = subprocess.run([sys.executable, "-m", "protocol", "check", "Holds", "-c", "MaxTime=1", *options],
                          cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True, text=True,
                          preexec_fn=limited, timeout=120)
    assert done.returncode == 4 and done.stdout == ""  # the environment (a memory limit)
    assert done.stderr.startswith("protocol: the address-space limit leaves ") and done.stderr.count("\n") == 1
    assert "raise the limit (ulimit -v)" in done.stderr


def explorer_request(base: str, path: str, headers: dict) -> tuple[int, dict]:
    """GET `path` with exactly `headers` (a list of pairs may repeat one): (status, JSON body)."""
    import http.client

    port = int(base.rsplit(":", 1)[1])
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    connection.putrequest("GET", path, skip_host=True)
    for name, value in headers:
        connection.putheader(name, value)
    connection.endheaders()
    response = connection.getresponse()
    body = json.loads(response.read())
    connection.close()
    return response.status, body


@pytest.mark.slow  # about half a second or more: the quick run stays near a CPU minute; CI runs it
def test_the_explorer_answers_json_to_oversized_ids_duplicated_hosts_and_other_sites():
    """Issue 57: a 5,000-digit id printed a ValueError traceback and closed the connection; of
    two Host headers the first counted; Origin and Sec-Fetch-Site were not looked at."""
    from protocol.apps.explorer import Explorer
    from test_report import serving

    with serving(Explorer(lookup("HoldsRouted").with_constants({"MaxTime": 1}))) as base:
        host = ("Host", base.removeprefix("http://"))
        status, body = explorer_request(base, "/api/state/" + "1" * 5000, [host])
        assert status == 400 and "5,000 digits" in body["error"]
        status, body = explorer_request(base, "/api/successors/0", [host, ("Host", "evil.example")])
        assert status == 400 and "2 Host headers" in body["error"]
        for cross in [("Origin", "http://evil.example"), ("Origin", "null"), ("Sec-Fetch-Site", "cross-site"),
                      ("Sec-Fetch-Site", "same-site")]:
            status, body = explorer_request(base, "/api/successors/0", [host, cross])
            assert status == 403 and "its own page only" in body["error"], cross
        for own in [[], [("Origin", base)], [("Sec-Fetch-Site", "same-origin")], [("Sec-Fetch-Site", "none")]]:
            status, body = explorer_request(base, "/api/successors/0", [host, *own])
            assert status == 200 and body["successors"], own
