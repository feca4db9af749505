"""No fairness. The shipped design accepts that a lagging interactive runtime
holds the publisher back, because the runtimes drain their queues: that is
the weak fairness of `MaintStep`, `InterStep`, `Reclaim` and `Publish`.
Without it a behaviour may stop anywhere, so once the controller allows
compaction (`AdvancePolicy` sends `Compact(1)`) the runtimes may simply never
apply it, and `since` stays behind `sent` forever: the initial state, one
`AdvancePolicy`, then a stutter."""
