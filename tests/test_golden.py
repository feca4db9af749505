"""Golden traces: each refutation's shortest counterexample is kept under refutations/ as text.

A failure here means a counterexample changed. If the change is intended,
regenerate with `python -m protocol docs --write` and review the diff.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from helpers import checked
from protocol.configurations import golden
from protocol.configurations.golden import GOLDEN_WIDTH, REGENERATE, golden_path, golden_text
from protocol.configurations.named import named_configurations


def refutation_names() -> list[str]:
    """The named configurations expected to violate a property, in the spec's order."""
    from protocol.configurations.named import named_configurations

    return [name for name, named in named_configurations().items() if named.violates]


def stored_text(name: str) -> str | None:
    path = golden_path(name)
    return path.read_text(encoding="utf-8") if path.exists() else None


REFUTATIONS = refutation_names()


@pytest.mark.parametrize("name", REFUTATIONS)
def test_the_counterexample_is_the_golden_one(name):
    stored = stored_text(name)
    assert stored is not None, f"{golden_path(name)} is missing: run `{REGENERATE}`"
    actual = golden_text(name, checked(name))
    assert actual == stored, golden.difference(name, stored, actual) + f"\nIf intended: `{REGENERATE}`"


@pytest.mark.parametrize("name", REFUTATIONS)
def test_a_golden_file_is_plain_fixed_width_text(name):
    stored = golden_path(name).read_text(encoding="utf-8")
    assert "\x1b" not in stored
    lines = stored.splitlines()
    assert max(map(len, lines)) <= GOLDEN_WIDTH
    assert all(line == line.rstrip() for line in lines)
    assert lines[0].startswith("Counterexample to ")


def test_every_refutation_is_covered_and_no_stale_file_is_left():
    stored = {path.stem for path in golden_path("x").parent.glob("*.txt")}
    assert stored == set(REFUTATIONS)


DETERMINISM_SCRIPT = """
import json
from protocol.configurations.named import lookup
from protocol.render.export import trace_itf
from protocol.configurations.golden import golden_text
from protocol.configurations.named import named_configurations
from protocol.run import check
for name in [name for name, named in named_configurations().items() if named.violates]:
    named = lookup(name)
    result = check(named)
    print(golden_text(name, result))
    print(json.dumps(trace_itf(result.violation(named.violates), source=name)))
"""


def both_seeds(*seeds: str) -> list[str]:
    """What DETERMINISM_SCRIPT prints under each hash seed, the runs side by side."""
    runs = [subprocess.Popen([sys.executable, "-c", DETERMINISM_SCRIPT], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, env=dict(os.environ, PYTHONHASHSEED=seed))
            for seed in seeds]
    outputs = []
    for run in runs:
        out, err = run.communicate(timeout=300)
        assert run.returncode == 0, err
        outputs.append(out)
    return outputs


@pytest.mark.slow
def test_the_chosen_traces_are_the_same_across_hash_seeds():
    first, second = both_seeds("0", "4242")
    assert first == second
    for name in REFUTATIONS:  # and they are the stored ones
        assert golden_path(name).read_text(encoding="utf-8") in first


# ------------------------------------------------------------- the command


@pytest.mark.slow
def test_docs_check_shows_a_diff_and_fails_when_a_trace_changed(tmp_path, monkeypatch, capsys):
    import protocol.apps.docs as docs
    import protocol.cli.docs as docs_command
    from protocol.cli import main

    # A checkout of its own in tmp_path, so that nothing here writes the real docs/ (other
    # tests read them, on another core under -n 2), with two refutations: enough to show
    # the diff, where every one would be checked four times.
    (tmp_path / "docs").mkdir()
    (tmp_path / "protocol" / "configurations").mkdir(parents=True)
    (tmp_path / "docs" / "protocol.md").write_text(docs.stored(docs.PACKAGE_ROOT / "docs" / "protocol.md"))
    monkeypatch.setattr(docs_command, "find_checkout", lambda: tmp_path)
    few = [named for named in docs.refutations() if named.name in ("HoldsCap", "HoldsRouted")]
    monkeypatch.setattr(docs, "refutations", lambda: few)
    trace = tmp_path / "protocol" / "configurations" / "HoldsCap.txt"
    assert main(["docs", "--write"]) == 0
    trace.write_text("Counterexample to I1: 6 states\n")
    assert main(["docs", "--check"]) == 1
    captured = capsys.readouterr()
    assert "-Counterexample to I1: 6 states" in captured.out
    assert "+Counterexample to I1: 7 states" in captured.out
    assert REGENERATE in captured.err
    assert main(["docs", "--write"]) == 0
    assert trace.read_text() == golden_text("HoldsCap")
    assert main(["docs", "--check"]) == 0
    # A golden trace no configuration derives (a rename left it) is stale too, and --write removes it.
    orphan = trace.with_name("HoldsCapOld.txt")
    orphan.write_text(golden_text("HoldsCap"))
    capsys.readouterr()
    assert main(["docs", "--check"]) == 1
    assert "protocol/configurations/HoldsCapOld.txt is no configuration's golden trace" in capsys.readouterr().err
    assert main(["docs", "--write"]) == 0 and not orphan.exists()
    assert main(["docs", "--check"]) == 0


def test_the_traces_have_the_pinned_lengths():
    from protocol.configurations.named import lookup

    for name in REFUTATIONS:
        title = golden_path(name).read_text(encoding="utf-8").splitlines()[0]
        assert title.endswith(f": {lookup(name).length} states"), (name, title)
