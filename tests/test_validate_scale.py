"""`validate` at the scale of a recorded run: the lazy search on the packed engine gives the
verdicts of the previous exhaustive search (tests/reference_validate.py) on random logs; a
refusal is bounded whatever the number of candidate states; a header-only log at a large
MaxTime lists nothing per time value. Its speed is measured by `bench --validate`, not here."""

from __future__ import annotations

import json

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from helpers import cli  # noqa: F401  (a fixture)
from protocol.configurations.named import lookup
from protocol.model.state import VARIABLES
from protocol.model.next import model_for
from protocol.tools.bench import walk_log
from protocol.tools.generate import run_log
from protocol.tools.log import LogError, parse
from protocol.tools.factored import Exact, follow
from protocol.tools.validate import MAX_FITTING_STATES, SHOWN_CANDIDATES, TooAmbiguous, validate
from protocol.model.trace import Step
from reference_validate import TooAmbiguous as ReferenceTooAmbiguous, reference_verdict

# Small configurations with a violation of each kind among them: a state invariant (I1, at
# HoldsRouted), a transition property (NoRegression, HoldsAliasShared), a leads-to property
# with and without fairness (PeeksServed at HoldsSealTap, CompactionNotStalled at HoldsUnfair).
CONFIGURATIONS = ("Holds", "HoldsRouted", "HoldsUnfair", "HoldsAliasShared", "HoldsSealTap",
                  "HoldsPhysicalFromUpper", "HoldsReportOwnerFilter")


def verdict(log) -> dict:
    """The lazy search's verdict, in the reference's terms."""
    result = validate(log)
    found = {"behaviour": result.is_behaviour, "matched": result.matched, "layer_states": result.layer_states}
    if result.is_behaviour:
        found.update(violations=result.violations, possible=result.possible, final_states=result.final_states)
    else:
        found.update(line=result.mismatch.line, kind=result.mismatch.kind, states=result.mismatch.states)
    return found


# A log whose limit on writer[0] rises (shown 1, later 2): a local value past the first limit
# is within the second, so what is past must be asked again once the limits change.
A_RISING_LIMIT = "\n".join([
    '{"format": "protocol-log/1", "config": "Holds", "constants": {"P": 2, "D": 1, "MaxTime": 2}, "switches": {"compaction": "broadcast", "standing_hold": true, "cap": false, "acquire": "none", "physical": "from_since", "fairness": true, "alias": "none", "reexport": "adopt", "reconnect": false, "seal": "none", "seal_alias": "closure", "ctl_release": "cancel", "report": "sound", "floor": "adoption", "reader_bound": true, "cut_floor": "coverage", "controller": "policy", "reader_downgrade": false, "ingest": true}, "silent": ["AdvancePolicy", "MaintStep"]}',
    '{"action": "CreatePeek", "args": [0, 2]}',
    '{"observe": {"policy": 2, "sent": 2, "df": {"#map": [[0, "Live"]]}, "as_of": {"#map": [[0, 2]]}, "mq[0]": [{"tag": "Compact", "value": {"f": 2}}], "mq[1]": [{"tag": "Compact", "value": {"f": 1}}, {"tag": "Compact", "value": {"f": 2}}], "iq[0]": [{"tag": "Compact", "value": {"f": 1}}, {"tag": "Compact", "value": {"f": 2}}, {"tag": "Create", "value": {"d": 0, "t": 2}}], "iq[1]": [{"tag": "Compact", "value": {"f": 1}}, {"tag": "Compact", "value": {"f": 2}}, {"tag": "Create", "value": {"d": 0, "t": 2}}], "writer[0]": 1}}',
    '{"action": "DropPeek", "args": [0]}',
    '{"observe": {"df": {"#map": [[0, "Dropped"]]}, "iq[0]": [{"tag": "Compact", "value": {"f": 1}}, {"tag": "Compact", "value": {"f": 2}}, {"tag": "Create", "value": {"d": 0, "t": 2}}, {"tag": "Drop", "value": {"d": 0}}], "iq[1]": [{"tag": "Compact", "value": {"f": 1}}, {"tag": "Compact", "value": {"f": 2}}, {"tag": "Create", "value": {"d": 0, "t": 2}}, {"tag": "Drop", "value": {"d": 0}}]}}',
    '{"action": "Ingest", "args": []}',
    '{"observe": {"upper": 1}}',
    '{"action": "Ingest", "args": []}',
    '{"observe": {"upper": 2, "mq[0]": [], "writer[0]": 2}}',
]) + "\n"


@st.composite
def random_logs(draw) -> str:
    """A random walk of a small configuration written as a log (with or without observations,
    some actions silent), then perhaps a line dropped, two swapped, or a value changed."""
    name = draw(st.sampled_from(CONFIGURATIONS))
    cfg = lookup(name).config
    model = model_for(cfg)
    state = model.initial_states[0]
    steps = [Step(None, state)]
    for _ in range(draw(st.integers(0, 12))):
        options = model.successors(state)
        if not options:
            break
        label, state = options[draw(st.integers(0, len(options) - 1))]
        steps.append(Step(label, state))
    actions = sorted({instance.label.name for instance in model.instances})
    silent = draw(st.lists(st.sampled_from(actions), unique=True, max_size=3))
    logged = draw(st.lists(st.sampled_from(actions), unique=True, max_size=2))  # silent, yet logged
    text = run_log(name, cfg, tuple(steps), silent=[a for a in silent if a not in logged],
                   observe=draw(st.booleans()))
    lines = text.splitlines()
    header = json.loads(lines[0])
    header["silent"] = silent
    lines[0] = json.dumps(header)
    events = lines[1:]
    change = draw(st.sampled_from(["none", "drop", "swap", "perturb"]))
    if events and change == "drop":
        del events[draw(st.integers(0, len(events) - 1))]
    elif len(events) > 1 and change == "swap":
        i = draw(st.integers(0, len(events) - 2))
        events[i], events[i + 1] = events[i + 1], events[i]
    elif events and change == "perturb":
        i = draw(st.integers(0, len(events) - 1))
        event = json.loads(events[i])
        if "observe" in event:
            key = draw(st.sampled_from(sorted(event["observe"])))
            value = event["observe"][key]
            if isinstance(value, int):
                event["observe"][key] = value + draw(st.sampled_from([-1, 1]))
        elif event.get("args"):
            event["args"][-1] = event["args"][-1] + draw(st.sampled_from([-1, 1]))
        events[i] = json.dumps(event)
    return "\n".join([lines[0], *events]) + "\n"


@given(random_logs())
@example(A_RISING_LIMIT)
def test_the_lazy_search_gives_the_exhaustive_searchs_verdict(text):
    try:
        log = parse(text)
    except LogError:
        return  # a perturbed argument out of range: malformed, never followed
    try:
        expected = expected_verdict(log)
    except ReferenceTooAmbiguous:
        expected = "too ambiguous"
    try:
        found = verdict(log)
    except TooAmbiguous:
        found = "too ambiguous"
    assert found == expected


def expected_verdict(log) -> dict:
    """The reference's verdict; where the search by components decides the log, its layers
    count only the states whose rising frontiers can still meet the values the log shows next."""
    from protocol.model.next import model_for
    from protocol.tools.factored import frontiers_never_fall

    expected = reference_verdict(log)
    ahead = expected.pop("layer_states_ahead", None)
    if ahead is not None and frontiers_never_fall(log.design, model_for(log.design)) and answered_by_components(log):
        expected["layer_states"] = ahead
    return expected


def answered_by_components(log) -> bool:
    """Whether the search by components (factored.py) decided the log, without the exact one."""
    try:
        follow(log, None, MAX_FITTING_STATES)
    except (Exact, TooAmbiguous):
        return False
    return True


def test_the_reference_tells_a_wrong_verdict_apart():
    """The comparison can fail: the reference sees the I1 violation of a HoldsRouted run, and
    the refusal of the same run held against Holds."""
    from helpers import checked

    trace = checked("HoldsRouted").violation("I1")
    text = run_log("HoldsRouted", lookup("HoldsRouted").config, trace.steps)
    routed = expected_verdict(parse(text))
    assert routed["behaviour"] and "I1" in routed["violations"]
    assert verdict(parse(text)) == routed
    against = parse(text, "Holds")
    assert not expected_verdict(against)["behaviour"]
    assert verdict(against) == expected_verdict(against)


# ------------------------------------------------------------ refusals are bounded


def ambiguous_refused_log() -> str:
    """A log where every action but the controller's is silent, refused by its last line: thousands
    of states fit just before it."""
    cfg = lookup("Holds").config.evolve(P=2, D=3, MaxTime=6)
    silent = ["Ingest", "MaintStep", "InterStep", "Publish"]
    header = {"format": "protocol-log/1", "config": "Holds", "constants": cfg.constants, "silent": silent}
    events = [{"action": "CreatePeek", "args": [0, 0]}, {"action": "CreatePeek", "args": [1, 0]},
              {"action": "AdvancePolicy"}, {"action": "AdvancePolicy"}, {"action": "DropPeek", "args": [0]},
              {"observe": {"policy": 0}}]
    return "\n".join(json.dumps(line) for line in [header, *events]) + "\n"


def test_a_refusal_counts_the_candidates_and_shows_a_few(cli, tmp_path):
    path = tmp_path / "refused.jsonl"
    path.write_text(ambiguous_refused_log())
    result = validate(parse(path.read_text()))
    assert not result.is_behaviour
    count = result.mismatch.states
    assert count > 30 * SHOWN_CANDIDATES  # the previous refusal printed each of them, with what is enabled there
    assert len(result.mismatch.candidates) == SHOWN_CANDIDATES
    assert all(differences == (("policy", "0"),) for differences in result.mismatch.differences)
    code, out, _ = cli("validate", str(path))
    assert code == 1
    assert f"The {count:,} states the model could be in just before line 7; the 3 nearest" in out
    assert "policy = 2, observed 0" in out
    assert len(out.splitlines()) < 200  # a few states and what is enabled there, not thousands
    code, out, _ = cli("validate", str(path), "--json")
    assert json.loads(out)["mismatch"]["states"] == count


def test_a_step_refusal_shows_a_few_states_and_counts_them(cli, tmp_path):
    text = ambiguous_refused_log().replace('{"observe": {"policy": 0}}', '{"action": "DropPeek", "args": [2]}')
    result = validate(parse(text))
    assert result.mismatch.kind == "step" and result.mismatch.states > SHOWN_CANDIDATES
    assert len(result.mismatch.candidates) == SHOWN_CANDIDATES
    assert f"any of the {result.mismatch.states:,} states" in result.mismatch.reason


# ------------------------------------------------------------ the header's constants cost nothing


@pytest.mark.parametrize("max_time", [20_000, 1_000_000])
def test_a_header_only_log_at_a_large_max_time_is_a_behaviour(max_time):
    header = {"format": "protocol-log/1", "config": "Holds", "constants": {"P": 2, "D": 1, "MaxTime": max_time}}
    log = parse(json.dumps(header) + "\n")
    result = validate(log)
    assert result.is_behaviour and result.final_states == 1 and not result.violations


def test_only_the_instances_the_log_names_are_listed():
    from protocol.tools.validate import Follower

    log = parse(walk_log("Holds", {"P": 2, "D": 4, "MaxTime": 50}, 30, 1, ["Publish", "Ingest"]))
    named = {event.label for event in log.events if hasattr(event, "label")}
    follower = Follower(log.design, log.silent, named)
    listed = {instance.label for instance in follower.instances}
    assert listed == named | {label for label in listed if label.name in ("Publish", "Ingest")}
    assert len(listed) < len(model_for(log.design).instances) / 4


@pytest.mark.slow  # about half a second or more: the quick run stays near a CPU minute; CI runs it
def test_a_walk_written_as_a_log_validates_with_its_silent_actions():
    from protocol.tools.factored import follow

    text = walk_log("Holds", {"P": 2, "D": 4, "MaxTime": 20}, 60, 3, ["Publish", "Ingest", "MaintStep"])
    expected = reference_verdict(parse(text))
    assert expected["behaviour"]
    decided = follow(parse(text))  # by components alone: the exact search is not asked
    assert (decided.is_behaviour, decided.violations, decided.possible, decided.final_states, decided.layer_states) \
        == (True, expected["violations"], expected["possible"], expected["final_states"], expected["layer_states_ahead"])
    assert max(decided.layer_states) > 10  # products of per-process sets, not one state
    # the lookahead dropped what could not meet the next upper shown: fewer states, same verdict
    assert sum(expected["layer_states_ahead"]) < sum(expected["layer_states"])


def test_where_a_property_may_fail_the_exact_search_decides():
    from helpers import checked
    from protocol.tools.factored import Exact, follow

    trace = checked("HoldsRouted").violation("I1")
    log = parse(run_log("HoldsRouted", lookup("HoldsRouted").config, trace.steps))
    with pytest.raises(Exact):
        follow(log)
    assert "I1" in validate(log).violations


def test_a_family_judged_by_its_form_agrees_with_its_pairs():
    """CompactionNotStalled's pairs pending in a state, by the family's values, are those whose
    premise holds and conclusion does not, each pair evaluated (on the states of a walk)."""
    from protocol.properties.leads_to import compaction_thresholds
    from protocol.tools.bench import walk

    cfg = lookup("Holds").with_constants({"P": 2, "D": 3, "MaxTime": 6}).config
    family = compaction_thresholds(cfg)
    pairs = family.pairs()
    assert len(pairs) == cfg.P * cfg.MaxTime
    seen = set()
    for step in walk(cfg, 120, 2):
        s = step.state
        listed = {i for i, pair in enumerate(pairs) if pair.premise(s) and not pair.conclusion(s)}
        by_form = {family.index(p, t) for p in range(cfg.P)
                   for t in family.pending_times(family.premise_value(s), family.conclusion_value(s, p))}
        assert by_form == listed
        seen.add(bool(listed))
    assert seen == {True, False}  # some states leave pairs pending, some none


def test_the_bench_gives_each_length_ladders_cost_per_line_against_its_first_run():
    from protocol.render.bench import linearity_text

    def run(case, silent, lines, cpu):
        return {"case": case, "silent": silent, "lines": lines, "cpu_seconds": cpu, "states": lines}

    records = [run("1x length", ["Publish"], 1_000, 2.0), run("2x length", ["Publish"], 2_000, 4.4),
               run("4x length", ["Publish"], 4_000, 6.0), run("1x length", ["MaintStep"], 1_000, 1.0),
               run("silent none", [], 1_000, 0.2)]
    said = linearity_text(records)
    assert said.startswith(" CPU per line against the 1x run (1.00 is proportional to the log's length)")
    # the line through (1000, 2.0), (2000, 4.4), (4000, 6.0) by least squares: 1.2 s + 1.257 ms per
    # line, which puts the 1x run at 2.457 s, 23% over it: a ladder that is not linear within a fifth
    assert said.endswith("Publish silent: 2x 1.10, 4x 0.75, a line 1.20 s + 1.257 ms per line, "
                         "every run within 23% of it.")


def test_the_bench_says_what_each_run_of_a_ladder_leaves_open_at_its_end():
    """Where the runs were measured with what their ends leave open, the ladder says it: the
    open end is what costs the shorter runs more per line."""
    from protocol.cli.bench import validate_line
    from protocol.render.bench import linearity_text

    def run(case, lines, cpu, open_at_end):
        return {"case": case, "silent": ["Ingest"], "lines": lines, "cpu_seconds": cpu, "states": lines,
                "open_at_end": open_at_end, "config": "Holds", "constants": {"P": 2}, "verdict": "a behaviour",
                "seconds": cpu, "peak_memory_mb": 30}

    records = [run("1x length", 1_000, 2.0, {"upper": 150}), run("2x length", 2_000, 3.0, {"upper": 100, "since[1]": 2}),
               run("4x length", 4_000, 5.0, {})]
    assert linearity_text(records).endswith(
        "Ingest silent: 2x 0.75, 4x 0.62 (open at the end: 1x upper 150; 2x upper 100, since[1] 2; 4x nothing), "
        "a line 1.00 s + 1.000 ms per line, every run within 0% of it.")
    assert "open at the end: upper 150," in validate_line(records[0])
    assert "open at the end" not in validate_line(records[2])
    records[1]["open_at_end"] = None  # too ambiguous to follow: nothing is said of the ends
    assert "open at the end" not in linearity_text(records)


# ------------------------------------------------------------ the progress line


class Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


class Stream:
    def __init__(self, terminal: bool):
        self.terminal, self.text = terminal, ""

    def isatty(self) -> bool:
        return self.terminal

    def write(self, text: str) -> None:
        self.text += text

    def flush(self) -> None:
        pass


@pytest.mark.parametrize("terminal", [True, False])
def test_the_progress_line_waits_then_shows_and_is_cleared_on_a_terminal(terminal):
    from protocol.render.validate import Progress

    clock, stream = Clock(), Stream(terminal)
    with Progress("run.jsonl", stream, clock) as progress:
        progress.update(1, 1_000, 7)
        assert stream.text == ""  # a short run prints nothing
        clock.now = 6.0
        progress.update(500, 1_000, 4_723)
        assert "event 500 of 1,000, 4,723 states fit" in stream.text
        shown = stream.text
        clock.now = 6.1
        progress.update(501, 1_000, 4_723)
        assert stream.text == shown  # not on every event
    assert stream.text.endswith("\r\x1b[K") == terminal  # the terminal's line is cleared; a pipe keeps its lines
    assert ("\r" in stream.text) == terminal


# ------------------------------------------------------------ the lookahead rests on NoRegression


def test_a_configuration_known_to_lower_a_frontier_is_followed_without_the_lookahead():
    from protocol.model.next import model_for
    from protocol.tools.factored import frontiers_never_fall

    for name, expected in (("Holds", True), ("HoldsRouted", True), ("HoldsAliasShared", False)):
        cfg = lookup(name).config.evolve(P=2)
        assert frontiers_never_fall(cfg, model_for(cfg)) is expected, name


@pytest.mark.slow  # explores HoldsAliasShared to its NoRegression violation: most of a second
def test_a_step_that_lowers_a_frontier_sends_the_log_to_the_exact_search(monkeypatch):
    """With the lookahead forced on where a writer falls (HoldsAliasShared), the fall is caught on
    the step taken, and the exact search reports NoRegression."""
    from helpers import checked
    from protocol.tools import factored

    monkeypatch.setattr(factored, "frontiers_never_fall", lambda cfg, model: True)
    named = lookup("HoldsAliasShared").with_constants({"MaxTime": 2})
    trace = checked("HoldsAliasShared", max_states=12_000, MaxTime=2).violation("NoRegression")  # depth 8
    log = parse(run_log("HoldsAliasShared", named.config, trace.steps, observe=False))
    with pytest.raises(factored.Exact, match="lowered a rising frontier"):
        follow(log)
    assert "NoRegression" in validate(log).violations


def test_the_bench_keeps_the_least_of_a_few_runs_of_a_short_validation_and_one_of_a_long_one():
    from protocol.tools.bench import REPEAT_UNDER, VALIDATE_REPEATS, measure_validate_least

    def measured(seconds: list):
        taken = iter(seconds)
        return lambda request, timeout: {**request, "cpu_seconds": next(taken)}

    short = measure_validate_least({"case": "1x"}, measure=measured([0.9, 0.6, 0.7]))
    assert (short["cpu_seconds"], short["runs"]) == (0.6, VALIDATE_REPEATS)
    long = measure_validate_least({"case": "1x"}, measure=measured([REPEAT_UNDER + 1]))
    assert (long["cpu_seconds"], long["runs"]) == (REPEAT_UNDER + 1, 1)
    failed = measure_validate_least({"case": "1x"}, measure=lambda request, timeout: {**request, "error": "no"})
    assert (failed["error"], failed["runs"]) == ("no", 1)


def test_a_by_pair_invariant_is_judged_once_per_value_of_the_globals_it_reads_and_a_wrong_declaration_is_one_line(
        monkeypatch):
    import attrs

    from protocol import properties as props
    from protocol.engine import ModelError

    text = walk_log("Holds", {"P": 2, "D": 4, "MaxTime": 12}, 200, 1, ("Publish", "Ingest"))
    assert validate(parse(text)).is_behaviour  # SinceAllowed judged per value of sent (its declared reads)
    wrong = tuple(attrs.evolve(prop, pair_reads=("upper",)) if prop.name == "SinceAllowed" else prop
                  for prop in props.PROPERTIES)
    monkeypatch.setattr(props, "PROPERTIES", wrong)
    with pytest.raises(ModelError, match=r"^SinceAllowed reads the global sent outside the globals it declares: "
                                         r"add 'sent' to its pair_reads$"):
        follow(parse(text))


@pytest.mark.parametrize("pair_reads, words", [({"SinceAllowed": ("sant",)}, "'sant' is not a global variable"),
                                               ({"TypeOK": ("sent",)}, "it is not by_pair")])
def test_a_declaration_of_a_by_pair_invariant_s_reads_that_cannot_hold_is_refused_when_the_model_is_built(
        pair_reads, words):
    import attrs

    from protocol.engine import ModelError

    model = model_for(lookup("Holds").config)
    with pytest.raises(ModelError, match=words):
        attrs.evolve(model, pair_reads=pair_reads)


def test_a_snapshot_at_the_end_bounds_the_events_after_the_last_upper_a_log_shows():
    """With Ingest silent, each event after the last `upper` a log shows holds every value of
    upper up to MaxTime; a last line observing every variable bounds them by the upper it
    shows (NoRegression), and changes nothing of what the log's end leaves open."""
    constants, silent = {"P": 2, "D": 4, "MaxTime": 20}, ["Publish", "Ingest"]
    plain = validate(parse(walk_log("Holds", constants, 60, 2, silent)))
    text = walk_log("Holds", constants, 60, 2, silent, snapshot=True)
    ended = validate(parse(text))
    cfg = lookup("Holds").with_constants(constants).config
    last = json.loads(text.splitlines()[-1])["observe"]
    assert set(last) == {variable.name for variable in VARIABLES if variable.where(cfg)}
    assert plain.is_behaviour and ended.is_behaviour
    tail = [(a, b) for a, b in zip(plain.layer_states, ended.layer_states)]
    assert all(b <= a for a, b in tail) and any(b < a for a, b in tail), tail
    assert ended.layer_states[-1] == plain.layer_states[-1] and ended.open_at_end == plain.open_at_end


def test_the_bench_keeps_the_snapshot_ladder_apart_from_the_plain_one():
    from protocol.render.bench import linearity_text
    from protocol.tools.bench import validate_requests

    requests = [request for request in validate_requests() if "x length" in request["case"]]
    ladders = {request["ladder"] for request in requests}
    assert "Publish+Ingest silent" in ladders and "Publish+Ingest silent, ending with a snapshot" in ladders
    assert all(request["snapshot"] == request["ladder"].endswith("snapshot") for request in requests)

    def run(case, ladder, lines, cpu):
        return {"case": case, "silent": ["Ingest"], "ladder": ladder, "lines": lines, "cpu_seconds": cpu, "states": lines}

    records = [run("1x length", "Ingest silent", 1_000, 2.0), run("2x length", "Ingest silent", 2_000, 3.0),
               run("1x length, snapshot", "Ingest silent, ending with a snapshot", 1_000, 1.0),
               run("2x length, snapshot", "Ingest silent, ending with a snapshot", 2_000, 2.1)]
    assert linearity_text(records).endswith("Ingest silent: 2x 0.75; Ingest silent, ending with a snapshot: 2x 1.05.")
