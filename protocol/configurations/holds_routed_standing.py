"""The standing hold with compaction routed to maintenance only. The
publisher is bounded by the frontier the interactive runtime last applied,
but under routing no `AllowCompaction` ever reaches the interactive runtime:
its standing hold stays at 0, and every compaction the controller allows,
maintenance applies and the publisher never realizes. Nothing is lost (I1
holds: the publisher never moves at all), but compaction stalls for good.
The standing hold is the partner of broadcast, not a fix on its own."""
