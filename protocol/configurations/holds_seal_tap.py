"""The seal wakeup fired from a tap upstream of the publisher's sink. The tap
notifies when the write frontier advances, a scheduling round before the sink
publishes the new upper. A peek that rendered while the published upper was at
its `as_of` parks; the tap's notification came before it parked (or before the
sink published), and when the sink publishes, nothing notifies. If that was the
arrangement's last advance, the peek hangs: PeeksServed fails, a lasso of 5
states. The wakeup must come after the state it announces."""
