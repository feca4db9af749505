"""Multiword keys: where the component ids need more bits than one machine word, the
vector engine keys a state by two or three words (never a hash) and explores as the
packed engine does, with the same ids, parents, edges, cuts, counterexamples and
liveness verdicts. The word is narrowed here (WORD) so that small models need
several; the slow run checks one real configuration past 64 bits."""

import json

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import protocol.engine.vector.search as vector_module
from protocol.configurations.named import named_configurations
from protocol.engine.vector.search import KeyLayout, WideKeys, WideLayout
from protocol.run import explore_config
from test_vector import assert_same_exploration, assert_same_liveness, assert_same_reduced_exploration

HOLDS_CAP = named_configurations()["HoldsCap"].config


@pytest.fixture
def word(monkeypatch):
    """Narrow the bits a key word holds (and optionally the most words a key takes)."""

    def narrow(bits: int, words: int = vector_module.WORDS) -> None:
        monkeypatch.setattr(vector_module, "WORD", bits)
        monkeypatch.setattr(vector_module, "WORDS", words)

    return narrow


@pytest.fixture
def sorts(monkeypatch):
    """Record how each level's multiword keys were sorted: "ranked" (two words as one, the
    first word's rank above the second's ids), else byte-wise with the positions "inside"
    the last word's free bits or in a "word" added for them."""
    how = []
    real_ranked, real_first_occurrences = WideLayout.ranked, WideLayout.first_occurrences

    def first_occurrences(self, keys, positions, record_edges):
        how.append("inside" if max(len(keys) - 1, 1).bit_length() <= self.room else "word")
        return real_first_occurrences(self, keys, positions, record_edges)

    def ranked(self, *args):
        found = real_ranked(self, *args)
        if found is not None:
            how[-1] = "ranked"
        return found

    monkeypatch.setattr(WideLayout, "first_occurrences", first_occurrences)
    monkeypatch.setattr(WideLayout, "ranked", ranked)
    return how


@pytest.mark.parametrize("bits, words, rank, how", [
    (16, 2, True, {"ranked"}),
    pytest.param(16, 2, False, {"inside", "word"}, marks=pytest.mark.slow),
    pytest.param(12, 3, True, {"ranked", "word"}, marks=pytest.mark.slow)])
def test_multiword_keys_explore_as_the_packed_engine(word, sorts, monkeypatch, bits, words, rank, how):
    # HoldsCap's ids need 23 bits: two 16-bit words, or (past the early levels' two) three
    # 12-bit ones. Two words sort ranked where rank, ids and positions fit one word (here
    # always, unless refused); else, and three, byte-wise, the small levels' positions in
    # the last word's free bits, the larger ones' in a word added
    word(bits)
    if not rank:
        monkeypatch.setattr(WideLayout, "ranked", lambda self, *args: None)
    packed, vector = assert_same_exploration(HOLDS_CAP)
    assert vector.engine_choice == {"name": "vector"}
    assert vector.levels[-1].layout.words == words and vector.distinct_states == 6907
    assert len(vector.counterexample("I1")) == 7
    assert_same_liveness(HOLDS_CAP, packed, vector)
    assert set(sorts) == how


@pytest.mark.slow
@pytest.mark.parametrize("options", [{"max_states": 1000}, {"max_states": 6906}, {"stop_on_violation": True}])
def test_multiword_keys_cut_where_the_packed_engine_does(word, monkeypatch, options):
    word(14)  # two words, then three as the ids grow: the keys seen are re-keyed between them
    monkeypatch.setattr(vector_module, "SLICE", 112)  # slices of 28 states (two words), 7 (three), re-keyed within a level
    packed, vector = assert_same_exploration(HOLDS_CAP, **options)
    assert vector.levels[-1].layout.words >= 2
    assert vector.distinct_states == min(options.get("max_states", 6907), packed.distinct_states)


def test_multiword_keys_under_symmetry(word):
    word(8)
    packed, vector = assert_same_reduced_exploration(named_configurations()["HoldsRouted"].config)
    assert vector.levels[-1].layout.words == 3
    assert len(vector.counterexample("I1")) == 6


def test_check_json_says_why_keys_past_the_widest_layout_went_to_the_packed_engine(word, capsys):
    # at most one 12-bit word: HoldsCap outgrows it during the search (tests/test_vector.py
    # has the same fallback through explore_config)
    from protocol.cli import main

    word(12, words=1)
    code = main(["check", "HoldsCap", "--no-liveness", "--json"])
    engine = json.loads(capsys.readouterr().out)["engine"]
    assert code == 0 and engine["name"] == "packed" and "at most 1 words of 12 bits" in engine["why"]
    word(12, words=3)  # three words hold it (no id split between two)
    code = main(["check", "HoldsCap", "--no-liveness", "--json"])
    assert code == 0 and json.loads(capsys.readouterr().out)["engine"] == {"name": "vector"}


# ------------------------------------------------------------ the layout itself


def test_65_to_192_bits_take_two_or_three_words_past_that_refused():
    assert KeyLayout.of(3, 19, 15).words == 1  # 64 bits
    assert KeyLayout.of(3, 20, 15).words == 2  # 65
    assert KeyLayout.of(4, 30, 30).words == 3  # 150: 30+30 | 30+30 | 30
    with pytest.raises(WideKeys, match="at most 3 words of 64 bits"):
        KeyLayout.of(4, 40, 38)  # 192 bits, but no id may straddle two words: four
    with pytest.raises(WideKeys):
        KeyLayout.of(1, 65, 1)  # one id wider than a word


@st.composite
def ids_under(draw):
    P = draw(st.integers(1, 4))
    global_bits, local_bits = draw(st.integers(1, 40)), draw(st.integers(1, 40))
    n = draw(st.integers(1, 30))
    G = draw(st.lists(st.integers(0, (1 << global_bits) - 1), min_size=n, max_size=n))
    L = [draw(st.lists(st.integers(0, (1 << local_bits) - 1), min_size=n, max_size=n)) for _ in range(P)]
    return P, global_bits, local_bits, G, L


@settings(max_examples=25)
@given(ids_under())
def test_a_multiword_key_is_exact_and_ordered_as_its_ids(drawn):
    P, global_bits, local_bits, G, L = drawn
    try:
        layout = KeyLayout.of(P, global_bits, local_bits)
    except WideKeys:
        return
    keys = layout.encode(np.array(G, dtype=np.int64), [np.array(column, dtype=np.int64) for column in L])
    back_G, back_L = layout.decode(keys)
    assert back_G.tolist() == G and [column.tolist() for column in back_L] == L
    assert [layout.ids(key) for key in keys] == [(g, [column[i] for column in L]) for i, g in enumerate(G)]
    # the keys sort as the ids do, lexicographically: the globals, then process P-1 .. 0
    as_ids = [(g, *[column[i] for column in reversed(L)]) for i, g in enumerate(G)]
    assert [as_ids[i] for i in np.argsort(keys, kind="stable")] == sorted(as_ids)
    # and re-keyed into a wider layout, sorted keys stay sorted
    try:
        wider = KeyLayout.of(P, global_bits + 3, local_bits + 5)
    except WideKeys:
        wider = layout
    rekeyed = layout.rekey(np.sort(keys), wider)
    assert (np.sort(rekeyed) == rekeyed).all()


# ------------------------------------------------------------ a real one


@pytest.mark.slow
def test_a_configuration_past_64_bits_explores_as_the_packed_engine():
    # HoldsAliasShared at four processes needs 65 bits after about half a million states
    cfg = named_configurations()["HoldsAliasShared"].config.evolve(P=4)
    packed = explore_config(cfg, engine="packed", max_states=700_000)
    vector = explore_config(cfg, max_states=700_000)
    assert vector.engine_choice == {"name": "vector"}
    assert vector.levels[-1].layout.words == 2 and vector.levels[-1].layout.bits > 64
    assert (vector.distinct_states, vector.transitions, vector.depth) == (
        packed.distinct_states, packed.transitions, packed.depth)
    assert np.array_equal(vector.parent, np.asarray(packed.parent))
    assert vector.via == packed.via
    last = vector.levels[-1]
    sample = list(range(0, vector.distinct_states, 4999)) + list(range(last.offset, last.offset + 2000))
    assert [vector.state(i) for i in sample] == [packed.state(i) for i in sample]
    assert vector.violations.keys() == packed.violations.keys() and vector.violations
    for name in packed.violations:
        assert vector.counterexample(name) == packed.counterexample(name)
