"""The subcommands of `python -m protocol`: argument parsing and output, one module each.

`protocol.cli` imports only the module of the subcommand it dispatches, so a
broken exporter or renderer cannot stop `check`. What they share (one-line
errors, the options every command takes, the bounds on them, the fate of a
run and the one writer of output files) is in `common`. Nothing in the rest
of the package imports from here.
"""
