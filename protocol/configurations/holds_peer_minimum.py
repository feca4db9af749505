"""A peer hold seeded at the minimum time. The index is created at `as_of` 1 and
the publisher registers the peer hold at 0, not at the join of the `as_of` and
the published `since`. Under a setter that only rises this costs nothing but
the publisher's assertion: `since` is 1 and the hold it should respect is 0
(SinceLeStanding)."""
