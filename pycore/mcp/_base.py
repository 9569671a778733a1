"""What the session needs from a transport (streamable HTTP or the legacy HTTP+SSE), and SSE helpers.

Both transports refuse what a hostile server could use against the page (SECURITY.md T-U1, T-Z1):

- a redirect is never followed (no request asks the seam to): it ends the request with
  :class:`~pycore.mcp.errors.MCPRedirectError` naming where it pointed (:func:`redirect_error`), so the
  user's headers, the session id, a token and the message never go to the redirect's target;
- the client reads at most :data:`MAX_MESSAGE_BYTES` of one message: a JSON answer (refused from its
  ``Content-Length`` before a byte is read, else as soon as the bytes read pass the cap:
  :func:`read_message`) or one SSE event (the decoder's cap on an unfinished event, and the size of each
  event: :func:`sse_events`); past it, :class:`~pycore.mcp.errors.MCPTooLargeError` naming the server and
  the cap, and the rest is not read. An error answer's body is read only as far as it is shown.
"""

from __future__ import annotations

import asyncio
from abc import ABC, abstractmethod
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Final

from mcp_types.jsonrpc import JSONRPCMessage

from pycore.decoders import SSEDecoder, SSEEvent, UnitTooLargeError
from pycore.exceptions import APIConnectionError
from pycore.http import Response, Transport, redirect_target
from pycore.http.origin import same_origin
from pycore.mcp.errors import MCPError, MCPRedirectError, MCPTooLargeError

MAX_MESSAGE_BYTES: Final = 8 * 1024 * 1024
"""The most the client reads of one message from an MCP server. A 40 MB ``tools/list`` froze the page for
18 s and 100 MB crashed the tab (SECURITY.md T-Z1): every message is parsed, validated and handed to the
page whole. 8 MiB holds any real tool list or tool result (an image a vendor accepts is at most a few MB,
base64 included) while bounding that work; ``ClientSession(max_message_bytes=...)`` changes it."""
ERROR_BODY_BYTES: Final = 64 * 1024  # read of an error answer: only its start is ever shown

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
        max_message_bytes: int = MAX_MESSAGE_BYTES,
    ) -> None:
        self.url = url
        self._http = http
        self._headers = dict(headers or {})
        self._timeout = timeout
        self._max_message = max_message_bytes
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


async def sse_events(response: Response, url: str, limit: int = MAX_MESSAGE_BYTES
                     ) -> AsyncGenerator[SSEEvent, None]:
    """The events of the SSE body of an answer from ``url``; a dropped connection simply ends the iteration.
    An event past ``limit`` bytes (complete or not) raises :class:`MCPTooLargeError`."""
    decoder = SSEDecoder(max_event_bytes=limit)
    try:
        async with _body(response) as chunks:
            async for chunk in chunks:
                for event in decoder.feed(chunk):
                    if len(event.data) > limit:  # complete in one chunk: the decoder never held it unfinished
                        raise too_large(url, limit)
                    yield event
        for event in decoder.finish():
            yield event
    except APIConnectionError:
        return
    except UnitTooLargeError:
        raise too_large(url, limit) from None
    finally:
        await response.aclose()


async def read_message(response: Response, url: str, limit: int = MAX_MESSAGE_BYTES) -> bytes:
    """The body of a JSON answer from ``url``, closed after; :class:`MCPTooLargeError` past ``limit`` bytes,
    before reading when its ``Content-Length`` says so, else as soon as the bytes read pass it."""
    declared = response.headers.get("content-length", "")
    if declared.isascii() and declared.isdigit() and int(declared) > limit:
        await response.aclose()
        raise too_large(url, limit)
    chunks: list[bytes] = []
    size = 0
    async with _body(response) as body:
        async for chunk in body:
            size += len(chunk)
            if size > limit:
                raise too_large(url, limit)
            chunks.append(chunk)
    return b"".join(chunks)


async def read_prefix(response: Response, limit: int = ERROR_BODY_BYTES) -> bytes:
    """At most the first ``limit`` bytes of a body (an error answer's, to show its start); closes it."""
    chunks: list[bytes] = []
    size = 0
    async with _body(response) as body:
        async for chunk in body:
            chunks.append(chunk)
            size += len(chunk)
            if size >= limit:
                break
    return b"".join(chunks)[:limit]


@asynccontextmanager
async def _body(response: Response) -> AsyncIterator[AsyncIterator[bytes]]:
    """The body's chunks; after, the response is closed (aborting what is still arriving) and so is the
    iterator, even when reading stopped half-way."""
    chunks = response.aiter_bytes()
    try:
        yield chunks
    finally:
        await response.aclose()
        close = getattr(chunks, "aclose", None)
        if close is not None:
            await close()


def too_large(url: str, limit: int) -> MCPTooLargeError:
    size = f"{limit // (1024 * 1024)} MiB" if limit % (1024 * 1024) == 0 else f"{limit} bytes"
    return MCPTooLargeError(f"the MCP server at {url} sent a message larger than {size}, the most this client "
                            "reads of one message; refused, and the rest of it not read (too many tools, or a "
                            "result too large to show?)", url=url)


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
