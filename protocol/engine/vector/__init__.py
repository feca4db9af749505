"""The vector engine: a breadth-first level at a time as sorted integer arrays."""
