"""NoRegression: frontiers only move forward."""

GLOBAL_MONOTONE = ("policy", "sent", "upper", "fwd")
PROCESS_MONOTONE = ("since", "physical", "writer", "standing")


def no_regression_witnesses(before, after, cfg=None) -> list[str]:
    found = [
        f"{name} fell from {getattr(before, name)} to {getattr(after, name)}"
        for name in GLOBAL_MONOTONE
        if getattr(after, name) < getattr(before, name)
    ]
    for name in PROCESS_MONOTONE:
        for p, (old, new) in enumerate(zip(getattr(before, name), getattr(after, name))):
            if new < old:
                found.append(f"{name}[{p}] fell from {old} to {new}")
    return found


def no_regression(before, after, cfg=None) -> bool:
    """No step lowers a frontier: policy, sent, upper, fwd, and each process's
    since, physical, writer and standing hold.

    A frontier that moved back would let a reader rely on a time the system
    already gave up, or undo a compaction that physically happened.
    """
    for name in GLOBAL_MONOTONE:
        if getattr(after, name) < getattr(before, name):
            return False
    for name in PROCESS_MONOTONE:
        for old, new in zip(getattr(before, name), getattr(after, name)):
            if new < old:
                return False
    return True
