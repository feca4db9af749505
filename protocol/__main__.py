"""`python -m protocol`: the command line lives in protocol/cli.py.

Kept apart so that the subcommands import their helpers from one module
object, `protocol.subcommands.common`, instead of a second copy of `__main__`.
"""

import sys

try:
    from .cli import main
except KeyboardInterrupt:  # Ctrl-C while the modules load: nothing has run yet
    print("protocol: interrupted (Ctrl-C) before any result; nothing written", file=sys.stderr)
    sys.exit(1)

if __name__ == "__main__":
    sys.exit(main())
