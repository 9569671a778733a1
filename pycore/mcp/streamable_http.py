"""The streamable HTTP transport (MCP 2025-11-25, also 2025-03-26 / 2025-06-18 servers).

Every message is one POST; the answer is 202 (notifications, responses), a JSON body, or an SSE
stream that carries the response and any server messages sent on its way. A stream that drops
after an event id is resumed with GET + ``Last-Event-ID`` after the server's ``retry`` (bounded
attempts). After initialization a GET stream carries unsolicited server messages (405: none).
A redirect, on any of these requests, is an error and never followed; an answer or event past the
message cap is refused (:mod:`pycore.mcp._base`).

MCP 2026-07-28 (``modern`` set by the session once ``server/discover`` settled it): no session, no GET stream,
every POST names its JSON-RPC method in ``Mcp-Method``, the tool, prompt or resource in ``Mcp-Name``, and a
``tools/call`` mirrors the arguments its tool marks with ``x-mcp-header`` as ``Mcp-Param-*`` headers
(:func:`pycore.mcp.headers.standard_headers`); an error answered with a 4xx status and a JSON-RPC body is the
server's error (:class:`~pycore.mcp.errors.MCPRPCError`), its sentence shown as it is.
"""

from __future__ import annotations

import asyncio
import functools
from contextlib import aclosing
from types import MappingProxyType

from mcp_types.jsonrpc import JSONRPCError, JSONRPCMessage, JSONRPCRequest, JSONRPCResponse

from pycore.exceptions import APIConnectionError
from pycore.http import Request, Response, is_redirect
from pycore.mcp import jsonrpc
from pycore.mcp._base import MCPTransport, read_message, read_prefix, redirect_error, sse_events
from pycore.mcp.errors import (
    MCPAuthRequiredError,
    MCPConnectionError,
    MCPConnectionLostError,
    MCPCORSError,
    MCPError,
    MCPHTTPError,
    MCPInsufficientScopeError,
    MCPRPCError,
    MCPSessionExpiredError,
)
from pycore.mcp.headers import HeaderMaps, standard_headers

ACCEPT = "application/json, text/event-stream"
MAX_RECONNECTS = 2
INITIAL_RECONNECT_DELAY = 1.0
MAX_RECONNECT_DELAY = 30.0


class StreamableHTTPTransport(MCPTransport):
    modern = False  # MCP 2026-07-28: the standard headers on every POST, no session, no GET stream
    header_maps: HeaderMaps = MappingProxyType({})  # per tool, its x-mcp-header arguments (the session sets them)

    async def start(self) -> None:
        """Nothing to open first: every message is a request of its own (the GET stream opens in listen)."""

    # -- sending -------------------------------------------------------------------------------

    async def send(self, message: JSONRPCMessage) -> None:
        is_init = isinstance(message, JSONRPCRequest) and message.method == "initialize"
        probe = isinstance(message, JSONRPCRequest) and message.method == "server/discover"
        extra = standard_headers(message, self.header_maps) if self.modern or probe else {}
        # A subscriptions/listen answer is a stream that may stay quiet for hours: no wait for its next piece is cut.
        lasting = isinstance(message, JSONRPCRequest) and message.method == "subscriptions/listen"
        response = await self._request("POST", body=jsonrpc.encode(message), initialize=is_init, probe=probe,
                                       extra=extra, lasting=lasting)
        if is_init:
            self.session_id = response.headers.get("mcp-session-id") or None
        if response.status == 202 or not isinstance(message, JSONRPCRequest):
            await response.aclose()
            return
        kind = response.headers.get("content-type", "").split(";")[0].strip().lower()
        if kind == "text/event-stream":
            reader = asyncio.ensure_future(self._read_stream(response, message.id))
            self._tasks.add(reader)
            self._readers[message.id] = reader
            reader.add_done_callback(functools.partial(self._forget, message.id))
        else:
            await self._read_json(response, message.id)

    @property
    def _readers(self) -> dict[int | str, asyncio.Task[None]]:
        """The SSE answers still being read, by request id."""
        readers: dict[int | str, asyncio.Task[None]] = self.__dict__.setdefault("_reader_tasks", {})
        return readers

    def _forget(self, request_id: int | str, task: asyncio.Task[None]) -> None:
        self._tasks.discard(task)
        if self._readers.get(request_id) is task:
            del self._readers[request_id]

    def abandon(self, request_id: int | str) -> None:
        """Stop reading the answer to ``request_id``: its stream is closed, which tells a 2026-07-28 server the
        request was cancelled."""
        reader = self._readers.pop(request_id, None)
        if reader is not None:
            reader.cancel()

    async def _read_json(self, response: Response, request_id: int | str) -> None:
        try:
            body = await read_message(response, self.url, self._max_message)
        except APIConnectionError as e:
            raise MCPConnectionLostError.dropped(self.url) from e
        for message in jsonrpc.parse(body):
            await self._on_message(message)

    async def _read_stream(self, response: Response, request_id: int | str | None) -> None:
        """Dispatch the events of an SSE answer; resume it with GET if it drops before the answer."""
        last_id: str | None = None
        retry_ms: int | None = None
        delay = INITIAL_RECONNECT_DELAY
        for attempt in range(MAX_RECONNECTS + 1):
            try:
                last_id, retry_ms, done = await self._pump(response, request_id, last_id, retry_ms)
            except MCPError as e:
                self._on_failure(request_id, e)
                return
            if done:
                return
            if last_id is None or attempt == MAX_RECONNECTS:
                break
            await asyncio.sleep(retry_ms / 1000 if retry_ms is not None else delay)
            delay = min(delay * 1.5, MAX_RECONNECT_DELAY)
            try:
                response = await self._request("GET", last_event_id=last_id)
            except MCPError as e:
                self._on_failure(request_id, e)
                return
            if response.status != 200:
                await response.aclose()
                break
        self._on_failure(request_id, MCPConnectionLostError.dropped(self.url))

    async def _pump(
        self, response: Response, request_id: int | str | None, last_id: str | None, retry_ms: int | None
    ) -> tuple[str | None, int | None, bool]:
        async with aclosing(sse_events(response, self.url, self._max_message)) as events:
            async for event in events:
                last_id = event.id if event.id is not None else last_id
                retry_ms = event.retry if event.retry is not None else retry_ms
                if event.event != "message" or not event.data.strip():
                    continue  # priming events carry only an id
                for message in jsonrpc.parse(event.data):
                    await self._on_message(message)
                    if _answers(message, request_id):
                        return last_id, retry_ms, True
        return last_id, retry_ms, False

    # -- the GET stream ------------------------------------------------------------------------

    async def listen(self) -> None:
        """Open the GET stream; returns once it is open (or refused) so no server message races it."""
        if self.modern:
            return  # 2026-07-28 has no GET stream
        response = await self._open_get(None)
        if response is not None:
            self.spawn(self._listen(response))

    async def _open_get(self, last_id: str | None) -> Response | None:
        try:
            response = await self._request("GET", last_event_id=last_id)
        except MCPError:
            return None
        if response.status != 200:
            await response.aclose()
            return None  # 405: the server offers no GET stream
        return response

    async def _listen(self, response: Response | None) -> None:
        last_id: str | None = None
        for _ in range(1000):  # the server may close after each batch (SSE polling): reconnect, bounded
            if response is None:
                return
            try:
                last_id, retry_ms, _ = await self._pump(response, None, last_id, None)
            except MCPError:
                return
            await asyncio.sleep((retry_ms or 1000) / 1000)
            response = await self._open_get(last_id)

    # -- HTTP ----------------------------------------------------------------------------------

    def _build_headers(self, method: str, *, initialize: bool, last_event_id: str | None) -> dict[str, str]:
        headers = dict(self._headers)
        if method == "POST":
            headers.update({"accept": ACCEPT, "content-type": "application/json"})
        elif method == "GET":
            headers["accept"] = "text/event-stream"
        if self.session_id and not initialize:
            headers["mcp-session-id"] = self.session_id
        if self.protocol_version and not initialize:
            headers["mcp-protocol-version"] = self.protocol_version
        if last_event_id is not None:
            headers["last-event-id"] = last_event_id
        return headers

    async def _request(
        self, method: str, *, body: bytes | None = None, initialize: bool = False, last_event_id: str | None = None,
        probe: bool = False, extra: dict[str, str] | None = None, lasting: bool = False,
    ) -> Response:
        headers = self._build_headers(method, initialize=initialize, last_event_id=last_event_id) | (extra or {})
        timeout = None if method == "GET" or lasting else self._timeout
        try:
            response = await self._http.send(Request(method, self.url, headers, body, timeout=timeout))
        except APIConnectionError as e:
            raise MCPConnectionError.unreachable(self.url) from e
        if is_redirect(response):  # never followed (the seam's default): it would take every header along
            await response.aclose()
            raise redirect_error(self.url, response)
        if method == "POST" and response.status >= 400:
            await self._raise_status(response, sent_session=bool(headers.get("mcp-session-id")),
                                     initialize=initialize or probe)
        return response

    async def _raise_status(self, response: Response, *, sent_session: bool, initialize: bool) -> None:
        status, headers = response.status, response.headers
        try:
            whole = (await read_prefix(response)).decode("utf-8", "replace")
        except APIConnectionError:
            whole = ""
        text, where = whole[:500], self.url
        if self.modern and status != 401:
            _raise_rpc_error(whole, where)
        if status == 401:
            raise MCPAuthRequiredError(f"{where} requires authorization (401)", status=401, url=where,
                                       headers=headers, body=text)
        if status == 403 and "insufficient_scope" in headers.get("www-authenticate", ""):
            raise MCPInsufficientScopeError(f"{where} needs more permissions than the token grants (403 "
                                            "insufficient_scope)", status=403, url=where, headers=headers, body=text)
        if sent_session and (status == 404 or (status == 400 and "session" in text.lower())):
            # The server forgot the session (restarted, or timed out). The specification says 404; the TypeScript
            # SDK's servers (server-everything) answer 400 "No valid session ID provided".
            raise MCPSessionExpiredError(f"{where}: the server no longer knows this session (HTTP {status})",
                                         status=status, url=where, body=text)
        if status == 400 and not initialize and not sent_session and "session" in text.lower():
            raise MCPCORSError(
                f"{where} requires the Mcp-Session-Id header, but its initialize response did not expose it. "
                "Server CORS misconfiguration: add 'Access-Control-Expose-Headers: Mcp-Session-Id' (and allow "
                "the Mcp-Session-Id and MCP-Protocol-Version request headers), or connect through the local relay.",
                url=where,
            )
        raise MCPHTTPError(f"{where} answered HTTP {status}: {text[:200]}", status=status, url=where,
                           headers=headers, body=text)

    async def aclose(self) -> None:
        await super().aclose()
        if self.session_id is None:
            return
        headers = self._build_headers("DELETE", initialize=False, last_event_id=None)
        try:
            response = await self._http.send(Request("DELETE", self.url, headers, None, timeout=5.0))
            await response.aclose()  # 405: the server does not let clients end sessions; fine
        except APIConnectionError:
            pass
        self.session_id = None


def _raise_rpc_error(text: str, url: str) -> None:
    """A 2026-07-28 server answers an error with a 4xx and the JSON-RPC error as the body: that error, if so."""
    try:
        messages = jsonrpc.parse(text)
    except MCPError:
        return
    if len(messages) == 1 and isinstance(messages[0], JSONRPCError):
        error = messages[0].error
        raise MCPRPCError(error.code, error.message, error.data, url=url)


def _answers(message: JSONRPCMessage, request_id: int | str | None) -> bool:
    return request_id is not None and isinstance(message, JSONRPCResponse | JSONRPCError) and message.id == request_id


__all__ = ["StreamableHTTPTransport"]
