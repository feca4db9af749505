"""A late registrar at the bare `as_of`. As `HoldsPeerByReader`, and the lagging
interactive runtime registers the peer hold at the create's `as_of` alone,
without joining it with the published `since`: by then the publisher has
already compacted past it, and the hold is registered below `since`, which
trips the publisher's assertion that `since` never passes the hold
(SinceLeStanding). The join (`Shared::reader_at_least`) is what keeps a late
registration from pointing into compacted history."""
