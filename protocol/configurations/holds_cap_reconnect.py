"""The multiplexer's cap across a reconnection. The cap is per connection:
when the controller reconnects (`Hello`), the multiplexer discards it, while
the runtimes still hold the old connection's commands. A peek's create can
still be queued on the interactive stream when the reconnection lets the
held-back compaction through to maintenance, and the publisher compacts past
the peek's `as_of`. So the cap fails even with one process, where `HoldsCap`
holds: I1 fails in 7 states."""
