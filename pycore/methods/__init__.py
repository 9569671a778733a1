"""The wire methods (see ``docs/PROTOCOL.md`` and :mod:`pycore.wire`), one module per concern.

Importing a module registers its methods in :data:`METHODS` (:mod:`pycore.methods._registry`). These
modules are on the boot path, so at import time they load nothing heavy: pydantic, the adapters, the MCP
client and the agent are imported inside the handlers, on first use.
"""

from pycore.methods import audio, chat, doctor, echo, focus, mcp, mcp_apps, mcp_asks, models, oauth  # noqa: F401 - they register
from pycore.methods._registry import METHODS, Emit, Handler, method

__all__ = ["METHODS", "Emit", "Handler", "method"]
