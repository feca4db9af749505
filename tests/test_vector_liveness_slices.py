"""The vector liveness counts a large graph's in-degrees a slice of targets at a time
(vector_liveness.in_degrees): the counts are np.bincount's whatever the slices, and the
cycles found with slices as small as one state are those found without. With threads,
the stalled regions of an acyclic graph are swept a part of each round per thread: the
regions are those found pair by pair."""

from contextlib import contextmanager

import numpy as np
from hypothesis import given, strategies as st

from protocol.engine.vector import liveness as vector_liveness
from protocol.engine.vector.sharing import Share
from protocol.engine.vector.liveness import VectorGraph, in_degrees


@st.composite
def graphs(draw):
    n = draw(st.integers(1, 20))
    degree = draw(st.lists(st.integers(0, 4), min_size=n, max_size=n))
    targets = draw(st.lists(st.integers(0, n - 1), min_size=sum(degree), max_size=sum(degree)))
    offsets = np.concatenate([[0], np.cumsum(degree)]).astype(np.int64)
    return offsets, np.array(targets, dtype=np.int32)


@st.composite
def acyclic_graphs(draw):
    """Edges only to later states, with two or more leads-to pairs (triggers within unmet)."""
    n = draw(st.integers(2, 20))
    targets = [draw(st.lists(st.integers(v + 1, n - 1), max_size=4)) if v + 1 < n else [] for v in range(n)]
    offsets = np.concatenate([[0], np.cumsum([len(out) for out in targets])]).astype(np.int64)
    pairs = {}
    for number in range(draw(st.integers(2, 9))):
        unmet = np.array(draw(st.lists(st.booleans(), min_size=n, max_size=n)))
        pairs[number] = (unmet & np.array(draw(st.lists(st.booleans(), min_size=n, max_size=n))), unmet)
    return offsets, np.array(sum(targets, []), dtype=np.int32), pairs


@contextmanager
def shared_at_least(size: int):
    original, vector_liveness.SHARED_AT_LEAST = vector_liveness.SHARED_AT_LEAST, size
    try:
        yield
    finally:
        vector_liveness.SHARED_AT_LEAST = original


@contextmanager
def chunks_of(size: int):
    """vector_liveness.CHUNK set to `size` (Hypothesis's examples share one function call,
    so no monkeypatch fixture)."""
    original, vector_liveness.CHUNK = vector_liveness.CHUNK, size
    try:
        yield
    finally:
        vector_liveness.CHUNK = original


@given(graphs(), st.integers(1, 5))
def test_in_degrees_in_slices_are_bincounts(graph, chunk):
    offsets, targets = graph
    n = len(offsets) - 1
    with chunks_of(chunk):  # slices of max(n, chunk) targets: several where edges exceed n
        sliced = in_degrees(targets, n, np.int32)
    assert sliced.dtype == np.int32
    assert sliced.tolist() == np.bincount(targets, minlength=n).tolist()


@given(graphs())
def test_the_cycles_do_not_depend_on_the_slices(graph):
    offsets, targets = graph
    labels = np.zeros(len(targets), dtype=np.uint8)
    whole = VectorGraph(offsets, labels, targets, ["a"], ["a"]).cyclic()
    with chunks_of(1):
        sliced = VectorGraph(offsets, labels, targets, ["a"], ["a"]).cyclic()
    assert sliced.tolist() == whole.tolist()


@given(acyclic_graphs())
def test_the_stalled_regions_swept_by_threads_are_those_found_pair_by_pair(graph):
    offsets, targets, pairs = graph
    labels = np.zeros(len(targets), dtype=np.uint8)
    share = Share(2)
    try:
        with shared_at_least(1):  # every round split between the two threads
            swept = VectorGraph(offsets, labels, targets, ["a"], ["a"], share=share)
            assert not swept.cyclic().any()
            regions = swept.stalled_regions(pairs)
    finally:
        share.close()
    alone = VectorGraph(offsets, labels, targets, ["a"], ["a"])
    for number, masks in pairs.items():
        assert regions[number].tolist() == alone.stalled_region(*masks).tolist()
