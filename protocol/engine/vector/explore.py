"""The vector engine's entry: one thread's search (search.py) or several threads' (threads.py).
Knows nothing of the protocol."""

from __future__ import annotations

import time
from typing import Callable

from protocol.engine import Model
from protocol.engine.checker import Progress, timed
from protocol.engine.fast import BITS, Engine
from protocol.engine.vector.search import Search, VectorExploration
from protocol.engine.vector.threads import ThreadedSearch


def explore_vector(
    model: Model,
    *,
    max_states: int | None = None,
    stop_on_violation: bool = False,
    record_edges: bool = False,
    on_progress: Callable[[Progress], None] | None = None,
    symmetry: bool = False,
    engine: Engine | None = None,
    workers: int = 1,
) -> VectorExploration:
    """Explore `model` breadth-first a level at a time; the packed engine's ids, counts,
    edges and violations (see the module docstring). Raises WideKeys when the keys
    would not fit WORDS machine words.

    With `symmetry`, one representative per orbit of process permutations, as the
    packed engine's reduced search keeps: the locals' ids sorted, each label (and
    each recorded edge's) extended with the permutation applied, the counts and the
    --max-states bound unreduced (by orbit sizes), paths and lassos realised as real runs.

    With `workers` > 1, that many threads share each level's sorts and searches
    (threads.py; without symmetry, which `check` runs sequentially); the answer is the same."""
    from protocol.engine import symmetry as sym
    from protocol.engine.vector.memory import keep_freed_memory

    if symmetry:
        model.refuse_unless_symmetric()
    keep_freed_memory()
    engine = engine or Engine(model)
    run = VectorExploration(engine)
    run.edges_recorded = record_edges
    perms = None
    if symmetry:
        perms = run.reduction = sym.Permutations(model.processes)
        run.labels = perms.labels(engine.labels)
        run.realize = sym.realizer(engine, sym.canonicalizer(model.processes, BITS), model.successors)
        run.permutations, run.lasso_realizer = perms, sym.lasso_realizer(engine, perms, model.instances)
    arguments = (run, engine, max_states, stop_on_violation, record_edges, on_progress, time.perf_counter(), perms)
    if workers > 1 and perms is None:
        search = ThreadedSearch(workers, *arguments)
    else:
        search = Search(*arguments)
    return timed(run, lambda _run: search.levels())
