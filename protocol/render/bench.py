"""Rendering the benchmark with rich: one row per configuration and rung of
constants. Knows nothing of the search; it draws `protocol.tools.bench` records."""

from __future__ import annotations

from rich import box
from rich.table import Table
from rich.text import Text


def constants_text(constants: dict) -> str:
    return ",".join(f"{name}={value}" for name, value in constants.items())


def figure(record: dict | None, key: str, unit: str = "") -> Text:
    """One cell: the figure, "cut" where the run did not fit, "–" where it was not run."""
    if record is None:
        return Text("–", style="dim")
    if "error" in record:
        return Text("error", style="red")
    if "skipped" in record:
        return Text("not run", style="dim")
    if not record["complete"]:
        return Text("cut", style="yellow")
    value = record[key]
    if value is None:
        return Text("–", style="dim")
    if isinstance(value, float):
        return Text(f"{value:.2f}{unit}")
    return Text(f"{value:,}{unit}")


def rows(records: list[dict]) -> dict:
    """(config, constants) -> {mode: record}, in the order measured."""
    grouped: dict = {}
    for record in records:
        key = (record["config"], constants_text(record["constants"]))
        grouped.setdefault(key, {})[record["mode"]] = record
    return grouped


# Fifteen columns with their figures need about 230 columns; below this width each measurement is a row
# of its own (configuration, constants, mode and its figures), so nothing is cut.
WIDE = 240


def bench_table(records: list[dict], machine: dict, max_states: int, width: int = 200) -> Table:
    if width < WIDE:
        return long_table(records, machine, max_states)
    caption = (f"{machine['cpus']} CPUs, load average {machine['load_average_1min']} (wall seconds "
               f"grow with it; CPU seconds in brackets), Python {machine['python']}. "
               f"cut: more than {max_states:,} distinct states, does not fit. fp: safety with "
               "--fingerprints (64-bit fingerprints instead of states).")
    table = Table(box=box.SIMPLE_HEAD, title=Text("benchmark", style="bold"), title_justify="left",
                  caption=caption, caption_justify="left")
    for header in ("configuration", "constants", "distinct\nstates", "transitions", "depth",
                   "safety\ns", "safety+\nliveness s", "states/s\n(safety)", "peak MB\n(+liveness)",
                   "symmetry-\nreduced", "symmetry\nsafety s", "symmetry+\nliveness s", "safety\nMB",
                   "fp\ns", "fp\nMB"):
        table.add_column(header, justify="left" if header in ("configuration", "constants") else "right",
                         no_wrap=True)
    for (name, constants), modes in rows(records).items():
        safety, both, reduced, reduced_both, printed = (modes.get(mode) for mode in (
            "safety", "safety+liveness", "symmetry", "symmetry+liveness", "fingerprints"))
        table.add_row(
            name, constants,
            figure(safety, "distinct_states"), figure(safety, "transitions"), figure(safety, "depth"),
            seconds(safety), seconds(both), figure(safety, "states_per_second"),
            figure(both, "peak_memory_mb"), figure(reduced, "reduced_states"), seconds(reduced),
            seconds(reduced_both), figure(safety, "peak_memory_mb"), figure(printed, "seconds"),
            figure(printed, "peak_memory_mb"),
        )
    return table


def workers_table(records: list[dict], ceiling: dict | None = None) -> Table:
    """The worker counts side by side: wall seconds and their ratio to one worker's (the
    same configuration, constants and mode), CPU seconds, the critical path's CPU seconds
    and their ratio to one worker's, states/s per worker, bytes per state, peak memory and
    the load average as each run began; with `ceiling` (tools.bench.threads_ceiling's
    workers and ratio), the least ratio the machine itself lets that many threads give."""
    table = Table(box=box.SIMPLE_HEAD, title=Text("workers", style="bold"), title_justify="left",
                  caption=workers_caption(records, ceiling), caption_justify="left")
    for header in ("configuration", "constants", "mode", "workers", "s", "ratio", "CPU s", "critical s",
                   "critical\nratio", "states/s\nper worker", "bytes/\nstate", "peak MB", "load"):
        table.add_column(header, justify="left" if header in ("configuration", "constants", "mode") else "right")
    one = {}
    for record in records:
        base, _, workers = record["mode"].partition("@")
        key = (record["config"], constants_text(record["constants"]), base)
        if not workers:
            one[key] = record
        reference = one.get(key)
        per_worker = record.get("states_per_second_per_worker", record.get("states_per_second"))
        table.add_row(*key, workers or "1", seconds(record), ratio(record, reference, "seconds", "seconds"),
                      figure(record, "cpu_seconds"), figure(record, "critical_seconds"),
                      ratio(record, reference, "critical_seconds", "cpu_seconds"),
                      "–" if per_worker is None else f"{per_worker:,}",
                      str(record.get("bytes_per_state", 0) if "workers" in record else 0),  # else: peak per state
                      figure(record, "peak_memory_mb"), figure(record, "load_average_1min"))
    return table


def workers_caption(records: list[dict], ceiling: dict | None = None) -> str:
    caption = ("ratio: these wall seconds over one worker's; critical: the CPU seconds of the longest thread's "
               "path (the run's CPU less what its threads ran beside another's), about its wall seconds on idle "
               "cores (a bound from below), and their ratio to one worker's CPU seconds; bytes: exchanged between "
               "workers per distinct state (none between threads); load: the 1-minute load average as the run began")
    runs = max((record.get("runs", 1) for record in records), default=1)
    caption += f"; s: the least wall seconds of {runs} runs, each in a fresh process" if runs > 1 else ""
    if ceiling is not None:
        caption += f"; the machine's own ceiling: {ceiling_text(ceiling)}, the least ratio a run can give here"
    return caption


def ceiling_text(ceiling: dict) -> str:
    """What tools.bench.threads_ceiling measured (its workers and ratio), in words."""
    n = ceiling["workers"]
    return f"{n} numpy sorts on {n} threads take {ceiling['ratio']:.2f} of their time one after the other"


def ratio(record: dict, reference: dict | None, key: str, reference_key: str) -> str:
    """record[key] over reference[reference_key], or "–" where either is missing."""
    if not (reference and record.get("complete") and record.get(key) and reference.get(reference_key)):
        return "–"
    return f"{record[key] / reference[reference_key]:.2f}"


def long_table(records: list[dict], machine: dict, max_states: int) -> Table:
    """One row per measurement: what an 80-column terminal shows whole."""
    caption = (f"{machine['cpus']} CPUs, load average {machine['load_average_1min']}, Python {machine['python']}; "
               f"seconds wall (CPU); cut: more than {max_states:,} distinct states")
    table = Table(box=box.SIMPLE_HEAD, title=Text("benchmark", style="bold"), title_justify="left",
                  caption=caption, caption_justify="left", pad_edge=False, padding=(0, 1, 0, 0), show_edge=False)
    table.add_column("configuration\nconstants\nmode", overflow="fold", min_width=17)
    # Each figure cell is a column of short lines (the reduced count under the distinct one,
    # the CPU seconds under the wall ones), so that the table fits 60 columns whole.
    for header in ("distinct\nstates\n(reduced)", "transi-\ntions", "s\n(CPU)", "peak\nMB"):
        table.add_column(header, justify="right", overflow="fold")
    for record in records:
        if record["mode"] in ("scc:tarjan", "scc:networkx"):
            continue
        table.add_row(f"{record['config']}\n{constants_text(record['constants'])}\n{record['mode']}",
                      stacked(figure(record, "distinct_states"), reduced(record)),
                      figure(record, "transitions"), seconds(record, stack=True), figure(record, "peak_memory_mb"))
    return table


def stacked(*cells: Text | None) -> Text:
    return Text("\n").join(cell for cell in cells if cell is not None)


def reduced(record: dict) -> Text | None:
    if record.get("complete") and record.get("reduced_states") is not None:
        return Text(f"({record['reduced_states']:,})", style="dim")
    return None


def scc_table(records: list[dict]) -> Table | None:
    """With --scc: splitting each whole graph into strongly connected components, by
    liveness.py's Tarjan and by networkx; None when none was measured."""
    grouped = {key: modes for key, modes in rows(records).items() if "scc:tarjan" in modes or "scc:networkx" in modes}
    if not grouped:
        return None
    table = Table(box=box.SIMPLE_HEAD, title=Text("strongly connected components of the whole graph", style="bold"),
                  title_justify="left")
    for header in ("configuration", "constants", "edges", "Tarjan s", "Tarjan peak MB", "networkx s",
                   "networkx peak MB"):
        table.add_column(header, justify="left" if header in ("configuration", "constants") else "right",
                         no_wrap=True)
    for (name, constants), modes in grouped.items():
        tarjan, nx = modes.get("scc:tarjan"), modes.get("scc:networkx")
        table.add_row(name, constants, figure(tarjan or nx, "edges"), figure(tarjan, "seconds"),
                      figure(tarjan, "peak_memory_mb"), figure(nx, "seconds"), figure(nx, "peak_memory_mb"))
    return table


def seconds(record: dict | None, stack: bool = False) -> Text:
    text = figure(record, "seconds")
    if record is not None and record.get("complete"):
        text.append(("\n" if stack else " ") + f"({record['cpu_seconds']:.1f})", style="dim")
    return text


def engines_table(records: list[dict]) -> Table:
    """With --engines: the packed and the vector engine side by side per configuration,
    constants and mode (CPU seconds, their ratio, states per CPU second, peak bytes per
    state, peak memory), and the vector engine's CPU seconds per part."""
    table = Table(box=box.SIMPLE_HEAD, title=Text("engines", style="bold"), title_justify="left",
                  caption="vector/packed: the vector engine's CPU seconds over the packed one's; bytes/state: "
                          "peak resident memory over distinct states; parts: the vector engine's CPU seconds",
                  caption_justify="left")
    for header in ("configuration", "constants", "mode", "distinct\nstates", "packed\nCPU s", "vector\nCPU s",
                   "vector/\npacked", "packed\nstates/CPU s", "vector\nstates/CPU s", "packed\nbytes/state",
                   "vector\nbytes/state", "packed\npeak MB", "vector\npeak MB", "vector parts (CPU s)"):
        table.add_column(header, justify="left" if header in ("configuration", "constants", "mode",
                                                              "vector parts (CPU s)") else "right")
    grouped: dict = {}
    for record in records:
        base, _, engine = record["mode"].partition("/")
        grouped.setdefault((record["config"], constants_text(record["constants"]), base), {})[engine] = record
    for key, engines in grouped.items():
        packed, vector = engines.get("packed"), engines.get("vector")
        ratio = "–"
        if packed and vector and packed.get("complete") and vector.get("complete") and packed["cpu_seconds"]:
            ratio = f"{vector['cpu_seconds'] / packed['cpu_seconds']:.2f}"
        parts = ", ".join(f"{part} {value:.2f}" for part, value in (vector or {}).get("parts", {}).items())
        table.add_row(*key, figure(packed or vector, "distinct_states"), figure(packed, "cpu_seconds"),
                      figure(vector, "cpu_seconds"), ratio, figure(packed, "states_per_cpu_second"),
                      figure(vector, "states_per_cpu_second"), figure(packed, "bytes_per_state"),
                      figure(vector, "bytes_per_state"), figure(packed, "peak_memory_mb"),
                      figure(vector, "peak_memory_mb"), Text(parts or "–"))
    return table


def every_configuration_table(records: list[dict], machine: dict) -> Table:
    """With --all: every named configuration's safety and safety+liveness runs on the
    default engine side by side (CPU seconds, their ratio, states per CPU second of
    each, peak memory with liveness), the engine's CPU seconds per part of the liveness run, and
    what the engine could not do per component (a fallback to the packed engine, a
    liveness property evaluated on every state), or why the configuration was refused."""
    table = Table(box=box.SIMPLE_HEAD, title=Text("every configuration", style="bold"), title_justify="left",
                  caption=f"{machine['cpus']} CPUs, load average {machine['load_average_1min']}; CPU seconds; "
                          "live/safe: with liveness over safety alone; parts: the liveness run's CPU seconds, "
                          "those of 5% or more of it",
                  caption_justify="left")
    for header in ("configuration", "constants", "engine", "distinct\nstates", "safety\nCPU s", "+liveness\nCPU s",
                   "live/\nsafe", "states/CPU s\n(safety)", "states/CPU s\n(+liveness)", "peak MB\n(+liveness)",
                   "parts (CPU s)", "note"):
        table.add_column(header, justify="left" if header in ("configuration", "constants", "engine", "parts (CPU s)",
                                                              "note") else "right",
                         overflow="fold")
    for (name, constants), modes in rows(records).items():
        safety, both = modes.get("safety"), modes.get("safety+liveness")
        ratio = "–"
        if safety and both and safety.get("complete") and both.get("complete") and safety["cpu_seconds"]:
            ratio = f"{both['cpu_seconds'] / safety['cpu_seconds']:.2f}"
        shown = both or safety or {}
        table.add_row(name, constants, shown.get("engine") or "–", figure(safety or both, "distinct_states"),
                      figure(safety, "cpu_seconds"), figure(both, "cpu_seconds"), ratio,
                      figure(safety, "states_per_cpu_second"), figure(both, "states_per_cpu_second"),
                      figure(both, "peak_memory_mb"), Text(main_parts(shown) or "–"),
                      Text(note(safety, both)))
    return table


def main_parts(record: dict, share: float = 0.05) -> str:
    """The parts of a run that took at least `share` of its CPU seconds, the largest first."""
    parts = record.get("parts", {})
    least = share * record.get("cpu_seconds", 0.0)
    return ", ".join(f"{part} {value:.2f}" for part, value in sorted(parts.items(), key=lambda item: -item[1])
                     if value >= least and value > 0)


def note(*records: dict | None) -> str:
    """What a row's runs could not do as asked: the error that refused them, the default
    engine's fallback, the liveness properties evaluated on every state."""
    said = []
    for record in records:
        if record is None:
            continue
        for text in ([record["error"]] if "error" in record else []) + \
                ([f"packed: {record['engine_why']}"] if "engine_why" in record else []) + \
                [f"{name} per state: {why}" for name, why in record.get("liveness_per_state", {}).items()]:
            if text not in said:
                said.append(text)
    return "; ".join(said)


def validate_table(records: list[dict], machine: dict) -> Table:
    """`bench --validate`: one row per log, with its verdict, seconds and peak memory."""
    from protocol.tools.bench import REPEAT_UNDER, VALIDATE_REPEATS

    caption = (f"{machine['cpus']} CPUs, load average {machine['load_average_1min']} (wall seconds grow with it; "
               f"CPU seconds beside them), Python {machine['python']}. Each log is a seeded random run "
               "written as a log; the silent actions are declared in its header. A log followed in under "
               f"{REPEAT_UNDER:.0f} CPU seconds is followed {VALIDATE_REPEATS} times, each in a fresh process, "
               "and the run of least CPU is shown." + linearity_text(records))
    table = Table(box=box.SIMPLE_HEAD, title=Text("validate", style="bold"), title_justify="left",
                  caption=caption, caption_justify="left")
    for header in ("log", "constants", "silent", "lines", "verdict", "most states\nfitting", "s", "CPU s",
                   "CPU ms\nper line", "peak MB"):
        table.add_column(header, justify="left" if header in ("log", "constants", "silent", "verdict") else "right")
    for record in records:
        silent = "+".join(record["silent"]) or "none"
        if "error" in record:
            table.add_row(record["case"], constants_text(record["constants"]), silent, "", Text(record["error"], style="red"),
                          "", "", "", "", "")
            continue
        most = record["most_states"]
        table.add_row(record["case"], constants_text(record["constants"]), silent, f"{record['lines']:,}",
                      record["verdict"], "–" if most is None else f"{most:,}", f"{record['seconds']:.2f}",
                      f"{record['cpu_seconds']:.2f}", f"{per_line_ms(record):.2f}" if record["states"] else "–",
                      f"{record['peak_memory_mb']:,}")
    return table


def per_line_ms(record: dict) -> float:
    """CPU milliseconds per line of the log (the header counts as one)."""
    return 1000 * record["cpu_seconds"] / max(record["lines"], 1)


def open_text(open_at_end: dict) -> str:
    """What a log leaves open at its end, short: "upper 150" (a variable and its values there)."""
    return ", ".join(f"{name} {values:,}" for name, values in open_at_end.items()) or "nothing"


def open_ends_text(runs: list[dict]) -> str:
    """What each run of a ladder leaves open at its end (where measured): a log's end holds
    every value its silent actions may still reach there, whatever the log's length."""
    if not all(isinstance(record.get("open_at_end"), dict) for record in runs):
        return ""
    ends = "; ".join(f"{record['case'].split()[0]} {open_text(record['open_at_end'])}" for record in runs)
    return f" (open at the end: {ends})"


def linearity_text(records: list[dict]) -> str:
    """Each length ladder's cost per line at its longer runs, against its shortest run's."""
    ladders: dict = {}
    for record in records:
        if "x length" in record["case"] and "error" not in record and record["lines"]:
            ladder = record.get("ladder") or "+".join(record["silent"]) + " silent"
            ladders.setdefault(ladder, []).append(record)
    said = []
    for ladder, runs in ladders.items():
        base = per_line_ms(runs[0])
        if len(runs) > 1 and base:
            ratios = ", ".join(f"{record['case'].split()[0]} {per_line_ms(record) / base:.2f}" for record in runs[1:])
            said.append(f"{ladder}: {ratios}{open_ends_text(runs)}{line_fit_text(runs)}")
    if not said:
        return ""
    return (f" CPU per line against the 1x run (1.00 is proportional to the log's length), and the straight line"
            f" fitted to the ladder's CPU seconds (a cost paid once plus a cost per line): {'; '.join(said)}.")


def line_fit(runs: list[dict]) -> tuple[float, float, float]:
    """(seconds paid once, milliseconds per line, the largest distance of a run's CPU seconds
    from that line, as a fraction of them): the least-squares line through a ladder's runs."""
    import numpy

    lines = numpy.array([record["lines"] for record in runs], dtype=float)
    seconds = numpy.array([record["cpu_seconds"] for record in runs], dtype=float)
    per_line, once = numpy.polyfit(lines, seconds, 1)
    off = numpy.abs(once + per_line * lines - seconds) / numpy.maximum(seconds, 1e-9)
    return float(once), 1000 * float(per_line), float(off.max())


def line_fit_text(runs: list[dict]) -> str:
    """The line fitted to a ladder of three runs or more (through two it is exact, and says nothing)."""
    if len(runs) < 3:
        return ""
    once, per_line, off = line_fit(runs)
    return f", a line {once:.2f} s + {per_line:.3f} ms per line, every run within {100 * off:.0f}% of it"
