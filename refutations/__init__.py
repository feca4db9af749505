"""The named configurations moved to `protocol/configurations/`: `manifest.toml` (every
configuration, its switches, constants, expectations and pinned counts), one module per
refutation whose docstring says why the design fails, and each refutation's golden trace.
This entry point stays for readers of the checkout."""

from protocol.configurations import *  # noqa: F401,F403
