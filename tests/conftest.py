"""Hypothesis profiles for the fuzzing tests.

- `quick` (the default): a small budget, so `python -m pytest -q` stays fast locally.
- `ci`: a larger budget, selected with HYPOTHESIS_PROFILE=ci (`.ci/run` sets it).

Both print, on a failure, the shrunk example and a `@reproduce_failure(...)`
line (print_blob): paste that decorator above the failing test to rerun
exactly that example. Tests using `hypothesis.find` take a fixed seed and say
it in their failure message instead.
"""

import os

from hypothesis import HealthCheck, settings

# Walks and explorations take milliseconds each, so the per-example deadline
# would only make timing noise fail the suite; too_slow is the same noise.
COMMON = dict(deadline=None, print_blob=True, suppress_health_check=[HealthCheck.too_slow])

settings.register_profile("quick", max_examples=40, **COMMON)
settings.register_profile("ci", max_examples=300, **COMMON)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "quick"))


# ------------------------------------------------------------ the quick run
#
# `python -m pytest -q` (the README's test command) runs in about a minute: a test
# parametrized over the named configurations runs there on the few whose
# exploration takes a fraction of a second, and on the others only in the slow
# run (`-m slow`, which CI adds). QUICK_CONFIGURATIONS are the smallest:
# safety refutations at two processes (HoldsRouted, 8,917 states; HoldsCap,
# 6,907) and at one (HoldsCapReconnect, 691), and three of section 11's. Holds, HoldsUnfair and the rest
# take a second or more per exploration mode; the quick run still checks them
# where a test names them (the manifest, the CLI, liveness), and the pairwise
# covering of switch combinations compares their systems at MaxTime=1.
import pytest  # noqa: E402

QUICK_CONFIGURATIONS = {"HoldsRouted", "HoldsCap", "HoldsCapReconnect",
                        # section 11's smallest, one per new kind of step: a report filtered
                        # (897 states), the cap without the reader bound (498), the tap's wakeup (2,836)
                        "HoldsReportOwnerFilter", "HoldsCapReaderUnbound", "HoldsSealTap"}
# A test that names a larger configuration at smaller constants says so with
# @pytest.mark.quick, and stays in the quick run.


def configuration_names(item) -> set[str]:
    """The named configurations a parametrized test item runs on (by name, or as a NamedConfig)."""
    from protocol.config import NamedConfig, named_configurations

    known = set(named_configurations())
    params = getattr(getattr(item, "callspec", None), "params", {})
    found = set()
    for value in params.values():
        if isinstance(value, NamedConfig):
            found.add(value.name)
        elif isinstance(value, str) and value in known:
            found.add(value)
    return found


def pytest_collection_modifyitems(config, items):
    for item in items:
        if configuration_names(item) - QUICK_CONFIGURATIONS and not item.get_closest_marker("quick"):
            item.add_marker(pytest.mark.slow)
