"""The remote bridge: ``/remote/{name}`` forwards to one remote MCP server named by ``--allow-remote``.

Some remote MCP servers send no CORS headers, so the page cannot call them itself. The relay can,
but an HTTP forwarder on the user's machine is an SSRF tool if it can reach anything, so:

- **Only listed URLs.** Each ``--allow-remote [NAME=]URL`` becomes one route, ``/remote/NAME``, that
  forwards to exactly that URL: scheme, host, port, path and query are fixed by the flag and a request
  chooses only the name, never a path, host or query. Redirects are not followed (answered 502).
- **Only public addresses.** The host is resolved when a connection is opened and *every* address it
  resolves to must be public (not loopback, private, link-local, CGNAT, multicast, reserved,
  unspecified, nor an IPv6 form embedding such an IPv4: mapped, 6to4, Teredo, NAT64). The connection
  then goes to one of the addresses that were checked, so DNS cannot change the answer between check
  and connect (rebinding); TLS still verifies the certificate against the host *name* (SNI and Host
  header are the name). No proxy from the environment is used, since it would resolve names itself.
- **Same front door.** ``/remote/`` is guarded like ``/mcp/`` (Host, Origin, token, CORS). The relay's
  token is never forwarded; a credential for the remote travels in ``Remote-Authorization`` and is
  sent on as ``Authorization``. No cookies either way.
- **Bounded, streamed.** Request bodies are limited by ``--max-body`` (413); responses stream through
  chunk by chunk (SSE included) and are cut at ``max_response_bytes``.
- **Only MCP.** A response crosses only as ``application/json`` or ``text/event-stream`` (or with no
  body), with ``nosniff`` and ``Content-Security-Policy: sandbox``. A success of any other type is a
  502; an error of any other type keeps its status and auth headers but not its body.

Only streamable HTTP is forwarded: the legacy HTTP+SSE transport names a second URL in its first
event, which this fixed-URL design deliberately cannot follow.
"""

from __future__ import annotations

import ipaddress
import logging
import re
import socket
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from urllib.parse import urlsplit

import anyio
import httpcore
from mcp.server.transport_security import RequestBodyLimitMiddleware
from starlette.datastructures import Headers
from starlette.responses import JSONResponse, Response
from starlette.types import Receive, Scope, Send

from server.asgi import read_body

log = logging.getLogger("orizuru.relay")

NAME_PATTERN = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")
DEFAULT_PORTS = {"http": 80, "https": 443}
# Request headers the remote may see; everything else (the relay token, cookies, Origin) stays here.
FORWARD_REQUEST_HEADERS = ("accept", "content-type", "mcp-session-id", "mcp-protocol-version", "last-event-id",
                           "mcp-method", "mcp-name")
REMOTE_AUTHORIZATION = "remote-authorization"
# Response headers the page may see; no Set-Cookie (it would land on the relay's origin), no Location.
FORWARD_RESPONSE_HEADERS = ("content-type", "content-length", "mcp-session-id", "mcp-protocol-version",
                            "www-authenticate", "retry-after", "cache-control")
# What an MCP server answers with (streamable HTTP). Anything else (a page, a script, an image) would be
# served under the relay's own origin, where it could act as the app: it never crosses.
MCP_CONTENT_TYPES = ("application/json", "text/event-stream")
# On every forwarded response: the browser must not guess another type, nor run it as a page if opened.
SANDBOX_HEADERS = [(b"x-content-type-options", b"nosniff"), (b"content-security-policy", b"sandbox")]
NAT64 = ipaddress.ip_network("64:ff9b::/96")

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
AddressCheck = Callable[[IPAddress], bool]
Resolver = Callable[[str, int], Awaitable[list[IPAddress]]]


class RemoteConfigError(ValueError):
    """An ``--allow-remote`` value that is not a usable remote MCP URL."""


class AddressRefused(httpcore.ConnectError):
    """The remote host resolved to an address the relay must never connect to."""


def embedded_ipv4(address: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 address carries (mapped, 6to4, Teredo client, NAT64), if any."""
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if address.sixtofour is not None:
        return address.sixtofour
    if address.teredo is not None:
        return address.teredo[1]
    if address in NAT64:
        return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    return None


def is_public(address: IPAddress) -> bool:
    """True only for a globally routable unicast address (the default, and only CLI-reachable, check)."""
    if isinstance(address, ipaddress.IPv6Address):
        inner = embedded_ipv4(address)
        if inner is not None and not is_public(inner):
            return False
    return address.is_global and not (
        address.is_private or address.is_loopback or address.is_link_local or address.is_multicast
        or address.is_reserved or address.is_unspecified
    )


async def resolve(host: str, port: int) -> list[IPAddress]:
    """Every address ``host`` resolves to (an IP literal, including forms like ``0x7f.1``, resolves to itself)."""
    try:
        infos = await anyio.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except OSError as e:
        raise httpcore.ConnectError(f"cannot resolve {host}: {e}") from e
    found: list[IPAddress] = []
    for _family, _type, _proto, _name, sockaddr in infos:
        address = ipaddress.ip_address(str(sockaddr[0]).split("%")[0])
        if address not in found:
            found.append(address)
    return found


class CheckedBackend(httpcore.AsyncNetworkBackend):
    """httpcore's network backend, resolving names itself and connecting only to addresses it checked."""

    def __init__(self, address_ok: AddressCheck = is_public, resolver: Resolver = resolve) -> None:
        self.address_ok = address_ok
        self.resolver = resolver
        self.inner = httpcore.AnyIOBackend()

    async def connect_tcp(
        self, host: str, port: int, timeout: float | None = None, local_address: str | None = None,
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        addresses = await self.resolver(host, port)
        if not addresses:
            raise httpcore.ConnectError(f"{host} resolves to no address")
        refused = [a for a in addresses if not self.address_ok(a)]
        if refused:
            raise AddressRefused(f"{host} resolves to {refused[0]}, which is not a public address "
                                 "(loopback, private, link-local and special ranges are never forwarded to)")
        error: Exception | None = None
        for address in addresses:  # the checked addresses, as literals: nothing is resolved again
            try:
                return await self.inner.connect_tcp(str(address), port, timeout, local_address, socket_options)
            except (httpcore.ConnectError, httpcore.ConnectTimeout) as e:
                error = e
        assert error is not None
        raise error

    async def sleep(self, seconds: float) -> None:
        await self.inner.sleep(seconds)


@dataclass(frozen=True)
class RemoteTarget:
    """One allowlisted remote endpoint: an MCP URL (``/remote/NAME``) or a WebDAV folder (``/webdav/NAME/``)."""

    name: str
    url: str
    prefix: str = "/remote"

    @property
    def route(self) -> str:
        return f"{self.prefix}/{self.name}"


def parse_targets(values: Iterable[str], address_ok: AddressCheck = is_public, flag: str = "--allow-remote",
                  prefix: str = "/remote") -> dict[str, RemoteTarget]:
    """``[NAME=]URL`` values from the command line (``flag``); NAME defaults to the host (``-2``, ``-3`` on repeats)."""
    targets: dict[str, RemoteTarget] = {}
    for value in values:
        name, sep, url = value.partition("=")
        if not sep or "://" in name:
            name, url = "", value
        target_url, host = _check_url(url.strip(), address_ok, flag)
        if name:
            if not NAME_PATTERN.fullmatch(name):
                raise RemoteConfigError(f"{flag} name {name!r} must match {NAME_PATTERN.pattern}")
            if name in targets:
                raise RemoteConfigError(f"{flag} name {name!r} is used twice")
        else:
            base = re.sub(r"[^A-Za-z0-9_.-]", "-", host)[:60] or "remote"
            name, n = base, 1
            while name in targets:
                n += 1
                name = f"{base}-{n}"
        targets[name] = RemoteTarget(name, target_url, prefix)
    return targets


def _check_url(url: str, address_ok: AddressCheck, flag: str) -> tuple[str, str]:
    parts = urlsplit(url)
    if parts.scheme not in DEFAULT_PORTS or not parts.hostname:
        raise RemoteConfigError(f"{flag} {url!r}: expected an http(s) URL")
    if parts.username is not None or parts.password is not None or parts.fragment:
        raise RemoteConfigError(f"{flag} {url!r}: no user:password@ and no #fragment")
    try:
        port = parts.port
    except ValueError as e:
        raise RemoteConfigError(f"{flag} {url!r}: {e}") from e
    try:
        literal = ipaddress.ip_address(parts.hostname.split("%")[0])
    except ValueError:
        literal = None
    if literal is not None and not address_ok(literal):
        raise RemoteConfigError(f"{flag} {url!r}: {literal} is not a public address "
                                "(loopback, private, link-local and special ranges are never forwarded to)")
    host = f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname
    netloc = host + ("" if port in (None, DEFAULT_PORTS[parts.scheme]) else f":{port}")
    path = parts.path or "/"
    return f"{parts.scheme}://{netloc}{path}" + (f"?{parts.query}" if parts.query else ""), parts.hostname


@dataclass(frozen=True)
class RemoteLimits:
    max_body_bytes: int = 4 * 1024 * 1024
    max_response_bytes: int = 64 * 1024 * 1024
    max_open: int = 64
    connect_timeout: float = 10.0
    read_timeout: float = 300.0  # an idle event stream ends after this; the client reconnects


def _refuse(status: int, message: str) -> Response:
    body = {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": message}}
    response = JSONResponse(body, status_code=status)
    response.raw_headers += SANDBOX_HEADERS
    return response


def _is_mcp_type(response: httpcore.Response) -> bool:
    """An MCP content type, or no body at all (202 Accepted for a notification, 204, a DELETE)."""
    media = _header(response.headers, b"content-type")
    if media is None:
        return response.status in (202, 204) or _header(response.headers, b"content-length") == "0"
    return media.split(";")[0].strip().lower() in MCP_CONTENT_TYPES


class RemoteBridge:
    """Forwards ``/remote/{name}`` requests to their allowlisted URL, streaming the response back.

    What is MCP's own is in four methods a bridge for another protocol overrides (server/webdav.py): which
    requests are refused before any work (``_refusal``), where one goes and with what (``_outgoing``), what of an
    answer crosses back (``_head``) and what the page is told of its allowlist (``describe``).
    """

    kind = "remote"
    flag = "--allow-remote"

    def __init__(self, targets: dict[str, RemoteTarget], limits: RemoteLimits | None = None,
                 backend: httpcore.AsyncNetworkBackend | None = None) -> None:
        # ``backend`` is for tests that must reach loopback servers; the command line never sets it.
        self.targets = targets
        self.limits = limits or RemoteLimits()
        self.open = 0
        self.pool = httpcore.AsyncConnectionPool(
            ssl_context=httpcore.default_ssl_context(), network_backend=backend or CheckedBackend(),
            max_connections=self.limits.max_open, keepalive_expiry=30.0, http1=True, http2=False)
        self.endpoint = RequestBodyLimitMiddleware(self._forward, self.limits.max_body_bytes)

    async def aclose(self) -> None:
        await self.pool.aclose()

    def describe(self) -> list[dict[str, object]]:
        return [{"kind": self.kind, "name": t.name, "url": t.route, "target": t.url, "state": "ready"}
                for t in self.targets.values()]

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self.endpoint(scope, receive, send)

    async def _forward(self, scope: Scope, receive: Receive, send: Send) -> None:
        target = self.targets.get(scope["path_params"]["name"])
        if target is None:
            await _refuse(403, f"Forbidden: no {self.flag} URL has that name")(scope, receive, send)
            return
        refusal = self._refusal(scope)
        if refusal is not None:
            await refusal(scope, receive, send)
            return
        if self.open >= self.limits.max_open:
            await _refuse(503, f"Too many open {self.kind} requests")(scope, receive, send)
            return
        self.open += 1
        try:
            await self._exchange(target, scope, receive, send)
        finally:
            self.open -= 1

    def _refusal(self, scope: Scope) -> Response | None:
        """A refusal for a request this bridge never forwards, or None."""
        headers = Headers(scope=scope)
        if scope["method"] == "POST" and \
                headers.get("content-type", "").split(";")[0].strip().lower() != "application/json":
            return _refuse(415, "Unsupported Media Type: Content-Type must be application/json")
        return None

    def _outgoing(self, target: RemoteTarget, scope: Scope, body: bytes) -> tuple[str, list[tuple[bytes, bytes]],
                                                                                   bytes | None]:
        """The URL, headers and body the remote gets: the listed URL exactly, MCP's headers, a POST's body."""
        post = scope["method"] == "POST"
        return target.url, _request_headers(Headers(scope=scope), len(body) if post else None), body if post else None

    def _head(self, target: RemoteTarget, scope: Scope,
              response: httpcore.Response) -> Response | list[tuple[bytes, bytes]]:
        """What of the answer crosses: the headers to stream its body under, or a whole response in its place."""
        if not _is_mcp_type(response):
            return self._bodiless(target, response)
        return _response_headers(response.headers)

    async def _exchange(self, target: RemoteTarget, scope: Scope, receive: Receive, send: Send) -> None:
        body = await read_body(receive)  # already bounded by RequestBodyLimitMiddleware
        url, outgoing, content = self._outgoing(target, scope, body)
        timeouts = {"connect": self.limits.connect_timeout, "read": self.limits.read_timeout,
                    "write": self.limits.connect_timeout, "pool": self.limits.connect_timeout}
        try:
            async with self.pool.stream(scope["method"], url, headers=outgoing, content=content,
                                        extensions={"timeout": timeouts}) as response:
                refusal = self._check_response(target, response)
                head = refusal if refusal is not None else self._head(target, scope, response)
                if isinstance(head, Response):
                    await head(scope, receive, send)
                    return
                await send({"type": "http.response.start", "status": response.status, "headers": head})
                async with anyio.create_task_group() as tg:
                    tg.start_soon(_cancel_on_disconnect, receive, tg.cancel_scope)
                    await self._pump(target, response, send)
                    tg.cancel_scope.cancel()
        except AddressRefused as e:
            log.warning("remote=%s refused: %s", target.name, e)
            await _refuse(403, f"Forbidden: {e}")(scope, receive, send)
        except (httpcore.ConnectError, httpcore.ConnectTimeout) as e:
            await _refuse(502, f"Bad Gateway: cannot reach {url}: {e or type(e).__name__}")(scope, receive, send)
        except httpcore.TimeoutException:
            await _refuse(504, f"Gateway Timeout: {url} did not answer")(scope, receive, send)
        except (httpcore.ProtocolError, httpcore.NetworkError) as e:
            await _refuse(502, f"Bad Gateway: {url}: {e or type(e).__name__}")(scope, receive, send)

    async def _pump(self, target: RemoteTarget, response: httpcore.Response, send: Send) -> None:
        """The response body, chunk by chunk as it arrives; the connection is cut at the size limit."""
        total = 0
        try:
            async for chunk in response.aiter_stream():
                total += len(chunk)
                if total > self.limits.max_response_bytes:
                    log.warning("remote=%s response cut at %d bytes", target.name, total - len(chunk))
                    return  # unfinished: the browser sees a broken response, not a short one
                await send({"type": "http.response.body", "body": chunk, "more_body": True})
            await send({"type": "http.response.body", "body": b"", "more_body": False})
        except (httpcore.TimeoutException, httpcore.NetworkError, httpcore.ProtocolError) as e:
            log.info("remote=%s stream ended: %s", target.name, type(e).__name__)
        except OSError:
            pass  # the browser went away while we were sending

    @staticmethod
    def _bodiless(target: RemoteTarget, response: httpcore.Response) -> Response:
        """A response of a type that is not MCP's: a success is refused; an error keeps its status and
        headers (``WWW-Authenticate`` starts OAuth) with a JSON-RPC error in place of its body."""
        media = _header(response.headers, b"content-type") or "?"
        message = (f"{target.url} answered {media[:100]}, "
                   "not an MCP content type (application/json or text/event-stream)")
        if response.status < 400:
            return _refuse(502, f"Bad Gateway: {message}")
        refusal = _refuse(response.status, f"HTTP {response.status}: {message}")
        refusal.raw_headers += [(k.lower(), v) for k, v in response.headers
                                if k.lower() in (b"www-authenticate", b"retry-after")]
        return refusal

    def _check_response(self, target: RemoteTarget, response: httpcore.Response) -> Response | None:
        if 300 <= response.status < 400:
            location = _header(response.headers, b"location") or "?"
            return _refuse(502, f"Bad Gateway: {target.url} redirects to {location[:200]}; redirects are not "
                                f"followed (allow that URL with {self.flag} if you trust it)")
        length = _header(response.headers, b"content-length")
        if length is not None and length.isdigit() and int(length) > self.limits.max_response_bytes:
            return _refuse(502, f"Bad Gateway: the response is {length} bytes, over the relay's limit")
        return None


async def _cancel_on_disconnect(receive: Receive, scope: anyio.CancelScope) -> None:
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            scope.cancel()
            return


def _request_headers(headers: Headers, length: int | None,
                     names: tuple[str, ...] = FORWARD_REQUEST_HEADERS) -> list[tuple[bytes, bytes]]:
    out = [(name.encode(), headers[name].encode("latin-1")) for name in names if name in headers]
    credential = headers.get(REMOTE_AUTHORIZATION)
    if credential is not None:
        out.append((b"authorization", credential.encode("latin-1")))
    out += [(b"user-agent", b"orizuru-relay"), (b"accept-encoding", b"identity")]
    if length is not None:
        out.append((b"content-length", str(length).encode()))
    return out


def _header(headers: list[tuple[bytes, bytes]], name: bytes) -> str | None:
    for key, value in headers:
        if key.lower() == name:
            return value.decode("latin-1")
    return None


def _response_headers(headers: list[tuple[bytes, bytes]]) -> list[tuple[bytes, bytes]]:
    kept = [(k.lower(), v) for k, v in headers if k.lower().decode("latin-1") in FORWARD_RESPONSE_HEADERS]
    return kept + SANDBOX_HEADERS
