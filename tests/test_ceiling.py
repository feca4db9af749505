"""A footprint's ceiling: Publish reads upper only up to the since it publishes, so validate
makes what a step, an observation or the closure makes of a set of local ids once for every
value of upper at or above it (tools/factored.py, `once`). The sharing changes no count or
verdict; a wrong bound is one ModelError line naming the action and the fix; a ceiling that
cannot hold is refused when the engine is built.
"""

from __future__ import annotations

import attrs
import pytest

from protocol.engine import CONTROLLER, LOCAL, Footprint, ModelError
from protocol.model import actions
from protocol.configurations.named import lookup
from protocol.model.next import model_for
from protocol.run import explore_config
from protocol.tools import factored
from protocol.tools.bench import walk_log
from protocol.tools.log import parse
from reference_validate import outcome, reference_outcome

EVERY_RUNTIME_STEP = ["Publish", "Ingest", "MaintStep", "InterStep"]


def with_publish_footprint(monkeypatch, footprint) -> None:
    monkeypatch.setattr(actions, "ACTIONS", tuple(
        attrs.evolve(action, footprint=footprint) if action.name == "Publish" else action
        for action in actions.ACTIONS))


def shared_past_the_bound(monkeypatch) -> list:
    """Records each time a set made at one value of a read global is shared with another."""
    shared, steps_alike = [], factored.Factored.steps_alike

    def recorded(search, label_id, g, other, bound, lids):
        alike = steps_alike(search, label_id, g, other, bound, lids)
        if alike and search.reading(label_id, g) != search.reading(label_id, other):
            shared.append(label_id)
        return alike

    monkeypatch.setattr(factored.Factored, "steps_alike", recorded)
    return shared


@pytest.mark.slow  # about a second: the quick run stays near a CPU minute; CI runs it
def test_sets_shared_past_the_ceiling_give_the_exhaustive_search_s_counts(monkeypatch):
    text = walk_log("Holds", {"P": 2, "D": 4, "MaxTime": 20}, 60, 3, ["Publish", "Ingest", "MaintStep"])
    shared = shared_past_the_bound(monkeypatch)
    decided = factored.follow(parse(text))
    assert shared, "no set was shared between two values of upper: the test no longer tests the ceiling"
    assert outcome(decided) == reference_outcome(text)


def test_sharing_changes_nothing_the_search_finds(monkeypatch):
    """The same log followed with every set made anew for each cell."""
    text = walk_log("Holds", {"P": 2, "D": 4, "MaxTime": 20}, 80, 5, EVERY_RUNTIME_STEP)
    with_sharing = factored.follow(parse(text))
    monkeypatch.setattr(factored.Factored, "once", lambda search, key, held, g, label_ids, make: make()[0])
    assert outcome(factored.follow(parse(text))) == outcome(with_sharing)


def bound_zero(s, cfg, p) -> int:
    return 0


@pytest.mark.quick  # small constants
@pytest.mark.parametrize("name, seed", [("Holds", 1), ("Holds", 2), ("HoldsPhysicalFromUpper", 0)])
def test_a_bound_below_what_the_step_reads_is_one_line(monkeypatch, name, seed):
    """Publish said to read no value of upper (bound 0): physical compaction follows upper below
    the since it publishes (and always, with physical from upper)."""
    text = walk_log(name, {"P": 1, "D": 1, "MaxTime": 3} if name == "Holds" else {"P": 2, "D": 2, "MaxTime": 6},
                    40, seed, ["Publish", "Ingest"])
    with_publish_footprint(monkeypatch, lambda cfg, p: Footprint(LOCAL, ("upper",), actions.QUEUES, ("upper", bound_zero)))
    with pytest.raises(ModelError) as wrong:
        factored.follow(parse(text))
    assert str(wrong.value).startswith("Publish(0) steps otherwise with upper = ")
    assert str(wrong.value).endswith("both at or above its ceiling's bound 0: correct the bound, "
                                     "or remove `ceiling` from its footprint")


@pytest.mark.parametrize("footprint, words", [
    (Footprint(LOCAL, ("upper",), actions.QUEUES, ("sent", bound_zero)),
     "Publish(0) declares a ceiling on 'sent', which its footprint does not read"),
    (Footprint(LOCAL, ("upper",), actions.QUEUES, ("upper",)), "Publish(0) declares a ceiling that is not"),
    (Footprint(CONTROLLER, ceiling=("upper", bound_zero)), "Publish(0) declares a ceiling, which only a local"),
])
def test_a_ceiling_that_cannot_hold_is_refused_when_the_engine_is_built(monkeypatch, footprint, words):
    with_publish_footprint(monkeypatch, lambda cfg, p: footprint)
    with pytest.raises(ModelError) as refused:
        explore_config(lookup("Holds").config.evolve(MaxTime=1), engine="packed")
    assert str(refused.value).startswith(words) and "\n" not in str(refused.value)


def test_publish_declares_its_ceiling_only_where_physical_compaction_follows_since():
    for physical in ("from_since", "from_upper"):
        model = model_for(lookup("Holds").config.evolve(physical=physical))
        publish = next(instance for instance in model.instances if instance.label.name == "Publish")
        assert bool(publish.footprint.ceiling) is (physical == "from_since")


@pytest.mark.slow
def test_the_bench_log_with_its_runtime_steps_silent_is_followed_alike_with_and_without_sharing(monkeypatch):
    """The bench's 1,039-line log (`bench --validate`), whose end holds 150 values of upper."""
    from protocol.tools.bench import VALIDATE_SEED, VALIDATE_STATES

    text = walk_log("Holds", {"P": 2, "D": 60, "MaxTime": 200}, VALIDATE_STATES, VALIDATE_SEED,
                    ["Publish", "Ingest", "MaintStep"])
    shared = shared_past_the_bound(monkeypatch)
    with_sharing = factored.follow(parse(text))
    assert shared
    monkeypatch.setattr(factored.Factored, "once", lambda search, key, held, g, label_ids, make: make()[0])
    assert outcome(factored.follow(parse(text))) == outcome(with_sharing)
