"""Where a piece of the model exists: one predicate per condition on the switches, the one
table that the state variables, the actions and the properties name under one keyword,
`where` (`Variable(..., where=with_seal)`, `Action(..., where=with_seal)`,
`Property(..., where=with_seal)`), and the switches their `only_with`.

Each takes a configuration (or anything with its switches as attributes: a switch not
there is at its default, so a predicate can be asked before a new switch is declared).
"""

from __future__ import annotations


def everywhere(cfg) -> bool:
    return True


def with_alias(cfg) -> bool:
    """A re-export alias: a second index id Y (spec 10)."""
    return getattr(cfg, "alias", "none") != "none"


def per_id(cfg) -> bool:
    """An alias whose ids keep a frontier each."""
    return getattr(cfg, "alias", "none") == "per_id"


def with_seal(cfg) -> bool:
    """Peeks wait for a seal (spec 11)."""
    return getattr(cfg, "seal", "none") != "none"


def with_reports(cfg) -> bool:
    """The controller frees a hold once every process reported the peek retired (spec 11)."""
    return getattr(cfg, "ctl_release", "cancel") == "report"


def with_cuts(cfg) -> bool:
    """Physical compaction follows the readers' declared cuts (spec 11)."""
    return getattr(cfg, "physical", "from_since") == "from_cuts"


def without_cuts(cfg) -> bool:
    return not with_cuts(cfg)


def agent_floor(cfg) -> bool:
    """No writer floor before any AllowCompaction (spec 11)."""
    return getattr(cfg, "floor", "adoption") == "agent"


def with_standing_hold(cfg) -> bool:
    return getattr(cfg, "standing_hold", False)


def with_acquisition(cfg) -> bool:
    """Acquire with each create and Release with each drop: something to reclaim."""
    return getattr(cfg, "acquire", "none") != "none"


def with_reconnect(cfg) -> bool:
    return getattr(cfg, "reconnect", False)


def with_policy(cfg) -> bool:
    """The controller advances a compaction policy a time at a time (spec 4)."""
    return getattr(cfg, "controller", "policy") == "policy"


def with_free_controller(cfg) -> bool:
    """The controller allows compaction to any later time in one command (spec 12)."""
    return getattr(cfg, "controller", "policy") == "free"


def with_ingest(cfg) -> bool:
    """New data raises the write frontier (spec 4; spec 12 can turn it off)."""
    return getattr(cfg, "ingest", True)


def with_reader_downgrade(cfg) -> bool:
    """A rendered import's registration may rise as its reader makes progress (spec 12)."""
    return getattr(cfg, "reader_downgrade", False)
