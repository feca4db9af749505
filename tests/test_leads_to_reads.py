"""What a leads-to side declares it reads (the globals, its process's locals, or both:
`protocol.engine.LeadsTo`) is all it reads: the vector engine evaluates such a side once
per component (or pair of them) and gathers the values onto the states; here those
masks are compared with the same predicates evaluated on every decoded state, and a
side declared to read less than it does is caught."""

import attrs
import numpy as np
import pytest

from protocol.engine import GLOBALS, PAIR, PROCESS, STATE
from protocol.engine import liveness
from protocol.engine.vector.liveness import LeadsToMasks, leads_to_masks, per_state_reason
from protocol.engine.vector.explore import explore_vector
from protocol.engine.vector.search import vector_refusal
from protocol.configurations.named import lookup, named_configurations
from protocol.model.next import model_for

# A configuration per liveness property that can fail, at two processes, bounded:
# each reaches states where its premises and conclusions differ from the initial ones.
QUICK = [("HoldsAliasOverwrite", 4000), ("HoldsSealAliasSource", 4000), ("HoldsReportOwnerFilter", 4000),
         ("HoldsAlias", 4000)]


def explored(name: str, max_states: int | None, **constants):
    model = model_for(lookup(name).with_constants(constants).config)
    return model, explore_vector(model, max_states=max_states)


def differences(run, pairs) -> list[str]:
    """Each pair whose component masks differ from its per-state ones, with the first state."""
    by_component, premised = leads_to_masks(run, pairs)
    by_state = liveness.leads_to_masks(run.decoded_states(), [(pair.premise, pair.conclusion) for pair in pairs])
    found = []
    for pair, (triggers, unmet), (want_triggers, want_unmet), reached in zip(pairs, by_component, by_state, premised):
        for side, got, want in (("triggers", triggers, want_triggers), ("unmet", unmet, want_unmet)):
            want = np.frombuffer(bytes(want), dtype=bool)
            if not np.array_equal(got, want):
                found.append(f"{pair.text}: {side} differ first at state {int(np.flatnonzero(got != want)[0])}")
        if reached is not None and reached != any(map(pair.premise, run.decoded_states())):
            found.append(f"{pair.text}: premise reached {reached}, but not so on the states")
    return found


@pytest.mark.quick  # at two processes, bounded
@pytest.mark.parametrize("name, bound", QUICK)
def test_the_component_masks_are_the_per_state_ones(name, bound):
    model, run = explored(name, bound, P=2)
    assert run.distinct_states == bound
    for prop, pairs in model.liveness.items():
        assert all(per_state_reason(pair) is None for pair in pairs), f"{prop} is evaluated per state"
        assert differences(run, pairs) == [], prop


@pytest.mark.slow
@pytest.mark.parametrize("name", [name for name in named_configurations()
                                  if vector_refusal(model_for(named_configurations()[name].config)) is None])
def test_the_component_masks_are_the_per_state_ones_on_every_configuration(name):
    model, run = explored(name, 50_000)
    for prop, pairs in model.liveness.items():
        assert differences(run, pairs) == [], prop


def test_a_side_that_reads_more_than_it_declares_is_caught():
    """ImportsBacked's conclusion reads which index a peek reads (the globals): declared
    to read its process's locals alone, it is evaluated with the initial globals."""
    model, run = explored("HoldsAliasOverwrite", 4000, P=2)
    pairs = [attrs.evolve(pair, conclusion_reads=PROCESS) for pair in model.liveness["ImportsBacked"]]
    assert differences(run, pairs)


def test_a_side_that_reads_the_whole_state_is_evaluated_per_state_and_said_so():
    model, run = explored("HoldsAlias", 2000, P=2)
    pairs = [attrs.evolve(pair, premise_reads=STATE) for pair in model.liveness["ImportsBacked"]]
    assert all(per_state_reason(pair) == "its premise reads the whole state" for pair in pairs)
    assert differences(run, pairs) == []
    run.engine_choice = {"name": "vector"}
    run.pair_masks("ImportsBacked", pairs)
    assert run.engine_choice["liveness_per_state"] == {"ImportsBacked": f"{pairs[0].text}: its premise reads the whole state"}


def test_a_process_side_needs_a_process():
    model, _ = explored("Holds", 10)
    pair = model.liveness["CompactionNotStalled"][0]
    assert per_state_reason(pair) is None and pair.premise_reads == GLOBALS
    assert per_state_reason(attrs.evolve(pair, process=None)) == \
        "its conclusion reads a process's locals but the pair names no process"
    assert per_state_reason(attrs.evolve(pair, process=None, conclusion_reads=PAIR)) is not None


@pytest.mark.quick
def test_pairs_of_ids_kept_sorted_give_the_same_masks(monkeypatch):
    """Past DENSE_PAIRS entries, a side on the globals and a process's locals keeps the
    pairs of ids it met sorted instead of a table: the same masks."""
    from protocol.engine.vector import liveness as vector_liveness

    model, run = explored("HoldsAliasOverwrite", 4000, P=2)
    monkeypatch.setattr(vector_liveness, "DENSE_PAIRS", 0)
    for prop, pairs in model.liveness.items():
        assert differences(run, pairs) == [], prop


@pytest.mark.quick
def test_the_masks_read_lazily_answer_as_the_whole_ones():
    """Before its masks are computed, LeadsToMasks tells per pair whether the conclusion
    fails in a few states and whether the premise holds somewhere, as the masks would,
    without computing them (what lets a property that holds skip them)."""
    model, run = explored("HoldsAliasOverwrite", 2000, P=2)
    answers = set()
    for prop, pairs in model.liveness.items():
        whole, premised = leads_to_masks(run, pairs)
        lazy = LeadsToMasks(run, pairs)
        for states in (np.arange(0, 42), np.array([42, 100]), np.arange(3, run.distinct_states, 9)):
            told = lazy.unmet_in(states)  # under FEW_STATES of the states: asked of them alone
            assert told == [bool(unmet[states].any()) for _, unmet in whole], (prop, states)
            answers.update(told)
        assert lazy.premised() == premised, prop
        assert lazy._masks is None, prop
        assert [unmet.tolist() for _, unmet in lazy] == [unmet.tolist() for _, unmet in whole], prop
    assert answers == {True, False}  # both met: a constant answer would fail


@pytest.mark.parametrize("workers", [1, 2])
def test_the_properties_of_a_run_evaluate_their_sides_on_one_set_of_probe_states(monkeypatch, workers):
    """Every property decided on a run probes the same components (the states built to
    evaluate a side per component), decided one after another or side by side: one
    `Probes` serves them all, and is let go with the decision."""
    from protocol.engine.vector import liveness as vector_liveness

    masks_made = []
    made = vector_liveness.LeadsToMasks.__init__

    def kept(self, *arguments, **options):
        made(self, *arguments, **options)
        masks_made.append(self)

    monkeypatch.setattr(vector_liveness.LeadsToMasks, "__init__", kept)
    model = model_for(lookup("HoldsReportOwnerFilter").config)
    run = explore_vector(model, record_edges=True, workers=workers)
    verdicts = run.decide_liveness(model)
    assert {name: verdict.holds for name, verdict in verdicts.items()} == {"CompactionNotStalled": True,
                                                                          "CtlHoldReleased": False}
    probes = {id(truth.probes) for masks in masks_made for sides in masks.truths if sides for truth in sides}
    assert len(masks_made) == 2 and len(probes) == 1
    assert run._probes is None


def test_probe_states_are_made_with_the_collector_paused():
    """The cyclic collector is off while a side's probes are made (each collection would
    walk every probe state kept), and back as it was after, also where it was off."""
    import gc

    from protocol.engine.vector.liveness import ComponentTruth, Probes

    model, run = explored("HoldsAliasOverwrite", 200, P=2)
    seen = []
    truth = ComponentTruth(Probes(run.engine), lambda state: seen.append(gc.isenabled()) or True, GLOBALS)
    assert gc.isenabled()
    assert truth.computed(np.arange(3)) == [True] * 3 and seen == [False] * 3 and gc.isenabled()
    gc.disable()
    try:
        truth.computed(np.arange(2))
        assert not gc.isenabled()
    finally:
        gc.enable()
