"""Browser MCP sessions, each bridged to a child of its own: admission, lifetime, limits, state.

A streamable-HTTP session starts with a POST ``initialize`` (checked before anything is spawned) and
ends on DELETE, on idle timeout, when its child dies, or when the relay stops. A legacy SSE session
lives as long as its GET stream; its child starts with the first POSTed message, never on the GET.
A request that names MCP 2026-07-28 has no session: it goes to the server's shared child (server/stateless.py).
"""

from __future__ import annotations

import asyncio
import json
import logging
import secrets
import signal
from collections.abc import AsyncIterator, Iterator
from contextlib import AsyncExitStack, asynccontextmanager, contextmanager
from dataclasses import dataclass, field

import anyio
from anyio.abc import TaskGroup, TaskStatus
from mcp.client._transport import TransportStreams
from mcp.server.sse import SseServerTransport
from mcp.server.streamable_http import MCP_SESSION_ID_HEADER, StreamableHTTPServerTransport
from mcp.shared.message import SessionMessage
from mcp_types import JSONRPCMessage, JSONRPCRequest
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS
from starlette.datastructures import Headers
from starlette.responses import JSONResponse, Response
from starlette.types import Message, Receive, Scope, Send

from server import bridge, reaper, stateless
from server.asgi import read_body
from server.child import ServerLog, spawn
from server.config import Limits, ServerSpec

log = logging.getLogger("orizuru.relay")


@dataclass
class ServerState:
    """What /api/servers reports about one configured server."""

    spec: ServerSpec
    log: ServerLog
    sessions: set[str] = field(default_factory=set)
    started: int = 0
    failures: int = 0
    last_error: str | None = None


def refuse(status: int, message: str, code: int = -32600) -> Response:
    body = {"jsonrpc": "2.0", "id": None, "error": {"code": code, "message": message}}
    return JSONResponse(body, status_code=status)


def _replay(body: bytes) -> Receive:
    sent = False

    async def receive() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        await anyio.sleep_forever()
        raise AssertionError("unreachable")

    return receive


def _is_initialize(body: bytes) -> bool:
    try:
        message = json.loads(body)
    except ValueError:
        return False
    return isinstance(message, dict) and message.get("method") == "initialize" and "id" in message


class Relay:
    """All bridged servers and their live sessions."""

    def __init__(self, servers: dict[str, ServerSpec], limits: Limits | None = None,
                 adopts_orphans: bool = False) -> None:
        self.limits = limits or Limits()
        self.adopts_orphans = adopts_orphans  # this process is a child subreaper (reaper.become_subreaper)
        self.servers = {
            name: ServerState(spec, ServerLog(self.limits.stderr_lines, self.limits.stderr_line_bytes))
            for name, spec in servers.items()
        }
        self._http: dict[str, tuple[str, StreamableHTTPServerTransport]] = {}
        self._sse = {name: SseServerTransport(f"/sse/{name}/messages", max_request_body_size=self.limits.max_body_bytes)
                     for name in servers}
        self._sse_open = 0
        self._tg: TaskGroup | None = None
        self._pids: set[int] = set()  # live children, for the shutdown safety net
        self._spawn_lock = anyio.Lock()
        self.shared = stateless.SharedChildren(self.process, self.limits.idle_timeout, self.limits.max_sessions)

    @property
    def open_sessions(self) -> int:
        """Handshake sessions, and 2026-07-28 listen streams (they are as long-lived)."""
        return len(self._http) + self._sse_open + self.shared.listening

    @asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        """The relay's lifetime: on exit every session ends and every child is stopped."""
        try:
            async with anyio.create_task_group() as tg:
                self._tg = tg
                with self._reaping_orphans(tg):
                    try:
                        yield
                    finally:
                        tg.cancel_scope.cancel()
        finally:
            self._tg = None
            reaper.kill(self._pids)
            if self.adopts_orphans:
                reaper.kill_strays(self._pids)

    # ---- orphans (the relay is their subreaper) ------------------------------------------------
    @contextmanager
    def _reaping_orphans(self, tg: TaskGroup) -> Iterator[None]:
        """While running, an adopted orphan that exits is reaped (SIGCHLD), not left a zombie of the relay."""
        if not self.adopts_orphans:
            yield
            return
        loop, exited = asyncio.get_running_loop(), asyncio.Event()
        loop.add_signal_handler(signal.SIGCHLD, exited.set)
        tg.start_soon(self._reap_orphans, exited)
        try:
            yield
        finally:
            loop.remove_signal_handler(signal.SIGCHLD)

    async def _reap_orphans(self, exited: asyncio.Event) -> None:
        while True:
            await exited.wait()
            exited.clear()
            # Under the spawn lock: a server child between fork and being recorded in _pids is never taken
            # for an orphan (its exit status is for the event loop's child watcher to collect).
            async with self._spawn_lock:
                reaper.reap(reaper.strays(self._pids))

    async def _end_orphans(self, ending: set[int]) -> None:
        """Ends the orphans the relay adopted, if no server but the ``ending`` ones is running."""
        async with self._spawn_lock:
            if self._pids - ending:
                return  # they may be a running session's: they wait for the last session to end
            orphans = reaper.strays(self._pids)
        if orphans:
            log.info("ending %d orphaned process(es) left by ended sessions: %s", len(orphans), sorted(orphans))
            await reaper.end_tree(orphans, None)

    # ---- one bridged session -------------------------------------------------------------------
    async def run_bridge(self, name: str, browser: TransportStreams, session: str, origin: str | None) -> None:
        """Waits for the first message, starts the child, forwards until either side ends."""
        browser_read, _ = browser
        first: JSONRPCMessage | None = None
        async for item in browser_read:
            if not isinstance(item, Exception):
                first = item.message
                break
        if first is None:
            return
        state = self.servers[name]
        inflight = bridge.Inflight()
        if isinstance(first, JSONRPCRequest):
            inflight.open(first)
        state.sessions.add(session)
        try:
            reason = await self._bridge_child(state, browser, session, origin, first, inflight)
        finally:
            state.sessions.discard(session)
        if reason is not None:
            state.failures += 1
            state.last_error = reason
            state.log.add(session[:8], reason, kind="relay")
            log.warning("server=%s session=%s ended: %s", name, session[:8], reason)
            await bridge.fail_pending(browser, inflight, reason)

    async def _bridge_child(self, state: ServerState, browser: TransportStreams, session: str,
                            origin: str | None, first: JSONRPCMessage, inflight: bridge.Inflight) -> str | None:
        """Returns why the child failed, or None if the browser side ended first."""
        spec, (_, browser_write) = state.spec, browser
        log.info("spawn server=%s session=%s origin=%s argv=%s", spec.name, session[:8], origin, spec.argv)
        child_gone = False
        try:
            async with self.process(state, session[:8]) as (child_read, child_write):
                await child_write.send(SessionMessage(first))
                async with anyio.create_task_group() as tg:

                    async def from_browser() -> None:
                        await bridge.client_to_child(browser, child_write, inflight)
                        tg.cancel_scope.cancel()

                    tg.start_soon(from_browser)
                    note = lambda text: state.log.add(session[:8], text, kind="relay")  # noqa: E731
                    child_gone = await bridge.child_to_client(child_read, browser_write, inflight, note)
                    tg.cancel_scope.cancel()
        except OSError as e:
            log.info("stop server=%s session=%s: could not start", spec.name, session[:8])
            return f"could not start {spec.command!r}: {e.strerror or e}"
        log.info("stop server=%s session=%s reason=%s", spec.name, session[:8], "exited" if child_gone else "closed")
        return "the MCP server process exited" if child_gone else None

    @asynccontextmanager
    async def process(self, state: ServerState, label: str) -> AsyncIterator[TransportStreams]:
        """One child of ``state``'s server, its stderr logged under ``label``; on exit it and its tree are gone."""
        spec = state.spec
        state.started += 1
        pids, tree = set[int](), reaper.Tree()
        async with AsyncExitStack() as stack:
            stack.callback(lambda: self._pids.difference_update(pids))  # callbacks run last-in, first-out:
            stack.push_async_callback(self._end_processes, pids, tree)  # after the SDK has stopped the child
            async with self._spawn_lock:  # so the new pid can be told apart from concurrent spawns
                before = reaper.child_pids()
                streams = await stack.enter_async_context(spawn(spec, state.log, label))
                pids.update(reaper.child_pids() - before)
                self._pids |= pids
            # before the SDK stops the child: its descendants, setsid() ones included, are still below it
            stack.callback(self._record_tree, pids, tree)
            log.info("spawned server=%s session=%s pid=%s", spec.name, label, sorted(pids))
            yield streams

    @staticmethod
    def _record_tree(pids: set[int], tree: reaper.Tree) -> None:
        for pid in pids:
            tree.update(reaper.session_tree(pid))

    async def _end_processes(self, pids: set[int], tree: reaper.Tree) -> None:
        """After the SDK's stop: whatever of the child's group and tree is left, then orphans if it was the last."""
        for pid in pids:
            await reaper.end_tree(tree, pid)
        if self.adopts_orphans:
            await self._end_orphans(pids)

    # ---- streamable HTTP ------------------------------------------------------------------------
    async def handle_mcp(self, name: str, scope: Scope, receive: Receive, send: Send) -> None:
        headers = Headers(scope=scope)
        version = headers.get("mcp-protocol-version")
        if version is not None and version not in HANDSHAKE_PROTOCOL_VERSIONS and self._tg is not None:
            # MCP 2026-07-28, which has no session, or a version nobody speaks (refused the 2026 way, naming
            # the ones served): the server's shared child, as the SDK's own server routes them
            await self.shared.handle(self._tg, self.servers[name], scope, receive, send)
            return
        if version is not None and version not in HANDSHAKE_PROTOCOL_VERSIONS:
            await refuse(400, f"Bad Request: unsupported MCP-Protocol-Version {version[:40]!r}")(scope, receive, send)
            return
        session_id = headers.get(MCP_SESSION_ID_HEADER)
        if session_id is None:
            await self._open_mcp(name, scope, receive, send)
            return
        entry = self._http.get(session_id)
        if entry is None or entry[0] != name:
            await refuse(404, "Not Found: unknown or expired session")(scope, receive, send)
            return
        transport = entry[1]
        await transport.handle_request(scope, receive, send)
        if transport.is_terminated:
            self._http.pop(session_id, None)

    async def _open_mcp(self, name: str, scope: Scope, receive: Receive, send: Send) -> None:
        """A request without a session id may only be a JSON POST ``initialize``; nothing runs otherwise."""
        headers = Headers(scope=scope)
        if scope["method"] != "POST":
            await refuse(400, "Bad Request: missing Mcp-Session-Id")(scope, receive, send)
            return
        if headers.get("content-type", "").split(";")[0].strip().lower() != "application/json":
            await refuse(415, "Unsupported Media Type: Content-Type must be application/json")(scope, receive, send)
            return
        body = await read_body(receive)
        if not _is_initialize(body):
            await refuse(400, "Bad Request: a new session must start with initialize")(scope, receive, send)
            return
        if self.open_sessions >= self.limits.max_sessions or self._tg is None:
            await refuse(503, "Too many open sessions", code=-32603)(scope, receive, send)
            return
        session_id = secrets.token_hex(16)
        transport = StreamableHTTPServerTransport(session_id, idle_timeout=self.limits.idle_timeout)
        self._http[session_id] = (name, transport)
        await self._tg.start(self._run_http_session, name, transport, headers.get("origin"))
        await transport.handle_request(scope, _replay(body), send)

    async def _run_http_session(self, name: str, transport: StreamableHTTPServerTransport, origin: str | None,
                                *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        session_id = transport.mcp_session_id or ""
        try:
            async with transport.connect() as streams:
                task_status.started()
                idle = transport.idle_scope or anyio.CancelScope()
                with idle:
                    await self.run_bridge(name, streams, session_id, origin)
                if idle.cancelled_caught:
                    log.info("server=%s session=%s idle timeout", name, session_id[:8])
        finally:
            self._http.pop(session_id, None)
            if not transport.is_terminated:
                with anyio.CancelScope(shield=True):
                    await transport.terminate()

    # ---- legacy HTTP+SSE ------------------------------------------------------------------------
    async def handle_sse(self, name: str, scope: Scope, receive: Receive, send: Send) -> None:
        if self.open_sessions >= self.limits.max_sessions:
            await refuse(503, "Too many open sessions", code=-32603)(scope, receive, send)
            return
        session = secrets.token_hex(16)
        self._sse_open += 1
        try:
            async with self._sse[name].connect_sse(scope, receive, send) as streams:
                await self.run_bridge(name, streams, session, Headers(scope=scope).get("origin"))
                await streams[1].aclose()  # ends the event stream if the child went away first
        finally:
            self._sse_open -= 1

    async def handle_sse_post(self, name: str, scope: Scope, receive: Receive, send: Send) -> None:
        await self._sse[name].handle_post_message(scope, receive, send)
