"""An MCP client session: lifecycle, requests and their answers, server messages.

    async with ClientSession("https://example.com/mcp", headers={"Authorization": "Bearer …"}) as mcp:
        tools = await mcp.list_tools()
        result = await mcp.call_tool("echo", {"message": "hi"})

Transport: streamable HTTP, falling back to the legacy HTTP+SSE transport when POST ``initialize``
gets 400/404/405. We offer protocol 2025-11-25 and accept any version reachable by ``initialize``
(2024-11-05 … 2025-11-25); anything else ends the session (:class:`MCPUnsupportedVersionError`).
Elicitation: given ``on_elicit`` (an async function of the request's params returning ``{action, content?}``),
the session advertises the ``elicitation`` capability (form and URL modes) and passes each
``elicitation/create`` that :mod:`pycore.mcp.elicitation` can put to the user to it; a form's accepted content
comes back with the schema's defaults filled in. Roots: given ``roots`` (a function returning the user's
``[{uri, name?}]``), the session advertises the ``roots`` capability, answers ``roots/list`` with them, and
:meth:`ClientSession.roots_changed` tells the server they changed. Sampling: given ``on_sample`` (an async
function of the request's params returning a ``CreateMessageResult``, or raising
:class:`~pycore.mcp.sampling.SamplingDenied`), the session advertises ``sampling`` and passes each
``sampling/createMessage`` to it. Requests for what the session was given no function for get "method not
found". Server ``ping`` is answered with ``{}``.
A server restarted while connected no longer knows the session: the request gets 404 (the specification) or
400 naming the session (the TypeScript SDK's servers); the session is initialized again and the request sent
once more. A request that finds no server at all sets :attr:`ClientSession.unreachable` (cleared by the next
answer), which the Tools panel shows.
Every JSON-RPC message in and out is kept, secrets out of it, in :attr:`ClientSession.traffic`
(:mod:`pycore.mcp.traffic`: the traffic inspector, and its replay). The server's log messages
(``notifications/message``) are kept, the last :data:`LOG_KEEP`, in
:attr:`ClientSession.log`: each ``{time, level, logger, data}``, the session's header values (a token)
replaced by ``[redacted]`` and long data cut.
A server that refuses our version with ``-32022`` and lists its own (MCP 2026-07-28) is initialized
again with the newest version we share, or refused with a clear error.

A hostile server is held off in the transports (:mod:`pycore.mcp._base`): a redirect is an error and never
followed, and at most ``max_message_bytes`` (8 MiB) of one message is read.

Protected servers: pass ``http=oauth.transport_for(url)`` (:mod:`pycore.mcp.oauth`), or install an
:class:`~pycore.mcp.oauth.OAuthClient` (``pycore.mcp.oauth.install``) and every session created without
its own transport sends the server its token (only to it) and refreshes it.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections import deque
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import mcp_types as t
from mcp_types.jsonrpc import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    METHOD_NOT_FOUND,
    JSONRPCError,
    JSONRPCMessage,
    JSONRPCNotification,
    JSONRPCRequest,
    JSONRPCResponse,
)
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, LATEST_HANDSHAKE_VERSION
from pydantic import BaseModel, ValidationError

from pycore.http import Transport, default_transport
from pycore.mcp import elicitation, jsonrpc, sampling
from pycore.mcp._base import MAX_MESSAGE_BYTES, MCPTransport
from pycore.mcp.apps import CLIENT_EXTENSION
from pycore.mcp.content import ToolOutput, map_result
from pycore.mcp.errors import (
    MCPConnectionError,
    MCPConnectionLostError,
    MCPError,
    MCPHTTPError,
    MCPProtocolError,
    MCPRPCError,
    MCPSessionExpiredError,
    MCPTimeoutError,
    MCPUnsupportedVersionError,
)
from pycore.mcp.pagination import CursorGuard
from pycore.mcp.sse_legacy import LegacySSETransport
from pycore.mcp.streamable_http import StreamableHTTPTransport
from pycore.mcp.traffic import Traffic

R = TypeVar("R", bound=BaseModel)
ProgressCallback = Callable[[float, float | None, str | None], Any]
CLIENT_INFO = t.Implementation(name="orizuru", version="0.1.0")
LIST_CHANGED_DEBOUNCE = 0.25
LOG_KEEP = 200  # the server's log messages kept per session, newest last
LOG_DATA_CHARS = 4000  # longer data is kept as its JSON text, cut
LOG_LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")


class ClientSession:
    def __init__(
        self, url: str, *, headers: dict[str, str] | None = None, http: Transport | None = None,
        timeout: float = 60.0, legacy_fallback: bool = True,
        on_tools_changed: Callable[[list[t.Tool]], Any] | None = None,
        on_notification: Callable[[JSONRPCNotification], Any] | None = None,
        on_elicit: Callable[[dict[str, Any]], Awaitable[dict[str, Any]]] | None = None,
        roots: Callable[[], list[dict[str, Any]]] | None = None,
        on_sample: Callable[[dict[str, Any]], Awaitable[dict[str, Any]]] | None = None,
        max_message_bytes: int = MAX_MESSAGE_BYTES,
    ) -> None:
        self.url = url
        self.headers = dict(headers or {})
        self.timeout = timeout
        self.max_message_bytes = max_message_bytes  # the most read of one message (T-Z1; pycore.mcp._base)
        self.legacy_fallback = legacy_fallback
        self.on_tools_changed = on_tools_changed
        self.on_notification = on_notification
        self.on_elicit = on_elicit
        self.roots = roots
        self.on_sample = on_sample
        self.log: deque[dict[str, Any]] = deque(maxlen=LOG_KEEP)
        self.traffic = Traffic(secrets=self.headers.values())  # every message in and out (pycore.mcp.traffic)
        self.server: t.InitializeResult | None = None
        self.tools: list[t.Tool] = []
        # Why the last request found no server (down, gone mid-answer); None once one is answered again.
        self.unreachable: MCPConnectionError | None = None
        self._owns_http = http is None
        self._http = http or _default_http(url)
        self._transport: MCPTransport = self._streamable()
        self._next_id = 0
        self._pending: dict[int | str, asyncio.Future[dict[str, Any]]] = {}
        self._progress: dict[str | int, ProgressCallback] = {}
        self._background: set[asyncio.Task[Any]] = set()
        self._relist: asyncio.Task[None] | None = None
        self._relist_again = False

    @property
    def protocol_version(self) -> str | None:
        return self.server.protocol_version if self.server else None

    @property
    def transport_kind(self) -> str:
        return "sse" if isinstance(self._transport, LegacySSETransport) else "streamable-http"

    # -- lifecycle -----------------------------------------------------------------------------

    async def __aenter__(self) -> ClientSession:
        try:
            await self.connect()
        except BaseException:
            await self.aclose()
            raise
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def connect(self) -> t.InitializeResult:
        try:
            return await self._initialize()
        except MCPHTTPError as e:
            supported = _supported_versions(e)
            if supported is not None:
                return await self._initialize_one_of(supported)
            if not self.legacy_fallback or e.status not in (400, 404, 405):
                raise
        await self._transport.aclose()
        self._transport = LegacySSETransport(self.url, self._http, self._dispatch, self._fail, headers=self.headers,
                                             max_message_bytes=self.max_message_bytes)
        await self._transport.start()
        return await self._initialize()

    async def _initialize_one_of(self, supported: list[str]) -> t.InitializeResult:
        """A server that refused our version (-32022) and listed its own: the newest we share, or a clear error."""
        common = [v for v in HANDSHAKE_PROTOCOL_VERSIONS if v in supported]
        if not common:
            raise MCPUnsupportedVersionError(
                f"{self.url} only speaks MCP protocol {', '.join(map(str, supported))}; this client speaks "
                f"{', '.join(HANDSHAKE_PROTOCOL_VERSIONS)}", url=self.url)
        return await self._initialize(max(common))

    async def _initialize(self, version: str = LATEST_HANDSHAKE_VERSION) -> t.InitializeResult:
        asks = (t.ElicitationCapability(form=t.FormElicitationCapability(), url=t.UrlElicitationCapability())
                if self.on_elicit is not None else None)
        roots = t.RootsCapability(list_changed=True) if self.roots is not None else None
        samples = t.SamplingCapability() if self.on_sample is not None else None
        params = t.InitializeRequestParams(
            protocol_version=version, client_info=CLIENT_INFO,
            capabilities=t.ClientCapabilities(elicitation=asks, roots=roots, sampling=samples,
                                              extensions=CLIENT_EXTENSION))
        raw = await self._request("initialize", _dump(params), timeout=self.timeout, retry_expired=False)
        result = _validate(t.InitializeResult, raw, "initialize")
        if result.protocol_version not in HANDSHAKE_PROTOCOL_VERSIONS:
            await self.aclose()
            raise MCPUnsupportedVersionError(
                f"{self.url} speaks MCP protocol {result.protocol_version!r}, which this client does not support "
                f"(supported: {', '.join(HANDSHAKE_PROTOCOL_VERSIONS)})", url=self.url
            )
        self.server = result
        self._transport.protocol_version = result.protocol_version
        await self.notify("notifications/initialized")
        await self._transport.listen()
        return result

    async def aclose(self) -> None:
        for task in list(self._background) + ([self._relist] if self._relist else []):
            task.cancel()
        self._fail(None, MCPConnectionLostError("the MCP session was closed", url=self.url))
        await self._transport.aclose()
        if self._owns_http:
            await self._http.aclose()

    def _streamable(self) -> StreamableHTTPTransport:
        return StreamableHTTPTransport(self.url, self._http, self._dispatch, self._fail, headers=self.headers,
                                       max_message_bytes=self.max_message_bytes)

    # -- requests ------------------------------------------------------------------------------

    async def request(self, method: str, params: dict[str, Any] | None = None, *,
                      timeout: float | None = None) -> dict[str, Any]:
        """Send a request; its ``result``. JSON-RPC errors raise :class:`MCPRPCError`."""
        return await self._request(method, params, timeout=timeout or self.timeout)

    async def _request(self, method: str, params: dict[str, Any] | None, *, timeout: float,
                       retry_expired: bool = True) -> dict[str, Any]:
        try:
            result = await self._attempt_again_if_expired(method, params, timeout, retry_expired)
        except MCPConnectionError as e:
            self.unreachable = e
            raise
        self.unreachable = None
        return result

    async def _attempt_again_if_expired(self, method: str, params: dict[str, Any] | None, timeout: float,
                                        retry_expired: bool) -> dict[str, Any]:
        """A session the server forgot (restarted: 404, or 400 naming the session) is started again and the
        request sent once more: the server refused it before running anything."""
        try:
            return await self._attempt(method, params, timeout)
        except MCPSessionExpiredError:
            if not retry_expired:
                raise
        await self._reinitialize()
        return await self._attempt(method, params, timeout)

    async def _reinitialize(self) -> None:
        await self._transport.aclose()
        self._transport = self._streamable()
        await self._initialize()

    async def _attempt(self, method: str, params: dict[str, Any] | None, timeout: float) -> dict[str, Any]:
        self._next_id += 1
        request_id = self._next_id
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = future
        try:
            return await asyncio.wait_for(self._exchange(jsonrpc.request(request_id, method, params), future), timeout)
        except TimeoutError:
            self._cancel_remote(request_id, method, "timed out")
            message = f"{method} got no answer from {self.url} within {timeout:g} s"
            raise MCPTimeoutError(message, url=self.url) from None
        except asyncio.CancelledError:
            self._cancel_remote(request_id, method, "cancelled by the user")
            raise
        finally:
            self._pending.pop(request_id, None)

    async def _exchange(self, message: JSONRPCRequest, future: asyncio.Future[dict[str, Any]]) -> dict[str, Any]:
        await self._send(message)  # a JSON answer is dispatched before this returns
        return await future

    def _cancel_remote(self, request_id: int, method: str, reason: str) -> None:
        """Tell the server to stop (``notifications/cancelled``); a late answer is then ignored."""
        if method == "initialize":
            return  # initialize must never be cancelled
        params = {"requestId": request_id, "reason": reason}
        self._spawn(self._quietly(self.notify("notifications/cancelled", params)))

    async def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        await self._send(jsonrpc.notification(method, params))

    # -- what the server sends -----------------------------------------------------------------

    async def _send(self, message: JSONRPCMessage) -> None:
        self.traffic.record("out", message.model_dump(mode="json", by_alias=True, exclude_none=True))
        await self._transport.send(message)

    async def _dispatch(self, message: JSONRPCMessage) -> None:
        self.traffic.record("in", message.model_dump(mode="json", by_alias=True, exclude_none=True))
        if isinstance(message, JSONRPCRequest):
            self._spawn(self._quietly(self._answer(message)))
        elif isinstance(message, JSONRPCNotification):
            self._notified(message)
        else:
            self._resolve(message)

    def _resolve(self, message: JSONRPCResponse | JSONRPCError) -> None:
        # An error with no id answers no request we can name: nothing waits for it.
        future = None if message.id is None else self._pending.get(message.id)
        if future is None or future.done():
            return  # a late answer to a request we gave up on, or a duplicate after a resume
        if isinstance(message, JSONRPCError):
            future.set_exception(MCPRPCError(message.error.code, message.error.message, message.error.data))
        else:
            future.set_result(message.result)

    def _fail(self, request_id: int | str | None, error: MCPError) -> None:
        ids = list(self._pending) if request_id is None else [request_id]
        for key in ids:
            future = self._pending.get(key)
            if future is not None and not future.done():
                future.set_exception(error)

    async def _answer(self, request: JSONRPCRequest) -> None:
        if request.method == "ping":
            await self._send(jsonrpc.response(request.id, {}))
        elif request.method == "elicitation/create" and self.on_elicit is not None:
            await self._send(await self._elicit(request))
        elif request.method == "sampling/createMessage" and self.on_sample is not None:
            await self._send(await self._sample(request))
        elif request.method == "roots/list" and self.roots is not None:
            await self._send(jsonrpc.response(request.id, {"roots": self.roots()}))
        else:
            reply = jsonrpc.error_response(request.id, METHOD_NOT_FOUND, f"client does not support {request.method}")
            await self._send(reply)

    def _notified(self, message: JSONRPCNotification) -> None:
        if message.method == "notifications/progress":
            self._progressed(message.params or {})
        elif message.method == "notifications/tools/list_changed":
            self._schedule_relist()
        elif message.method == "notifications/message":
            self._logged(message.params or {})
        if self.on_notification is not None:
            self.on_notification(message)

    async def _elicit(self, request: JSONRPCRequest) -> JSONRPCResponse | JSONRPCError:
        assert self.on_elicit is not None
        params = dict(request.params or {})
        try:
            mode = elicitation.check_request(params)
        except elicitation.ElicitationError as e:
            return jsonrpc.error_response(request.id, INVALID_PARAMS, str(e))
        answer = await self.on_elicit(params)
        action = answer.get("action")
        if action not in elicitation.ACTIONS:
            return jsonrpc.error_response(request.id, INTERNAL_ERROR, f"no answer to the elicitation ({action!r})")
        if action == "accept" and mode == "form":
            try:
                content = elicitation.accept(params["requestedSchema"], answer.get("content"))
            except elicitation.ElicitationError as e:
                return jsonrpc.error_response(request.id, INVALID_PARAMS, f"the answer does not fit the form: {e}")
            return jsonrpc.response(request.id, {"action": "accept", "content": content})
        return jsonrpc.response(request.id, {"action": action})

    async def _sample(self, request: JSONRPCRequest) -> JSONRPCResponse | JSONRPCError:
        assert self.on_sample is not None
        try:
            result = await self.on_sample(dict(request.params or {}))
        except sampling.SamplingDenied as e:
            reason = str(e) or "User rejected sampling request"
            return jsonrpc.error_response(request.id, sampling.USER_REJECTED, reason)
        except Exception as e:  # noqa: BLE001 - the server gets an answer whatever failed (the vendor, the user's page)
            return jsonrpc.error_response(request.id, INTERNAL_ERROR, f"sampling failed: {e}")
        return jsonrpc.response(request.id, result)

    def _logged(self, params: dict[str, Any]) -> None:
        level = str(params.get("level", "")).lower()
        logger = params.get("logger")
        text = json.dumps(params.get("data"), ensure_ascii=False, default=str)
        for value in self.headers.values():  # a server that echoes the credential it was sent
            for secret in (value, value.partition(" ")[2]):
                if len(secret) >= 8:
                    text = text.replace(secret, "[redacted]")
        data = json.loads(text) if len(text) <= LOG_DATA_CHARS else text[:LOG_DATA_CHARS] + "…"
        self.log.append({"time": time.time(), "level": level if level in LOG_LEVELS else "info",
                         "logger": None if logger is None else str(logger)[:200], "data": data})

    def _progressed(self, params: dict[str, Any]) -> None:
        callback = self._progress.get(params.get("progressToken"))  # type: ignore[arg-type]
        if callback is None:
            return  # unknown token: ignored
        try:
            callback(float(params.get("progress", 0)), params.get("total"), params.get("message"))
        except (TypeError, ValueError):
            return

    def _schedule_relist(self) -> None:
        """Debounced: a storm of list_changed notifications causes one or two re-lists, not fifty."""
        if self._relist is not None and not self._relist.done():
            self._relist_again = True
            return
        self._relist = asyncio.ensure_future(self._relist_tools())

    async def _relist_tools(self) -> None:
        while True:
            self._relist_again = False
            await asyncio.sleep(LIST_CHANGED_DEBOUNCE)
            try:
                tools = await self.list_tools()
            except MCPError:
                return
            if self.on_tools_changed is not None:
                self.on_tools_changed(tools)
            if not self._relist_again:
                return

    # -- MCP methods ---------------------------------------------------------------------------

    async def roots_changed(self) -> None:
        """Tell the server the user's roots changed (it asks for them again with ``roots/list``)."""
        if self.roots is not None:
            await self._send(jsonrpc.notification("notifications/roots/list_changed"))

    async def ping(self) -> None:
        await self.request("ping")

    async def _paginate(self, method: str, model: type[R], field: str) -> list[Any]:
        items: list[Any] = []
        guard = CursorGuard(method)
        cursor: str | None = None
        while True:
            raw = await self.request(method, {"cursor": cursor} if cursor is not None else None)
            page = _validate(model, raw, method)
            items.extend(getattr(page, field))
            cursor = guard.next(page.next_cursor)  # type: ignore[attr-defined]
            if cursor is None:
                return items

    async def list_tools(self) -> list[t.Tool]:
        self.tools = await self._paginate("tools/list", t.ListToolsResult, "tools")
        return self.tools

    async def call_tool_raw(
        self, name: str, arguments: dict[str, Any] | None = None, *, timeout: float | None = None,
        on_progress: ProgressCallback | None = None,
    ) -> t.CallToolResult:
        params: dict[str, Any] = {"name": name, "arguments": arguments or {}}
        token = f"orizuru-{self._next_id + 1}"
        if on_progress is not None:
            params["_meta"] = {"progressToken": token}
            self._progress[token] = on_progress
        try:
            raw = await self.request("tools/call", params, timeout=timeout)
        finally:
            self._progress.pop(token, None)
        return _validate(t.CallToolResult, raw, "tools/call")

    async def call_tool(self, name: str, arguments: dict[str, Any] | None = None, **kwargs: Any) -> ToolOutput:
        result = await self.call_tool_raw(name, arguments, **kwargs)
        tool = next((tool for tool in self.tools if tool.name == name), None)
        return map_result(result, tool.output_schema if tool else None)

    async def list_resources(self) -> list[t.Resource]:
        return await self._paginate("resources/list", t.ListResourcesResult, "resources")

    async def list_resource_templates(self) -> list[t.ResourceTemplate]:
        return await self._paginate("resources/templates/list", t.ListResourceTemplatesResult, "resource_templates")

    async def read_resource(self, uri: str) -> t.ReadResourceResult:
        return _validate(t.ReadResourceResult, await self.request("resources/read", {"uri": uri}), "resources/read")

    async def list_prompts(self) -> list[t.Prompt]:
        return await self._paginate("prompts/list", t.ListPromptsResult, "prompts")

    async def get_prompt(self, name: str, arguments: dict[str, str] | None = None) -> t.GetPromptResult:
        raw = await self.request("prompts/get", {"name": name, "arguments": arguments or {}})
        return _validate(t.GetPromptResult, raw, "prompts/get")

    # -- helpers -------------------------------------------------------------------------------

    def _spawn(self, coro: Awaitable[Any]) -> None:
        task = asyncio.ensure_future(coro)
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    @staticmethod
    async def _quietly(coro: Awaitable[Any]) -> None:
        try:
            await coro
        except MCPError:
            return


UNSUPPORTED_PROTOCOL_VERSION = -32022  # MCP 2026-07-28: 400 with error.data.supported


def _supported_versions(error: MCPHTTPError) -> list[str] | None:
    """The versions a 400 ``UnsupportedProtocolVersionError`` lists; ``None`` for any other 400 (or status)."""
    if error.status != 400 or not error.body:
        return None
    try:
        body = json.loads(error.body)
    except ValueError:
        return None
    failure = body.get("error") if isinstance(body, dict) else None
    if not isinstance(failure, dict) or failure.get("code") != UNSUPPORTED_PROTOCOL_VERSION:
        return None
    data = failure.get("data")
    supported = data.get("supported") if isinstance(data, dict) else None
    if not isinstance(supported, list):
        return None
    return [str(version) for version in supported]


def _default_http(url: str) -> Transport:
    """The runtime's transport; with an installed OAuth client, wrapped so the server's token rides along."""
    from pycore.mcp.oauth import installed

    oauth = installed()
    return oauth.transport_for(url, default_transport()) if oauth is not None else default_transport()


def _dump(model: BaseModel) -> dict[str, Any]:
    return model.model_dump(by_alias=True, exclude_none=True, mode="json")


def _validate(model: type[R], raw: dict[str, Any], method: str) -> R:
    try:
        return model.model_validate(raw)
    except ValidationError as e:
        raise MCPProtocolError(f"{method}: the server's result does not match the MCP schema: {e}") from e
