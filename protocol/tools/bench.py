"""`python -m protocol bench`: how the search scales as the constants widen.

For a ladder of constants and for Holds and HoldsAcquire, and for HoldsAlias
widened to two processes (`WIDENINGS`), it measures, each
in a fresh process (so that the peak resident memory is that run's own):
safety alone, safety and liveness together, both again under symmetry
reduction, and safety with fingerprints instead of states (`--fingerprints`,
whose point is the peak memory). With `--all` it measures instead what
`check --all -c P=2` runs: every named configuration at two processes, safety
and safety with liveness on the default engine, with the engine's parts, so that
a regression in one configuration shows in one run. With `--scc` it also splits each whole
graph into strongly connected components, by liveness.py's iterative Tarjan
and by networkx, which is why liveness does not use networkx. It prints figures; nothing here passes or fails. Wall seconds
depend on what else the machine runs, so the CPU seconds and the load
average are printed beside them.
"""

from __future__ import annotations

import json
import os
import resource
import signal
import subprocess
import sys
import time

LADDER = (
    {},
    {"P": 2, "D": 2, "MaxTime": 2},
    {"P": 3, "D": 1, "MaxTime": 2},
    {"P": 2, "D": 2, "MaxTime": 3},
)
CONFIGURATIONS = ("Holds", "HoldsAcquire")
# Configurations measured at one widening of their own constants besides the ladder:
# the re-export alias is defined at one process, and two are its first widening.
WIDENINGS = (("HoldsAlias", {"P": 2}),)
# What each mode asks of `check`; every mode keeps the same safety verdicts.
MODE_OPTIONS = {
    "safety": {"liveness": False},
    "safety+liveness": {"liveness": True},
    "symmetry": {"liveness": False, "symmetry": True},
    "symmetry+liveness": {"liveness": True, "symmetry": True},
    "fingerprints": {"liveness": False, "fingerprints": True},  # 64-bit fingerprints
}
MODES = tuple(MODE_OPTIONS)
SCC_MODES = ("scc:tarjan", "scc:networkx")  # with --scc: the split alone, on the full graph
# A row whose search passes this many distinct states does not fit: it is cut
# there and reported as such, so the ladder's top rung costs seconds, not hours.
DEFAULT_MAX_STATES = 3_000_000


WORKER_MODES = ("safety", "safety+liveness")  # what `--workers` measures side by side
# What `bench --workers 1,2` measures when no configuration or constants are given: the two
# runs that issue 31 asks two cores to take in at most 0.6 of one's wall time.
WORKER_RUNS = (("Holds", {"P": 2, "D": 2, "MaxTime": 3}, "safety"),
               ("HoldsSealAlias", {"P": 2}, "safety+liveness"))
ALL_MODES = ("safety", "safety+liveness")  # what `--all` measures of every named configuration, default engine
ALL_CONSTANTS = {"P": 2}  # `--all`: every named configuration at its own constants but these
# `--all` measures what `check --all -c P=2` explores: every configuration whole (HoldsSealAlias
# at P=2 has 25.8 million states), so its bound is what fits in memory, not the ladder's.
ALL_MAX_STATES = 100_000_000
ENGINE_MODES = ("safety", "safety+liveness")  # what `--engines` measures with each engine
ENGINES = ("packed", "vector")


def engine_mode(mode: str, engine: str) -> str:
    """The mode name of `mode` run by `engine`: "safety/vector"."""
    return f"{mode}/{engine}"


def split_engine(mode: str) -> tuple[str, str | None]:
    base, _, engine = mode.partition("/")
    return base, engine or None


def worker_mode(mode: str, workers: int) -> str:
    """The mode name of `mode` run with `workers` partitions: "safety@2"."""
    return mode if workers == 1 else f"{mode}@{workers}"


def split_mode(mode: str) -> tuple[str, int]:
    base, _, workers = mode.partition("@")
    return base, int(workers or 1)


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def load_libraries() -> None:
    """Import what a check loads on first use (numpy, scipy's graph routines, the engines)
    before the clocks start: each measurement runs in a fresh process, and loading them,
    about 0.3 CPU seconds, is no part of the search (TLC's rates leave the JVM's start out)."""
    from protocol.run import load_scipy

    load_scipy()
    import protocol.engine.fast  # noqa: F401
    import protocol.engine.vector.explore  # noqa: F401


def measure(name: str, constants: dict, mode: str, max_states: int) -> dict:
    """One measurement, in this process (and its workers, with a worker count)."""
    from protocol.configurations.named import lookup
    from protocol.run import check

    if mode in SCC_MODES:
        return measure_scc(name, constants, mode, max_states)
    mode_with_workers, engine = split_engine(mode)
    base, workers = split_mode(mode_with_workers)
    named = lookup(name).with_constants(constants)
    load_libraries()
    load = round(os.getloadavg()[0], 2)  # what else ran as this began: wall seconds depend on it
    wall, cpu = time.perf_counter(), time.process_time() + children_cpu()
    result = check(named, max_states=max_states, workers=workers, engine=engine, **MODE_OPTIONS[base])
    wall, cpu = time.perf_counter() - wall, time.process_time() + children_cpu() - cpu
    explored = result.reduced_states or result.distinct_states
    record = {**record_of(result, name, named, mode, wall, cpu, explored), "load_average_1min": load,
              "critical_seconds": critical_path(result, cpu)}
    if result.parallel is not None:
        return {**record, **parallel_figures(result, workers, wall)}
    record.update(engine_figures(result, cpu, explored))
    return record


def engine_figures(result, cpu: float, explored: int) -> dict:
    """What `--engines` and `--all` compare: the engine that ran (and where the default
    fell back to the packed one, why), states per CPU second, the peak resident bytes
    per state, the vector engine's CPU seconds per part, and the liveness properties it
    evaluated on every state rather than per component (name -> why)."""
    engine = result.engine or {}
    figures = {
        "engine": engine.get("name"),
        "states_per_cpu_second": round(explored / cpu) if cpu else None,
        "bytes_per_state": round(peak_memory_mb() * 2**20 / max(explored, 1), 1),
        "parts": {part: round(seconds, 2) for part, seconds in (result.parts or {}).items()},
    }
    for key in ("why", "liveness_per_state"):
        if key in engine:
            figures["engine_" + key if key == "why" else key] = engine[key]
    return figures


def critical_path(result, cpu: float) -> float | None:
    """The CPU seconds of the longest thread's path: the run's CPU seconds less those its
    threads spent beside another's (threads.Share). On as many idle cores as it has
    threads, about its wall seconds (a bound from below: waiting for the interpreter's
    lock takes no CPU); what a loaded machine's wall seconds cannot tell. None for
    worker processes (their CPU is not this process's)."""
    parallel = result.parallel
    if parallel is None:
        return round(cpu, 2)
    if "overlapped_cpu_seconds" not in parallel:
        return None
    return round(cpu - parallel["overlapped_cpu_seconds"], 2)


def parallel_figures(result, workers: int, wall: float) -> dict:
    """What a partitioned search adds: the workers, their states/s each, the bytes
    exchanged per state, and the peak memory of coordinator and workers together."""
    parallel = result.parallel
    return {
        "workers": workers,
        "states_per_second_per_worker": round(result.distinct_states / wall / workers) if wall else None,
        "bytes_per_state": round(parallel["bytes_exchanged"] / max(result.distinct_states, 1), 1),
        "peak_memory_mb": round(peak_memory_mb() + sum(parallel["worker_peak_bytes"]) / 2**20),
        "level_sizes": parallel["level_sizes"],
    }


def record_of(result, name: str, named, mode: str, wall: float, cpu: float, explored: int) -> dict:
    base, _ = split_mode(split_engine(mode)[0])
    return {
        "config": name,
        "constants": named.config.constants,
        "mode": mode,
        "complete": result.complete,
        "distinct_states": result.distinct_states,
        "reduced_states": result.reduced_states,
        "transitions": result.transitions,
        "depth": result.depth,
        "seconds": round(wall, 2),
        "cpu_seconds": round(cpu, 2),
        "states_per_second": round(explored / wall) if wall else None,
        "peak_memory_mb": round(peak_memory_mb()),
        "as_expected": result.as_expected if MODE_OPTIONS[base]["liveness"] else None,
    }


def measure_scc(name: str, constants: dict, mode: str, max_states: int) -> dict:
    """The whole recorded graph split into strongly connected components, by our
    Tarjan on the edge arrays or by networkx: the split's seconds and the peak memory."""
    from protocol.configurations.named import lookup
    from protocol.run import explore_config
    from protocol.engine.liveness import compressed_rows, strongly_connected_components

    named = lookup(name).with_constants(constants)
    run = explore_config(named.config, record_edges=True, max_states=max_states)
    wall = time.perf_counter()
    if mode == "scc:tarjan":
        offsets, targets, _ = compressed_rows(run.distinct_states, run.edge_src, run.edge_label, run.edge_dst)
        strongly_connected_components(offsets, targets, run.distinct_states)
    else:
        import networkx as nx

        graph = nx.DiGraph()
        graph.add_nodes_from(range(run.distinct_states))
        graph.add_edges_from(zip(run.edge_src, run.edge_dst))
        sum(1 for _ in nx.strongly_connected_components(graph))
    return {
        "config": name, "constants": named.config.constants, "mode": mode, "complete": run.complete,
        "distinct_states": run.distinct_states, "edges": len(run.edge_src),
        "seconds": round(time.perf_counter() - wall, 2), "peak_memory_mb": round(peak_memory_mb()),
    }


def peak_memory_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux: KiB


def measure_fresh(name: str, constants: dict, mode: str, max_states: int) -> dict:
    """One measurement in a fresh interpreter, so the peak memory is its own."""
    request = json.dumps([name, constants, mode, max_states])
    done = subprocess.run(
        [sys.executable, "-m", "protocol.tools.bench", "--one", request],
        capture_output=True, text=True, check=False,
    )
    if done.returncode == -signal.SIGINT or "KeyboardInterrupt" in done.stderr:
        raise KeyboardInterrupt  # the Ctrl-C reached the child first: stop the ladder
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        return {"config": name, "constants": constants, "mode": mode, "error": last}
    return json.loads(done.stdout)


def measure_least(name: str, constants: dict, mode: str, max_states: int, repeat: int = 1) -> dict:
    """The measurement of least wall seconds among `repeat`, each in a fresh process (a
    failed one is returned at once). On a shared machine the same run's wall seconds vary
    by a quarter from one run to the next, more than two worker counts differ by; the
    least is the run the machine disturbed least. `seconds_each`: every run's, in order."""
    if repeat == 1:
        return measure_fresh(name, constants, mode, max_states)
    least, each = None, []
    for _ in range(repeat):
        record = measure_fresh(name, constants, mode, max_states)
        if "error" in record:
            return record
        each.append(record["seconds"])
        if least is None or record["seconds"] < least["seconds"]:
            least = record
    return {**least, "runs": repeat, "seconds_each": each}


def ladder(constants_ladder=LADDER, configurations=CONFIGURATIONS, modes=MODES,
           max_states: int = DEFAULT_MAX_STATES, on_record=None, widenings=(), repeat: int = 1) -> list[dict]:
    """Every measurement of the ladder, then of each (configuration, constants) widening.
    Where the unreduced safety search does not fit, liveness and the component split
    are not tried unreduced (they would not fit either); symmetry, which explores
    fewer states, still is."""
    records = []
    runs = [(constants, name) for constants in constants_ladder for name in configurations]
    for constants, name in runs + [(constants, name) for name, constants in widenings]:
        fits = True
        for mode in modes:
            if not fits and (base_mode(mode) == "safety+liveness" or mode in SCC_MODES):
                # said, not silently dropped: the mode's line and cell say why it was not run
                record = {"config": name, "constants": constants, "mode": mode,
                          "skipped": f"not run: safety does not fit in {max_states:,} states"}
            else:
                record = measure_least(name, constants, mode, max_states, repeat)
            records.append(record)
            if on_record is not None:
                on_record(record)
            if base_mode(mode) == "safety":  # with any worker count or engine: the same states
                fits = fits and record.get("complete", False)
    return records


def base_mode(mode: str) -> str:
    """The search a mode runs, without its worker count or engine: "safety+liveness@2" and
    "safety+liveness/vector" are both "safety+liveness". `bench --workers 1,2` said a rung
    did not fit and then ran safety+liveness@2 on it: the skip looked at the bare name only."""
    return split_mode(split_engine(mode)[0])[0]


def worker_runs(counts: tuple, max_states: int, on_record=None, runs=WORKER_RUNS, repeat: int = 1) -> list[dict]:
    """`bench --workers` by default: each of `runs` (configuration, constants, mode) with
    each worker count in `counts`, side by side, each in a fresh process (the least of
    `repeat` such)."""
    records = []
    for name, constants, mode in runs:
        for workers in counts:
            record = measure_least(name, constants, worker_mode(mode, workers), max_states, repeat)
            records.append(record)
            if on_record is not None:
                on_record(record)
    return records


CEILING_VALUES = 2_000_000  # integers each thread's sort takes: about a tenth of a second
CEILING_TRIES = 3


def threads_ceiling(workers: int, job=None, tries: int = CEILING_TRIES) -> float:
    """The least ratio `workers` threads can give on this machine: the wall seconds of
    `workers` jobs on as many threads over theirs one after the other, the least of `tries`.
    The job (by default a numpy sort, which lets go of the interpreter's lock as the vector
    engine's sorts and gathers do) is the same on both sides, so what the ratio shows is
    the machine: 1/workers on idle whole cores, more where cores are hyperthreads or
    shared with other guests. `bench --workers` prints it beside its ratios."""
    import threading

    if job is None:
        import numpy as np

        values = [np.random.default_rng(k).integers(0, 2**40, CEILING_VALUES) for k in range(workers)]
        jobs = [lambda v=v: np.sort(v) for v in values]
    else:
        jobs = [job] * workers

    def one_after_the_other() -> float:
        started = time.perf_counter()
        for each in jobs:
            each()
        return time.perf_counter() - started

    def side_by_side() -> float:
        threads = [threading.Thread(target=each) for each in jobs]
        started = time.perf_counter()
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        return time.perf_counter() - started

    alone = min(one_after_the_other() for _ in range(tries))
    beside = min(side_by_side() for _ in range(tries))
    return round(beside / alone, 2)


def machine() -> dict:
    return {"cpus": os.cpu_count(), "load_average_1min": round(os.getloadavg()[0], 2),
            "python": sys.version.split()[0]}


def main_one(request: str) -> int:
    """The measuring child: its own workers (a --workers mode) die with it, however it ends."""
    from protocol.lifecycle import run_lifecycle

    name, constants, mode, max_states = json.loads(request)
    with run_lifecycle():
        print(json.dumps(measure(name, constants, mode, max_states)))
    return 0


if __name__ == "__main__" and sys.argv[1:2] == ["--one"]:
    sys.exit(main_one(sys.argv[2]))


# ------------------------------------------------------------------ validate

# `bench --validate`: how `validate` scales with a log. The logs are seeded random walks of the
# model written as logs (as `generate` writes its runs: every step, then what it changed), so
# every one is a behaviour; the silent actions are declared in the header only, so each
# silent set is the same run with more left unseen.
VALIDATE_CONFIG = ("Holds", {"P": 2, "D": 60, "MaxTime": 200})
VALIDATE_STATES = 520  # states in the walk: a log of about 1,040 lines
VALIDATE_SEED = 1
VALIDATE_SILENT = (
    ("none", ()),
    ("Publish+Ingest", ("Publish", "Ingest")),
    ("+MaintStep", ("Publish", "Ingest", "MaintStep")),
    ("+InterStep", ("Publish", "Ingest", "MaintStep", "InterStep")),
)
VALIDATE_LENGTHS = (1, 2, 4)  # multiples of VALIDATE_STATES (a run ends early where nothing is enabled)
# The length ladders' silent actions: Publish and Ingest (every value of upper up to MaxTime fits
# between events, fewer as the run nears MaxTime), and the maintenance runtime's steps alone
# (no silent step reaches new globals: a steady state).
VALIDATE_LADDERS = (("Publish", "Ingest"), ("Publish", "MaintStep"))
# The ladders whose logs end with a snapshot, a last line observing every variable (as a
# recorder that dumps the state when its run ends). With Ingest silent, the events after the
# last `upper` a log shows hold every value of upper up to MaxTime, however long the log: a
# cost set by where the run stops against MaxTime, not by its length. A snapshot bounds them
# by the upper it shows, so these ladders measure what the length costs alone.
VALIDATE_SNAPSHOT_LADDERS = (("Publish", "Ingest"),)
# Header-only logs at wide constants (D x (MaxTime + 1) may not pass 1,048,576 instances).
VALIDATE_HEADERS = ({"P": 2, "MaxTime": 1_000_000}, {"P": 8, "D": 1, "MaxTime": 1_000_000})
# A two-line log refused at its step, at wide constants: the verdict and its explanation (the
# state before, the instances enabled there in protocol words), rendered. The explanation costs
# what it shows, not D x MaxTime (issue 57: 82 s at D = MaxTime = 300 before).
VALIDATE_REFUSALS = (({"P": 2, "D": 1000, "MaxTime": 1000}, {"action": "DropPeek", "args": [0]}),)
VALIDATE_TIMEOUT = 120  # seconds a measurement may take before it is reported as not finished
# A measurement under REPEAT_UNDER CPU seconds is taken up to VALIDATE_REPEATS times and the
# least kept: on a shared machine single runs of a second vary by a third, which hides whether
# the ladders' cost is linear.
VALIDATE_REPEATS = 3
REPEAT_UNDER = 5.0
# A runtime step is drawn this many times as often as a controller step, so that the queues
# stay short, as in a system whose runtimes keep up with its controller.
RUNTIME_WEIGHT = 4


def walk(cfg, states: int, seed: int) -> tuple:
    """A seeded random run of `states` states (fewer where nothing is enabled): at each step an
    action drawn by weight among those with an enabled instance, then one of its enabled instances."""
    import random

    from protocol.model.next import RUNTIME_ACTIONS, model_for
    from protocol.model.trace import Step

    model = model_for(cfg)
    by_name: dict = {}
    for instance in model.instances:
        by_name.setdefault(instance.label.name, []).append(instance)
    rng = random.Random(seed)
    state = model.initial_states[0]
    steps = [Step(None, state)]
    while len(steps) < states:
        names = list(by_name)
        moved = None
        while names and moved is None:
            name = rng.choices(names, [RUNTIME_WEIGHT if n in RUNTIME_ACTIONS else 1 for n in names])[0]
            names.remove(name)
            for instance in rng.sample(by_name[name], len(by_name[name])):
                after = instance.step(state)
                if after is not None:
                    moved = Step(instance.label, after)
                    break
        if moved is None:
            break  # nothing is enabled: the run ends here
        steps.append(moved)
        state = moved.state
    return tuple(steps)


def walk_log(name: str, constants: dict, states: int, seed: int, silent=(), snapshot: bool = False) -> str:
    """A walk written as a log (every step, then what it changed), its header declaring `silent`;
    with `snapshot`, a last line observing every variable of the walk's last state."""
    from protocol.configurations.named import lookup
    from protocol.tools.generate import run_log, snapshot as snapshot_line
    from protocol.tools.log import header_line

    cfg = lookup(name).with_constants(constants).config
    steps = walk(cfg, states, seed)
    lines = run_log(name, cfg, steps).rstrip("\n").split("\n")
    lines[0] = header_line(name, cfg, silent)
    if snapshot:
        lines.append(snapshot_line(steps[-1].state))
    return "\n".join(lines) + "\n"


def validate_requests() -> list[dict]:
    """The measurements of `bench --validate`, in order."""
    name, constants = VALIDATE_CONFIG
    requests = [{"case": f"silent {label}", "config": name, "constants": constants, "states": VALIDATE_STATES,
                 "silent": list(silent)} for label, silent in VALIDATE_SILENT]
    ladders = [(silent, False) for silent in VALIDATE_LADDERS] + [(silent, True) for silent in VALIDATE_SNAPSHOT_LADDERS]
    requests += [{"case": f"{times}x length" + (", snapshot" if snapshot else ""), "config": name,
                  "constants": constants, "states": VALIDATE_STATES * times, "silent": list(silent),
                  "snapshot": snapshot, "ladder": "+".join(silent) + " silent" + (", ending with a snapshot" if snapshot else "")}
                 for silent, snapshot in ladders for times in VALIDATE_LENGTHS]
    requests += [{"case": "header only", "config": name, "constants": header, "states": 0, "silent": []}
                 for header in VALIDATE_HEADERS]
    requests += [{"case": "refused, explained", "config": name, "constants": header, "states": 0, "silent": [],
                  "refusal": event} for header, event in VALIDATE_REFUSALS]
    return requests


def measure_validate(request: dict) -> dict:
    """One validation, in this process: the log is made first, then read and followed (timed)."""
    from protocol.tools.log import header_line, parse
    from protocol.tools.validate import TooAmbiguous, validate
    from protocol.configurations.named import lookup

    name, constants = request["config"], request["constants"]
    if request["states"]:
        text = walk_log(name, constants, request["states"], VALIDATE_SEED, request["silent"], request.get("snapshot", False))
    else:
        text = header_line(name, lookup(name).with_constants(constants).config, request["silent"]) + "\n"
        if "refusal" in request:
            text += json.dumps(request["refusal"]) + "\n"
    wall, cpu = time.perf_counter(), time.process_time()
    try:
        result = validate(parse(text))
        verdict = "a behaviour" if result.is_behaviour else f"refused at event {result.mismatch.event}"
        if "refusal" in request:
            verdict += f", explained in {explained_lines(result)} lines"
        states, open_ = max(result.layer_states), result.open_at_end
    except TooAmbiguous as error:
        verdict, states, open_ = f"too ambiguous ({error})", None, None
    return {**request, "lines": text.count("\n"), "verdict": verdict, "most_states": states, "open_at_end": open_,
            "seconds": round(time.perf_counter() - wall, 3), "cpu_seconds": round(time.process_time() - cpu, 3),
            "peak_memory_mb": round(peak_memory_mb())}


def explained_lines(result) -> int:
    """Render `validate`'s verdict and explanation as the terminal shows them; how many lines."""
    import io

    from rich.console import Console

    from protocol.render.validate import render_validation

    sink = io.StringIO()
    render_validation(Console(file=sink, width=100, color_system=None), result, "refusal.jsonl")
    return sink.getvalue().count("\n")


def measure_validate_fresh(request: dict, timeout: float = VALIDATE_TIMEOUT) -> dict:
    """One validation in a fresh interpreter (its own peak memory), given up after `timeout` seconds."""
    try:
        done = subprocess.run([sys.executable, "-m", "protocol.tools.bench", "--validate-one", json.dumps(request)],
                              capture_output=True, text=True, check=False, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {**request, "error": f"did not finish in {timeout:.0f} s"}
    if done.returncode == -signal.SIGINT or "KeyboardInterrupt" in done.stderr:
        raise KeyboardInterrupt
    if done.returncode != 0:
        return {**request, "error": (done.stderr.strip().splitlines() or ["no output"])[-1]}
    return json.loads(done.stdout)


def measure_validate_least(request: dict, timeout: float = VALIDATE_TIMEOUT, measure=measure_validate_fresh) -> dict:
    """The run of least CPU seconds among up to VALIDATE_REPEATS (one where a run takes
    REPEAT_UNDER seconds or more, or fails); `runs` says how many were taken."""
    least, runs = measure(request, timeout), 1
    while "error" not in least and least["cpu_seconds"] < REPEAT_UNDER and runs < VALIDATE_REPEATS:
        again, runs = measure(request, timeout), runs + 1
        if "error" in again:
            return {**again, "runs": runs}
        least = min(least, again, key=lambda record: record["cpu_seconds"])
    return {**least, "runs": runs}


def validate_ladder(on_record=None, timeout: float = VALIDATE_TIMEOUT) -> list[dict]:
    records = []
    for request in validate_requests():
        record = measure_validate_least(request, timeout)
        records.append(record)
        if on_record is not None:
            on_record(record)
    return records


if __name__ == "__main__" and sys.argv[1:2] == ["--validate-one"]:
    print(json.dumps(measure_validate(json.loads(sys.argv[2]))))
    sys.exit(0)
