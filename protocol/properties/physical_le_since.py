"""PhysicalLeSince: physical compaction never runs ahead of logical compaction."""


def physical_le_since_witnesses(s, cfg=None) -> list[str]:
    return [
        f"physical[{p}] = {ph} is past since[{p}] = {si}: batches merged past "
        f"times the publisher still promises to distinguish"
        for p, (ph, si) in enumerate(zip(s.physical, s.since))
        if ph > si
    ]


def physical_le_since(s, cfg=None) -> bool:
    """The publisher never forwards physical compaction past the published since.

    Physical compaction decides which batches may merge; merging past the
    logical since would erase distinctions between times a reader at the
    since may still ask for.
    """
    return all(physical_le_since_at(s, p) for p in range(len(s.physical)))


def physical_le_since_at(s, p: int, cfg=None) -> bool:
    """PhysicalLeSince on process p."""
    return s.physical[p] <= s.since[p]
