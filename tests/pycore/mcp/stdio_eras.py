"""Run an official-SDK server over stdio in one MCP era only, as a server built for it would be.

The SDK's ``MCPServer.run("stdio")`` serves both eras, the client's first request choosing (``initialize``: the
handshake; a request with the 2026-07-28 ``_meta`` envelope: that revision). ``modern`` is a server that speaks only
2026-07-28 (``initialize`` gets ``-32022`` naming it); ``legacy`` one that speaks only the handshake revisions
(a ``server/discover`` probe gets ``-32600``). Both are the SDK's own serving loops, entered directly.

    serve(server, "modern")     # in a script's __main__; blocks until stdin closes
"""

from __future__ import annotations

from typing import Literal

import anyio
from mcp.server import runner
from mcp.server.mcpserver import MCPServer
from mcp.server.stdio import stdio_server


async def _serve(server: MCPServer, era: Literal["modern", "legacy"]) -> None:
    low = server._lowlevel_server
    async with stdio_server() as (read, write), low.lifespan(low) as state:
        try:
            if era == "modern":
                await runner._serve_modern_stream(low, read, write, lifespan_state=state, raise_exceptions=False)
            else:
                await runner._serve_legacy_stream(low, read, write, lifespan_state=state, session_id=None,
                                                  init_options=low.create_initialization_options(),
                                                  raise_exceptions=False)
        finally:
            await write.aclose()


def serve(server: MCPServer, era: Literal["modern", "legacy"]) -> None:
    anyio.run(_serve, server, era)
