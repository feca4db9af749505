"""`--workers N` on one machine: threads sharing the vector engine's search
(engine/vector/threads.py) find what one thread finds, state for state: the
same states under the same ids, parents, labels and edges, the same counts,
depth, verdicts, traces and lassos, and the same cuts. The quick tests share
every slice and every merge among the threads, however small (a real run
shares only large ones), so that small models run every path of the shared
search; the slow ones compare whole runs at P=2 as they are."""

import os
import signal
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor

import numpy as np
import pytest

from helpers import cli, publish_blind_to_standing, replace_action  # noqa: F401 (cli: a fixture)
from protocol.engine import WorkerLost
from protocol.engine.vector import helpers, sharing, threads
from protocol.engine.vector import search as vector_module
from protocol.engine.vector import liveness as vector_liveness
from protocol.engine.vector.liveness import VectorGraph
from protocol.engine.vector.explore import explore_vector
from protocol.model import actions
from protocol.model.state import replace_at
from protocol.configurations.named import lookup, named_configurations
from protocol.model.next import model_for
from protocol.run import check

SLOW = pytest.mark.slow


@pytest.fixture
def shared(monkeypatch) -> list:
    """Every slice and merge shared among the threads, and every batch of table entries
    with the helper processes, whatever its size; the list fills with the number of
    jobs of each sharing (the tests see that there were some)."""
    monkeypatch.setattr(threads, "THREADED_AT_LEAST", 1)
    monkeypatch.setattr(helpers, "SHARED_AT_LEAST", 1)
    monkeypatch.setattr(vector_liveness, "SHARED_AT_LEAST", 1)
    jobs = []
    share = sharing.Share.map
    monkeypatch.setattr(sharing.Share, "map",
                        lambda self, job, items: jobs.append(len(items)) or share(self, job, items))
    return jobs


@pytest.fixture
def helped(monkeypatch) -> list:
    """Per search, the table entries its helper processes evaluated, and their pids."""
    searches = []
    close = helpers.Helpers.close

    def closing(self):
        searches.append((self.answered, [pid for pid, _ in self.children]))
        close(self)

    monkeypatch.setattr(helpers.Helpers, "close", closing)
    return searches


def reaped(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def summary(result) -> dict:
    """What a check says, traces and lassos (with their notes) included."""
    return {"counts": (result.distinct_states, result.transitions, result.depth, result.complete),
            "verdicts": {name: (verdict.holds, verdict.trace_length, verdict.vacuous, verdict.premises)
                         for name, verdict in result.properties.items()},
            "traces": {name: ([(str(step.action), step.state) for step in verdict.trace.steps],
                              verdict.trace.loop, verdict.trace.stutters, verdict.trace.notes)
                       for name, verdict in result.properties.items() if verdict.trace is not None},
            "reachable": result.reachable, "as_expected": result.as_expected}


def exploration(run) -> dict:
    """A vector run state by state: each id's state, parent and label, and the edges.
    (Component ids may be interned in another order by the threads: states are compared
    as the model's, not as keys.)"""
    offsets, labels, targets = run.edge_arrays()
    return {"states": [run.state(i) for i in range(run.distinct_states)], "parent": run.parent.tolist(),
            "via": run.via, "offsets": offsets.tolist(), "targets": targets.tolist(),
            "labels": [run.labels[label] for label in labels.tolist()],
            "counts": (run.transitions, run.depth, run.expanded, run.complete),
            "violations": {name: run.counterexample(name) for name in run.violations}}


@pytest.mark.parametrize("workers", [2, pytest.param(3, marks=SLOW)])
def test_threads_explore_state_for_state_as_one(shared, helped, monkeypatch, workers):
    monkeypatch.setattr(vector_module, "SLICE", 50)  # several slices a level, each shared
    rekeyed = []  # parts sorted before a later part's components widened the keys
    rekey_done = threads.Pipeline.rekey_done

    def counted(self):
        rekeyed.append(sum(1 for done in self.results if done and not done[2].same(self.search.layout)))
        rekey_done(self)

    monkeypatch.setattr(threads.Pipeline, "rekey_done", counted)
    model = model_for(lookup("HoldsCap").config)
    one = explore_vector(model, record_edges=True)
    many = explore_vector(model_for(lookup("HoldsCap").config), record_edges=True, workers=workers)
    assert exploration(many) == exploration(one)
    assert one.violations and shared and min(shared) >= 2 and sum(rekeyed) > 0
    assert not helped  # the edges are kept: the helpers wait to evaluate the leads-to sides
    many.close()
    (answered, pids), = helped
    assert answered > 0 and len(pids) == workers - 1 and all(map(reaped, pids))
    # each helper's peak memory, told as a worker's
    peaks = many.report()["parallel"]["worker_peak_bytes"]
    assert len(peaks) == workers - 1 and min(peaks) > 1 << 20


def test_a_helper_answering_wrongly_is_caught(shared, helped, monkeypatch):
    """The comparisons above can fail: a helper that evaluates some locals' steps as
    disabled (as a helper copying the components wrongly would) changes the states found."""
    search = os.getpid()
    evaluate = helpers.evaluate

    def wrong(engine, kind, rows, columns):
        values, checked = evaluate(engine, kind, rows, columns)
        if os.getpid() != search and kind[0] == "local":
            values = [None if lid % 3 == 0 and lid & (lid - 1) else value  # not a local the engine samples
                      for lid, value in zip(columns, values)]
        return values, checked

    monkeypatch.setattr(helpers, "evaluate", wrong)
    config = lookup("Holds").with_constants({"MaxTime": 1}).config
    one = explore_vector(model_for(config), record_edges=True)
    many = explore_vector(model_for(config), record_edges=True, workers=2)
    many.close()
    assert helped[0][0] > 0 and exploration(many) != exploration(one)


def raising_publish(s, cfg, p):
    """Publish, raising (naming the state) once process p's since has risen."""
    if s.since[p] > 0:
        raise RuntimeError(f"a model's own error in {s}")
    return actions.publish(s, cfg, p)


def test_a_model_error_in_a_helper_is_raised_as_one_worker_raises_it(shared, helped, monkeypatch):
    # on the same state: the helpers and the search's own share leave the entries that
    # raise to the search's fill, which runs them in one worker's order
    replace_action(monkeypatch, "Publish", raising_publish)
    config = lookup("Holds").with_constants({"MaxTime": 1}).config
    with pytest.raises(RuntimeError, match="a model's own error") as one:
        explore_vector(model_for(config))
    with pytest.raises(RuntimeError, match="a model's own error") as two:
        explore_vector(model_for(config), workers=2)
    assert str(two.value) == str(one.value)
    (_, pids), = helped
    assert pids and all(map(reaped, pids))


def test_an_evaluation_that_raises_is_left_to_the_search(monkeypatch):
    run = explore_vector(model_for(lookup("Holds").with_constants({"MaxTime": 1}).config))
    engine = run.engine
    family = next(iter(engine.local_reads))
    lids = list(range(min(len(engine.locals), 12)))
    local_next = engine.local_next

    def raising(family, lid, projection, record=True):
        if lid % 3 == 1:
            raise RuntimeError("a model's own error")
        return local_next(family, lid, projection, record)

    monkeypatch.setattr(engine, "local_next", raising)
    values, _checked = helpers.evaluate(engine, ("local", family), [0] * len(lids), lids)
    assert [value is helpers.UNEVALUATED for value in values] == [lid % 3 == 1 for lid in lids]


@pytest.mark.parametrize("record_edges", [False, True])
def test_ctrl_c_ends_and_reaps_the_helpers(shared, helped, record_edges):
    # even where the edges are kept: an interrupted search keeps no helper for liveness
    def interrupt(progress) -> None:
        if progress.depth == 4:
            raise KeyboardInterrupt

    run = explore_vector(model_for(lookup("HoldsCap").config), workers=2, on_progress=interrupt,
                         record_edges=record_edges)
    (answered, pids), = helped
    assert run.interrupted and not run.complete and run.depth == 4
    assert answered > 0 and pids and all(map(reaped, pids))


def test_two_workers_check_as_one_verdicts_traces_and_lassos(shared):
    named = lookup("HoldsCapReconnect").with_constants({"MaxTime": 1})
    one, two = check(named), check(named, workers=2)
    assert two.engine == {"name": "vector"} and two.parallel["threads"] and shared
    assert summary(two) == summary(one)
    assert any(verdict.trace is not None for verdict in one.properties.values())


def test_liveness_properties_decided_side_by_side_as_one(shared, monkeypatch):
    decided = []  # per decision, the properties decided side by side
    side_by_side = sharing.side_by_side
    monkeypatch.setattr(sharing, "side_by_side", lambda jobs: decided.append(len(jobs)) or side_by_side(jobs))
    named = lookup("HoldsSealReportSilent").with_constants({"MaxTime": 1})
    one, two = check(named), check(named, workers=2)
    assert summary(two) == summary(one) and decided == [3]


def publish_that_spins(s, cfg, p):
    """Publish, staying put where it would raise since: the graph gets cycles."""
    return None if actions.publish(s, cfg, p) is None else s


@pytest.mark.parametrize("sabotage", [publish_that_spins, publish_blind_to_standing], ids=["cycle", "stutter"])
def test_two_workers_find_the_same_lasso(shared, monkeypatch, sabotage):
    # with two workers the cycles are found in a thread while the leads-to masks are taken,
    # and the properties are decided side by side
    beside, decided = [], []
    find = VectorGraph.find_cycles_beside
    monkeypatch.setattr(VectorGraph, "find_cycles_beside", lambda graph: beside.append(graph) or find(graph))
    masks, finding = VectorGraph._enabled_masks, []  # the cycles need no enabled families: not waited for
    monkeypatch.setattr(VectorGraph, "_enabled_masks", lambda graph: finding.append(graph.finding_cycles) or masks(graph))
    side_by_side = sharing.side_by_side
    monkeypatch.setattr(sharing, "side_by_side", lambda jobs: decided.append(len(jobs)) or side_by_side(jobs))
    replace_action(monkeypatch, "Publish", sabotage)
    named = lookup("Holds").with_constants({"MaxTime": 1})
    one, two = check(named), check(named, workers=2)
    assert one.properties["CompactionNotStalled"].holds is False and shared
    assert summary(two) == summary(one)
    assert len(beside) == 1 and beside[0]._beside is None  # started, and waited for
    assert decided == [1]  # the other properties hold in place
    assert finding == [False, True]  # one worker finds them inline; two, from the start
    # the cycles' thread's CPU seconds are kept, to be counted beside the property's
    assert beside[0].cycles_beside_seconds > 0 and two.parallel["overlapped_cpu_seconds"] >= 0


def spinning_holds(monkeypatch):
    """Holds at MaxTime=1 with a Publish that spins: CompactionNotStalled fails on a
    cycle, so its leads-to sides are evaluated (the other properties hold in place)."""
    replace_action(monkeypatch, "Publish", publish_that_spins)
    return lookup("Holds").with_constants({"MaxTime": 1})


def test_the_helpers_evaluate_the_leads_to_sides_as_one_worker(shared, helped, monkeypatch):
    sides = []  # per batch the helpers evaluated: its side's name
    truths = helpers.Helpers.truths

    def counted(self, side, reads, entries):
        values = truths(self, side, reads, entries)
        sides.append(side[:3] if values is not None else None)
        return values

    monkeypatch.setattr(helpers.Helpers, "truths", counted)
    named = spinning_holds(monkeypatch)
    one, two = check(named), check(named, workers=2)
    assert one.properties["CompactionNotStalled"].holds is False
    assert summary(two) == summary(one)
    assert sides and None not in sides and {side[0] for side in sides} == {"CompactionNotStalled"}
    (_answered, pids), = helped  # ended with the decision
    assert pids and all(map(reaped, pids))


def test_a_helper_evaluating_a_side_wrongly_is_caught(shared, monkeypatch):
    """The comparison above can fail: a helper that answers every conclusion as met
    hides the stall."""
    search, truth_values = os.getpid(), helpers.truth_values

    def wrong(engine, probes, side, reads, entries):
        values = truth_values(engine, probes, side, reads, entries)
        return [True] * len(values) if os.getpid() != search and side[2] == 1 else values

    monkeypatch.setattr(helpers, "truth_values", wrong)
    named = spinning_holds(monkeypatch)
    assert check(named).properties["CompactionNotStalled"].holds is False
    assert check(named, workers=2).properties["CompactionNotStalled"].holds is not False


def test_a_helper_whose_model_lists_another_pair_answers_nothing(shared, monkeypatch):
    # the side is named by its property, index and text: under another text, the
    # property's thread evaluates it itself, and the verdict is one worker's
    answered = []
    truths = helpers.Helpers.truths

    def renamed(self, side, reads, entries):
        values = truths(self, (*side[:3], "another pair"), reads, entries)
        answered.append(values)
        return values

    monkeypatch.setattr(helpers.Helpers, "truths", renamed)
    named = spinning_holds(monkeypatch)
    one, two = check(named), check(named, workers=2)
    assert answered and all(values is None for values in answered)
    assert summary(two) == summary(one)


def killing_the_helper(monkeypatch, method: str) -> list:
    """The helper process killed just before the first call of `Helpers.<method>`: its pid."""
    killed = []
    original = getattr(helpers.Helpers, method)

    def first_killing(self, *arguments):
        if not killed:
            killed.append(self.children[0][0])
            os.kill(killed[0], signal.SIGKILL)
        return original(self, *arguments)

    monkeypatch.setattr(helpers.Helpers, method, first_killing)
    return killed


def test_a_helper_killed_during_the_search_leaves_no_verdict(shared, monkeypatch):
    killed = killing_the_helper(monkeypatch, "share")
    with pytest.raises(WorkerLost, match=r"helper process \d+ ended during the run"):
        check(lookup("HoldsCap").with_constants({"MaxTime": 1}), workers=2)
    assert killed and reaped(killed[0])


def test_a_helper_killed_while_liveness_is_decided_leaves_no_verdict(shared, monkeypatch):
    killed = killing_the_helper(monkeypatch, "truths")
    with pytest.raises(WorkerLost, match=r"helper process \d+ ended during the run"):
        check(spinning_holds(monkeypatch), workers=2)
    assert killed and reaped(killed[0])


def test_a_lost_helper_is_one_line_and_exit_4_in_every_subcommand(cli, monkeypatch):
    def lost(*_arguments, **_options):
        raise WorkerLost("helper process 7 ended during the run (killed, or out of memory?)")

    monkeypatch.setattr("protocol.run.check", lost)
    graph = ["graph", "HoldsCap", "-c", "MaxTime=1", "--highlight-trace"]  # checks, then highlights
    for argv in (["check", "HoldsCap", "--workers", "2"], graph):
        code, out, err = cli(*argv)
        assert code == 4 and len(err.strip().splitlines()) == 1 and "helper process 7 ended" in err, argv
        assert "Traceback" not in err


@pytest.mark.parametrize("spent, workers, beside", [
    ([3.0, 1.0], 2, 1.0),  # the shorter ran entirely beside the longer
    ([2.0, 2.0, 2.0], 2, 3.0),  # two cores: half the total on each at best
    ([2.0, 2.0, 2.0], 1, 0.0),  # one core: nothing beside
    ([5.0], 2, 0.0),
])
def test_threads_spend_beside_one_another_at_most_what_the_cores_allow(spent, workers, beside):
    assert sharing.beside_one_another(spent, workers) == beside


class AtOnce(ThreadPoolExecutor):
    """A pool that runs each job as it is submitted, in the submitting thread."""

    def submit(self, fn, /, *args, **kwargs) -> Future:
        future = Future()
        try:
            future.set_result(fn(*args, **kwargs))
        except BaseException as error:  # handed to whoever waits on the job, as a pool would
            future.set_exception(error)
        return future


def lowering_publish(s, cfg, p):
    """Publish, or where process p's since is above 0, lower it by one (breaks NoRegression)."""
    if s.since[p] > 0:
        return s._replace(since=replace_at(s.since, p, s.since[p] - 1))
    return actions.publish(s, cfg, p)


@pytest.mark.parametrize("liveness", [False, True])
def test_a_transition_property_woken_by_a_later_part_is_checked_on_every_step(shared, monkeypatch, liveness):
    # A component failing NoRegression is met by the lookups of a part after others were
    # sorted: their steps' keys are taken then, and the first failing step is one thread's.
    # With liveness the edges are recorded, and the sort's positions must not have
    # overwritten the keys those steps are read from. The pool runs each part as it is
    # handed over, so that the parts before are sorted whatever the machine's timing.
    monkeypatch.setattr(sharing, "ThreadPoolExecutor", AtOnce)
    replace_action(monkeypatch, "Publish", lowering_publish)
    filled = []
    fill = threads.Pipeline.step_keys_where_woken
    monkeypatch.setattr(threads.Pipeline, "step_keys_where_woken", lambda self: filled.append(
        bool(self.search.woken(self.search.step_checks))
        and sum(result[1].step_keys is None for result in self.results)) or fill(self))
    named = lookup("Holds").with_constants({"MaxTime": 1})
    one, two = check(named, liveness=liveness), check(named, workers=2, liveness=liveness)
    assert one.properties["NoRegression"].holds is False and summary(two) == summary(one)
    assert max(filled) > 0


@pytest.mark.parametrize("options", [{"max_states": 200}, {"max_states": 1}, {"stop_on_violation": True}])
def test_two_workers_cut_where_one_cuts(shared, options):
    named = lookup("HoldsRouted").with_constants({"MaxTime": 1})
    one, two = check(named, **options), check(named, workers=2, **options)
    assert summary(two) == summary(one) and not one.complete


@SLOW
@pytest.mark.parametrize("bits, words", [(16, 2), (12, 3)])
def test_threads_on_multiword_keys(shared, monkeypatch, bits, words):
    # HoldsCap's ids need 23 bits: two 16-bit words, or three 12-bit ones (tests/test_vector_wide.py)
    monkeypatch.setattr(vector_module, "WORD", bits)
    monkeypatch.setattr(vector_module, "WORDS", words)
    model = model_for(lookup("HoldsCap").config)
    one = explore_vector(model, record_edges=True)
    assert one.levels[-1].layout.words == words
    assert exploration(explore_vector(model_for(lookup("HoldsCap").config), record_edges=True, workers=2)) \
        == exploration(one)


def test_the_packed_engine_with_workers_partitions_over_processes():
    named = lookup("HoldsRouted").with_constants({"MaxTime": 1})
    result = check(named, workers=2, engine="packed", liveness=False)
    assert result.engine == {"name": "packed"} and "threads" not in result.parallel
    assert result.parallel["bytes_exchanged"] > 0


# Whole runs at two processes, shared as a real run shares them (slices past THREADED_AT_LEAST).
WIDER = [("Holds", {"P": 2, "D": 2, "MaxTime": 2}), ("HoldsAlias", {"P": 2}), ("HoldsRouted", {"P": 2}),
         ("HoldsAliasOverwrite", {"P": 2}), ("HoldsCapReconnect", {"P": 2})]


@SLOW
@pytest.mark.parametrize("name, constants", WIDER, ids=[name for name, _ in WIDER])
def test_two_workers_check_wider_configurations_as_one(name, constants):
    named = lookup(name).with_constants(constants)
    one, two = check(named), check(named, workers=2)
    assert two.parallel["threads"]
    assert summary(two) == summary(one)


@SLOW
@pytest.mark.parametrize("name", list(named_configurations()))
def test_every_named_configuration_with_two_workers_as_one(shared, name):
    """Every slice shared, at the configuration's own constants; where the vector engine
    does not apply, the packed engine's partitions run, with the same counts and verdicts."""
    named = lookup(name)
    one, two = check(named), check(named, workers=2)
    if two.parallel.get("threads"):
        assert summary(two) == summary(one)
    else:
        assert two.engine["name"] == "packed" and summary(two)["counts"] == summary(one)["counts"]
        assert {key: verdict[:2] for key, verdict in summary(two)["verdicts"].items()} == \
            {key: verdict[:2] for key, verdict in summary(one)["verdicts"].items()}


# ------------------------------------------------------------- sharing work


def finishes(call, seconds: float = 20.0):
    """call() run in a thread of its own: its answer, or a failure where it has not
    finished in `seconds` (a pool thread waiting for itself never would)."""
    answer = []
    thread = threading.Thread(target=lambda: answer.append(call()), daemon=True)
    thread.start()
    thread.join(seconds)
    assert answer, "still waiting: a thread of the pool is waiting for itself"
    return answer[0]


def ended(share) -> None:
    """End `share`'s pool, the jobs it has not started cancelled (where a test fails, a
    job waiting for one of them gets an error rather than waiting for ever)."""
    share.pool.shutdown(wait=True, cancel_futures=True)


def test_work_shared_from_a_job_of_the_pool_is_done_in_that_job():
    share = sharing.Share(2)  # a pool of one thread
    try:
        answer = share.later(lambda: share.map(lambda item: (item, threading.current_thread().name), [1, 2, 3]))
        done = finishes(answer)
    finally:
        ended(share)
    assert [item for item, _ in done] == [1, 2, 3] and len({name for _, name in done}) == 1


def test_work_shared_is_taken_by_whichever_thread_is_free():
    # the pool's one thread is busy with a job of its own: the calling thread takes every item
    share, release = sharing.Share(2), threading.Event()
    try:
        busy = share.later(release.wait)
        done = finishes(lambda: share.map(lambda item: (item, threading.current_thread().name), list(range(6))))
        release.set()
        busy()
    finally:
        release.set()
        ended(share)
    assert [item for item, _ in done] == list(range(6)) and len({name for _, name in done}) == 1
    assert not any(name.startswith("vector") for _, name in done)  # none waited for the pool's thread


def test_a_shared_job_that_raises_is_raised_once_every_thread_has_stopped():
    share, running = sharing.Share(2), []

    def job(item: int) -> int:
        running.append(item)
        try:
            if item == 3:
                raise ValueError("item 3")
            time.sleep(0.01)
            return item
        finally:
            running.remove(item)

    try:
        with pytest.raises(ValueError, match="item 3"):
            share.map(job, list(range(20)))
        assert running == []  # nothing left writing once map has raised
    finally:
        ended(share)


def test_pieces_are_cut_at_keys_that_split_every_part_evenly():
    # one part's keys lie low and dense, another's spread over a wide range: the quantiles of
    # the longest part alone would put most of the other's keys in one piece
    dense = np.arange(0, 100_000, dtype=np.uint64)
    wide = np.arange(0, 80_000 * 1_000, 1_000, dtype=np.uint64)
    cuts = threads.cut_keys([dense, wide], 8)
    sizes = np.diff([0, *(int(np.searchsorted(dense, cut)) + int(np.searchsorted(wide, cut)) for cut in cuts),
                     len(dense) + len(wide)])
    assert len(cuts) == 7 and sizes.max() <= 1.2 * sizes.mean()
    alone = dense[[start for start, _ in threads.bounds(len(dense), 8)][1:]]  # the longest part's quantiles
    alone_sizes = np.diff([0, *(int(np.searchsorted(dense, cut)) + int(np.searchsorted(wide, cut)) for cut in alone),
                           len(dense) + len(wide)])
    assert alone_sizes.max() > 2 * alone_sizes.mean()


@pytest.mark.parametrize("size", [0, 1, 7, 100, 1_000_003])
def test_a_slice_s_last_part_is_a_small_one(size):
    # the calling thread sorts the last part alone: it is LAST_PART of each other part, and
    # the parts still cover the slice, in order, one after another
    parts = threads.tapered(size, 8)
    assert len(parts) == 8 and parts[0][0] == 0 and parts[-1][1] == size
    assert all(stop == start for (_, stop), (start, _) in zip(parts, parts[1:]))
    lengths = [stop - start for start, stop in parts]
    assert min(lengths) >= 0
    if size >= 1_000:
        assert lengths[-1] == pytest.approx(threads.LAST_PART * max(lengths[:-1]), rel=0.01)


def test_keys_added_beside_are_found_once_added(monkeypatch):
    monkeypatch.setattr(threads, "THREADED_AT_LEAST", 4)
    share, release = sharing.Share(2), threading.Event()
    try:
        seen = threads.ThreadedSortedKeys(np.array([1, 5], dtype=np.uint64), None, share)
        busy = share.later(release.wait)  # the pool cannot add them before this is released
        seen.add(np.array([2, 3, 4, 6, 7], dtype=np.uint64), None)
        assert seen.adding  # handed to the pool
        release.set()
        known, _ = finishes(lambda: seen.find(np.array([0, 2, 5, 7, 8], dtype=np.uint64)))
        busy()
    finally:
        release.set()
        ended(share)
    assert known.tolist() == [False, True, True, True, False] and len(seen) == 7 and not seen.adding


def test_keys_being_merged_are_found_before_the_merge_ends(monkeypatch):
    """Finding keys waits until the keys added are a run of their own, not for the merge of
    the runs that follows (the slice after a large one would otherwise wait for it)."""
    monkeypatch.setattr(threads, "THREADED_AT_LEAST", 4)
    share, release = sharing.Share(2), threading.Event()
    merging = threads.ThreadedSortedKeys.merged

    def held_merge(self, *runs):
        release.wait()
        return merging(self, *runs)

    monkeypatch.setattr(threads.ThreadedSortedKeys, "merged", held_merge)
    try:
        seen = threads.ThreadedSortedKeys(np.array([1, 5, 9, 11], dtype=np.uint64), np.arange(4, dtype=np.int32), share)
        seen.add(np.array([2, 3, 10, 12], dtype=np.uint64), np.arange(4, 8, dtype=np.int32))  # merged: as long
        known, ids = finishes(lambda: seen.find(np.array([0, 3, 9, 12], dtype=np.uint64)), seconds=10)
        assert not release.is_set() and len(seen.runs) == 2  # found while the merge waits
        finishes(lambda: seen.add(np.array([0, 4, 6, 7], dtype=np.uint64), np.arange(8, 12, dtype=np.int32)),
                 seconds=10)  # the next add does not wait for it either: its job waits in the pool
        release.set()
        everything, every_id = seen.find(np.arange(13, dtype=np.uint64))
        assert len(seen) == 12 and len(seen.runs) == 1 and not seen.adding
    finally:
        release.set()
        ended(share)
    assert known.tolist() == [False, True, True, True] and ids.tolist() == [-1, 5, 2, 7]
    assert every_id.tolist() == [8, 0, 4, 5, 9, 1, 10, 11, -1, 2, 6, 3, 7] and everything.sum() == 12


def test_keys_that_could_not_be_made_fail_the_finding(monkeypatch):
    monkeypatch.setattr(threads, "THREADED_AT_LEAST", 4)
    share = sharing.Share(2)

    def unmade():
        raise MemoryError("the new keys")

    try:
        seen = threads.ThreadedSortedKeys(np.array([1, 5], dtype=np.uint64), None, share)
        seen.add_from(5, unmade)
        errors = []

        def find() -> bool:
            try:
                seen.find(np.array([1], dtype=np.uint64))
            except MemoryError as error:
                errors.append(str(error))
            return True

        finishes(find)
    finally:
        ended(share)
    assert errors == ["the new keys"]  # not an answer from the runs without them
