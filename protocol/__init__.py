"""protocol: an executable model of Materialize's two-runtime read-hold protocol,
with an exhaustive model checker. `python -m protocol --help` lists the commands."""
