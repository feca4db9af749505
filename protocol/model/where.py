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


def with_reconnections(cfg) -> bool:
    """The controller may reconnect, E >= 1 times (spec 12.6 and 13)."""
    return getattr(cfg, "E", 0) >= 1


def with_markers(cfg) -> bool:
    """Reconnections queue a Hello on every stream (spec 13)."""
    return with_reconnections(cfg) and getattr(cfg, "hello", "marker") == "marker"


def with_silent_hello(cfg) -> bool:
    """Reconnections as the design's TLA+ model has them: nothing queued, commands carry their epoch (spec 12.6)."""
    return with_reconnections(cfg) and getattr(cfg, "hello", "marker") == "silent"


def with_stateless(cfg) -> bool:
    """The multiplexer forwards every command to both runtimes (spec 13)."""
    return getattr(cfg, "multiplexer", "split") == "stateless"


def with_created_index(cfg) -> bool:
    """The controller creates the index in the stream; a peer hold is registered at publication (spec 13)."""
    return getattr(cfg, "index", "static") == "created"


def unpaired(cfg) -> bool:
    """The publisher's hold is an orphan no peer takes over (spec 13, pairing = none)."""
    return getattr(cfg, "pairing", "fifo") == "none"


def peer_may_be_absent(cfg) -> bool:
    """standing[p] may be ⊥: the index is created late, or Hello clears the hold (spec 13.2)."""
    return with_created_index(cfg) or (with_markers(cfg) and getattr(cfg, "peer_reset", "keep") == "clear")


def with_section_13(cfg) -> bool:
    """The configuration uses section 13 (spec 13.1)."""
    return with_stateless(cfg) or with_created_index(cfg) or with_markers(cfg)


def with_peer_held(cfg) -> bool:
    """PeerHeld belongs here: section 13 with the standing hold (spec 13.4)."""
    return with_section_13(cfg) and with_standing_hold(cfg)
