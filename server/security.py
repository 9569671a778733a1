"""The relay's front door: Host, Origin, token and CORS checks for ``/mcp``, ``/sse``, ``/api``, ``/remote``
and ``/webdav``.

Order matters and every refusal happens before any other work:
one of each judged header (400) -> Host (DNS rebinding, 421) -> Origin (exact match, 403)
-> CORS preflight (answered on Origin alone) -> bearer token (constant-time, 401).
Responses to allowed origins carry that origin only, never ``*``.
See SECURITY.md section 3 (R2, R3, R4, R12).
"""

from __future__ import annotations

import hmac
import logging
from dataclasses import dataclass
from urllib.parse import urlsplit

from starlette.datastructures import Headers
from starlette.responses import JSONResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

log = logging.getLogger("orizuru.relay")

GUARDED_PREFIXES = ("/mcp/", "/sse/", "/api/", "/remote/", "/webdav/")
LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")
ALLOW_METHODS = "GET, POST, DELETE, OPTIONS, PUT, PROPFIND, MKCOL"  # the last three for /webdav (server/webdav.py)
ALLOW_HEADERS = ", ".join([
    "Content-Type", "Authorization", "Mcp-Session-Id", "MCP-Protocol-Version", "Last-Event-ID",
    "Mcp-Method", "Mcp-Name", "Remote-Authorization", "Depth", "If-Match", "If-None-Match",
])
EXPOSE_HEADERS = "Mcp-Session-Id, WWW-Authenticate, ETag"
DEFAULT_PORTS = {"http": 80, "https": 443}
# Headers the relay decides on. Sent twice, a request is refused whole (400): judging it by the first copy
# (what ``Headers.get`` returns) while a proxy, the SDK or a remote reads the last is how checks get split.
SINGLE_HEADERS = frozenset({
    b"host", b"origin", b"authorization", b"remote-authorization", b"mcp-session-id", b"mcp-protocol-version",
    b"content-type", b"content-length", b"transfer-encoding",
})


def canonical_origin(value: str) -> str:
    """``scheme://host[:port]``, lower-cased, default port dropped; ValueError if it is not an origin."""
    parts = urlsplit(value.strip())
    if parts.scheme not in DEFAULT_PORTS or not parts.hostname or parts.path not in ("", "/"):
        raise ValueError(f"not an http(s) origin: {value!r}")
    if parts.query or parts.fragment or parts.username or parts.password:
        raise ValueError(f"not an http(s) origin: {value!r}")
    host = f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname
    port = parts.port
    return f"{parts.scheme}://{host}" + ("" if port in (None, DEFAULT_PORTS[parts.scheme]) else f":{port}")


@dataclass(frozen=True)
class Policy:
    """Who may talk to the relay. ``token=None`` only with ``--dangerously-omit-token``."""

    token: str | None
    hosts: frozenset[str]
    origins: frozenset[str]

    @classmethod
    def for_port(cls, port: int, token: str | None, origins: tuple[str, ...] = (),
                 hosts: tuple[str, ...] = ()) -> Policy:
        """The relay's own loopback names on ``port``, plus explicitly allowed extras."""
        own_hosts = {f"{name}:{port}" for name in LOOPBACK_NAMES}
        own_origins = {f"http://{host}" for host in own_hosts}
        return cls(token, frozenset(own_hosts | {h.lower() for h in hosts}),
                   frozenset(own_origins | {canonical_origin(o) for o in origins}))

    def host_ok(self, host: str | None) -> bool:
        return host is not None and host.lower() in self.hosts

    def origin_ok(self, origin: str) -> bool:
        try:
            return canonical_origin(origin) in self.origins
        except ValueError:
            return False  # includes "null"

    def token_ok(self, authorization: str | None) -> bool:
        if self.token is None:
            return True
        scheme, _, value = (authorization or "").partition(" ")
        if scheme.lower() != "bearer":
            return False
        return hmac.compare_digest(value.strip().encode(), self.token.encode())


def _refuse(status: int, message: str, headers: dict[str, str] | None = None) -> Response:
    body = {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": message}}
    return JSONResponse(body, status_code=status, headers=headers)


def cors_headers(origin: str) -> dict[str, str]:
    return {"Access-Control-Allow-Origin": origin, "Vary": "Origin", "Access-Control-Expose-Headers": EXPOSE_HEADERS}


def preflight(origin: str) -> Response:
    headers = cors_headers(origin) | {
        "Access-Control-Allow-Methods": ALLOW_METHODS,
        "Access-Control-Allow-Headers": ALLOW_HEADERS,
        "Access-Control-Max-Age": "600",
    }
    return Response(status_code=204, headers=headers)


class Guard:
    """ASGI middleware: checks every request to a guarded path; Host is checked on every path."""

    def __init__(self, app: ASGIApp, policy: Policy) -> None:
        self.app = app
        self.policy = policy

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        refusal = self.check(scope)
        origin = Headers(scope=scope).get("origin")
        if origin is not None and scope["path"].startswith(GUARDED_PREFIXES) and self.policy.origin_ok(origin):
            if refusal is None or refusal.status_code == 401:  # the page must be able to read a 401 to explain it
                send = _with_cors(send, origin)
        if refusal is not None:
            await refusal(scope, receive, send)
        else:
            await self.app(scope, receive, send)

    def check(self, scope: Scope) -> Response | None:
        """A refusal for this request, or None to let it through."""
        headers = Headers(scope=scope)
        path: str = scope["path"]
        repeated = repeated_header(scope)
        if repeated is not None:
            log.warning("refused: %s header sent more than once (path %s)", repeated, path)
            return _refuse(400, f"Bad Request: more than one {repeated} header")
        if not self.policy.host_ok(headers.get("host")):
            log.warning("refused: Host not allowed (path %s)", path)
            return _refuse(421, "Misdirected Request: Host not allowed")
        if not path.startswith(GUARDED_PREFIXES):
            return None
        origin = headers.get("origin")
        if origin is not None and not self.policy.origin_ok(origin):
            log.warning("refused: Origin %r not allowed (path %s)", origin[:100], path)
            return _refuse(403, "Forbidden: Origin not allowed")
        if scope["method"] == "OPTIONS":
            return preflight(origin) if origin is not None else _refuse(403, "Forbidden: preflight without Origin")
        if not self.policy.token_ok(headers.get("authorization")):
            return _refuse(401, "Unauthorized: Authorization: Bearer <token> required",
                           headers={"WWW-Authenticate": 'Bearer realm="orizuru-relay"'})
        return None


def repeated_header(scope: Scope) -> str | None:
    """The first of SINGLE_HEADERS that this request carries more than once, or None."""
    seen: set[bytes] = set()
    name: bytes
    for name, _ in scope["headers"]:
        if name in SINGLE_HEADERS:
            if name in seen:
                return name.decode()
            seen.add(name)
    return None


def _with_cors(send: Send, origin: str) -> Send:
    async def send_with_cors(message: Message) -> None:
        if message["type"] == "http.response.start":
            headers = message.setdefault("headers", [])
            known = {k.lower() for k, _ in headers}
            headers += [(k.lower().encode(), v.encode()) for k, v in cors_headers(origin).items()
                        if k.lower().encode() not in known]
        await send(message)

    return send_with_cors
