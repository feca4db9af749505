"""Symmetry reduction over processes: one representative per orbit.

Without the cap, the processes are interchangeable: every action, the
initial state and every property treat them alike, and no state value names
a process. So permuting the processes of a state gives a state with the same
future up to the same permutation, and the search may keep one
representative per orbit: the state whose per-process locals are sorted by
their interned id (fast.py packs those ids, so sorting them is sorting a few
ints). Breadth-first levels are unions of orbits, so every shortest length
and the depth are unchanged, and the unreduced counts follow exactly from
the orbit sizes (`Reduction`).

With the cap, process 0 is special (its frontier reports retire the cap), so
reducing would merge states with different futures: refused.

Liveness on the quotient is not sound with per-process weak fairness (a
cycle of representatives may rotate which process it starves), as TLC
warns; `check` refuses that combination.
"""

from __future__ import annotations

from math import factorial
from typing import Callable

from .config import ConfigError

SYMMETRY_NEEDS = "processes interchangeable"


def refuse_unless_symmetric(cfg, name: str = "this configuration") -> None:
    if cfg.cap:
        raise ConfigError(
            f"--symmetry needs interchangeable processes, but {name} has the cap, which makes "
            "process 0 special: drop --symmetry"
        )


def refuse_liveness() -> None:
    raise ConfigError(
        "--symmetry reduces safety only: liveness on the quotient is unsound under per-process "
        "fairness (as TLC warns); add --no-liveness, or drop --symmetry"
    )


def canonicalizer(P: int, bits: int) -> Callable[[int], int]:
    """packed state -> its orbit's representative: the locals' ids in ascending order."""
    mask = (1 << bits) - 1
    ids = [f"(s >> {p * bits}) & {mask}" for p in range(P)]
    if P == 1:
        source = "def canonical(s):\n    return s\n"
    elif P == 2:
        source = (
            "def canonical(s):\n"
            f"    a = {ids[0]}\n"
            f"    b = {ids[1]}\n"
            "    if b < a:\n"
            f"        return s ^ a ^ b ^ (a << {bits}) ^ (b << {bits})\n"
            "    return s\n"
        )
    else:
        packed = " | ".join(f"(ids[{p}] << {p * bits})" for p in range(P))
        source = (
            "def canonical(s):\n"
            f"    ids = sorted(({', '.join(ids)}))\n"
            f"    return (s >> {P * bits} << {P * bits}) | {packed}\n"
        )
    namespace: dict = {}
    exec(source, namespace)
    return namespace["canonical"]


class Reduction:
    """Counts what the reduced search stands for: each representative's orbit size
    and out-degree give the unreduced distinct states and transitions exactly."""

    def __init__(self, P: int, bits: int):
        self.P, self.bits, self.mask = P, bits, (1 << bits) - 1
        self.unreduced_transitions = 0
        if P == 2:  # the common case, inline: the two processes alike or not
            self.orbit_size = lambda s: 2 if (s ^ (s >> bits)) & self.mask else 1

    def orbit_size(self, s: int) -> int:
        """How many distinct states permuting the processes of `s` gives: P! / prod(m!)."""
        ids = [(s >> (p * self.bits)) & self.mask for p in range(self.P)]
        size = factorial(self.P)
        for lid in set(ids):
            size //= factorial(ids.count(lid))
        return size

    def counting(self, successors: Callable) -> Callable:
        """`successors`, also adding each expanded state's orbit-weighted out-degree."""
        orbit_size = self.orbit_size

        def counted(s: int):
            found = successors(s)
            self.unreduced_transitions += orbit_size(s) * len(found)
            return found

        return counted

    def unreduced_states(self, representatives) -> int:
        return sum(map(self.orbit_size, representatives))


def realizer(engine, canonical: Callable[[int], int], readable_successors: Callable) -> Callable:
    """stored path through representatives -> a real path of the readable model.

    Each step goes, from the real state reached so far, by the first action
    (in enumeration order) whose successor lies in the next representative's
    orbit; one exists because orbits' futures are permutations of each other.
    """

    def realize(stored_steps: list) -> list:
        state = engine.decode(stored_steps[0][1])  # the initial state is its own representative
        steps = [(None, state)]
        for _, target in stored_steps[1:]:
            for label, after in readable_successors(state):
                if canonical(engine.encode(after)) == target:
                    break
            else:
                raise AssertionError("no step reaches the next orbit: the model is not symmetric")
            steps.append((label, after))
            state = after
        return steps

    return realize


def safety_only(named) -> dict:
    """Refuse --symmetry where the verdict expected is a liveness one (it would go
    unchecked); else the check options are unchanged (an empty dict)."""
    import invariants

    refuse_unless_symmetric(named.config, named.name)
    if named.expected_violation() in invariants.LIVENESS_PROPERTIES:
        raise ConfigError(
            f"{named.name} must violate {named.expected_violation()}, a liveness property, and "
            "--symmetry checks safety only: drop --symmetry"
        )
    return {}
