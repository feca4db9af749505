"""The state of model-spec section 3, declared in one place.

A state is an immutable, hashable NamedTuple of plain tuples, small ints,
strings and frozensets. Per-process variables are tuples indexed by process;
the partial maps `readers[p]` and `acq[p]` are tuples indexed by dataflow id
holding the hold's time, or None where the map has no entry.

Commands are short tuples whose first element names them:
`("Create", d, t)`, `("Drop", d)`, `("Compact", f)`, `("Acquire", d, t)`,
`("Release", d)`.
"""

from __future__ import annotations

from typing import NamedTuple

UNBORN, LIVE, DROPPED = 0, 1, 2
DF_NAMES = ("Unborn", "Live", "Dropped")

CREATE, DROP, COMPACT, ACQUIRE, RELEASE = "Create", "Drop", "Compact", "Acquire", "Release"
COMMAND_ARITY = {CREATE: 2, DROP: 1, COMPACT: 1, ACQUIRE: 2, RELEASE: 1}

GLOBAL_VARIABLES = ("policy", "sent", "upper", "df", "as_of", "caps", "fwd")
PROCESS_VARIABLES = (
    "mq", "iq", "writer", "standing", "since", "physical", "readers", "acq", "released",
)


class State(NamedTuple):
    # Global: the controller, the environment and the multiplexer.
    policy: int  # the controller's own compaction policy for the index
    sent: int  # the last index frontier the controller issued in AllowCompaction
    upper: int  # the index's write frontier
    df: tuple  # df[d]: UNBORN, LIVE or DROPPED
    as_of: tuple  # as_of[d]: 0 while unborn, kept after the drop
    caps: frozenset  # dataflows the multiplexer caps compaction at
    fwd: int  # the last frontier the multiplexer forwarded under the cap
    # Per process p, each a tuple indexed by p.
    mq: tuple  # FIFO of commands for the maintenance runtime
    iq: tuple  # FIFO of commands for the interactive runtime
    writer: tuple  # last index frontier maintenance applied
    standing: tuple  # last index frontier interactive applied (the standing hold)
    since: tuple  # the published logical since of the shared arrangement
    physical: tuple  # the physical compaction frontier the publisher forwarded
    readers: tuple  # readers[p][d]: the import registration's hold, or None
    acq: tuple  # acq[p][d]: the hold installed by Acquire, or None
    released: tuple  # released[p]: frozenset of dataflows released, not yet acted on


def initial(cfg) -> State:
    """The single initial state of spec section 3."""
    P, D = cfg.P, cfg.D
    zeros = (0,) * P
    nothing_held = ((None,) * D,) * P
    return State(
        policy=0,
        sent=0,
        upper=0,
        df=(UNBORN,) * D,
        as_of=(0,) * D,
        caps=frozenset(),
        fwd=0,
        mq=((),) * P,
        iq=((),) * P,
        writer=zeros,
        standing=zeros,
        since=zeros,
        physical=zeros,
        readers=nothing_held,
        acq=nothing_held,
        released=(frozenset(),) * P,
    )


def ctl_since(s: State) -> int:
    """The controller's read frontier: its policy, held back by every live peek's as_of."""
    floor = s.policy
    for d, status in enumerate(s.df):
        if status == LIVE and s.as_of[d] < floor:
            floor = s.as_of[d]
    return floor


def held(partial_map: tuple) -> dict:
    """The entries of a partial map dataflow -> hold."""
    return {d: t for d, t in enumerate(partial_map) if t is not None}


def replace_at(values: tuple, index: int, value) -> tuple:
    """`values` with position `index` set to `value`."""
    return values[:index] + (value,) + values[index + 1:]


def append_all(queues: tuple, *commands) -> tuple:
    """Append `commands` to the queue of every process, in increasing p."""
    return tuple(queue + commands for queue in queues)
