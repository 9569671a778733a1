"""MCP 2026-07-28 through the relay: sessionless requests, one shared child per configured server.

A 2026-07-28 request (``MCP-Protocol-Version: 2026-07-28``) carries its revision, client info and capabilities in
its ``_meta`` and belongs to no session, so every page's requests for one server go to one child: started on
first use, started again after it exited, stopped once nothing was open for ``idle_timeout`` seconds. A child that
answers ``server/discover`` with an error speaks only the older revisions: it is stopped as soon as nothing is open
(a second copy of a server may fight its session's over files or ports), and the next probes get its refusal
without a process.
Pages choose their JSON-RPC ids and progress tokens themselves, and on one child they would collide: each
request goes on under an id of the relay's own (its progress token too), and its answer comes back under the
page's. What the child writes that is not an answer goes to the request it is about: a progress notification by
its token, a ``subscriptions/listen`` frame by its subscription id (the listen request's id), anything else to
the one open request if there is exactly one (else nowhere).

Over HTTP an answer is plain JSON, with the status the SDK's own server gives its error codes; a request the
child says something about before answering gets an event stream instead, as ``subscriptions/listen`` always
does, kept open for as long as the page listens. A page that goes away cancels its request at the child
(``notifications/cancelled``), which is how a listen stream ends.
"""

from __future__ import annotations

import itertools
import json
import logging
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, suppress
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import anyio
from anyio.abc import TaskGroup, TaskStatus
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp.client._transport import ReadStream, TransportStreams, WriteStream
from mcp.server.streamable_http import check_accept_headers
from mcp.shared.inbound import (
    ERROR_CODE_HTTP_STATUS,
    InboundLadderRejection,
    classify_inbound_request,
    find_duplicated_routing_header,
)
from mcp.shared.message import SessionMessage
from mcp.shared.subscriptions import SUBSCRIPTION_ID_META_KEY
from mcp_types import (
    HEADER_MISMATCH,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    PARSE_ERROR,
    ErrorData,
    JSONRPCError,
    JSONRPCMessage,
    JSONRPCNotification,
    JSONRPCRequest,
    JSONRPCResponse,
    RequestId,
)
from pydantic import ValidationError
from starlette.datastructures import Headers
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.types import Receive, Scope, Send

from server.asgi import read_body
from server.bridge import CLOSED, SERVER_GONE

if TYPE_CHECKING:
    from server.sessions import ServerState

log = logging.getLogger("orizuru.relay")

LABEL = "shared"  # the shared child's name in the server's log and session list
PING_SECONDS = 15.0  # an event stream with nothing to say gets a comment this often (proxies' idle timeouts)
MAX_QUEUED = 256  # messages waiting for one page; notifications past this are dropped, never the answer
SSE_HEADERS = {"Cache-Control": "no-cache, no-transform", "X-Accel-Buffering": "no"}

Answer = JSONRPCResponse | JSONRPCError
Process = Callable[["ServerState", str], AbstractAsyncContextManager[TransportStreams]]


class Gone(Exception):
    """The shared child is stopping: the request goes to the next one."""


@dataclass
class Exchange:
    """One page's request at the shared child, under the relay's id ``key``."""

    page_id: RequestId
    token: object  # the page's progress token, or None
    method: str
    queue: MemoryObjectSendStream[JSONRPCMessage]

    @property
    def listen(self) -> bool:
        return self.method == "subscriptions/listen"


class SharedChild:
    """The running child of one server and the requests open at it."""

    def __init__(self, write: WriteStream[SessionMessage]) -> None:
        self.write = write
        self.open: dict[str, Exchange] = {}
        self.closed = False
        self.refused: ErrorData | None = None  # its answer to server/discover, if an error: an older server
        self._ids = itertools.count(1)
        self._changed = anyio.Event()

    def _touch(self) -> None:
        self._changed.set()
        self._changed = anyio.Event()

    def ask(self, request: JSONRPCRequest) -> tuple[int, MemoryObjectReceiveStream[JSONRPCMessage]]:
        """Opens ``request`` under a relay id (not sent yet: :meth:`send`); raises :class:`Gone` if stopping."""
        if self.closed:
            raise Gone
        key = next(self._ids)
        queue, answers = anyio.create_memory_object_stream[JSONRPCMessage](MAX_QUEUED)
        meta = (request.params or {}).get("_meta")
        token = meta.get("progressToken") if isinstance(meta, dict) else None
        self.open[str(key)] = Exchange(request.id, token, request.method, queue)
        self._touch()
        return key, answers

    async def send(self, key: int, request: JSONRPCRequest) -> None:
        params = dict(request.params or {})
        if isinstance(params.get("_meta"), dict) and "progressToken" in params["_meta"]:
            params["_meta"] = {**params["_meta"], "progressToken": key}
        with suppress(*CLOSED):  # the child is gone: fail_all answers the request
            await self.write.send(SessionMessage(request.model_copy(update={"id": key, "params": params})))

    async def cancel(self, key: int) -> None:
        """The page went away before the answer: the child is told to stop working on it."""
        if self.open.pop(str(key), None) is None:
            return
        self._touch()
        cancelled = JSONRPCNotification(jsonrpc="2.0", method="notifications/cancelled",
                                        params={"requestId": key, "reason": "the page went away"})
        with suppress(*CLOSED):
            await self.write.send(SessionMessage(cancelled))

    def listening(self) -> int:
        return sum(exchange.listen for exchange in self.open.values())

    # ---- from the child --------------------------------------------------------------------------
    async def read(self, child_read: ReadStream[SessionMessage | Exception], note: Callable[[str], None]) -> None:
        """Until the child's stdout ends."""
        async for item in child_read:
            if isinstance(item, Exception):
                note(f"the server wrote a line to stdout that is not JSON-RPC: {str(item)[:300]}")
                continue
            message = item.message
            if isinstance(message, JSONRPCResponse | JSONRPCError):
                exchange = self.open.pop(str(message.id), None)
                if exchange is not None:
                    if exchange.method == "server/discover" and isinstance(message, JSONRPCError):
                        self.refused = message.error
                    self._touch()
                    exchange.queue.send_nowait(message.model_copy(update={"id": exchange.page_id}))
                    exchange.queue.close()
            elif isinstance(message, JSONRPCNotification):
                self._route(message)
            else:
                note(f"the server sent a {message.method} request, which MCP 2026-07-28 has no way to answer")

    def _route(self, message: JSONRPCNotification) -> None:
        params = dict(message.params or {})
        found = params.get("_meta")
        meta: dict[str, Any] = found if isinstance(found, dict) else {}
        if message.method == "notifications/progress" and str(params.get("progressToken")) in self.open:
            exchange = self.open[str(params["progressToken"])]
            params["progressToken"] = exchange.token
        elif SUBSCRIPTION_ID_META_KEY in meta and str(meta[SUBSCRIPTION_ID_META_KEY]) in self.open:
            exchange = self.open[str(meta[SUBSCRIPTION_ID_META_KEY])]
            params["_meta"] = {**meta, SUBSCRIPTION_ID_META_KEY: exchange.page_id}
        else:
            plain = [exchange for exchange in self.open.values() if not exchange.listen]
            if len(plain) != 1:
                return
            exchange = plain[0]
        if exchange.queue.statistics().current_buffer_used < MAX_QUEUED - 1:  # room kept for the answer
            exchange.queue.send_nowait(message.model_copy(update={"params": params}))

    def fail_all(self, reason: str) -> None:
        """The child is gone: every open request gets a JSON-RPC error, and nothing more is accepted."""
        self.closed = True
        for exchange in self.open.values():
            error = ErrorData(code=SERVER_GONE, message=reason)
            exchange.queue.send_nowait(JSONRPCError(jsonrpc="2.0", id=exchange.page_id, error=error))
            exchange.queue.close()
        self.open.clear()

    async def stop_when_idle(self, idle: float, scope: anyio.CancelScope) -> None:
        """Cancels ``scope`` once no request was open for ``idle`` seconds (at once if it refused the probe)."""
        while True:
            changed = self._changed
            if self.open:
                await changed.wait()
                continue
            with anyio.move_on_after(0 if self.refused else idle) as timer:
                await changed.wait()
            if timer.cancelled_caught and not self.open:
                self.closed = True
                scope.cancel()
                return


class SharedChildren:
    """The shared children of a relay's servers, and the HTTP side of their requests."""

    def __init__(self, process: Process, idle_timeout: float, max_listening: int) -> None:
        self.process = process
        self.idle_timeout = idle_timeout
        self.max_listening = max_listening
        self.children: dict[str, SharedChild] = {}
        self.refused: dict[str, ErrorData] = {}  # servers that refused server/discover: older ones, not asked again
        self._lock = anyio.Lock()

    @property
    def listening(self) -> int:
        return sum(child.listening() for child in self.children.values())

    async def child(self, tg: TaskGroup, state: ServerState) -> SharedChild | None:
        """The server's running shared child, started if there is none (None: it could not start)."""
        async with self._lock:
            child = self.children.get(state.spec.name)
            if child is None or child.closed:
                child = await tg.start(self._run, state)
            return child

    async def _run(self, state: ServerState, *, task_status: TaskStatus[SharedChild | None]) -> None:
        name, reason, child = state.spec.name, "the relay stopped", None
        log.info("spawn server=%s session=%s argv=%s", name, LABEL, state.spec.argv)
        try:
            async with self.process(state, LABEL) as (child_read, child_write):
                child = self.children[name] = SharedChild(child_write)
                state.sessions.add(LABEL)
                task_status.started(child)
                async with anyio.create_task_group() as tg:
                    tg.start_soon(child.stop_when_idle, self.idle_timeout, tg.cancel_scope)
                    await child.read(child_read, lambda text: state.log.add(LABEL, text, kind="relay"))
                    reason = "the MCP server process exited"
                    tg.cancel_scope.cancel()
                self._forget(state, child, reason)
        except OSError as e:
            reason = f"could not start {state.spec.command!r}: {e.strerror or e}"
            if child is None:
                task_status.started(None)
        finally:
            if child is not None:
                self._forget(state, child, "the relay stopped")
        if reason != "the relay stopped":
            state.failures += 1
            state.last_error = reason
            state.log.add(LABEL, reason, kind="relay")
            log.warning("server=%s session=%s ended: %s", name, LABEL, reason)
        log.info("stop server=%s session=%s", name, LABEL)

    def _forget(self, state: ServerState, child: SharedChild, reason: str) -> None:
        if self.children.get(state.spec.name) is child:
            del self.children[state.spec.name]
            state.sessions.discard(LABEL)
        child.fail_all(reason)

    # ---- HTTP ------------------------------------------------------------------------------------
    async def handle(self, tg: TaskGroup, state: ServerState, scope: Scope, receive: Receive, send: Send) -> None:
        """One sessionless POST: checked as the SDK's own server checks it, then bridged to the shared child."""
        checked = await _check(scope, receive)
        if isinstance(checked, Response):
            await checked(scope, receive, send)
            return
        refused = self.refused.get(state.spec.name)
        if checked.method == "server/discover" and refused is not None:
            await _answer(JSONRPCError(jsonrpc="2.0", id=checked.id, error=refused))(scope, receive, send)
            return
        if checked.method == "subscriptions/listen" and self.listening >= self.max_listening:
            await _answer(_failure(checked.id, -32603, "Too many open listen streams"), 503)(scope, receive, send)
            return
        for _ in range(2):  # a child that stopped between being found and being asked: once more, fresh
            child = await self.child(tg, state)
            if child is None:
                failure = _failure(checked.id, SERVER_GONE, state.last_error or "the MCP server could not start")
                await _answer(failure)(scope, receive, send)
                return
            with suppress(Gone):
                key, answers = child.ask(checked)
                break
        else:
            await _answer(_failure(checked.id, SERVER_GONE, "the MCP server is restarting"))(scope, receive, send)
            return
        await child.send(key, checked)
        answered = await _reply(answers, scope, receive, send)
        if child.refused is not None:
            self.refused[state.spec.name] = child.refused
        if not answered:
            with anyio.CancelScope(shield=True):
                await child.cancel(key)


def _failure(request_id: RequestId | None, code: int, message: str) -> JSONRPCError:
    return JSONRPCError(jsonrpc="2.0", id=request_id, error=ErrorData(code=code, message=message))


def _dump(message: JSONRPCMessage) -> dict[str, Any]:
    body: dict[str, Any] = message.model_dump(mode="json", by_alias=True, exclude_none=True)
    if isinstance(message, JSONRPCError) and message.id is None:
        body["id"] = None  # JSON-RPC wants it there when the request's id could not be read
    return body


def _answer(message: Answer, status: int | None = None) -> Response:
    if status is None:
        status = ERROR_CODE_HTTP_STATUS.get(message.error.code, 200) if isinstance(message, JSONRPCError) else 200
    return JSONResponse(_dump(message), status_code=status)


async def _check(scope: Scope, receive: Receive) -> JSONRPCRequest | Response:
    """The request to bridge, or the HTTP answer that refuses it (or acknowledges a notification)."""
    headers = Headers(scope=scope)
    if scope["method"] != "POST":
        return Response(status_code=405, headers={"Allow": "POST"})
    if headers.get("content-type", "").split(";")[0].strip().lower() != "application/json":
        return _answer(_failure(None, INVALID_REQUEST, "Content-Type must be application/json"), 415)
    has_json, has_sse = check_accept_headers(Request(scope))
    if not (has_json and has_sse):
        return Response(status_code=406)
    try:
        decoded = json.loads(await read_body(receive))
    except (ValueError, RecursionError):
        return _answer(_failure(None, PARSE_ERROR, "Parse error"))
    if isinstance(decoded, dict) and "id" not in decoded:
        return Response(status_code=202)  # 2026-07-28 has no client notifications over HTTP: taken and dropped
    try:
        request = JSONRPCRequest.model_validate(decoded)
    except ValidationError:
        return _answer(_failure(None, INVALID_REQUEST, "Body must be a single JSON-RPC request or notification"))
    if request.method == "initialize":  # what the SDK's own HTTP server answers (its stdio one says -32022)
        return _answer(_failure(request.id, METHOD_NOT_FOUND, "Method not found: MCP 2026-07-28 has no initialize"))
    duplicated = find_duplicated_routing_header((k.decode("latin-1"), v.decode("latin-1")) for k, v in scope["headers"])
    if duplicated is not None:
        return _answer(_failure(request.id, HEADER_MISMATCH, f"{duplicated} header appears more than once"))
    verdict = classify_inbound_request(decoded, headers=dict(headers))
    if isinstance(verdict, InboundLadderRejection):
        error = ErrorData(code=verdict.code, message=verdict.message, data=verdict.data)
        return _answer(JSONRPCError(jsonrpc="2.0", id=request.id, error=error))
    return request


async def _reply(answers: MemoryObjectReceiveStream[JSONRPCMessage], scope: Scope, receive: Receive,
                 send: Send) -> bool:
    """Sends the child's answer (JSON, or an event stream once something came first); False if the page left."""
    answered = False
    async with answers, anyio.create_task_group() as tg:

        async def page_left() -> None:
            while (await receive())["type"] != "http.disconnect":
                pass
            tg.cancel_scope.cancel()

        tg.start_soon(page_left)
        first = await _next(answers)
        if isinstance(first, JSONRPCResponse | JSONRPCError):
            await _answer(first)(scope, receive, send)
            answered = True
        else:
            await send({"type": "http.response.start", "status": 200, "headers": [
                (b"content-type", b"text/event-stream"),
                *((k.lower().encode(), v.encode()) for k, v in SSE_HEADERS.items())]})
            async for event in _events(first, answers):
                await send({"type": "http.response.body", "body": event, "more_body": True})
            await send({"type": "http.response.body", "body": b"", "more_body": False})
            answered = True
        tg.cancel_scope.cancel()
    return answered


async def _next(answers: MemoryObjectReceiveStream[JSONRPCMessage]) -> JSONRPCMessage | None:
    """The next message, or None after :data:`PING_SECONDS` of silence (or if none will come)."""
    with anyio.move_on_after(PING_SECONDS), suppress(anyio.EndOfStream):
        return await answers.receive()
    return None


async def _events(first: JSONRPCMessage | None,
                  answers: MemoryObjectReceiveStream[JSONRPCMessage]) -> AsyncIterator[bytes]:
    """Event-stream frames from ``first`` to the answer, a comment for each silence."""
    message = first
    while True:
        if message is None:
            yield b": ping\r\n\r\n"
        else:
            yield f"event: message\r\ndata: {json.dumps(_dump(message), separators=(',', ':'))}\r\n\r\n".encode()
            if isinstance(message, JSONRPCResponse | JSONRPCError):
                return
        message = await _next(answers)
