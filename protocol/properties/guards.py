"""The mechanisms that guard each safety property: where one of a property's guards is in
place, no run violates it; where none is, some run does (given room: a peek, a time to
compact to). Each property declares its guards (`Property.guards`), and the tests derive
from them which switches can break which property: an exhaustive search of random small
configurations finds exactly the predicted violations, and no random walk finds another.

I1 fails only where no mechanism orders compaction behind the creates: the standing hold
bounds the publisher by what the interactive runtime has applied; acquisition with the
release on the interactive stream holds the index until the create has rendered; the cap
suffices for one process while the reader's registration bounds the publisher; a
controller that frees a peek's hold only once every process has reported it retired
orders compaction behind the drops (spec 11). A re-export alias kept per id is as safe as
those; a shared alias point (spec 10) is not: X's compaction moves the one writer frontier
and the one standing hold past a peek of Y, whatever acquisition holds, unless the standing
hold never rises (compaction routed). Without a writer floor and without the standing
hold (floor=agent), the publisher rises to a reader's or an acquired hold past what the
controller allowed, and a second peek may then be created below it (I1 with two peek ids);
with an alias, an id whose writer is still absent is left out of the bound, so the other
id's applied frontier passes a queued create of the first.
"""

from __future__ import annotations

from typing import Callable

import attrs


@attrs.frozen
class Guard:
    """A mechanism that keeps a safety property from failing, in a few words, and where it
    is in place (cfg -> bool)."""

    mechanism: str
    holds: Callable = attrs.field(eq=False)


def nothing_to_break(cfg) -> bool:
    """No peek (D = 0), or no time to compact to (MaxTime = 0)."""
    return cfg.D == 0 or cfg.MaxTime == 0


def unfloored(cfg) -> bool:
    """No writer floor and no standing hold: the publisher follows a reader's or an acquired
    hold past what the controller allowed."""
    return cfg.floor == "agent" and not cfg.standing_hold and (cfg.reader_bound or cfg.acquire != "none")


def unfloored_breaks_ordering(cfg) -> bool:
    """Where the missing floor lets a create land below the publisher whatever orders the
    drops: a second peek id to create, or an alias id whose absent writer is left out."""
    return cfg.floor == "agent" and not cfg.standing_hold and (
        (unfloored(cfg) and cfg.D >= 2) or cfg.alias != "none")


NOTHING_TO_BREAK = Guard("no peek, or no time to compact to", nothing_to_break)

def peer_hold_sound(cfg) -> bool:
    """Section 13: the peer hold is registered by whichever runtime pops the index's create first,
    and no reconnection clears it."""
    return getattr(cfg, "peer_by", "publisher") == "publisher" and getattr(cfg, "peer_reset", "keep") == "keep"


I1 = (
    NOTHING_TO_BREAK,
    Guard("the standing hold, with an index of its own", lambda cfg: cfg.standing_hold and cfg.alias != "shared"
          and peer_hold_sound(cfg)),
    Guard("the standing hold never raised (routed compaction) on a shared alias point",
          lambda cfg: cfg.alias == "shared" and cfg.standing_hold and cfg.compaction == "routed"),
    Guard("acquisition released on the interactive stream",
          lambda cfg: (cfg.acquire == "release_on_interactive" and cfg.alias != "shared"
                       and not unfloored_breaks_ordering(cfg))),
    Guard("the cap, on one process, while the reader's registration bounds the publisher",
          lambda cfg: (cfg.cap and cfg.P == 1 and not cfg.reconnect and cfg.reader_bound
                       and not unfloored_breaks_ordering(cfg))),
    Guard("the controller freeing a hold once every process reported the peek retired",
          lambda cfg: (cfg.ctl_release == "report" and cfg.alias != "shared"
                       and not unfloored_breaks_ordering(cfg))),
)

SINCE_ALLOWED = (
    NOTHING_TO_BREAK,
    Guard("the writer floor captured at adoption, or the standing hold", lambda cfg: not unfloored(cfg)),
)

def meets_no_late_hold(cfg) -> bool:
    """Under the meet (`since_rule = meet`, spec 13.1) the published since follows its holds down:
    it never falls only where no hold is registered below it, which the publisher registering the
    peer hold at the join or the as_of ensures, and a reader registering at the join too when
    there is no peek to register late for. Everywhere else since only rises."""
    if getattr(cfg, "since_rule", "rise") != "meet":
        return True
    if cfg.peer_by == "publisher":
        return cfg.peer_at in ("join", "as_of")
    return cfg.peer_at == "join" and cfg.D == 0


PHYSICAL_LE_SINCE = (
    Guard("physical compaction derived from since, not the upper, and a since the meet never lowers below "
          "a hold a reader registered late",
          lambda cfg: cfg.physical != "from_upper" and (cfg.peer_by == "publisher" or meets_no_late_hold(cfg))),
    Guard("no time for the upper to advance to", lambda cfg: cfg.MaxTime == 0),
)

PHYSICAL_LE_COVERAGE = (
    NOTHING_TO_BREAK,
    Guard("a reader's cut starting at the chain's coverage", lambda cfg: cfg.cut_floor == "coverage"),
)

NO_REGRESSION = (
    Guard("one publication point per index id (no shared alias), and a since that only rises or meets no "
          "hold registered below it", lambda cfg: cfg.alias != "shared" and meets_no_late_hold(cfg)),
    Guard("fewer than two frontiers to land (MaxTime < 2), and a since that only rises or meets no hold "
          "registered below it", lambda cfg: cfg.MaxTime < 2 and meets_no_late_hold(cfg)),
    Guard("no time to compact to", lambda cfg: cfg.MaxTime == 0),
)

EVERYWHERE = (Guard("no switch breaks it (only a sabotaged action does)", lambda cfg: True),)

PEER_HELD = (
    Guard("the peer hold registered by whichever runtime pops the index's create first, and kept across a "
          "reconnection", peer_hold_sound),
)

SINCE_LE_STANDING = (
    Guard("no time to compact to", lambda cfg: cfg.MaxTime == 0),
    Guard("a peer hold registered at the join of its as_of and since, or at the as_of by the first runtime to "
          "pop the create, and kept across a reconnection",
          lambda cfg: getattr(cfg, "peer_reset", "keep") == "keep" and (
              getattr(cfg, "peer_at", "join") == "join"
              or (cfg.peer_at == "as_of" and cfg.peer_by == "publisher"))),
)


def guarded(guards: tuple, cfg) -> bool:
    """Whether one of `guards` is in place in `cfg`."""
    return any(guard.holds(cfg) for guard in guards)
