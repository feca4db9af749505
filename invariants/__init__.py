"""The properties moved to `protocol/properties/` (one module per property, named as
in the spec). This entry point stays for readers of the checkout: `import invariants`
gives the same declarations."""

from protocol.properties import *  # noqa: F401,F403
from protocol.properties import LIVENESS, PROPERTIES, declared  # noqa: F401
