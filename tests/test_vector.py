"""The vector engine against the packed one: the same ids, parents, labels, edges,
counts, depth, first violations, counterexamples and liveness verdicts and
lassos, on the named configurations, on a pairwise (quick) and a complete
(slow) covering of the switches (tests/test_sweep.py), and where --max-states and
--stop-on-violation cut the search; the vector liveness against liveness.py
on random graphs; and the key layout's exactness."""

import numpy as np
import pytest
from hypothesis import given, strategies as st

from helpers import cli, switch_values  # noqa: F401  (cli: a fixture)
from protocol.model.config import ConfigError
from protocol.configurations.named import named_configurations
from protocol.engine import liveness
from protocol.engine.vector.search import KeyLayout, WideKeys, merge_into, vector_refusal
from protocol.engine.vector.liveness import VectorGraph
from protocol.model.next import model_for
from protocol.run import explore_config, liveness_verdicts

NAMES = list(named_configurations())
QUICK_NAMES = ["HoldsRouted", "HoldsCap", "HoldsCapReconnect"]
SLOW = pytest.mark.slow


def explore_both(cfg, **options):
    """The packed and the vector exploration; where the vector engine does not apply (no
    named configuration today), the default's, which must be the packed one saying why."""
    packed = explore_config(cfg, engine="packed", record_edges=True, **options)
    return packed, explore_vector(cfg, packed, **options)


def explore_vector(cfg, packed, **options):
    """The vector exploration beside `packed` (or the default's, where it does not apply)."""
    if vector_refusal(model_for(cfg)) is not None:
        default = explore_config(cfg, record_edges=True, **options)
        assert default.engine_choice == {"name": "packed", "why": vector_refusal(model_for(cfg))}
        return default
    vector = explore_config(cfg, engine="vector", record_edges=True, **options)
    assert (packed.engine_choice, vector.engine_choice) == ({"name": "packed"}, {"name": "vector"})
    return vector


def assert_same_exploration(cfg, **options):
    return assert_same_runs(*explore_both(cfg, **options))


def assert_same_runs(packed, vector, packed_states: list | None = None):
    """The vector run is exactly the packed one: ids, parents, labels, edges, counts,
    first violations and counterexamples. `packed_states`: the packed run's states in id
    order, where a comparison has decoded them already (tests/test_sweep.py)."""
    assert vector.distinct_states == packed.distinct_states
    assert (vector.transitions, vector.depth, vector.complete) == (packed.transitions, packed.depth, packed.complete)
    assert vector.expanded == packed.expanded
    assert list(vector.parent) == list(packed.parent)
    assert vector.via == packed.via
    if packed_states is None:
        packed_states = [packed.state(i) for i in range(packed.distinct_states)]
    assert [vector.state(i) for i in range(vector.distinct_states)] == packed_states
    assert list(vector.edge_src) == list(packed.edge_src)
    assert list(vector.edge_dst) == list(packed.edge_dst)
    assert [vector.labels[i] for i in vector.edge_label] == [packed.labels[i] for i in packed.edge_label]
    assert vector.violations.keys() == packed.violations.keys()
    for name in packed.violations:
        assert vector.counterexample(name) == packed.counterexample(name)
    return packed, vector


def assert_same_liveness(cfg, packed, vector):
    for fairness in switch_values()["fairness"]:
        model = model_for(cfg.evolve(fairness=fairness))
        expected = liveness_verdicts(packed, model)
        assert liveness_verdicts(vector, model) == expected  # verdicts and lassos, note for note
        assert all(verdict.holds is not None for verdict in expected.values())


@pytest.mark.parametrize("name", [n if n in QUICK_NAMES else pytest.param(n, marks=SLOW) for n in NAMES])
def test_same_exploration_and_liveness_at_the_configurations_constants(name):
    cfg = named_configurations()[name].config
    assert_same_liveness(cfg, *assert_same_exploration(cfg))


# The pairwise (quick) and complete (slow) switch sweeps compare the vector engine with
# the packed one in tests/test_sweep.py, on the packed exploration it compares with the
# readable model.


@SLOW
@pytest.mark.parametrize("name, max_time", [("Holds", 1), ("HoldsCap", 1), ("HoldsSeal", 1), ("HoldsAliasShared", 0)])
def test_same_exploration_with_three_processes(name, max_time):
    # HoldsAliasShared at MaxTime=1 has 1,991,707 states at three processes, and the packed
    # engine took 84 s of CI's time on them: its three processes' aliases are compared at 0.
    assert_same_exploration(named_configurations()[name].config.evolve(P=3, D=1, MaxTime=max_time))


@pytest.mark.parametrize("max_states", [1, 2, 3, 50, 1000, pytest.param(6906, marks=SLOW), 6907])
def test_max_states_cuts_where_the_packed_engine_does(max_states):
    # HoldsCap has 6,907 states: the bound falls inside a level (in the last one: slow), at
    # its last state; past the end is the whole search, compared at the configuration's constants
    packed, vector = assert_same_exploration(named_configurations()["HoldsCap"].config, max_states=max_states)
    assert vector.distinct_states == min(max_states, 6907)
    assert vector.complete is (max_states > 6907)


@pytest.mark.parametrize("name", ["HoldsRouted", "HoldsCap", "HoldsCapReconnect"])
def test_stop_on_violation_stops_where_the_packed_engine_does(name):
    packed, vector = assert_same_exploration(named_configurations()[name].config, stop_on_violation=True)
    assert vector.violations and not vector.complete


@pytest.mark.slow  # about half a second or more: the quick run stays near a CPU minute; CI runs it
def test_a_transition_property_violation_and_its_trace():
    # HoldsAliasShared breaks NoRegression (a transition property) in 8 states, I1 in 7
    cfg = named_configurations()["HoldsAliasShared"].config
    packed, vector = assert_same_exploration(cfg, stop_on_violation=True, max_states=30_000)
    assert len(vector.counterexample("I1")) == 7
    # the first seven levels hold 11,475 states: NoRegression's step ends in the last of them
    vector = explore_config(cfg, engine="vector", max_states=12_000)
    assert len(vector.counterexample("NoRegression")) == 8


def test_the_vector_engine_finds_the_routed_refutation_at_its_length():
    run = explore_config(named_configurations()["HoldsRouted"].config, engine="vector")
    assert run.engine_choice == {"name": "vector"}
    assert set(run.violations) == {"I1"}
    assert len(run.counterexample("I1")) == 6


def test_the_default_falls_back_to_the_packed_engine_and_says_why():
    cfg = named_configurations()["HoldsCapReconnect"].config
    run = explore_config(cfg, fingerprints=True)
    assert run.engine_choice["name"] == "packed" and "fingerprints" in run.engine_choice["why"]
    with pytest.raises(ConfigError, match="--engine vector"):
        explore_config(cfg, engine="vector", fingerprints=True)


def test_a_misspelt_option_is_refused_not_swallowed():
    from protocol.engine.vector.explore import explore_vector

    model = model_for(named_configurations()["Holds"].config.evolve(MaxTime=1))
    with pytest.raises(TypeError, match="max_state"):
        explore_vector(model, max_state=10)
    with pytest.raises(TypeError, match="fingerprints"):
        explore_vector(model, fingerprints=True)  # the packed engine's: choose_engine never passes it


def test_keys_wider_than_a_word_take_two_words_never_a_hash():
    wide = KeyLayout.of(3, 20, 15)  # 65 bits: two words, exact (tests/test_vector_wide.py)
    assert wide.words == 2 and wide.decode(wide.encode(np.array([5]), [np.array([7])] * 3))[1][2].tolist() == [7]
    with pytest.raises(WideKeys):
        KeyLayout(3, 20, 15)  # not in one
    layout = KeyLayout(3, 19, 15)  # 64 bits: exact, and ordered as the ids are
    G = np.array([0, (1 << 19) - 1, 5], dtype=np.int64)
    L = [np.array([(1 << 15) - 1, 0, 3]), np.array([1, 2, 3]), np.array([0, (1 << 15) - 1, 7])]
    keys = layout.encode(G, L)
    back_G, back_L = layout.decode(keys)
    assert list(back_G) == list(G) and all(list(a) == list(b) for a, b in zip(back_L, L))
    wider = KeyLayout(3, 19, 15)
    assert list(layout.rekey(keys, wider)) == list(keys)


def test_rekeying_keeps_the_order_of_the_ids():
    narrow, wide = KeyLayout(2, 3, 4), KeyLayout(2, 10, 12)
    rng = np.random.default_rng(7)
    G = rng.integers(0, 8, 200)
    L = [rng.integers(0, 16, 200), rng.integers(0, 16, 200)]
    keys = np.sort(narrow.encode(G, L))
    rekeyed = narrow.rekey(keys, wide)
    assert list(np.sort(rekeyed)) == list(rekeyed)
    assert [tuple(map(int, c)) for c in zip(*wide.decode(rekeyed)[1], wide.decode(rekeyed)[0])] == [
        tuple(map(int, c)) for c in zip(*narrow.decode(keys)[1], narrow.decode(keys)[0])]


@pytest.mark.parametrize("bound", [2**63, 2**64], ids=["top bit free", "top bit used"])
@given(data=st.data())
def test_merging_two_runs_of_keys_seen_carries_each_keys_id(bound, data):
    """The merge of two runs of the keys seen with their state ids (edges recorded): with
    the top bit free the runs are merged marked, else by binary searches; both give each
    key its own id, in key order."""
    keys = sorted(data.draw(st.sets(st.integers(0, bound - 1), max_size=40)))
    in_b = data.draw(st.lists(st.booleans(), min_size=len(keys), max_size=len(keys)))
    id_of = dict(zip(keys, data.draw(st.permutations(range(len(keys))))))
    runs = [[key for key, b in zip(keys, in_b) if b == side] for side in (False, True)]
    (a, a_ids), (b, b_ids) = [(np.array(run, dtype=np.uint64), np.array([id_of[k] for k in run], dtype=np.int32))
                              for run in runs]
    merged, ids = np.empty(len(keys), dtype=np.uint64), np.empty(len(keys), dtype=np.int32)
    merge_into(a, a_ids, b, b_ids, merged, ids)
    assert merged.tolist() == keys
    assert ids.tolist() == [id_of[key] for key in keys]


# ------------------------------------------------- liveness on random graphs


@st.composite
def fair_graphs(draw):
    """A random graph whose every state is reachable from state 0 (as an explored graph's
    is), with labels, fair families and a leads-to pair's masks."""
    n = draw(st.integers(1, 12))
    labels = draw(st.integers(1, 4))
    out = {v: [] for v in range(n)}
    for v in range(1, n):  # reached from an earlier state
        out[draw(st.integers(0, v - 1))].append((draw(st.integers(0, labels - 1)), v))
    for v in range(n):
        for _ in range(draw(st.integers(0, 3))):
            out[v].append((draw(st.integers(0, labels - 1)), draw(st.integers(0, n - 1))))
    edges = [(v, label, w) for v in range(n) for label, w in draw(st.permutations(out[v]))]
    families = draw(st.lists(st.sampled_from(["a", "b", "c"]), unique=True, max_size=3))
    label_family = [draw(st.sampled_from([None, *families])) for _ in range(labels)]
    pairs = []
    for _ in range(draw(st.integers(1, 3))):  # several pairs: an acyclic graph sweeps them at once
        unmet = [draw(st.booleans()) for _ in range(n)]
        pairs.append(([u and draw(st.booleans()) for u in unmet], unmet))
    return n, edges, families, label_family, pairs


@given(fair_graphs())
def test_the_vector_liveness_gives_liveness_pys_verdict_and_lasso(graph):
    n, edges, families, label_family, pairs = graph
    src, lab, dst = (list(column) for column in zip(*edges)) if edges else ([], [], [])
    reference = liveness.FairGraph(n, src, lab, dst, families, label_family)
    offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(np.array(src, dtype=np.int64), minlength=n), out=offsets[1:])
    vector = VectorGraph(offsets, np.array(lab, dtype=np.int64), np.array(dst, dtype=np.int64),
                         families, label_family)
    masks = [(bytearray(triggers), bytearray(unmet)) for triggers, unmet in pairs]
    arrays = [(np.array(triggers, dtype=bool), np.array(unmet, dtype=bool)) for triggers, unmet in pairs]
    assert list(vector.cyclic()) == [bool(c) for c in reference.cyclic()]
    assert vector.find_violation([0], arrays) == liveness.find_violation(reference, [0], masks)


def test_the_vector_liveness_finds_a_fair_cycle_and_a_stutter():
    # 0 -> 1 <-> 2 (label 0, fair family "a" taken inside), 3 stutters with nothing enabled
    offsets = np.array([0, 2, 3, 4, 4])
    targets, labels = np.array([1, 3, 2, 1]), np.array([0, 1, 0, 0])
    graph = VectorGraph(offsets, labels, targets, ["a"], ["a", None])
    cycle = graph.find_violation([0], [(np.array([0, 1, 0, 0], bool), np.array([0, 1, 1, 0], bool))])
    assert cycle is not None and not cycle.lasso.stutters and cycle.lasso.length == 3
    stutter = graph.find_violation([0], [(np.array([0, 0, 0, 1], bool), np.array([0, 0, 0, 1], bool))])
    assert stutter is not None and stutter.lasso.stutters and stutter.lasso.length == 2
    holds = graph.find_violation([0], [(np.array([0, 0, 0, 0], bool), np.array([1, 1, 1, 0], bool))])
    assert holds is None


@pytest.mark.parametrize("key_bits", [54, pytest.param(63, marks=SLOW)])
def test_the_sorts_without_room_for_the_positions_give_the_same_exploration(monkeypatch, key_bits):
    # Wide keys (three processes, many components) leave no room beside them for the
    # positions: up to 10 bits short they are sorted in parts by their top bits, further
    # short the keys alone are sorted. Pretend the keys are that wide.
    import protocol.engine.vector.search as vector_module

    combined_sort = vector_module.Search.first_occurrences

    class Wide:
        bits, words = key_bits, 1

    def as_if_wide(self, keys, positions, shift, combined, layout):
        if combined:  # take the positions back out of the low bits, as if they had not fitted
            positions = (keys & np.uint64((1 << int(shift)) - 1)).astype(np.int64)
            keys = keys >> shift
        return combined_sort(self, keys, positions, np.uint64(0), False, Wide)

    monkeypatch.setattr(vector_module.Search, "first_occurrences", as_if_wide)
    excess, by_argsort = [], []
    in_parts, argsorted = vector_module.Search.first_occurrences_in_parts, vector_module.Search.first_occurrences_by_argsort
    monkeypatch.setattr(vector_module.Search, "first_occurrences_in_parts",
                        lambda self, *args: excess.append(args[-1]) or in_parts(self, *args))
    monkeypatch.setattr(vector_module.Search, "first_occurrences_by_argsort",
                        lambda self, *args: by_argsort.append(len(args[0])) or argsorted(self, *args))
    cfg = named_configurations()["HoldsCap"].config
    assert_same_exploration(cfg)
    assert_same_exploration(cfg, max_states=3000)
    assert max(excess) >= 1  # in more than one part in some level
    assert bool(by_argsort) is (key_bits == 63)  # 63 bits: past 10 bits short in the larger levels


# ------------------------------------------------------------ the command line


def test_check_says_which_engine_ran_and_why(cli):
    import json

    code, out, _ = cli("check", "HoldsCapReconnect", "--json")
    assert code == 0 and json.loads(out)["engine"] == {"name": "vector"}
    code, out, _ = cli("check", "HoldsCapReconnect", "--json", "--engine", "packed")
    assert code == 0 and json.loads(out)["engine"] == {"name": "packed"}
    code, out, _ = cli("check", "HoldsCapReconnect", "--json", "--no-liveness", "--fingerprints")
    record = json.loads(out)
    assert code == 0 and record["engine"]["name"] == "packed" and "--fingerprints" in record["engine"]["why"]


def test_check_refuses_the_vector_engine_where_it_does_not_apply(cli):
    code, out, err = cli("check", "HoldsCapReconnect", "--engine", "vector", "--fingerprints", "--no-liveness")
    assert (code, out) == (2, "") and "drop --engine vector" in err


def test_bench_measures_both_engines_side_by_side():
    from protocol.tools.bench import measure
    from protocol.render.terminal import plain_text
    from protocol.render.bench import engines_table

    constants = {"P": 1, "D": 1, "MaxTime": 1}
    records = [measure("Holds", constants, mode, max_states=10**6)
               for mode in ("safety/packed", "safety/vector", "safety+liveness/packed", "safety+liveness/vector")]
    assert [record["engine"] for record in records] == ["packed", "vector"] * 2
    assert len({(r["distinct_states"], r["transitions"], r["depth"]) for r in records}) == 1
    assert records[1]["parts"].keys() >= {"components", "tables", "gather", "sort", "dedupe", "merge"}
    assert "liveness:region" in records[3]["parts"] and not records[0]["parts"]
    assert all(record["states_per_cpu_second"] and record["bytes_per_state"] > 0 for record in records)
    text = plain_text(engines_table(records), width=250)
    assert "safety+liveness" in text and "vector/" in text and "sort" in text


@pytest.mark.parametrize("options", [{}, pytest.param({"max_states": 2000}, marks=SLOW),
                                     pytest.param({"max_states": 6906}, marks=SLOW), {"stop_on_violation": True}])
def test_levels_expanded_in_slices_give_the_same_exploration(monkeypatch, options):
    # A level is expanded a slice of states at a time (to bound the memory in flight):
    # slices of 7 states must give the same ids, edges, cuts and traces as whole levels.
    import protocol.engine.vector.search as vector_module

    monkeypatch.setattr(vector_module, "SLICE", 7)
    cfg = named_configurations()["HoldsCap"].config
    packed, vector = assert_same_exploration(cfg, **options)
    if not options:
        assert_same_liveness(cfg, packed, vector)


def test_keys_too_wide_mid_search_fall_back_to_the_packed_engine(monkeypatch):
    # Pretend a key holds one word of 12 bits: HoldsCap's components outgrow it during
    # the search, and the default explores with the packed engine instead, saying why.
    import protocol.engine.vector.search as vector_module

    monkeypatch.setattr(vector_module, "WORD", 12)
    monkeypatch.setattr(vector_module, "WORDS", 1)
    cfg = named_configurations()["HoldsCap"].config
    run = explore_config(cfg)
    assert run.engine_choice["name"] == "packed" and "bits" in run.engine_choice["why"]
    assert (run.distinct_states, len(run.counterexample("I1"))) == (6907, 7)
    with pytest.raises(ConfigError, match="drop --engine vector"):
        explore_config(cfg, engine="vector")


# ------------------------------------------------------------ symmetry (safety)


def assert_same_reduced_exploration(cfg, **options):
    """Under symmetry the engines intern components in different orders, so their
    representatives (locals sorted by id) may differ: the same unreduced and reduced
    counts, depth, verdicts and shortest lengths, each counterexample a real run."""
    packed = explore_config(cfg, engine="packed", symmetry=True, **options)
    vector = explore_config(cfg, engine="vector", symmetry=True, **options)
    assert vector.engine_choice == {"name": "vector"}
    assert vector.counts() == packed.counts() and vector.complete == packed.complete
    assert vector.violations.keys() == packed.violations.keys()
    model = model_for(cfg)
    for name in packed.violations:
        trace = vector.counterexample(name)
        assert len(trace) == len(packed.counterexample(name))
        for (_, before), (label, after) in zip(trace, trace[1:]):
            assert (label, after) in model.successors(before)
    return packed, vector


@pytest.mark.parametrize("name", ["Holds", "HoldsRouted", "HoldsAliasShared"])
@pytest.mark.parametrize("options", [{}, {"max_states": 1000}, {"max_states": 4999}, {"stop_on_violation": True}])
def test_the_reduced_search_counts_and_refutes_as_the_packed_one(name, options):
    assert_same_reduced_exploration(named_configurations()[name].config, **options)


@SLOW
@pytest.mark.parametrize("name", ["Holds", "HoldsRouted", "HoldsAlias"])
def test_the_reduced_search_at_three_processes(name):
    assert_same_reduced_exploration(named_configurations()[name].config.evolve(P=3, D=1, MaxTime=1))


def test_symmetry_with_liveness_runs_the_vector_engine_and_a_special_process_is_refused():
    run = explore_config(named_configurations()["Holds"].config, symmetry=True, record_edges=True)
    assert run.engine_choice == {"name": "vector"}  # its liveness: tests/test_vector_symmetry.py
    with pytest.raises(ConfigError, match="--symmetry"):
        explore_config(named_configurations()["HoldsCap"].config, engine="vector", symmetry=True)


@pytest.mark.quick
def test_the_reduced_search_at_three_processes_cut_by_max_states():
    cfg = named_configurations()["Holds"].config.evolve(P=3)
    packed, vector = assert_same_reduced_exploration(cfg, max_states=1000)
    assert 1000 - 6 < vector.counts().distinct_states <= 1000  # an orbit of 3 processes holds at most 6


def test_a_by_pair_invariant_fails_where_the_packed_engine_finds_it():
    # SinceAllowed is checked per pair of globals and one process's locals (Model.by_pair)
    cfg = named_configurations()["HoldsAcquireFloorAgent"].config.evolve(D=1, MaxTime=1)
    packed, vector = assert_same_exploration(cfg)
    assert vector.engine_choice == {"name": "vector"}
    assert len(vector.counterexample("SinceAllowed")) == 4
