"""I1: a shared arrangement never compacts past the as_of of a dataflow that will read it."""

from protocol.model.commands import CREATE, EPOCH_MARK, bare, command_text
from protocol.model.state import INDEX_NAMES, stranded_on


def i1_witnesses(s, cfg=None) -> list[str]:
    """Every place where a process's published since has passed an as_of it still owes."""
    found = []
    for p, since in enumerate(s.since):
        for command in s.iq[p]:
            if command[0] == CREATE and since > bare(command)[-1]:
                d, t = command[1], bare(command)[-1]
                reads = f" (reading {INDEX_NAMES[command[2]]})" if len(bare(command)) == 4 else ""
                found.append(
                    f"since[{p}] = {since} is past as_of {t} of {command_text(command)}{reads}, "
                    f"still queued on process {p}'s interactive stream"
                )
        stranded = stranded_on(s, p)
        for d, hold in enumerate(s.readers[p]):
            if hold is not None and since > hold and d not in stranded:
                found.append(
                    f"since[{p}] = {since} is past the hold {hold} of peek {d}, "
                    f"rendered and still reading on process {p}"
                )
    return found


def i1(s, cfg=None) -> bool:
    """Every create still queued, and every rendered reader, can read at its as_of.

    Two windows: between the controller's CreatePeek and the interactive
    runtime rendering it (the create waits on iq[p]), and while the rendered
    dataflow stays registered (readers[p]). In both, the process's published
    since must not have passed the time the dataflow reads at. One publication
    point serves both index ids, so since[p] bounds readers of either. A
    reader stranded in a replaced placeholder is exempt: its import never
    receives data, so compaction cannot corrupt what it reads (its defect is
    ImportsBacked's).
    """
    return all(i1_at(s, p) for p in range(len(s.since)))


def i1_at(s, p: int, cfg=None) -> bool:
    """I1 on process p: it reads p's queue, readers and since alone."""
    since = s.since[p]
    if since == 0:
        return True  # nothing is compacted: every time is still readable
    for command in s.iq[p]:
        # a create's as_of is its last argument, before the epoch it carries (spec 12.6)
        if command[0] == CREATE and since > (command[-3] if command[-2] == EPOCH_MARK else command[-1]):
            return False
    stranded = s.stranded[p] or ()
    for d, hold in enumerate(s.readers[p]):
        if hold is not None and since > hold and d not in stranded:
            return False
    return True
