"""No writer floor before the first AllowCompaction, under the acquisition
design. With the floor absent, the publisher falls back to its own agent's
hold, which it raises to the holds it sees: an acquired hold at 1 lifts the
published `since` to 1 while the controller has allowed only 0. SinceAllowed
fails in 4 states (with two peeks, I1 follows in 5). The floor must be
captured at adoption."""
