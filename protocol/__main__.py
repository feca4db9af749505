"""`python -m protocol`: the command line lives in protocol/cli.py.

Kept apart so that subcommand modules import the CLI's helpers from
`protocol.cli`, one module object, instead of a second copy of `__main__`.
"""

import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main())
