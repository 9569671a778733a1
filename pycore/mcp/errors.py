"""Errors raised by the MCP client. Each one says what went wrong and what the user can do.

The hierarchy::

    OrizuruError
    └── MCPError
        ├── MCPConnectionError          the server cannot be reached (refused, DNS, bad URL)
        │   └── MCPConnectionLostError  the connection dropped while a request was waiting
        ├── MCPTimeoutError             a request got no answer in time (cancelled on the server)
        ├── MCPAuthRequiredError        401: the server wants credentials (the OAuth flow catches this)
        │   └── MCPInsufficientScopeError   403 insufficient_scope: the token lacks a scope (step-up)
        ├── MCPCORSError                the browser hid a header the server needs back (Mcp-Session-Id)
        ├── MCPHTTPError                any other unexpected HTTP status
        │   └── MCPRedirectError        a redirect: never followed (``location``: where, if the browser shows it)
        ├── MCPProtocolError            a body that is not valid JSON-RPC / MCP
        │   ├── MCPUnsupportedVersionError  the server negotiated a protocol version we do not speak
        │   ├── MCPPaginationError          a list that never ends (repeated cursor, too many pages)
        │   └── MCPTooLargeError            an answer or event past the message cap (``_base.MAX_MESSAGE_BYTES``)
        ├── MCPRPCError                 the server answered with a JSON-RPC error (code, message, data)
        └── OAuthError                  the OAuth flow cannot go on (unsafe metadata, bad callback, refused grant)
            └── OAuthCallbackError      a callback that is not ours (state, iss): discarded, never shown
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar
from urllib.parse import urlsplit

from pycore.exceptions import OrizuruError


class MCPError(OrizuruError):
    error_code: ClassVar[str] = "mcp_error"

    def __init__(self, message: str, *, url: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.url = url


class MCPConnectionError(MCPError):
    error_code: ClassVar[str] = "mcp_unreachable"

    @classmethod
    def unreachable(cls, url: str) -> MCPConnectionError:
        """No answer at all. In a browser the cause is only ``TypeError: Failed to fetch`` (down, offline, or a
        CORS refusal look the same), so the sentence names the host and what to do, not the runtime's words."""
        return cls(f"Couldn't reach the MCP server at {host(url)}: it may be down or blocking this page (CORS). "
                   f"{AGAIN}", url=url)


class MCPConnectionLostError(MCPConnectionError):
    error_code: ClassVar[str] = "mcp_connection_lost"

    @classmethod
    def dropped(cls, url: str) -> MCPConnectionLostError:
        return cls(f"The MCP server at {host(url)} dropped the connection before answering. {AGAIN}", url=url)


AGAIN = "Check it's running, then Reconnect in Tools."


def host(url: str) -> str:
    return urlsplit(url).netloc or url


class MCPTimeoutError(MCPError):
    error_code: ClassVar[str] = "mcp_timeout"


class MCPHTTPError(MCPError):
    error_code: ClassVar[str] = "mcp_http"

    def __init__(
        self, message: str, *, status: int, url: str | None = None, headers: Mapping[str, str] | None = None,
        body: str = "",
    ) -> None:
        super().__init__(message, url=url)
        self.status = status
        self.headers = {k.lower(): v for k, v in (headers or {}).items()}
        self.body = body


class MCPRedirectError(MCPHTTPError):
    """The server answered with a redirect. It is not followed: the request would go to the new address with
    every header (the user's own, the session, a token) and its body. ``location`` is where it pointed, or
    ``None`` in a browser, which hides it (status 0)."""
    error_code: ClassVar[str] = "mcp_redirect"

    def __init__(self, message: str, *, status: int, url: str | None = None,
                 headers: Mapping[str, str] | None = None, location: str | None = None) -> None:
        super().__init__(message, status=status, url=url, headers=headers)
        self.location = location


class MCPAuthRequiredError(MCPHTTPError):
    """401. ``www_authenticate`` keeps the challenge (``resource_metadata``, ``scope``) for the OAuth flow."""
    error_code: ClassVar[str] = "mcp_auth_required"

    @property
    def www_authenticate(self) -> str | None:
        return self.headers.get("www-authenticate")


class MCPInsufficientScopeError(MCPAuthRequiredError):
    """403 with ``error="insufficient_scope"``: authorize again with the challenged ``scope`` (bounded)."""
    error_code: ClassVar[str] = "mcp_insufficient_scope"


class MCPCORSError(MCPError):
    error_code: ClassVar[str] = "mcp_cors"


class MCPProtocolError(MCPError):
    error_code: ClassVar[str] = "mcp_protocol"


class MCPUnsupportedVersionError(MCPProtocolError):
    error_code: ClassVar[str] = "mcp_unsupported_version"


class MCPPaginationError(MCPProtocolError):
    error_code: ClassVar[str] = "mcp_protocol"


class MCPTooLargeError(MCPProtocolError):
    """An answer (a JSON body) or one SSE event larger than the client reads of one message: refused, and the
    rest of it not read (SECURITY.md T-Z1)."""
    error_code: ClassVar[str] = "mcp_too_large"


class MCPRPCError(MCPError):
    error_code: ClassVar[str] = "mcp_server_error"

    def __init__(self, code: int, message: str, data: Any = None, *, url: str | None = None) -> None:
        super().__init__(f"MCP error {code}: {message}", url=url)
        self.code = code
        self.rpc_message = message
        self.data = data


class MCPSessionExpiredError(MCPHTTPError):
    """404 on a request that carried ``Mcp-Session-Id`` (or 400 naming the session, as the TypeScript SDK's servers
    answer): the server no longer knows the session (restarted, or it timed out); it must be initialized again."""
    error_code: ClassVar[str] = "mcp_session_expired"


class OAuthError(MCPError):
    """The OAuth flow stopped. ``code`` is the OAuth error code when an authorization server sent one."""
    error_code: ClassVar[str] = "oauth_failed"

    def __init__(self, message: str, *, url: str | None = None, code: str | None = None) -> None:
        super().__init__(message, url=url)
        self.code = code


class OAuthCallbackError(OAuthError):
    """A redirect we did not ask for, or one from the wrong issuer: nothing in it is acted on or displayed."""
    error_code: ClassVar[str] = "oauth_failed"
