"""What the session needs from a transport (streamable HTTP or the legacy HTTP+SSE), and SSE helpers.

Both transports refuse what a hostile server could use against the page (SECURITY.md T-U1):

- a redirect is never followed (no request asks the seam to): it ends the request with
  :class:`~pycore.mcp.errors.MCPRedirectError` naming where it pointed (:func:`redirect_error`), so the
  user's headers, the session id, a token and the message never go to the redirect's target.
"""

from __future__ import annotations

import asyncio
from abc import ABC, abstractmethod
from collections.abc import AsyncGenerator, Awaitable, Callable

from mcp_types.jsonrpc import JSONRPCMessage

from pycore.decoders import SSEDecoder, SSEEvent
from pycore.exceptions import APIConnectionError
from pycore.http import Response, Transport, redirect_target
from pycore.http.origin import same_origin
from pycore.mcp.errors import MCPError, MCPRedirectError

OnMessage = Callable[[JSONRPCMessage], Awaitable[None]]
OnFailure = Callable[["int | str | None", MCPError], None]  # request id (None: every pending request)


class MCPTransport(ABC):
    """Carries JSON-RPC messages to the MCP server at ``url`` over ``http`` (with ``headers`` on every
    request); every message received is handed to ``on_message``.

    A request whose answer can no longer arrive (stream lost, body malformed) is failed through
    ``on_failure`` so the session never waits forever.
    """

    protocol_version: str | None = None
    session_id: str | None = None

    def __init__(
        self, url: str, http: Transport, on_message: OnMessage, on_failure: OnFailure, *,
        headers: dict[str, str] | None = None, timeout: float | None = 600.0,
    ) -> None:
        self.url = url
        self._http = http
        self._headers = dict(headers or {})
        self._timeout = timeout
        self._on_message = on_message
        self._on_failure = on_failure
        self._tasks: set[asyncio.Task[None]] = set()

    @abstractmethod
    async def send(self, message: JSONRPCMessage) -> None: ...

    # Abstract rather than no-op defaults: the two transports open their channels at different points,
    # and each says what it does at both (possibly nothing), so neither forgets one silently.
    @abstractmethod
    async def start(self) -> None:
        """Open what must be open before the first message (legacy: the SSE stream)."""

    @abstractmethod
    async def listen(self) -> None:
        """After initialization: open the channel for unsolicited server messages, if any."""

    async def aclose(self) -> None:
        tasks, self._tasks = list(self._tasks), set()
        for task in tasks:
            task.cancel()
        for task in tasks:
            try:
                await task
            except BaseException:  # noqa: S110 - shutting down; the task's error is no longer anyone's
                pass

    def spawn(self, coro: Awaitable[None]) -> None:
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)


async def sse_events(response: Response) -> AsyncGenerator[SSEEvent, None]:
    """The events of an SSE body; a dropped connection simply ends the iteration."""
    decoder = SSEDecoder()
    try:
        async for chunk in response.aiter_bytes():
            for event in decoder.feed(chunk):
                yield event
        for event in decoder.finish():
            yield event
    except APIConnectionError:
        return
    finally:
        await response.aclose()


def redirect_error(url: str, response: Response) -> MCPRedirectError:
    """The error for a redirect answering a request to ``url``: where it pointed, and what to do instead."""
    target = redirect_target(url, response)
    if target is None:
        where, advice = "to another address (the browser does not show where)", "connect to its final address"
    elif same_origin(target, url):
        where, advice = f"to {target:.300}", f"if that is the server's address, connect to {target:.300} instead"
    else:
        where, advice = f"to {target:.300}", "if the server has moved there and you trust it, connect to that address"
    status = f"HTTP {response.status}" if response.status else "a redirect"
    return MCPRedirectError(
        f"{url} redirected the request {where} ({status}); redirects are not followed, so your headers and tokens "
        f"never go to another address: {advice}", status=response.status, url=url, headers=response.headers,
        location=target)
