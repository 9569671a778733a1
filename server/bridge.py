"""Forwarding between one browser MCP session and its own stdio child: every message, unchanged.

Both ends are the official SDK's transports (streamable HTTP or legacy SSE towards the browser,
``stdio_client`` towards the child), so each side sees plain ``SessionMessage`` objects and this module
only moves them. Because each browser session has a child of its own, JSON-RPC ids need no rewriting
and responses can never reach another session.

stdio carries no "which request is this about" information, which streamable HTTP needs to put a
notification or a server->client request on the right response stream. We restore it: a progress
notification goes to the request that issued its ``progressToken``; anything else goes to the one
request in flight if there is exactly one, else to the session's GET stream.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from contextlib import suppress

import anyio
from mcp.client._transport import ReadStream, TransportStreams, WriteStream
from mcp.shared.message import ServerMessageMetadata, SessionMessage
from mcp_types import (
    ErrorData,
    JSONRPCError,
    JSONRPCMessage,
    JSONRPCNotification,
    JSONRPCRequest,
    JSONRPCResponse,
    RequestId,
)

log = logging.getLogger("orizuru.relay")

REQUEST_CANCELLED = -32800  # what the SDK's own 2025-era transport answers for a cancelled request
SERVER_GONE = -32000
CRASH_GRACE = 1.0  # seconds a dead session keeps answering with errors before it is forgotten (then 404)

Note = Callable[[str], None]


class Inflight:
    """Client requests the child has not answered yet, with their progress tokens."""

    def __init__(self) -> None:
        self.requests: dict[str, RequestId] = {}
        self.progress: dict[str | int, RequestId] = {}

    def open(self, request: JSONRPCRequest) -> None:
        self.requests[str(request.id)] = request.id
        meta = (request.params or {}).get("_meta")
        token = meta.get("progressToken") if isinstance(meta, dict) else None
        if isinstance(token, str | int):
            self.progress[token] = request.id

    def close(self, request_id: RequestId | None) -> bool:
        found = self.requests.pop(str(request_id), None) is not None
        self.progress = {t: r for t, r in self.progress.items() if str(r) != str(request_id)}
        return found

    def related(self, message: JSONRPCNotification | JSONRPCRequest) -> RequestId | None:
        if message.method == "notifications/progress":
            token = (message.params or {}).get("progressToken")
            if isinstance(token, str | int) and token in self.progress:
                return self.progress[token]
        if len(self.requests) == 1:
            return next(iter(self.requests.values()))
        return None

    def drain(self) -> list[RequestId]:
        pending = list(self.requests.values())
        self.requests.clear()
        self.progress.clear()
        return pending


def _error(request_id: RequestId, code: int, message: str) -> SessionMessage:
    return SessionMessage(JSONRPCError(jsonrpc="2.0", id=request_id, error=ErrorData(code=code, message=message)))


CLOSED = (anyio.ClosedResourceError, anyio.BrokenResourceError, anyio.EndOfStream)


async def client_to_child(
    browser: TransportStreams, child_write: WriteStream[SessionMessage], inflight: Inflight
) -> None:
    """Until the browser side closes (DELETE, idle timeout, disconnect)."""
    browser_read, browser_write = browser
    with suppress(*CLOSED):
        async for item in browser_read:
            if isinstance(item, Exception):
                continue  # the transport already answered the browser with an HTTP error
            try:
                await forward_to_child(item.message, browser_write, child_write, inflight)
            except CLOSED:
                # The child's stdin is gone: it is dying, and child_to_client will see its stdout end.
                await anyio.sleep_forever()


async def forward_to_child(message: JSONRPCMessage, browser_write: WriteStream[SessionMessage],
                           child_write: WriteStream[SessionMessage], inflight: Inflight) -> None:
    if isinstance(message, JSONRPCRequest):
        inflight.open(message)
    await child_write.send(SessionMessage(message))
    if isinstance(message, JSONRPCNotification) and message.method == "notifications/cancelled":
        # The child will not answer a cancelled request, but this era's HTTP stream only ends with a
        # response: end it the way the SDK's own server does, and let a late answer fall on the floor.
        request_id = (message.params or {}).get("requestId")
        if isinstance(request_id, str | int) and inflight.close(request_id):
            await browser_write.send(_error(request_id, REQUEST_CANCELLED, "Request cancelled"))


async def child_to_client(child_read: ReadStream[SessionMessage | Exception],
                          browser_write: WriteStream[SessionMessage], inflight: Inflight, note: Note) -> bool:
    """Until the child's stdout ends (True) or the browser side is gone (False)."""
    try:
        await _child_to_client(child_read, browser_write, inflight, note)
    except CLOSED:
        return False
    return True


async def _child_to_client(child_read: ReadStream[SessionMessage | Exception],
                           browser_write: WriteStream[SessionMessage], inflight: Inflight, note: Note) -> None:
    async for item in child_read:
        if isinstance(item, Exception):
            note(f"the server wrote a line to stdout that is not JSON-RPC: {str(item)[:300]}")
            continue
        message = item.message
        if isinstance(message, JSONRPCResponse | JSONRPCError):
            if not inflight.close(message.id):
                continue  # answered already (cancelled) or never asked: nobody is waiting
            await browser_write.send(SessionMessage(message))
        else:
            related = inflight.related(message)
            await browser_write.send(SessionMessage(message, ServerMessageMetadata(related_request_id=related)))


async def fail_pending(browser: TransportStreams, inflight: Inflight, reason: str) -> None:
    """The child is gone: every open request gets a JSON-RPC error, and so does anything sent just after."""
    browser_read, browser_write = browser
    with suppress(*CLOSED):
        for request_id in inflight.drain():
            await browser_write.send(_error(request_id, SERVER_GONE, reason))
    with anyio.move_on_after(CRASH_GRACE), suppress(*CLOSED):
        async for item in browser_read:
            if not isinstance(item, Exception) and isinstance(item.message, JSONRPCRequest):
                await browser_write.send(_error(item.message.id, SERVER_GONE, reason))
