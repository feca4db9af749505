"""PhysicalLeCoverage and PhysicalLeCut: physical compaction from the readers' cuts stays within the chain."""

from protocol.model.state import held


def physical_le_coverage_witnesses(s, cfg=None) -> list[str]:
    return [f"physical[{p}] = {ph} is past pub[{p}] = {pub}, the upper the chain covers: batches are merged "
            f"past what the chain holds (a join's assertion fails)"
            for p, (ph, pub) in enumerate(zip(s.physical, s.pub)) if ph > pub]


def physical_le_coverage(s, cfg=None) -> bool:
    """Nothing is merged past what the chain covers: physical[p] <= pub[p] for every p.

    A consumer checks the reported physical compaction against the coverage it
    derives from the batches; a frontier leading it aborts the worker.
    """
    return all(physical_le_coverage_at(s, p) for p in range(len(s.physical)))


def physical_le_coverage_at(s, p: int, cfg=None) -> bool:
    """PhysicalLeCoverage on process p."""
    return s.physical[p] <= s.pub[p]


def physical_le_cut_witnesses(s, cfg=None) -> list[str]:
    return [f"physical[{p}] = {ph} is past peek {d}'s declared cut {cut}: its reader's times were merged"
            for p, ph in enumerate(s.physical) for d, cut in held(s.cut[p]).items() if ph > cut]


def physical_le_cut(s, cfg=None) -> bool:
    """Physical compaction never passes a registered reader's declared cut:
    physical[p] <= cut[p][d] for every d in cut[p]."""
    return all(physical_le_cut_at(s, p) for p in range(len(s.physical)))


def physical_le_cut_at(s, p: int, cfg=None) -> bool:
    """PhysicalLeCut on process p."""
    return all(s.physical[p] <= cut for cut in s.cut[p] if cut is not None)
