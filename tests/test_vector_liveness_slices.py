"""The vector liveness counts a large graph's in-degrees a slice of targets at a time
(vector_liveness.in_degrees): the counts are np.bincount's whatever the slices, and the
cycles found with slices as small as one state are those found without."""

from contextlib import contextmanager

import numpy as np
from hypothesis import given, strategies as st

from protocol.engine.vector import liveness as vector_liveness
from protocol.engine.vector.liveness import VectorGraph, in_degrees


@st.composite
def graphs(draw):
    n = draw(st.integers(1, 20))
    degree = draw(st.lists(st.integers(0, 4), min_size=n, max_size=n))
    targets = draw(st.lists(st.integers(0, n - 1), min_size=sum(degree), max_size=sum(degree)))
    offsets = np.concatenate([[0], np.cumsum(degree)]).astype(np.int64)
    return offsets, np.array(targets, dtype=np.int32)


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
