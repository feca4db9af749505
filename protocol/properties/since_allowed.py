"""SinceAllowed and SinceLeStanding: the published since stays within what was allowed."""

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
    allowed = _allowed(s)
    return all(since <= allowed for since in s.since)


def _standing_entries(value) -> tuple:
    return value if isinstance(value, tuple) else (value,)


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
    return all(since <= hold for since, standing in zip(s.since, s.standing)
               for hold in _standing_entries(standing))

