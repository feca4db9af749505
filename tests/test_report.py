"""The review page and the state explorer, without a browser: what the HTML holds,
what the JSON API answers, and what bad input gets. tests/test_browser.py opens
both in Chromium."""

from __future__ import annotations

import json
import re
import signal
import socket
import subprocess
import sys
import threading
import urllib.error
import urllib.request
from contextlib import contextmanager

import pytest

from helpers import checked, cli, ctrl_c_reaches_it  # noqa: F401 - cli is a fixture
from protocol.configurations.named import named_configurations
from protocol.apps.explorer import Explorer, make_server
from protocol.tools.matrix import Matrix, Outcome, plan
from protocol.model.next import model_for
from protocol.render.narrate import story
from protocol.render.report import matrix_section, report_html
from protocol.render.svg import cycle_svg, sequence_svg

REFUTATIONS = [name for name, named in named_configurations().items() if named.violates]
PAGE_LIMIT = 500_000


def commands_sent(trace) -> int:
    """How many commands the run appended to any queue: one arrow each is expected."""
    sent = 0
    for before, after in zip(trace.steps, trace.steps[1:]):
        for queue in ("mq", "iq"):
            for old, new in zip(getattr(before.state, queue), getattr(after.state, queue)):
                if new[:len(old)] == old:  # appended to (a runtime step pops from the front instead)
                    sent += len(new) - len(old)
    return sent


def expected_trace(name: str):
    result = checked(name)
    return result, result.violation(result.named.violates)


# ------------------------------------------------------------------ the page


@pytest.mark.parametrize("name", REFUTATIONS)
def test_report_is_one_self_contained_file_with_every_step_and_the_witness(cli, tmp_path, name):
    out = tmp_path / "r.html"
    code, stdout, stderr = cli("report", name, "--output", str(out))
    assert (code, stdout, stderr) == (0, "", "")
    html = out.read_text(encoding="utf-8")
    assert len(html.encode("utf-8")) < PAGE_LIMIT
    assert not re.search(r"""(src|href)\s*=\s*["']?\s*(https?:)?//""", html, re.I), "an external reference"
    assert "<script src" not in html and "<link" not in html
    result = checked(name)
    traces = [verdict.trace for verdict in result.properties.values() if verdict.trace is not None]
    assert [trace.prop for trace in traces] == list(result.named.expected_violations())  # every one drawn
    assert len(re.findall(r'<tr class="step[^"]*" data-step="\d+"', html)) == sum(len(t.steps) for t in traces)
    assert html.count('<svg class="sequence"') == len(traces)
    for trace in traces:
        told = story(trace, result.config)
        for line in told.violation or told.notes[:1]:
            assert line.replace(">", "&gt;").replace("'", "&#x27;") in html
        assert f'<tr class="step violating" data-step="{len(trace.steps)}"' in html


@pytest.mark.parametrize("name", REFUTATIONS)
def test_the_diagram_draws_one_arrow_per_command_sent(name):
    result, trace = expected_trace(name)
    svg = sequence_svg(trace, story(trace, result.config))
    sends = re.findall(r'<g class="arrow send" data-from="(\w+)" data-to="(\w+)"', svg)
    assert len(sends) == commands_sent(trace)
    assert all(source == "multiplexer" for source, _ in sends)
    assert len(re.findall(r'class="step violating[ "]', svg)) == 1


def test_the_holds_routed_diagram_has_the_controllers_messages_and_the_publishers_writer():
    result, trace = expected_trace("HoldsRouted")
    svg = sequence_svg(trace, story(trace, result.config))
    calls = re.findall(r'<g class="arrow call" data-from="(\w+)" data-to="(\w+)">.*?<text[^>]*>([^<]*)</text>', svg)
    assert calls == [("controller", "multiplexer", "CreateDataflow(peek 0, as_of 0)"),
                     ("controller", "multiplexer", "Drop(peek 0)"),
                     ("controller", "multiplexer", "AllowCompaction(index, 1)"),
                     ("maint0", "pub0", "writer 1")]


def test_a_lasso_shows_its_cycle_and_the_fairness_explanation(cli, tmp_path):
    out = tmp_path / "u.html"
    assert cli("report", "HoldsUnfair", "--output", str(out))[0] == 0
    html = out.read_text(encoding="utf-8")
    assert '<svg class="cycle"' in html and "stutters forever in state 2" in html
    assert "Why the cycle is fair" in html and "no action is fair (fairness off)" in html
    assert 'tag cycle">the cycle starts here' in html


def test_a_cycle_of_several_states_is_a_ring_with_one_step_back():
    _, trace = expected_trace("HoldsRouted")
    lasso = trace._replace(loop=2, notes=("back to state 3 by Publish(0)",))
    svg = cycle_svg(lasso)
    assert svg.count('<g class="state') == len(trace.steps)
    assert svg.count('<g class="edge back">') == 1 and svg.count('<g class="edge">') == len(trace.steps) - 1
    assert re.search(r'<g class="state cycle-start" data-step="3">', svg)


@pytest.mark.slow
def test_every_configuration_on_one_page_with_an_index(cli, tmp_path):
    out = tmp_path / "all.html"
    code, _, _ = cli("report", "--all", "--output", str(out))
    html = out.read_text(encoding="utf-8")
    assert code == 0
    for name in named_configurations():
        assert f'<a href="#{name.lower()}">{name}</a>' in html
        assert f'<section class="result" id="{name.lower()}">' in html
    # A page grows with its configurations (their traces and drawings), never with their states:
    # about 17 KB each today (63: 1.09 MB), held under 25 KB each.
    assert len(html.encode("utf-8")) < 25_000 * len(named_configurations())


def test_check_format_html_is_the_report(cli, tmp_path):
    via_check, via_report = tmp_path / "c.html", tmp_path / "r.html"
    assert cli("check", "HoldsCap", "--format", "html", "--output", str(via_check))[0] == 0
    assert cli("report", "HoldsCap", "--output", str(via_report))[0] == 0
    strip = lambda p: re.sub(r"<tr><th>seconds</th><td>[^<]*</td></tr>", "", p.read_text())  # noqa: E731
    assert strip(via_check) == strip(via_report)


def test_the_matrix_grid_marks_the_minimal_sufficient_sets():
    rows = plan({"P": 2, "D": 1, "MaxTime": 2})
    safe = {frozenset({"broadcast", "standing_hold"})}  # a made-up verdict table: only this set is sufficient

    def outcome(row):
        ok = row.mechanisms in safe
        return Outcome({"I1": (ok, None if ok else 6), "CompactionNotStalled": (True, None)}, 10, 20, 3, 0.0, True)

    done = Matrix(tuple(row if row.same_as else row.__class__(row.number, row.config, row.named, None, outcome(row))
                        for row in rows))
    html = matrix_section(done)
    minimal = re.findall(r'<tr class="minimal"><td class="num">(\d+)</td><td><span class="tag good"', html)
    assert [rows[int(n) - 1].mechanisms for n in minimal] == [frozenset({"broadcast", "standing_hold"})]
    assert html.count('<td class="verdict bad">\u2717 6</td>') == sum(
        row.mechanisms not in safe for row in rows if row.same_as is None) + sum(
        rows[row.same_as - 1].mechanisms not in safe for row in rows if row.same_as)


def test_report_html_escapes_what_it_is_given():
    result = checked("HoldsRouted")
    html = report_html([result], title="<b>x</b>")
    assert "<title>&lt;b&gt;x&lt;/b&gt;</title>" in html


# ------------------------------------------------------------------ bad input


def test_an_unknown_name_is_one_line_and_exit_2(cli, tmp_path):
    out = tmp_path / "r.html"
    code, stdout, stderr = cli("report", "HoldsRoute", "--output", str(out))
    assert code == 2 and stdout == "" and not out.exists()
    assert stderr.count("\n") == 1 and "Did you mean HoldsRouted?" in stderr


@pytest.mark.parametrize("where, said", [("missing/r.html", "does not exist"), (".", "is a directory")])
def test_an_unwritable_output_is_refused_before_anything_runs(cli, tmp_path, where, said):
    code, _, stderr = cli("report", "HoldsRouted", "--output", str(tmp_path / where))
    assert code == 2 and said in stderr and stderr.count("\n") == 1
    assert list(tmp_path.iterdir()) == []


def test_explore_refuses_an_unknown_name_and_a_bad_port(cli):
    assert cli("explore", "Nope")[0] == 2
    code, _, stderr = cli("explore", "Holds", "--port", "70000")
    assert code == 2 and "0..65535" in stderr and stderr.count("\n") == 1


def test_explore_from_trace_needs_a_counterexample(cli):
    code, _, stderr = cli("explore", "Holds", "--from-trace")
    assert code == 2 and "no counterexample" in stderr


def test_explore_on_a_port_in_use_is_one_line_and_exit_2(cli):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        code, stdout, stderr = cli("explore", "Holds", "--port", str(port))
    assert code == 2 and stdout == ""
    assert stderr == f"protocol: port {port} on 127.0.0.1 is in use: give another with --port N " \
                     "(--port 0 picks a free one)\n"


# ------------------------------------------------------------------ the explorer


def test_the_explorer_follows_the_models_successor_function():
    named = named_configurations()["HoldsRouted"]
    explorer = Explorer(named)
    model = model_for(named.config)
    expected = [(str(label), after) for label, after in model.successors(model.initial_states[0])]
    got = [(str(label), explorer.states[i]) for label, i in explorer.successors(explorer.initial)]
    assert got == expected
    assert len(explorer.states) == 1 + len({after for _, after in expected})  # nothing explored beyond


def test_the_shortest_path_to_the_counterexamples_last_state_is_the_counterexample():
    result, trace = expected_trace("HoldsRouted")
    explorer = Explorer(result.named, trace)
    path = explorer.path(explorer.trace_ids[-1])
    explorer.stopping.set()  # the search has found the path; the rest of the graph is not asked for
    assert [explorer.states[i] for _, i in path] == [step.state for step in trace.steps]
    record = explorer.state_record(explorer.trace_ids[-1])
    assert record["properties"]["I1"] == {"holds": False, "witnesses": story(trace, result.config).violation}
    assert explorer.state_record(explorer.initial)["properties"]["I1"]["holds"] is True


@contextmanager
def serving(explorer):
    """The explorer's server on a free loopback port, for the length of the block."""
    server = make_server(explorer, 0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        explorer.stopping.set()  # a shortest-path search a request started would run on through the next tests
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


def get_json(url: str):
    with urllib.request.urlopen(url, timeout=10) as response:
        return json.load(response)


@pytest.mark.slow  # about half a second or more: the quick run stays near a CPU minute; CI runs it
def test_the_json_api_walks_to_a_state_and_back():
    named = named_configurations()["Holds"]
    with serving(Explorer(named)) as base:
        start = get_json(f"{base}/api/start")
        assert start["config"] == "Holds" and start["trace"] == []
        successors = get_json(f"{base}/api/successors/{start['initial']}")["successors"]
        create = next(s for s in successors if s["action"] == "CreatePeek(0, 0)")
        assert create["changes"][0] == {"group": "global", "variable": "df", "before": "<Unborn>", "after": "<Live>"}
        state = get_json(f"{base}/api/state/{create['id']}")
        assert all(v["holds"] for v in state["properties"].values())
        path = get_json(f"{base}/api/path/{create['id']}")["path"]
        assert path == [{"action": None, "id": start["initial"]}, {"action": "CreatePeek(0, 0)", "id": create["id"]}]
        with pytest.raises(urllib.error.HTTPError) as missing:
            get_json(f"{base}/api/state/999999")
        assert missing.value.code == 404
        with urllib.request.urlopen(f"{base}/", timeout=10) as response:
            page = response.read().decode("utf-8")
        assert "explore Holds" in page and "/api/start" in page


HOSTS = {"evil.example": False, "evil.example:{port}": False, "127.0.0.1.evil.example": False, "": False,
         "localhost:1": False, "127.0.0.1:{port}": True, "localhost:{port}": True, "LOCALHOST": True,
         "127.0.0.1": True}


@pytest.mark.slow  # about half a second or more: the quick run stays near a CPU minute; CI runs it
def test_the_explorer_answers_only_requests_naming_it():
    """Issue 32: `curl -H 'Host: evil.example' .../api/start` gave 200, so a page in the user's
    browser could read the API by DNS rebinding."""
    import http.client

    with serving(Explorer(named_configurations()["HoldsRouted"])) as base:
        port = int(base.rsplit(":", 1)[1])
        for host, answered in HOSTS.items():
            for path in ("/api/start", "/", "/api/state/0"):
                connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
                connection.putrequest("GET", path, skip_host=True)
                if host:
                    connection.putheader("Host", host.format(port=port))
                connection.endheaders()
                response = connection.getresponse()
                body = response.read()
                connection.close()
                expected = (200, b"") if answered else (403, b"is not this server")
                assert (response.status, expected[1] in body) == (expected[0], True), (host, path, body[:80])


@pytest.mark.slow  # a subprocess interrupt, with the signal tests of tests/test_signals.py
@pytest.mark.serial
def test_ctrl_c_stops_the_explorer_with_exit_0_and_no_traceback():
    process = subprocess.Popen([sys.executable, "-m", "protocol", "explore", "Holds", "--port", "0"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=ctrl_c_reaches_it)
    try:
        line = process.stdout.readline()
        port = int(re.search(r"127\.0\.0\.1:(\d+)/", line).group(1))
        assert get_json(f"http://127.0.0.1:{port}/api/start")["config"] == "Holds"
        process.send_signal(signal.SIGINT)
        _, stderr = process.communicate(timeout=20)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == 0
    assert stderr == "protocol: explorer stopped (Ctrl-C)\n"


def test_explore_shows_exactly_the_properties_of_the_configuration_it_serves():
    """`Property.where`: ImportsBacked belongs only to the re-export configurations."""
    from protocol import properties as props
    from protocol.configurations.named import lookup

    for name, has_imports in (("Holds", False), ("HoldsAlias", True)):
        explorer = Explorer(lookup(name))
        record = explorer.state_record(explorer.initial)
        assert ("ImportsBacked" in record["liveness_properties"]) is has_imports
        cfg = lookup(name).config  # exactly the declared properties that belong to it (properties.names_for)
        assert set(record["properties"]) == set(props.names_for(cfg, props.STATE)) >= {"TypeOK", "I1"}
        assert record["transition_properties"] == props.names_for(cfg, props.TRANSITION)
    cuts = Explorer(lookup("HoldsCuts"))  # section 11: PhysicalLeSince does not apply with cuts
    record = cuts.state_record(cuts.initial)
    assert {"PhysicalLeCoverage", "PhysicalLeCut"} <= set(record["properties"])
    assert "PhysicalLeSince" not in record["properties"]
    assert "PeeksServed" in record["liveness_properties"] and "CtlHoldReleased" not in record["liveness_properties"]
