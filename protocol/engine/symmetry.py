"""Symmetry reduction over processes: one representative per orbit.

Where the model says its processes are interchangeable (`Model.symmetry_refusal`
is None), every action, the initial state and every property treat them
alike, and no state value names a process. So permuting the processes of a state gives a state with the same
future up to the same permutation, and the search may keep one
representative per orbit: the state whose per-process locals are sorted by
their interned id (fast.py packs those ids, so sorting them is sorting a few
ints). Breadth-first levels are unions of orbits, so every shortest length
and the depth are unchanged, and the unreduced counts follow exactly from
the orbit sizes (`Reduction`).

Where a process is special (the read-hold model's cap, fed by process 0's
frontier reports), reducing would merge states with different futures: refused.

Liveness stays sound on the reduced graph because each recorded edge keeps
the permutation it applied: a step s -> s' is stored as r -> canon(s') =
pi(s'), with label id `action id * len(perms) + perm id` (`Permutations`).
The leads-to pairs are indexed by process, so liveness follows a pair
through the permutations (Emerson and Sistla's symmetry under fairness);
see protocol/liveness.py `find_violation_reduced` for what it decides and
when it refuses.
"""

from __future__ import annotations

from itertools import permutations
from math import factorial
from typing import Callable

from protocol.engine import Label


class Permutations:
    """The permutations of P processes, numbered; number 0 is the identity.

    `orders[k]` lists, per position of the representative, the process of the
    concrete state whose locals it holds; `renames[k]` is the inverse: concrete
    process q is called renames[k][q] in the representative.
    """

    def __init__(self, P: int):
        self.P = P
        self.orders = list(permutations(range(P)))
        self.number = {order: k for k, order in enumerate(self.orders)}
        self.renames = [tuple(order.index(q) for q in range(P)) for order in self.orders]

    def __len__(self) -> int:
        return len(self.orders)

    def labels(self, labels: list) -> list:
        """Label per extended label id (action id * len(self) + permutation id)."""
        return [label for label in labels for _ in self.orders]

    def split(self, extended_label: int) -> tuple[int, int]:
        """(action label id, permutation id) of an extended label id."""
        return divmod(extended_label, len(self.orders))

    def then(self, rename: tuple, k: int) -> tuple:
        """The renaming `rename` followed by permutation k's."""
        after = self.renames[k]
        return tuple(after[position] for position in rename)


def edge_canonicalizer(perms: Permutations, bits: int) -> Callable[[int, int], tuple]:
    """(label id, packed successor) -> (label id * P! + the permutation's id, the
    successor's representative), the permutation being the one that sorts the locals."""
    P, K, mask = perms.P, len(perms), (1 << bits) - 1
    ids = [f"(s >> {p * bits}) & {mask}" for p in range(P)]
    if P == 1:
        source = "def canonical_edge(label, s):\n    return (label, s)\n"
    elif P == 2:
        source = (
            "def canonical_edge(label, s):\n"
            f"    a = {ids[0]}\n"
            f"    b = {ids[1]}\n"
            "    if b < a:\n"
            f"        return (label * 2 + 1, s ^ a ^ b ^ (a << {bits}) ^ (b << {bits}))\n"
            "    return (label * 2, s)\n"
        )
    else:
        packed = " | ".join(f"(ids[order[{p}]] << {p * bits})" for p in range(P))
        source = (
            "def canonical_edge(label, s):\n"
            f"    ids = ({', '.join(ids)})\n"
            f"    order = tuple(sorted(range({P}), key=ids.__getitem__))\n"
            f"    return (label * {K} + number[order], (s >> {P * bits} << {P * bits}) | {packed})\n"
        )
    namespace: dict = {"number": perms.number}
    exec(source, namespace)
    return namespace["canonical_edge"]


def canonicalizer(P: int, bits: int) -> Callable[[int], int]:
    """packed state -> its orbit's representative: the locals' ids in ascending order."""
    canonical_edge = edge_canonicalizer(Permutations(P), bits)
    return lambda s: canonical_edge(0, s)[1]


class Reduction:
    """What the reduced search stands for: each representative's orbit size, which
    the checker weighs states by (`explore(weigh=...)`), so the unreduced distinct
    states and transitions, and the --max-states bound on them, are exact."""

    def __init__(self, P: int, bits: int):
        self.P, self.bits, self.mask = P, bits, (1 << bits) - 1
        if P == 2:  # the common case, inline: the two processes alike or not
            self.orbit_size = lambda s: 2 if (s ^ (s >> bits)) & self.mask else 1

    def orbit_size(self, s: int) -> int:
        """How many distinct states permuting the processes of `s` gives: P! / prod(m!)."""
        ids = [(s >> (p * self.bits)) & self.mask for p in range(self.P)]
        size = factorial(self.P)
        for lid in set(ids):
            size //= factorial(ids.count(lid))
        return size


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


def renamed(label: Label, to: tuple, on_process: bool) -> Label:
    """The action instance `label` with its process (its first argument, where it
    acts on one) renamed by `to`."""
    if not on_process:
        return label
    return Label(label.name, to[label.args[0]], *label.args[1:])


def lasso_realizer(engine, perms: Permutations, instances) -> Callable:
    """stored steps of the reduced graph [(extended label id or None, packed state)] ->
    the real run they stand for, [(label, state)], with the renaming it ends in.

    Exact, not a search: the run keeps the renaming g (concrete process q is
    g[q] in the representative), starting from the identity (the initial state
    is its own representative); a stored step by action a of the representative
    is the concrete step by a with its process renamed back by g^-1, and then g
    is followed by the step's permutation. Each concrete state is checked to be
    the stored representative under g.
    """
    step_of = {instance.label: instance.step for instance in instances}
    on_process = {instance.label.name for instance in instances if instance.process is not None}

    def realize(stored_steps: list) -> tuple[list, tuple]:
        state = engine.decode(stored_steps[0][1])
        rename = tuple(range(perms.P))
        steps = [(None, state)]
        for extended, target in stored_steps[1:]:
            action, k = perms.split(extended)
            back = tuple(sorted(range(perms.P), key=rename.__getitem__))  # g^-1
            label = renamed(engine.labels[action], back, engine.labels[action].name in on_process)
            after = step_of[label](state)
            rename = perms.then(rename, k)
            if after is None or renamed_packed(engine, engine.encode(after), rename) != target:
                raise AssertionError(f"{label} does not reach the stored representative: the model is not symmetric")
            steps.append((label, after))
            state = after
        return steps, rename

    return realize


def step_target(engine, perms: Permutations) -> Callable[[int, int], int]:
    """(extended label id, the representative a step reached) -> the state it reached, as
    a transition property must read it beside the step's source: position i of the
    representative holds the locals of the reached state's process perms.orders[k]."""
    K = len(perms)

    def reached(extended_label: int, representative: int) -> int:
        k = extended_label % K
        return representative if k == 0 else renamed_packed(engine, representative, perms.orders[k])

    return reached


def renamed_packed(engine, packed: int, rename: tuple) -> int:
    """The packed state with process q's locals moved to position rename[q]."""
    g, local_ids = engine.unpack(packed)
    moved = [0] * len(local_ids)
    for q, lid in enumerate(local_ids):
        moved[rename[q]] = lid
    return engine.pack(g, moved)
