"""`python -m protocol`: the command line lives in protocol/cli.py.

Kept apart so that the subcommands import their helpers from one module
object, `protocol.subcommands.common`, instead of a second copy of `__main__`.
The signals that end a run are caught before anything else is imported, so
that one arriving while the modules load ends it the same way (one line, exit 1).
"""

import sys

from .lifecycle import catch_signals, how, ignore_signals

catch_signals()
try:
    from .cli import main
except KeyboardInterrupt:  # Ctrl-C, SIGTERM or SIGHUP while the modules load: nothing has run yet
    print(f"protocol: interrupted ({how()}) before any result; nothing written", file=sys.stderr)
    sys.exit(1)

if __name__ == "__main__":
    code = main()
    ignore_signals()  # the run has ended and said how; the interpreter's own exit is not to be cut
    sys.exit(code)
