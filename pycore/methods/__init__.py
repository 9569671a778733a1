"""The wire methods (see ``docs/PROTOCOL.md`` and :mod:`pycore.wire`), one module per concern.

Importing a module registers its methods in ``pycore.wire.METHODS``. These modules are on the
boot path, so at import time they load nothing heavy: pydantic, the adapters, the MCP client and
the agent are imported inside the handlers, on first use.
"""

from pycore.methods import (  # noqa: F401 - imported to register their methods  # noqa: E402,F401 - OAuth (mcp.oauth_*) and the CORS doctor (mcp.doctor)
    chat,
    doctor,
    focus,  # noqa: E402,F401 - focus memory (focus.*), registered like the others
    mcp,
    models,
    oauth,
    python,
)
