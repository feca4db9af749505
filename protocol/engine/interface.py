"""What a finished (or cut-short) exploration offers, whichever engine made it.

Every engine's result is a `Run`: the sequential search (`checker.Exploration`),
the fingerprinted one (`checker.FingerprintedExploration`), the packed and the
symmetry-reduced ones (`fast.PackedExploration`), the partitioned one
(`partition_run.ParallelExploration`), and any engine added later (the
vector engine implements the same). A caller (`protocol/run.py`) asks a run
for its counts, its safety counterexamples, its liveness decisions, how far
it reached the states a reviewer expects to exist, and what the engine adds
to the report; it never asks what kind of run it holds.

Liveness is decided by `decide_liveness`, the same algorithm for every run:
per property, a run that can settle it where its edges lie says so
(`holds_in_place`); otherwise the run hands over the fair graph, the initial
states, the leads-to masks of the property's pairs, and a way to find a
fair lasso on them (`find_violation`, or the reduced search under symmetry),
and realises the lasso it found as a run of the model (`lasso_steps`). For
each pair it also says whether the premise was ever reached, so that a
property none of whose premises was reached is reported as vacuous.

Knows nothing of the protocol.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Callable, Hashable, NamedTuple, Sequence

from protocol.engine import LeadsTo, Model
from protocol.engine.liveness import Counterexample, FairGraph, find_violation, leads_to_masks


class Counts(NamedTuple):
    """The counts of a run as the spec counts them (TLC's): unreduced."""

    distinct_states: int
    transitions: int
    depth: int
    reduced_states: int | None = None  # with symmetry: the representatives explored
    level_sizes: tuple = ()  # distinct states first found at each depth, from 1 (unreduced where known)


class LassoRun(NamedTuple):
    """A fair lasso as a run of the model, for a caller to narrate.

    `steps` are [(label or None, readable state)], the first the initial state;
    the cycle is `steps[loop:]`, closed by the step `back` (a label) from the
    last state to `steps[loop]`, or a stutter in the last state when `back` is
    None. `fairness` lists per fair family (family, "disabled" | "taken", index
    into steps) why the cycle is fair to it; `any_fair` is False when no
    action is fair at all.
    """

    pair: LeadsTo
    steps: list
    loop: int
    back: Hashable | None
    fairness: tuple
    any_fair: bool


class Liveness(NamedTuple):
    """One liveness property's decision.

    `holds` is True, False (with `lasso`), or None when the run cannot tell
    (incomplete, or no edges kept). `premises` says per leads-to pair whether
    its premise held in some reachable state (None where unknown): a property
    that holds with no premise reached holds vacuously.
    """

    holds: bool | None
    lasso: LassoRun | None = None
    premises: tuple | None = None

    @property
    def vacuous(self) -> bool:
        return self.holds is True and self.premises is not None and not any(self.premises)


class Run(ABC):
    """A finished or cut-short exploration. Subclasses keep their own storage; what a
    caller may rely on is below."""

    complete: bool  # the whole reachable graph was explored
    interrupted: bool  # Ctrl-C stopped the search
    seconds: float  # the search's wall time
    # Which sequential engine explored, and where a default fell back, why: {"name", "why"};
    # set by whoever chose the engine; None for a run that chose none (partitioned).
    engine_choice: dict | None = None
    # CPU seconds per part of the search (and of liveness), where an engine times them.
    parts: dict | None = None

    # ------------------------------------------------------------ counts and safety

    @abstractmethod
    def counts(self) -> Counts:
        """Distinct states, transitions, depth (and the reduced count, the level sizes)."""

    @abstractmethod
    def counterexample(self, prop: str) -> list | None:
        """The shortest trace violating safety property `prop`, [(label or None, state)], or
        None when none was found (or none can be fetched any more)."""

    @abstractmethod
    def violated(self) -> list[str]:
        """The safety properties a violation was found of (a counterexample can be fetched)."""

    # ------------------------------------------------------------ reachability

    def first_reached(self, predicates: dict[str, Callable]) -> dict[str, int | None]:
        """Per named state predicate, the depth (from 1) of the first level where some state
        satisfies it, or None where no explored state does. Under symmetry the predicates
        are evaluated on representatives: give predicates that treat processes alike.
        A run that keeps no states raises `Unavailable`."""
        raise Unavailable("this search keeps no states to look for them in")

    # ------------------------------------------------------------ liveness

    @property
    def liveness_decidable(self) -> bool:
        """Whether the whole graph was explored with its edges recorded."""
        return False

    def decide_liveness(self, model: Model) -> dict[str, Liveness]:
        """Each liveness property of `model` decided on this run's graph under the model's
        fairness (the model may differ from the one explored in its fairness only).
        Ctrl-C raises KeyboardInterrupt; a reduction that cannot judge raises Refusal."""
        if not self.liveness_decidable:
            return {name: Liveness(None) for name in model.liveness}
        verdicts, graph, initial = {}, None, None
        for name, pairs in model.liveness.items():
            settled = self.holds_in_place(name, pairs)
            if settled is not None:
                verdicts[name] = Liveness(True, premises=settled)
                continue
            if graph is None:
                graph, initial = self.fair_graph(model), self.initial_ids()
            verdicts[name] = self.decided(graph, initial, name, pairs)
        return verdicts

    def decided(self, graph: FairGraph, initial, name: str, pairs: Sequence[LeadsTo]) -> Liveness:
        """Liveness property `name` decided on the run's fair graph."""
        masks = self.pair_masks(name, pairs)
        found = self.find_violation(graph, initial, masks, name, pairs)
        if found is None:
            return Liveness(True, premises=self.premises_reached(name, pairs, masks))
        steps, back = self.lasso_steps(found.lasso)
        lasso = LassoRun(pairs[found.pair], steps, found.lasso.loop, back, found.lasso.fairness, bool(graph.families))
        return Liveness(False, lasso=lasso)

    # What decide_liveness asks of a run; a subclass overrides what its storage changes.

    def holds_in_place(self, name: str, pairs: Sequence[LeadsTo]) -> tuple | None:
        """Where a run can decide without building the graph that property `name` holds:
        the premises reached (as `premises_reached`); None when it cannot tell."""
        return None

    @abstractmethod
    def fair_graph(self, model: Model) -> FairGraph:
        """The recorded graph with the model's weakly fair families."""

    @abstractmethod
    def initial_ids(self) -> list[int]:
        """The ids of the initial states in the graph."""

    @abstractmethod
    def pair_masks(self, name: str, pairs: Sequence[LeadsTo]) -> list:
        """Per pair, (triggers, unmet) over the graph's states (`liveness.leads_to_masks`)."""

    def find_violation(self, graph: FairGraph, initial, masks, name: str,
                       pairs: Sequence[LeadsTo]) -> Counterexample | None:
        return find_violation(graph, initial, masks)

    @abstractmethod
    def premises_reached(self, name: str, pairs: Sequence[LeadsTo], masks) -> tuple:
        """Per pair, whether its premise holds in some reachable state (a trigger is one)."""

    @abstractmethod
    def lasso_steps(self, lasso) -> tuple[list, Hashable | None]:
        """A lasso over graph ids as (a run of the model [(label or None, state)], the
        label of its back step or None)."""

    # ------------------------------------------------------------ coverage

    def coverage(self, actions: Sequence | None = None) -> dict:
        """Coverage per action, as TLC reports it: action name -> (transitions it took, or None
        where the edges were not kept; distinct states it found first), in the order of
        `actions` (every instance's label), a never-enabled one with zeros. A run that keeps no
        parents, or stands for orbits (symmetry), raises `Unavailable`."""
        raise Unavailable("this search keeps no parents to count coverage by")

    # ------------------------------------------------------------ what an engine adds

    def report(self) -> dict:
        """What this engine adds to a check's result, by the result's field name
        (`fingerprint_collision`, `parallel`); empty by default."""
        return {}

    def close(self) -> None:
        """Release what the run holds (worker processes); its counts and report stay."""


class Unavailable(RuntimeError):
    """The run cannot answer this question (for example: it keeps no states)."""


def action_name(label) -> str:
    """The action a label is an instance of: `Publish` for `Publish(1)`."""
    name = getattr(label, "name", None)
    return str(name if name is not None else (label[0] if isinstance(label, tuple) else label))


def coverage_by_action(labels: Sequence, found: Sequence[int], taken: Sequence[int] | None,
                       actions: Sequence | None = None) -> dict:
    """Per action name, (transitions, distinct states found first), from counts per label id;
    `actions`, the labels of every instance, lists the never-enabled ones too, in their order."""
    table: dict = {action_name(label): [0 if taken is not None else None, 0] for label in (actions or labels)}
    for label, first in zip(labels, found):
        table.setdefault(action_name(label), [0 if taken is not None else None, 0])[1] += int(first)
    for label, edges in zip(labels, taken or ()):
        table[action_name(label)][0] += int(edges)
    return {name: tuple(counts) for name, counts in table.items()}


def any_premise(states, pairs: Sequence[LeadsTo], masks) -> tuple:
    """Per pair, whether a trigger lies in its masks or else its premise holds in one of
    `states` (readable, iterated once at most; only the pairs with no trigger look)."""
    reached = [any(triggers) for triggers, _ in masks]
    if all(reached):
        return tuple(reached)
    looking = [i for i, found in enumerate(reached) if not found]
    for state in states:
        for i in [i for i in looking if pairs[i].premise(state)]:
            reached[i] = True
            looking.remove(i)
        if not looking:
            break
    return tuple(reached)


def decoded_masks(states, pairs: Sequence[LeadsTo]) -> list:
    return leads_to_masks(states, [(pair.premise, pair.conclusion) for pair in pairs])
