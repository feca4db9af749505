"""Hypothesis profiles for the fuzzing tests.

- `quick` (the default): a small budget, so `python -m pytest -q` stays fast locally:
  20 examples per property, about 1.5 CPU seconds less than 40 over the quick run (the
  hunts of tests/test_fuzz.py, ten times that, still find every refutation).
- `slow`: 40 examples, the budget `.ci/run` gives the slow tests (their hunts draw
  400), so that the quick run's smaller one does not shrink CI's fuzzing.
- `ci`: a larger budget, selected with HYPOTHESIS_PROFILE=ci (`.ci/run` sets it for
  the quick run and the CLI fuzzer).

Both print, on a failure, the shrunk example and a `@reproduce_failure(...)`
line (print_blob): paste that decorator above the failing test to rerun
exactly that example. Tests using `hypothesis.find` take a fixed seed and say
it in their failure message instead.
"""

import gc
import os
import signal

from hypothesis import HealthCheck, settings

# A shell without job control (a CI script's `cmd &`, a `( ... & )` rehearsal) starts
# background commands with SIGINT ignored, and an ignored signal stays ignored across
# exec: every child a test interrupts with Ctrl-C would then ignore it, as protocol
# rightly does for a background job (lifecycle.catch_signals). The tests interrupt
# their children as a terminal's Ctrl-C does, so the session starts as a foreground one;
# a handled signal is back at its default in every child.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

# The explorations allocate small tuples by the million, most of them kept until the
# search ends: at the default threshold (a collection every 700 allocations) the cyclic
# collector walks the young ones again and again, about a tenth of the quick run's CPU.
# Collecting every 50,000 allocations costs a few megabytes more at the peak.
gc.set_threshold(50_000, 10, 10)

# Walks and explorations take milliseconds each, so the per-example deadline
# would only make timing noise fail the suite; too_slow is the same noise.
COMMON = dict(deadline=None, print_blob=True, suppress_health_check=[HealthCheck.too_slow])

settings.register_profile("quick", max_examples=20, **COMMON)
settings.register_profile("slow", max_examples=40, **COMMON)
settings.register_profile("ci", max_examples=300, **COMMON)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "quick"))


# ------------------------------------------------------------ the quick run
#
# `python -m pytest -q` (the README's test command) runs in about a minute: a test
# parametrized over the named configurations runs there on the few whose
# exploration takes a fraction of a second, and on the others only in the slow
# run (`-m slow`, which CI adds). Which are quick is the manifest's to say: each
# configuration's size class (`NamedConfig.size_class`: its `size`, else whether
# its pinned distinct states are at most config.QUICK_STATES). The larger ones
# are still checked in the quick run where a test names them (the manifest, the
# CLI, liveness), and the pairwise covering of switch combinations compares
# their systems at MaxTime=1.
import pytest  # noqa: E402


def quick_configurations() -> set[str]:
    from protocol.configurations.named import named_configurations

    return {name for name, named in named_configurations().items() if named.size_class == "quick"}


# A test that names a larger configuration at smaller constants says so with
# @pytest.mark.quick, and stays in the quick run.


def configuration_names(item, known: set[str]) -> set[str]:
    """The named configurations (of `known`) a parametrized test item runs on (by name, or as a NamedConfig)."""
    from protocol.configurations.named import NamedConfig

    params = getattr(getattr(item, "callspec", None), "params", {})
    found = set()
    for value in params.values():
        if isinstance(value, NamedConfig):
            found.add(value.name)
        elif isinstance(value, str) and value in known:
            found.add(value)
    return found


def pytest_collection_modifyitems(config, items):
    from protocol.configurations.named import named_configurations

    quick, known = quick_configurations(), set(named_configurations())  # read once: a few thousand items
    for item in items:
        if configuration_names(item, known) - quick and not item.get_closest_marker("quick"):
            item.add_marker(pytest.mark.slow)


# ------------------------------------------------------------ the switch sweeps
#
# The slow run's sample of switch combinations (tests/sweeps.py) is drawn by a fresh seed
# each session, chosen here before any test module is imported or any pytest-xdist worker
# starts (a worker inherits the environment), so that every worker collects the same tests.


def pytest_configure(config):
    import sweeps

    refusal = sweeps.mode_refusal()
    if refusal is not None:
        raise pytest.UsageError(refusal)
    os.environ.setdefault(sweeps.SEED_VARIABLE, str(sweeps.SEED))


def pytest_report_header(config):
    import sweeps

    return sweeps.describe()
