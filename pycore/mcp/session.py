"""An MCP client session: lifecycle, requests and their answers, server messages.

    async with ClientSession("https://example.com/mcp", headers={"Authorization": "Bearer …"}) as mcp:
        tools = await mcp.list_tools()
        result = await mcp.call_tool("echo", {"message": "hi"})

Revisions, chosen per server: the session first asks ``server/discover`` (MCP 2026-07-28). A server that offers
2026-07-28 is spoken to in it, statelessly (:attr:`ClientSession.modern`): every request carries the protocol
version, our client info and capabilities in its ``_meta``, every POST the standard headers
(:mod:`pycore.mcp.headers`), no session, no GET stream, no notifications from us. A server that refuses the probe
with ``-32022`` naming another 2026 revision is probed once more at it. Any other answer (an error, a 400 for the
missing session, a timeout, a network failure (a browser's refused CORS preflight looks like one), a discover
that offers no 2026 revision) is an older server: it gets the ``initialize`` handshake.
There we offer protocol 2025-11-25 and accept any version reachable by ``initialize``
(2024-11-05 … 2025-11-25); anything else ends the session (:class:`MCPUnsupportedVersionError`); a server that
speaks only 2026 revisions we do not know is refused with a clear error. Streamable HTTP falls back to the legacy
HTTP+SSE transport when POST ``initialize`` gets 400/404/405.
Multi Round-Trip Requests (2026-07-28): a ``tools/call`` (or ``prompts/get``, ``resources/read``) answered with
``resultType: "input_required"`` has its ``inputRequests`` put to the same functions as a server's own requests
(``on_elicit``, ``on_sample``, ``roots``), one after the other, and is sent again with the ``inputResponses`` and
the ``requestState`` echoed as it came (none if none came), at most :data:`MAX_INPUT_ROUNDS` rounds. A request we
cannot or will not answer (a refused sampling, a method we were given no function for) ends the call with that
error; so does the server's refusal of the answers (a tampered or missing state), its sentence shown.
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
List changes: an older server tells of them on its session, a 2026-07-28 one on the ``subscriptions/listen``
stream the session keeps open (:mod:`pycore.mcp.listen`); either way the changed list (tools, prompts,
resources) is fetched again, debounced, into :attr:`ClientSession.tools`, ``prompts`` and ``resources``
(``on_tools_changed`` is told of the tools). On 2026-07-28 a list is kept while its ``ttlMs`` lasts
(:class:`~pycore.mcp.listen.ListCache`); a server that announces tool changes but is not heard on a stream
has its tools listed again (through that cache) after each call, so a tool a call added still asks before its
first run (T-P3).

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
from mcp_types.version import (
    HANDSHAKE_PROTOCOL_VERSIONS,
    LATEST_HANDSHAKE_VERSION,
    LATEST_MODERN_VERSION,
    MODERN_PROTOCOL_VERSIONS,
)
from pydantic import BaseModel, ValidationError

from pycore.http import Transport, default_transport
from pycore.mcp import elicitation, headers, jsonrpc, sampling, tasks
from pycore.mcp._base import MAX_MESSAGE_BYTES, MCPTransport
from pycore.mcp.apps import CLIENT_EXTENSION
from pycore.mcp.content import ToolOutput, map_result
from pycore.mcp.errors import (
    MCPAuthRequiredError,
    MCPConnectionError,
    MCPConnectionLostError,
    MCPError,
    MCPHTTPError,
    MCPProtocolError,
    MCPRedirectError,
    MCPRPCError,
    MCPSessionExpiredError,
    MCPTimeoutError,
    MCPUnsupportedVersionError,
)
from pycore.mcp.listen import CHANGES, LISTEN, STALE, ListCache, Listener, wanted
from pycore.mcp.pagination import CursorGuard
from pycore.mcp.sse_legacy import LegacySSETransport
from pycore.mcp.streamable_http import StreamableHTTPTransport
from pycore.mcp.traffic import Traffic

R = TypeVar("R", bound=BaseModel)
# (progress, total, message); and task=<its status> while the call runs as a task (pycore.mcp.tasks)
ProgressCallback = Callable[..., Any]
CLIENT_INFO = t.Implementation(name="orizuru", version="0.1.0")
LIST_CHANGED_DEBOUNCE = 0.25
LOG_KEEP = 200  # the server's log messages kept per session, newest last
LOG_DATA_CHARS = 4000  # longer data is kept as its JSON text, cut
LOG_LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")
DISCOVER_TIMEOUT = 10.0  # the most a server/discover probe waits: a server that never answers it is an older one
MAX_INPUT_ROUNDS = 10  # input_required rounds of one request before the call is given up (the SDKs' figure)
STATE_ONLY_DELAY = 0.05  # before sending again a result that asked nothing but carried a requestState
INTERACTIVE = ("tools/call", "prompts/get", "resources/read")  # what may answer input_required
META_VERSION = "io.modelcontextprotocol/protocolVersion"
META_CLIENT = "io.modelcontextprotocol/clientInfo"
META_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
META_SERVER = "io.modelcontextprotocol/serverInfo"


class ClientSession:
    def __init__(
        self, url: str, *, headers: dict[str, str] | None = None, http: Transport | None = None,
        timeout: float = 60.0, legacy_fallback: bool = True,
        on_tools_changed: Callable[[list[t.Tool]], Any] | None = None,
        on_notification: Callable[[JSONRPCNotification], Any] | None = None,
        on_elicit: Callable[[dict[str, Any]], Awaitable[dict[str, Any]]] | None = None,
        roots: Callable[[], list[dict[str, Any]]] | None = None,
        on_sample: Callable[[dict[str, Any]], Awaitable[dict[str, Any]]] | None = None,
        max_message_bytes: int = MAX_MESSAGE_BYTES, discover: bool = True,
    ) -> None:
        self.url = url
        self.headers = dict(headers or {})
        self.timeout = timeout
        self.max_message_bytes = max_message_bytes  # the most read of one message (T-Z1; pycore.mcp._base)
        self.legacy_fallback = legacy_fallback
        self.discover = discover  # probe server/discover first (False: the initialize handshake at once)
        self.modern: str | None = None  # the 2026 revision spoken, once server/discover settled it
        self.on_tools_changed = on_tools_changed
        self.on_notification = on_notification
        self.on_elicit = on_elicit
        self.roots = roots
        self.on_sample = on_sample
        self.log: deque[dict[str, Any]] = deque(maxlen=LOG_KEEP)
        self.traffic = Traffic(secrets=self.headers.values())  # every message in and out (pycore.mcp.traffic)
        self.server: t.InitializeResult | None = None
        self.tools: list[t.Tool] = []
        self.prompts: list[t.Prompt] = []
        self.resources: list[t.Resource] = []
        # Why the last request found no server (down, gone mid-answer); None once one is answered again.
        self.unreachable: MCPConnectionError | None = None
        self._owns_http = http is None
        self._http = http or _default_http(url)
        self._transport: MCPTransport = self._streamable()
        self._next_id = 0
        self._pending: dict[int | str, asyncio.Future[dict[str, Any]]] = {}
        self._progress: dict[str | int, ProgressCallback] = {}
        self._background: set[asyncio.Task[Any]] = set()
        self._refreshing: dict[str, asyncio.Task[None]] = {}  # a list being fetched again, by method
        self._refresh_again: set[str] = set()
        self._cache = ListCache()
        self._listener: Listener | None = None

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
        if self.discover and isinstance(self._transport, StreamableHTTPTransport):
            adopted = await self._discover()
            if adopted is not None:
                self._listen()
                return adopted
        return await self._handshake()

    async def _discover(self) -> t.InitializeResult | None:
        """Probe ``server/discover``: the server as a 2026-07-28 one, or ``None`` for an older one."""
        version = LATEST_MODERN_VERSION
        for attempt in range(2):
            self._transport.protocol_version = version
            try:
                raw = await self._request("server/discover", self._envelope(None, version),
                                          timeout=min(self.timeout, DISCOVER_TIMEOUT), retry_expired=False)
            except (MCPAuthRequiredError, MCPRedirectError):
                raise
            except (MCPHTTPError, MCPRPCError, MCPProtocolError, MCPTimeoutError, MCPConnectionError) as e:
                # MCPConnectionError too: in a browser, a server whose CORS allows only the older revision's
                # headers refuses the probe's preflight, which fetch reports as a network failure.
                supported = _supported_versions(e)
                mutual = [v for v in MODERN_PROTOCOL_VERSIONS if v in (supported or ())]
                if mutual and attempt == 0:
                    version = mutual[-1]
                    continue
                if supported and not any(v in HANDSHAKE_PROTOCOL_VERSIONS for v in supported):
                    raise self._unsupported(supported) from None
                break
            try:
                result = t.DiscoverResult.model_validate(raw)
            except ValidationError:
                break
            mutual = [v for v in MODERN_PROTOCOL_VERSIONS if v in result.supported_versions]
            if mutual:
                return self._adopt(mutual[-1], result, raw)
            break
        self._transport.protocol_version = None
        return None

    def _adopt(self, version: str, result: t.DiscoverResult, raw: dict[str, Any]) -> t.InitializeResult:
        stamp = (result.meta or {}).get(META_SERVER) or raw.get("serverInfo")
        try:
            info = t.Implementation.model_validate(stamp)
        except ValidationError:
            info = t.Implementation(name=self.url, version="")  # the stamp is optional, and display-only
        self.modern = version
        self.server = t.InitializeResult(protocol_version=version, capabilities=result.capabilities,
                                         server_info=info, instructions=result.instructions)
        assert isinstance(self._transport, StreamableHTTPTransport)
        self._transport.protocol_version = version
        self._transport.modern = True
        return self.server

    def _unsupported(self, supported: list[str]) -> MCPUnsupportedVersionError:
        known = (*HANDSHAKE_PROTOCOL_VERSIONS, *MODERN_PROTOCOL_VERSIONS)
        return MCPUnsupportedVersionError(
            f"{self.url} only speaks MCP protocol {', '.join(map(str, supported))}; this client speaks "
            f"{', '.join(known)}", url=self.url)

    def _capabilities(self) -> t.ClientCapabilities:
        asks = (t.ElicitationCapability(form=t.FormElicitationCapability(), url=t.UrlElicitationCapability())
                if self.on_elicit is not None else None)
        roots = t.RootsCapability(list_changed=True) if self.roots is not None else None
        samples = t.SamplingCapability() if self.on_sample is not None else None
        extensions = {**CLIENT_EXTENSION, tasks.EXTENSION: {}} if self.modern else CLIENT_EXTENSION
        return t.ClientCapabilities(elicitation=asks, roots=roots, sampling=samples, extensions=extensions)

    def _envelope(self, params: dict[str, Any] | None, version: str) -> dict[str, Any]:
        """``params`` with the 2026-07-28 ``_meta``: protocol version, client info, client capabilities."""
        out = dict(params or {})
        out["_meta"] = {**(out.get("_meta") or {}), META_VERSION: version, META_CLIENT: _dump(CLIENT_INFO),
                        META_CAPABILITIES: _dump(self._capabilities())}
        return out

    async def _handshake(self) -> t.InitializeResult:
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
        if any(v in MODERN_PROTOCOL_VERSIONS for v in supported) and not self.modern and self.discover:
            adopted = await self._discover()  # it names a 2026 revision we speak: the probe settles it
            if adopted is not None:
                return adopted
        if not common:
            raise self._unsupported(supported)
        return await self._initialize(max(common))

    async def _initialize(self, version: str = LATEST_HANDSHAKE_VERSION) -> t.InitializeResult:
        params = t.InitializeRequestParams(protocol_version=version, client_info=CLIENT_INFO,
                                           capabilities=self._capabilities())
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
        for task in list(self._background) + list(self._refreshing.values()):
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

    async def _attempt(self, method: str, params: dict[str, Any] | None, timeout: float | None) -> dict[str, Any]:
        if self.modern is not None:
            params = self._envelope(params, self.modern)
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
        if method in ("initialize", "server/discover"):
            return  # never cancelled
        if self.modern:  # 2026-07-28: no notification from the client; its answer's stream is closed instead
            if isinstance(self._transport, StreamableHTTPTransport):
                self._transport.abandon(request_id)
            return
        params = {"requestId": request_id, "reason": reason}
        self._spawn(self._quietly(self.notify("notifications/cancelled", params)))

    async def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        if self.modern:
            return  # 2026-07-28: the client sends no notifications over HTTP
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
            return
        try:
            result = await self._input(request.method, dict(request.params or {}))
        except MCPRPCError as e:
            await self._send(jsonrpc.error_response(request.id, e.code, e.rpc_message))
            return
        await self._send(jsonrpc.response(request.id, result))

    async def _input(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """What the user (or the page) answers a server's request: asked by the server itself (older servers) or
        inside an ``input_required`` result (2026-07-28); :class:`MCPRPCError` for a request not answered."""
        if method == "elicitation/create" and self.on_elicit is not None:
            return await self._elicit(params)
        if method == "sampling/createMessage" and self.on_sample is not None:
            return await self._sample(params)
        if method == "roots/list" and self.roots is not None:
            return {"roots": self.roots()}
        raise MCPRPCError(METHOD_NOT_FOUND, f"client does not support {method}", url=self.url)

    def _notified(self, message: JSONRPCNotification) -> None:
        if message.method == "notifications/progress":
            self._progressed(message.params or {})
        elif message.method in STALE:
            self._schedule_refresh(STALE[message.method], fresh=True)
        elif self._listener is not None:
            self._listener.notified(message)
        elif message.method == "notifications/message":
            self._logged(message.params or {})
        if self.on_notification is not None:
            self.on_notification(message)

    async def _elicit(self, params: dict[str, Any]) -> dict[str, Any]:
        assert self.on_elicit is not None
        try:
            mode = elicitation.check_request(params)
        except elicitation.ElicitationError as e:
            raise MCPRPCError(INVALID_PARAMS, str(e), url=self.url) from None
        answer = await self.on_elicit(params)
        action = answer.get("action")
        if action not in elicitation.ACTIONS:
            raise MCPRPCError(INTERNAL_ERROR, f"no answer to the elicitation ({action!r})", url=self.url)
        if action == "accept" and mode == "form":
            try:
                content = elicitation.accept(params["requestedSchema"], answer.get("content"))
            except elicitation.ElicitationError as e:
                raise MCPRPCError(INVALID_PARAMS, f"the answer does not fit the form: {e}", url=self.url) from None
            return {"action": "accept", "content": content}
        return {"action": action}

    async def _sample(self, params: dict[str, Any]) -> dict[str, Any]:
        assert self.on_sample is not None
        try:
            return await self.on_sample(params)
        except sampling.SamplingDenied as e:
            reason = str(e) or "User rejected sampling request"
            raise MCPRPCError(sampling.USER_REJECTED, reason, url=self.url) from None
        except Exception as e:  # noqa: BLE001 - the server gets an answer whatever failed (the vendor, the user's page)
            raise MCPRPCError(INTERNAL_ERROR, f"sampling failed: {e}", url=self.url) from None

    async def _rounds(self, method: str, params: dict[str, Any], raw: dict[str, Any],
                      timeout: float | None) -> dict[str, Any]:
        """Multi Round-Trip Requests: answer what an ``input_required`` result asks and send the request again
        with the answers and the echoed ``requestState``, until the server answers it (bounded)."""
        for _ in range(MAX_INPUT_ROUNDS):
            if raw.get("resultType") != "input_required":
                return raw
            asked = raw.get("inputRequests")
            state = raw.get("requestState")
            if not isinstance(asked, dict) or (not asked and not isinstance(state, str)):
                raise MCPProtocolError(f"{method}: {self.url} asked for input without saying what (no inputRequests)")
            again = {key: value for key, value in params.items() if key not in ("inputResponses", "requestState")}
            if asked:
                again["inputResponses"] = {key: await self._input_request(key, request)
                                           for key, request in asked.items()}
            else:
                await asyncio.sleep(STATE_ONLY_DELAY)
            if isinstance(state, str):
                again["requestState"] = state  # opaque: echoed byte for byte
            raw = await self.request(method, again, timeout=timeout)
        raise MCPProtocolError(f"{method}: {self.url} still asked for more input after {MAX_INPUT_ROUNDS} rounds of "
                               "answers; the request was given up")

    async def _input_request(self, key: str, request: Any) -> dict[str, Any]:
        if not isinstance(request, dict) or not isinstance(request.get("method"), str):
            raise MCPProtocolError(f"{self.url} asked for input {key!r} that is not a request")
        params = request.get("params")
        return await self._input(request["method"], dict(params) if isinstance(params, dict) else {})

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

    # -- list changes (pycore.mcp.listen) --------------------------------------------------------

    def _listen(self) -> None:
        """2026-07-28: keep a ``subscriptions/listen`` stream open for the list changes the server announces."""
        assert self.server is not None
        notifications = wanted(self.server.capabilities)
        if not notifications:
            return

        async def request(params: dict[str, Any]) -> Any:
            return await self._attempt(LISTEN, params, None)  # no timeout: it is answered when it ends

        def refetch() -> None:
            for key in notifications:
                self._schedule_refresh(CHANGES[key][1], fresh=True)

        self._listener = Listener(request, refetch, notifications)
        self._spawn(self._listener.run())

    def _schedule_refresh(self, method: str, *, fresh: bool) -> None:
        """Fetch the ``method``'s list again (``fresh``: the server said it changed, so not from the cache).
        Debounced: a storm of list_changed notifications causes one or two re-lists, not fifty."""
        if fresh:
            self._cache.evict(method)
            if method == "resources/list":
                self._cache.evict("resources/templates/list")
        running = self._refreshing.get(method)
        if running is not None and not running.done():
            self._refresh_again.add(method)
            return
        self._refreshing[method] = asyncio.ensure_future(self._refresh(method))

    async def _refresh(self, method: str) -> None:
        lister = {"tools/list": self.list_tools, "prompts/list": self.list_prompts,
                  "resources/list": self.list_resources}[method]
        while True:
            self._refresh_again.discard(method)
            await asyncio.sleep(LIST_CHANGED_DEBOUNCE)
            try:
                listed = await lister()
            except MCPError:
                return
            if method == "tools/list" and self.on_tools_changed is not None:
                self.on_tools_changed(listed)  # type: ignore[arg-type]
            if method not in self._refresh_again:
                return

    # -- MCP methods ---------------------------------------------------------------------------

    async def roots_changed(self) -> None:
        """Tell the server the user's roots changed (it asks for them again with ``roots/list``)."""
        if self.roots is not None:
            await self._send(jsonrpc.notification("notifications/roots/list_changed"))

    async def ping(self) -> None:
        await self.request("ping")

    async def _paginate(self, method: str, model: type[R], field: str) -> tuple[list[Any], list[dict[str, Any]]]:
        """Every page's items, and the pages as they came (their ``ttlMs``)."""
        items: list[Any] = []
        pages: list[dict[str, Any]] = []
        guard = CursorGuard(method)
        cursor: str | None = None
        while True:
            raw = await self.request(method, {"cursor": cursor} if cursor is not None else None)
            page = _validate(model, raw, method)
            pages.append(raw)
            items.extend(getattr(page, field))
            cursor = guard.next(page.next_cursor)  # type: ignore[attr-defined]
            if cursor is None:
                return items, pages

    async def _listed(self, method: str, model: type[R], field: str,
                      keep: Callable[[list[Any]], list[Any]] = list) -> list[Any]:
        """A list: the cached one while it is fresh (2026-07-28), else fetched, passed through ``keep`` and cached
        for its ``ttlMs``."""
        cached = self._cache.get(method) if self.modern else None
        if cached is not None:
            return cached
        items, pages = await self._paginate(method, model, field)
        items = keep(items)
        if self.modern:
            self._cache.put(method, items, pages)
        return items

    async def list_tools(self) -> list[t.Tool]:
        self.tools = await self._listed("tools/list", t.ListToolsResult, "tools", self._offered)
        return list(self.tools)

    def _offered(self, tools: list[t.Tool]) -> list[t.Tool]:
        if self.modern and isinstance(self._transport, StreamableHTTPTransport):
            tools = [tool for tool in tools if self._valid_marks(tool)]
            self._transport.header_maps = {tool.name: headers.header_map(tool.input_schema) for tool in tools}
        return tools

    def _valid_marks(self, tool: t.Tool) -> bool:
        """2026-07-28: a tool whose ``x-mcp-header`` marks are invalid is dropped (the log says which, and why)."""
        problem = headers.invalid_header_mark(tool.input_schema)
        if problem is not None:
            self.log.append({"time": time.time(), "level": "warning", "logger": "orizuru",
                             "data": f"tool {tool.name[:200]!r} not offered: {problem[:300]}"})
        return problem is None

    async def call_tool_raw(
        self, name: str, arguments: dict[str, Any] | None = None, *, timeout: float | None = None,
        on_progress: ProgressCallback | None = None, on_task: Callable[[dict[str, Any]], None] | None = None,
    ) -> t.CallToolResult:
        """The call's result; ``on_task`` is told the task, if the server runs the call as one (its handle)."""
        params: dict[str, Any] = {"name": name, "arguments": arguments or {}}
        token = f"orizuru-{self._next_id + 1}"
        if on_progress is not None:
            params["_meta"] = {"progressToken": token}
            self._progress[token] = on_progress
        try:
            raw = await self._rounds("tools/call", params, await self.request("tools/call", params, timeout=timeout),
                                     timeout)
            if self.modern and tasks.is_task(raw):
                raw = await tasks.follow(raw, url=self.url, **self._task_seams(on_progress, timeout), started=on_task)
        finally:
            self._progress.pop(token, None)
        if self.modern and self.server and self.server.capabilities.tools and \
                self.server.capabilities.tools.list_changed and \
                not (self._listener is not None and self._listener.hears("toolsListChanged")):
            # A 2026 server not heard on a listen stream: the tools are listed again after each call (through the
            # cache: a fresh list is not asked for again), so a tool a call added still asks before its first
            # run (T-P3).
            self._schedule_refresh("tools/list", fresh=False)
        return _validate(t.CallToolResult, raw, "tools/call")

    async def resume_task(self, task_id: str, *, on_progress: ProgressCallback | None = None,
                          timeout: float | None = None) -> t.CallToolResult:
        """The result of a call the server runs as a task, picked up again by its ``taskId`` (a reload lost the
        call that made it): followed from its state now (:func:`pycore.mcp.tasks.resume`)."""
        raw = await tasks.resume(task_id, url=self.url, **self._task_seams(on_progress, timeout))
        return _validate(t.CallToolResult, raw, "tasks/get")

    def _task_seams(self, on_progress: ProgressCallback | None, timeout: float | None) -> dict[str, Any]:
        """How :mod:`pycore.mcp.tasks` follows a task of this server: its requests, questions and reports."""
        async def get(task_id: str) -> dict[str, Any]:
            return await self.request("tasks/get", {"taskId": task_id}, timeout=timeout)

        async def update(task_id: str, responses: dict[str, Any]) -> None:
            await self.request("tasks/update", {"taskId": task_id, "inputResponses": responses}, timeout=timeout)

        def cancel(task_id: str) -> None:
            self._spawn(self._quietly(self.request("tasks/cancel", {"taskId": task_id})))

        def report(status: str, message: str | None) -> None:
            if on_progress is not None:
                on_progress(0.0, None, message, task=status)

        return {"get": get, "update": update, "cancel": cancel, "answer": self._input_request, "report": report}

    async def call_tool(self, name: str, arguments: dict[str, Any] | None = None, **kwargs: Any) -> ToolOutput:
        result = await self.call_tool_raw(name, arguments, **kwargs)
        tool = next((tool for tool in self.tools if tool.name == name), None)
        return map_result(result, tool.output_schema if tool else None)

    async def list_resources(self) -> list[t.Resource]:
        self.resources = await self._listed("resources/list", t.ListResourcesResult, "resources")
        return list(self.resources)

    async def list_resource_templates(self) -> list[t.ResourceTemplate]:
        return await self._listed("resources/templates/list", t.ListResourceTemplatesResult, "resource_templates")

    async def read_resource(self, uri: str) -> t.ReadResourceResult:
        params = {"uri": uri}
        raw = await self._rounds("resources/read", params, await self.request("resources/read", params), None)
        return _validate(t.ReadResourceResult, raw, "resources/read")

    async def list_prompts(self) -> list[t.Prompt]:
        self.prompts = await self._listed("prompts/list", t.ListPromptsResult, "prompts")
        return list(self.prompts)

    async def get_prompt(self, name: str, arguments: dict[str, str] | None = None) -> t.GetPromptResult:
        params = {"name": name, "arguments": arguments or {}}
        raw = await self._rounds("prompts/get", params, await self.request("prompts/get", params), None)
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


def _supported_versions(error: MCPError) -> list[str] | None:
    """The versions an ``UnsupportedProtocolVersionError`` lists (a 400 with it as the body, or the JSON-RPC error
    itself); ``None`` for any other error."""
    if isinstance(error, MCPRPCError):
        data = error.data if error.code == UNSUPPORTED_PROTOCOL_VERSION else None
        listed = data.get("supported") if isinstance(data, dict) else None
        return [str(version) for version in listed] if isinstance(listed, list) else None
    if not isinstance(error, MCPHTTPError) or error.status != 400 or not error.body:
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
