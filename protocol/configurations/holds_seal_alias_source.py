"""A seal that notifies only the id of the arrangement's source. Index Y
re-exports X's arrangement and installs no seal signal of its own: Y's
publication notifies Y once, but a later seal notifies only X. A reader of Y
that parks after Y was published is never re-examined, and hangs: PeeksServed
fails, a lasso of 6 states. A seal must notify every id that reads the point
(the closure of its re-exports)."""
