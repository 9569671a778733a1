"""The MCP client: streamable HTTP (+ legacy HTTP+SSE fallback) over the :mod:`pycore.http` seam,
on the official wire types (``mcp_types``). Never imports httpx or ``js``: it runs unchanged in
CPython and in Pyodide, where HTTP goes through the browser's ``fetch``.

Beside the session: :mod:`pycore.mcp.oauth` (OAuth 2.1 for protected servers), :mod:`pycore.mcp.doctor`
(why a browser cannot connect, and the fix), :mod:`pycore.mcp.attach` (resources as message parts, prompts
as slash commands), :mod:`pycore.mcp.icons` (which icons are safe to show)."""

from pycore.mcp.content import ToolOutput, map_result
from pycore.mcp.errors import (
    MCPAuthRequiredError,
    MCPConnectionError,
    MCPConnectionLostError,
    MCPCORSError,
    MCPError,
    MCPHTTPError,
    MCPInsufficientScopeError,
    MCPPaginationError,
    MCPProtocolError,
    MCPRedirectError,
    MCPRPCError,
    MCPSessionExpiredError,
    MCPTimeoutError,
    MCPTooLargeError,
    MCPUnsupportedVersionError,
    OAuthCallbackError,
    OAuthError,
)
from pycore.mcp.session import ClientSession

__all__ = [
    "ClientSession", "ToolOutput", "map_result", "MCPAuthRequiredError", "MCPConnectionError",
    "MCPConnectionLostError", "MCPCORSError", "MCPError", "MCPHTTPError", "MCPInsufficientScopeError",
    "MCPPaginationError", "MCPProtocolError", "MCPRedirectError", "MCPRPCError", "MCPSessionExpiredError",
    "MCPTimeoutError", "MCPTooLargeError", "MCPUnsupportedVersionError", "OAuthCallbackError", "OAuthError",
]
