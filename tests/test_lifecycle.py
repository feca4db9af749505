"""One way in, one way out (issue 24), in-process: every format and `report` take
check's options and search, only a complete run writes --output and the
message says which happened, output survives an ASCII stream and notes fit
their diagram, the explorer answers while it searches, a configuration loop
stops at the first interrupt, and SIGTERM ends a run as Ctrl-C does.

The same defects, run as a user runs them (signals, workers, encodings), are
in test_signals.py (slow)."""

from __future__ import annotations

import io
import json
import os
import pickle
import re
import signal
import threading
import time
import urllib.error
import urllib.request

import attrs
import pytest

from helpers import cli  # noqa: F401  (a fixture)

OLD = "the previous run's output\n"


# ------------------------------------------------------------------ one path from options to search


def test_check_format_html_honours_the_search_options(cli):
    """Defect 3: --format html dropped --max-states and exited 0 for a search cut short."""
    code, out, err = cli("check", "Holds", "--format", "html", "--max-states", "100")
    assert code == 3, err  # cut short
    assert "<html" in out.lower()
    assert "unknown" in out  # the verdicts the cut search could not decide


@pytest.mark.parametrize("option", ["--no-trace", "--full"])
def test_check_format_html_refuses_what_it_cannot_honour(cli, option):
    code, out, err = cli("check", "HoldsRouted", "--format", "html", option)
    assert code == 2 and out == ""
    assert len(err.splitlines()) == 1 and option in err


def test_report_takes_checks_options(cli):
    code, out, err = cli("report", "Holds", "--no-liveness")
    assert code == 0, err
    assert "CompactionNotStalled" not in out  # not checked, so not on the page
    code, out, err = cli("report", "Holds", "--max-states", "100")
    assert code == 3, err  # cut short, as check


def test_report_refuses_a_name_twice_as_check_does(cli):
    code, out, err = cli("report", "Holds", "Holds")
    assert code == 2 and "named twice" in err and out == ""


def test_a_configuration_loop_stops_at_the_first_interrupt(cli, monkeypatch):
    """Defect 4: `report` (and `check --all --format html`) went on checking after Ctrl-C."""
    import protocol.run

    checked = []
    real = protocol.run.check

    def interrupted_once(named, **options):  # what check returns when Ctrl-C cut its search
        checked.append(named.name)
        return attrs.evolve(real(named, max_states=10), interrupted=True, complete=False)

    monkeypatch.setattr(protocol.run, "check", interrupted_once)
    for argv in (["report", "HoldsRouted", "HoldsCap"], ["check", "--all", "--format", "html"],
                 ["check", "HoldsRouted", "HoldsCap"]):
        checked.clear()
        code, out, err = cli(*argv)
        assert code == 130 and len(checked) == 1, (argv, checked)  # interrupted: Ctrl-C's code
        assert "interrupted" in err and "<html" not in out


# ------------------------------------------------------------------ what an --output file receives


@pytest.mark.parametrize("cut", [["--max-states", "100"], ["--stop-on-violation"]])
def test_an_incomplete_run_leaves_an_existing_output_file_as_it_was(cli, tmp_path, cut):
    """Defect 10: --help says only a complete run replaces --output; an incomplete one did."""
    target = tmp_path / "out.txt"
    target.write_text(OLD)
    code, out, err = cli("check", "HoldsRouted", *cut, "--output", str(target))
    assert code == 3  # cut short, nothing unexpected decided
    assert target.read_text() == OLD
    assert f"--output {target} left as it was" in err
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".partial")]


def test_an_incomplete_run_creates_no_output_file(cli, tmp_path):
    target = tmp_path / "new.txt"
    code, out, err = cli("check", "HoldsRouted", "--max-states", "100", "--output", str(target))
    assert code == 3 and not target.exists()
    assert f"nothing written to --output {target}" in err


def test_the_message_tells_the_truth_about_what_itf_wrote(cli, tmp_path):
    """Defect 11: `check --all --format itf --output F` said F was left as it was, and wrote F."""
    target = tmp_path / "traces.itf"
    target.write_text(OLD)
    code, out, err = cli("check", "HoldsRouted", "HoldsCap", "Holds", "--format", "itf", "--output", str(target))
    assert target.read_text() != OLD
    assert "left as it was" not in err, err
    assert "Holds has no counterexample" in err
    target.write_text(OLD)
    code, out, err = cli("check", "Holds", "--format", "itf", "--output", str(target))
    assert target.read_text() == OLD and f"{target} left as it was" in err


# ------------------------------------------------------------------ output that survives its terminal


def test_an_ascii_stream_gets_fallbacks_not_an_encoding_error(cli, monkeypatch):
    """Defect 9: PYTHONIOENCODING=ascii crashed check mid-output on the arrow."""
    raw = io.BytesIO()
    stream = io.TextIOWrapper(raw, encoding="ascii", errors="strict", write_through=True)
    monkeypatch.setattr("sys.stdout", stream)
    from protocol.cli import main

    assert main(["check", "HoldsRouted"]) == 0
    text = raw.getvalue().decode("ascii")
    assert "I1 violated" in text and "<Unborn> > <Live>" in text


@pytest.mark.slow  # HoldsAliasShared's check takes seconds
def test_the_bench_table_fits_60_columns_without_losing_a_figure():
    """Low item: bench's footer and columns lost text at 60 columns."""
    from protocol.render.terminal import plain_text
    from protocol.render.bench import bench_table

    record = {"config": "HoldsAcquire", "constants": {"P": 2, "D": 2, "MaxTime": 2}, "mode": "symmetry+liveness",
              "complete": True, "distinct_states": 12_345_678, "reduced_states": 2_712_345,
              "transitions": 191_234_567, "seconds": 123.03, "cpu_seconds": 120.01, "peak_memory_mb": 23_456}
    machine = {"cpus": 2, "load_average_1min": 1.0, "python": "3.11"}
    text = plain_text(bench_table([record], machine, 3_000_000, width=60), 60)
    assert max(len(line) for line in text.splitlines()) <= 60, text
    for word in ("12,345,678", "(2,712,345)", "191,234,567", "123.03", "(120.0)", "23,456", "symmetry+liveness",
                 "cut: more than 3,000,000 distinct states"):
        assert word in " ".join(text.split()), (word, text)


@pytest.mark.slow  # HoldsAliasShared's check takes seconds
def test_a_note_wider_than_a_one_process_diagram_wraps_instead_of_being_cut():
    """Defect 8: HoldsAliasShared's notes started left of the diagram and ended right of it."""
    from protocol.configurations.named import lookup
    from protocol.render.narrate import story
    from protocol.run import check
    from protocol.render.svg import sequence_svg

    result = check(lookup("HoldsAliasShared"))
    trace = result.violation("I1")
    drawn = sequence_svg(trace, story(trace, result.config))
    width = int(re.search(r'width="(\d+)"', drawn).group(1))
    notes = re.findall(r'<rect class="(?:note|verdict|cycle)" x="(-?\d+)" y="\d+" width="(\d+)"', drawn)
    assert notes
    assert all(0 <= int(x) and int(x) + int(w) <= width for x, w in notes), notes
    assert "initial state: 1 process" in drawn  # the first words of the initial note are there


def test_a_label_survives_the_trip_to_a_worker_and_back():
    """Defect 2: the swarm's counterexamples came back with Label(("Publish", 0)) as their name."""
    from protocol.engine import Label

    label = Label("Publish", 1)
    back = pickle.loads(pickle.dumps(label))
    assert back == label and back.name == "Publish" and str(back) == "Publish(1)"


# ------------------------------------------------------------------ docs derive nothing from an interrupt


def test_docs_derives_no_file_from_an_interrupted_check(monkeypatch):
    """Defect 1: `docs --write` under Ctrl-C wrote golden traces without their counterexample."""
    import protocol.apps.docs
    from protocol.run import check

    def interrupted(named, **options):
        return check(named, max_states=50)  # what a check cut short returns

    monkeypatch.setattr(protocol.apps.docs, "check", interrupted)
    with pytest.raises(KeyboardInterrupt):
        protocol.apps.docs.derived_files()


# ------------------------------------------------------------------ signals


def test_sigterm_ends_a_run_as_ctrl_c_does(cli, monkeypatch):
    """Defect 5: SIGTERM killed the run with no line and no cleanup; now it is Ctrl-C's path."""
    import protocol.run

    real = protocol.run.check

    def terminated(named, **options):  # the signal arrives as the check starts
        os.kill(os.getpid(), signal.SIGTERM)
        return real(named, **options)

    monkeypatch.setattr(protocol.run, "check", terminated)
    code, out, err = cli("check", "HoldsRouted", "--json")
    assert code == 143  # 128 + SIGTERM
    assert len(err.splitlines()) == 1 and "interrupted (SIGTERM)" in err, err
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL  # handed back after the run


# ------------------------------------------------------------------ the explorer


def serving(explorer):
    from protocol.apps.explorer import make_server

    server = make_server(explorer, 0)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}"


def fetch(url: str, method: str = "GET"):
    request = urllib.request.Request(url, method=method)
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:
            return answer.status, answer.headers.get("Content-Type"), answer.read()
    except urllib.error.HTTPError as error:
        return error.code, error.headers.get("Content-Type"), error.read()


def deep_state(base: str, steps: int = 25) -> int:
    at = 0
    for step in range(steps):
        _, _, body = fetch(f"{base}/api/successors/{at}")
        successors = json.loads(body)["successors"]
        if not successors:
            break
        at = successors[(step * 7) % len(successors)]["id"]
    return at


@pytest.mark.quick
def test_the_shortest_path_search_never_holds_up_other_requests():
    """Defect 7: /api/path froze the page for 29 s at -c D=2, and grew without bound."""
    from protocol.configurations.named import lookup
    from protocol.apps.explorer import Explorer

    explorer = Explorer(lookup("Holds").with_constants({"D": 2}))
    explorer.search_limit = 10_000  # the memory bound, small for the test
    server, base = serving(explorer)
    try:
        target = deep_state(base)
        answers = []
        asking = threading.Thread(target=lambda: answers.append(fetch(f"{base}/api/path/{target}")))
        asking.start()
        time.sleep(0.2)
        started = time.perf_counter()
        status, kind, _ = fetch(f"{base}/api/state/0")
        assert status == 200 and time.perf_counter() - started < 1.0
        asking.join(30)
        status, kind, body = answers[0]
        assert kind == "application/json" and status in (200, 404, 503)
        explorer._search.join(60)
        assert len(explorer._parent) <= 10_000 + 256 * 8  # the bound, give or take one batch
        status, _, body = fetch(f"{base}/api/path/{target}")
        assert status in (200, 404)
        if status == 404:
            assert "10,000 states nearest" in json.loads(body)["error"]
    finally:
        explorer.stopping.set()
        server.shutdown()
        server.server_close()


@pytest.mark.slow  # about half a second or more: the quick run stays near a CPU minute; CI runs it
def test_every_explorer_answer_is_json():
    from protocol.configurations.named import lookup
    from protocol.apps.explorer import Explorer

    server, base = serving(Explorer(lookup("HoldsRouted")))  # one exploration for every method
    try:
        for method in ("POST", "DELETE", "PUT", "HEAD"):
            status, kind, body = fetch(f"{base}/api/state/0", method)
            assert kind == "application/json", method
            if method == "HEAD":
                assert status == 200 and body == b""
            else:
                assert status == 405 and "GET only" in json.loads(body)["error"], method
    finally:
        server.shutdown()
        server.server_close()


def test_the_explorer_shows_exactly_the_configurations_properties():
    from protocol.configurations.named import lookup
    from protocol.apps.explorer import Explorer

    plain = Explorer(lookup("HoldsRouted")).state_record(0)
    assert "ImportsBacked" not in plain["liveness_properties"]
    alias = Explorer(lookup("HoldsAliasShared")).state_record(0)
    assert "ImportsBacked" in alias["liveness_properties"]


def test_a_refutation_below_its_needs_says_why_it_is_expected_to_hold(cli):
    """Low item: HoldsCap at P=1 printed "as expected" with "holds" expected and no note."""
    code, out, err = cli("check", "HoldsCap", "-c", "P=1", "--no-trace")
    assert code == 0
    row = next(line for line in out.splitlines() if " I1 " in line)
    assert "holds (needs P>=2)" in row, out
    code, out, err = cli("check", "HoldsCap", "--no-trace")
    assert "needs" not in out


def test_a_signal_in_the_instant_before_main_s_lifecycle_is_one_line_exit_130(monkeypatch, capsys):
    """The CLI fuzzer met a SIGHUP between `main()` being called and its lifecycle beginning:
    a KeyboardInterrupt traceback. __main__ now says so in one line."""
    import protocol.__main__ as entry
    import protocol.cli

    def interrupted_at_once(*_):
        raise KeyboardInterrupt

    monkeypatch.setattr(protocol.cli, "main", interrupted_at_once)
    monkeypatch.setattr(entry, "catch_signals", lambda: None)
    monkeypatch.setattr(entry, "ignore_signals", lambda: None)
    with pytest.raises(SystemExit) as ended:
        entry.load_and_run()
    assert ended.value.code == 130  # no signal recorded: a KeyboardInterrupt is Ctrl-C's
    assert capsys.readouterr().err.count("\n") == 1
