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
