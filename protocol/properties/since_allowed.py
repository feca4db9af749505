"""SinceAllowed and SinceLeStanding: the published since stays within what was allowed."""

from protocol.model.state import BOTTOM

def _allowed(s) -> int:
    """max_i sent[i]: the most the controller allowed any index id of the point."""
    sent = s.sent
    return sent if isinstance(sent, int) else max(sent)


def since_allowed_witnesses(s, cfg=None) -> list[str]:
    allowed = _allowed(s)
    return [f"since[{p}] = {since} is past {allowed}, the most the controller allowed in AllowCompaction: "
            f"the publisher compacted on a frontier no writer asked for"
            for p, since in enumerate(s.since) if since > allowed]


def since_allowed(s, cfg=None) -> bool:
    """The published since never passes what the controller allowed: for every p,
    since[p] <= max_i sent[i].

    Before the first AllowCompaction the publisher has nothing to compact to; a
    since that rises anyway chases the readers' own holds, and a later read at an
    earlier time is refused (the seeds' feedback loop).
    """
    return all(since_allowed_at(s, p) for p in range(len(s.since)))


def since_allowed_at(s, p: int, cfg=None) -> bool:
    """SinceAllowed on process p: it reads sent and p's since."""
    return s.since[p] <= _allowed(s)


def _standing_entries(value) -> tuple:
    """The standing hold's times (none where it is ⊥: no peer hold is registered, spec 13.4)."""
    if isinstance(value, tuple):
        return value
    return () if value == BOTTOM else (value,)


def since_le_standing_witnesses(s, cfg=None) -> list[str]:
    found = []
    for p, (since, standing) in enumerate(zip(s.since, s.standing)):
        for i, hold in enumerate(_standing_entries(standing)):
            if since > hold:
                whose = "" if isinstance(standing, int) else f" for index id {i}"
                found.append(f"since[{p}] = {since} is past the standing hold{whose} {hold}: the publisher "
                             f"escaped the bound of the interactive runtime's applied frontier")
    return found


def since_le_standing(s, cfg=None) -> bool:
    """The published since is at most every entry of the standing hold (the publisher's
    `debug_assert`): the point compacts no faster than the interactive runtime's stream
    position."""
    return all(since_le_standing_at(s, p) for p in range(len(s.since)))


def since_le_standing_at(s, p: int, cfg=None) -> bool:
    """SinceLeStanding on process p."""
    since = s.since[p]
    return all(since <= hold for hold in _standing_entries(s.standing[p]))



def peer_held_witnesses(s, cfg=None) -> list[str]:
    return [f"process {p}'s maintenance runtime has published the index, but no hold is registered on it "
            f"(standing[{p}] = ⊥): nothing keeps it from compacting past a read still queued"
            for p in range(len(s.published)) if not peer_held_at(s, p)]


def peer_held(s, cfg=None) -> bool:
    """A published index is held from the moment it is published (spec 13.4): for every p,
    published[p] implies standing[p] != ⊥ or orphan[p] != ⊥.

    The peer hold must exist before maintenance can apply any AllowCompaction for the index,
    or a read queued on a lagging interactive runtime is unprotected.
    """
    return all(peer_held_at(s, p) for p in range(len(s.published)))


def peer_held_at(s, p: int, cfg=None) -> bool:
    """PeerHeld on process p (published[p] is None with a static index, published from the start)."""
    return not (s.published[p] is not False and s.standing[p] == BOTTOM
                and (s.orphan[p] is None or s.orphan[p] == BOTTOM))
