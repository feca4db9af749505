"""The figures README.md and docs/ quote (protocol/apps/docs.py, `quotes()`) follow the manifest:
`docs --check` finds each quote and compares its figure with the manifest's, and
`docs --write` puts the manifest's figure in."""

from __future__ import annotations

import pytest

from helpers import cached_check
from protocol.apps import docs
from protocol.cli import main
from protocol.configurations.named import named_configurations
from protocol.apps.docs import PACKAGE_ROOT, DocsError, Quote, QuoteMissing, quoted, stored, with_quotes


def test_every_declared_quote_is_in_its_file_with_the_manifests_figures():
    for path in docs.quoting_files(PACKAGE_ROOT):
        text = path.read_text(encoding="utf-8")
        assert with_quotes(path, text, PACKAGE_ROOT) == text, path


def test_a_stale_figure_is_replaced():
    named = named_configurations()
    row = Quote("x.md", "| Holds | {states:Holds} | {depth:Holds} |", after="## Level sizes")
    table = "| Holds | 1 | 2 |\n## Level sizes\n| Holds | 1,234,567 | 9 |\n"
    assert quoted(table, row, named) == "| Holds | 1 | 2 |\n## Level sizes\n| Holds | 27,031 | 21 |\n"
    prose = Quote("x.md", "I1 in {length:HoldsRouted:I1} states, {count:all} configurations")
    assert quoted("so I1 in 9 states, eight configurations.", prose, named) == \
        f"so I1 in 6 states, {docs.number_words(len(named))} configurations."


def test_violated_by_lists_every_configuration_expected_to_violate_the_property():
    named = named_configurations()
    # Computed from the manifest, not a literal a new refutation would break (issue 56, point 3).
    rewinds = [f"`{n.name}` ({dict(n.expect)['NoRegression']})" for n in named.values()
               if "NoRegression" in dict(n.expect)]
    assert rewinds and docs.manifest_figure("violated_by", "NoRegression", named) == ", ".join(rewinds)
    lassos = [f"`{n.name}` (lasso of {dict(n.expect)['CompactionNotStalled']})" for n in named.values()
              if "CompactionNotStalled" in dict(n.expect)]
    assert lassos[:2] == ["`HoldsUnfair` (lasso of 2)", "`HoldsRoutedStanding` (lasso of 3)"]
    assert docs.manifest_figure("violated_by", "CompactionNotStalled", named) == ", ".join(lassos)
    assert docs.manifest_figure("violated_by", "TypeOK", named) == "nothing"


def test_the_count_of_configurations_at_one_process_is_derived():
    named = named_configurations()
    at_one = [n for n in named.values() if dict(n.own_constants)["P"] == 1]
    assert docs.manifest_figure("count", "P=1", named) == docs.number_words(len(at_one))


def test_a_quote_the_prose_lost_is_one_line_naming_the_file_and_the_fix():
    with pytest.raises(QuoteMissing, match=r"x.md no longer says .*: update the prose, or the quote in FIXED_QUOTES"):
        quoted("nothing here", Quote("x.md", "depth {depth:Holds}."), named_configurations())


def test_a_figure_the_prose_counts_is_derived_or_refused_in_one_line(tmp_path):
    readme = tmp_path / "README.md"
    readme.write_text("Intro.\n\nFourteen named configurations check six more properties.\n"
                      "The section 11 configurations, section-8 configurations.\n```\n3 properties\n```\n")
    assert docs.underived_figures(readme, readme.read_text(), tmp_path) == [
        "README.md:3: 'Fourteen named configurations'", "README.md:3: 'six more properties'"]
    with pytest.raises(DocsError, match=r"README.md:3: 'Fourteen named configurations' counts what no quote "
                                        r"derives: .* FIXED_QUOTES .* \(1 more\)"):
        docs.refuse_underived_figures(tmp_path, {})
    # Inside a declared quote the figure is derived: the committed prose passes.
    for path in docs.prose_files(PACKAGE_ROOT):
        assert docs.underived_figures(path, path.read_text(encoding="utf-8"), PACKAGE_ROOT) == [], path


def test_each_quote_names_a_file_of_the_checkout():
    assert all((PACKAGE_ROOT / quote.file).is_file() for quote in docs.quotes())


def test_an_unreadable_derived_file_is_one_line_exit_2(tmp_path, monkeypatch, capsys):
    binary = tmp_path / "HoldsRouted.txt"
    binary.write_bytes(b"\xff\xfe\x00")
    with pytest.raises(DocsError, match="is not UTF-8 text"):
        stored(binary)

    def unreadable(_root):
        return stored(binary)

    import protocol.cli.docs as subcommand

    monkeypatch.setattr(subcommand, "derived_files", unreadable)
    assert main(["docs", "--check"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "is not UTF-8 text" in err and "docs --write" in err


@pytest.mark.parametrize("state", ["missing", "empty"])
def test_a_missing_or_empty_derived_file_is_one_line_exit_2(tmp_path, monkeypatch, capsys, state):
    import protocol.cli.docs as subcommand

    (tmp_path / "docs").mkdir()
    (tmp_path / "protocol" / "configurations").mkdir(parents=True)
    (tmp_path / "docs" / "protocol.md").write_text(stored(PACKAGE_ROOT / "docs" / "protocol.md"))
    monkeypatch.setattr(subcommand, "find_checkout", lambda: tmp_path)
    few = [named for named in docs.refutations() if named.name == "HoldsCapReconnect"]
    monkeypatch.setattr(docs, "refutations", lambda: few)
    monkeypatch.setattr(docs, "check", cached_check)  # the files' states are the point, not the search
    assert main(["docs", "--write"]) == 0
    trace = tmp_path / "protocol" / "configurations" / "HoldsCapReconnect.txt"
    trace.unlink() if state == "missing" else trace.write_text("")
    capsys.readouterr()
    assert main(["docs", "--check"]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.count("\n") == 1
    assert f"protocol/configurations/HoldsCapReconnect.txt is {state}: regenerate it with" in captured.err


def test_a_check_output_the_prose_shows_is_regenerated_from_a_run_keeping_its_seconds():
    from helpers import checked

    result = checked("HoldsCapReconnect")
    stale = ("$ python -m protocol check HoldsCapReconnect\nHoldsCapReconnect  as expected\n"
             "│ seconds         │ 9.99                                                       │\n```\n")
    fresh = docs.with_check_outputs("```\n" + stale, {"HoldsCapReconnect": result})
    assert "│ distinct states │ 691 " in fresh and "Counterexample to I1: 7 states" in fresh
    assert "│ seconds         │ 9.99 " in fresh
    assert "queued on process 0's interactive stream\n\nlegend\n" in fresh  # the legend follows the trace
    assert fresh.endswith("a → b         the value before the step, then after it\n```\n")


def test_the_configurations_expected_to_violate_nothing_are_listed():
    named = named_configurations()
    sound = [f"`{n.name}`" for n in named.values() if not n.expect]
    assert docs.manifest_figure("names", "sound", named) == docs.and_list(sound)
    quote = Quote("x.md", "nothing, {names:sound}, satisfy")
    assert quoted("nothing, `Holds` and `HoldsX`, satisfy", quote, named) == f"nothing, {docs.and_list(sound)}, satisfy"


def test_a_property_row_names_every_configuration_that_must_violate_it_and_keeps_its_other_cells():
    named = named_configurations()
    (row,) = [quote for quote in docs.quotes() if quote.text.startswith("| NoRegression |")]
    stale = "| NoRegression | transition property | `no_regression` | `HoldsGone` (3) |\n"
    assert quoted(stale, row, named) == ("| NoRegression | transition property | `no_regression` | "
                                         "`HoldsAliasShared` (8), `HoldsPeerByReaderMeet` (8), "
                                         "`HoldsPeerMinimumMeet` (4) |\n")
    every = {prop for n in named.values() for prop in dict(n.expect)}
    assert {quote.text.split(" | ")[0][2:] for quote in docs.quotes() if "violated_by" in quote.text} == every
