"""The legacy HTTP+SSE transport (MCP 2024-11-05), the fallback when POST ``initialize`` is refused.

GET the SSE URL; its first event, ``endpoint``, names the URL to POST messages to. That URL must
have the SSE URL's origin: a server cannot send our messages (and custom headers, such as an
``Authorization`` token) to a third party. It is resolved and compared by :mod:`pycore.http.origin`,
as the browser reads it; a form the browser could read otherwise (``/\\evil.example``, ``///evil.example``,
``http://evil.example\\@host/``) is refused. Server messages arrive as ``message`` events. A redirect of
the stream or of a message is an error and never followed; an event past the message cap ends the
stream (:mod:`pycore.mcp._base`).
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from contextlib import aclosing

from mcp_types.jsonrpc import JSONRPCMessage

from pycore.decoders import SSEEvent
from pycore.exceptions import APIConnectionError
from pycore.http import Request, is_redirect
from pycore.http.origin import AmbiguousURLError, resolve, same_origin
from pycore.mcp import jsonrpc
from pycore.mcp._base import MCPTransport, redirect_error, sse_events
from pycore.mcp.errors import (
    MCPAuthRequiredError,
    MCPConnectionError,
    MCPConnectionLostError,
    MCPError,
    MCPHTTPError,
    MCPProtocolError,
)

_C0_AND_SPACE = "".join(map(chr, range(0x21)))


class LegacySSETransport(MCPTransport):
    endpoint: str | None = None  # where messages are POSTed: the server's first SSE event says

    async def start(self) -> None:
        request = Request("GET", self.url, {**self._headers, "accept": "text/event-stream"}, None, timeout=None)
        try:
            response = await self._http.send(request)
        except APIConnectionError as e:
            raise MCPConnectionError.unreachable(self.url) from e
        if is_redirect(response):  # never followed: it would take every header along
            await response.aclose()
            raise redirect_error(self.url, response)
        if response.status != 200:
            await response.aclose()
            _raise_status(self.url, response.status, response.headers)
        events = sse_events(response, self.url, self._max_message)
        try:
            first = await anext(aiter(events), None)
            self.endpoint = self._endpoint(first)
        except BaseException:
            await events.aclose()
            raise
        self.spawn(self._read(events))

    async def listen(self) -> None:
        """Nothing more to open: the SSE stream that start opened carries every server message."""

    def _endpoint(self, event: SSEEvent | None) -> str:
        if event is None or event.event != "endpoint":
            raise MCPProtocolError(f"{self.url} is not an MCP server: its SSE stream did not start with 'endpoint'")
        named = event.data.strip(_C0_AND_SPACE)  # what the browser strips from both ends of a URL
        try:
            endpoint = resolve(self.url, named)
        except AmbiguousURLError as e:
            raise MCPProtocolError(f"{self.url} named {named!r:.160} as the URL to send messages to, which a browser "
                                   f"may read otherwise ({e.reason}); refused", url=self.url) from None
        if not same_origin(endpoint, self.url):
            raise MCPProtocolError(
                f"{self.url} asked us to send messages to another origin ({endpoint}); refused", url=self.url
            )
        return endpoint

    async def _read(self, events: AsyncGenerator[SSEEvent, None]) -> None:
        try:
            async with aclosing(events) as stream:
                async for event in stream:
                    if event.event == "message" and event.data.strip():
                        for message in jsonrpc.parse(event.data):
                            await self._on_message(message)
        except MCPError as e:
            self._on_failure(None, e)
            return
        self._on_failure(None, MCPConnectionLostError.dropped(self.url))

    async def send(self, message: JSONRPCMessage) -> None:
        assert self.endpoint is not None, "start() first"
        headers = {**self._headers, "content-type": "application/json"}
        request = Request("POST", self.endpoint, headers, jsonrpc.encode(message), timeout=self._timeout)
        try:
            response = await self._http.send(request)
            await response.aclose()
        except APIConnectionError as e:
            raise MCPConnectionError.unreachable(self.endpoint) from e
        if is_redirect(response):
            raise redirect_error(self.endpoint, response)
        if response.status >= 300:
            _raise_status(self.endpoint, response.status, response.headers)


def _raise_status(url: str, status: int, headers: dict[str, str]) -> None:
    if status == 401:
        raise MCPAuthRequiredError(f"{url} requires authorization (401)", status=401, url=url, headers=headers)
    raise MCPHTTPError(f"{url} answered HTTP {status}", status=status, url=url, headers=headers)
