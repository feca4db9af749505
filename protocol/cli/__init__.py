"""The command line: parsing, and one module per subcommand. `main` is the entry point
(`python -m protocol`, the `protocol` script); nothing below `protocol/cli/` sees the
parsed arguments as such."""

from protocol.cli.main import main

__all__ = ["main"]
