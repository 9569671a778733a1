"""The relay's Starlette application: ``create_app()`` returns it, the routes are a plain list."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from html.parser import HTMLParser
from pathlib import Path

from mcp.server.transport_security import RequestBodyLimitMiddleware
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.routing import BaseRoute, Mount, Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from server.api import folders_endpoint, servers_endpoint
from server.remote import RemoteBridge
from server.security import GUARDED_PREFIXES, Guard, Policy
from server.sessions import Relay, refuse
from server.static import SiteFiles
from server.webdav import WebDavBridge

# Content-hashed or version-pinned folders: safe to keep forever.
IMMUTABLE_PREFIXES = ("/assets/", "/wheels/", "/pyodide/")

# The site's Content-Security-Policy is written once, in the page's own <meta> (web/index.html), so a
# plain static host enforces it too; the relay sends the same policy as a header, adding what a <meta>
# policy cannot carry. A site without one (a test or benchmark page) gets a generic same-origin policy.
FALLBACK_POLICY = "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; object-src 'none'; base-uri 'none'"
HEADER_ONLY_DIRECTIVES = "frame-ancestors 'none'"
# MCP App views' frame (web/mcp_app/frame.html, built as this file): a policy of its own, framed by the site only.
MCP_APP_FRAME = "/mcp-app-frame.html"
FRAME_ONLY_DIRECTIVES = "frame-ancestors 'self'"


class _MetaPolicy(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.policy: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        if tag == "meta" and (values.get("http-equiv") or "").lower() == "content-security-policy":
            self.policy = self.policy or values.get("content")


def _meta_policy(page: Path | None) -> str | None:
    parser = _MetaPolicy()
    if page is not None and page.is_file():
        parser.feed(page.read_text("utf-8"))
    return parser.policy


def site_policy(dist: Path | None) -> str:
    """The header for the site in ``dist``: its index.html's <meta> policy plus the header-only directives."""
    policy = (_meta_policy(dist / "index.html" if dist is not None else None) or FALLBACK_POLICY).strip().rstrip(";")
    return f"{policy}; {HEADER_ONLY_DIRECTIVES}"


def frame_policy(dist: Path | None) -> str | None:
    """The header for the MCP App views' frame: its own <meta> policy, framed by the site only (none: no frame)."""
    policy = _meta_policy(dist / MCP_APP_FRAME.lstrip("/") if dist is not None else None)
    return f"{policy.strip().rstrip(';')}; {FRAME_ONLY_DIRECTIVES}" if policy else None


class SiteHeaders:
    """Cache and security headers for the static site (the relay's own endpoints set theirs)."""

    def __init__(self, app: ASGIApp, policy: str, frame: str | None = None) -> None:
        self.app = app
        self.policy = policy.encode()
        self.frame = frame.encode() if frame else self.policy

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"].startswith(GUARDED_PREFIXES):
            await self.app(scope, receive, send)
            return
        path: str = scope["path"]
        cache = "public, max-age=31536000, immutable" if path.startswith(IMMUTABLE_PREFIXES) else "no-cache"

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = message.setdefault("headers", [])
                headers += [
                    (b"cache-control", cache.encode()),
                    (b"content-security-policy", self.frame if path == MCP_APP_FRAME else self.policy),
                    (b"x-content-type-options", b"nosniff"),
                    (b"referrer-policy", b"no-referrer"),
                    (b"cross-origin-opener-policy", b"same-origin"),
                ]
            await send(message)

        await self.app(scope, receive, send_with_headers)


class ServerEndpoint:
    """ASGI endpoint for one of the relay's per-server paths; an unknown name never reaches the relay."""

    def __init__(self, relay: Relay, handler: str) -> None:
        self.relay = relay
        self.handler = handler

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        name = scope["path_params"]["name"]
        if name not in self.relay.servers:
            await refuse(403, "Forbidden: no configured server has that name")(scope, receive, send)
            return
        await getattr(self.relay, self.handler)(name, scope, receive, send)


def relay_routes(relay: Relay, remote: RemoteBridge | None = None,
                 webdav: WebDavBridge | None = None) -> list[BaseRoute]:
    limit = relay.limits.max_body_bytes
    routes: list[BaseRoute] = []
    if remote is not None and remote.targets:
        routes.append(Route("/remote/{name}", remote, methods=["GET", "POST", "DELETE"]))
    if webdav is not None and webdav.targets:  # every method reaches the bridge, which names the ones it passes
        routes += [Route("/webdav/{name}", webdav), Route("/webdav/{name}/{file:path}", webdav)]
    return routes + [
        Route("/api/servers", servers_endpoint(relay, remote), methods=["GET"]),
        Route("/api/webdav", folders_endpoint(webdav), methods=["GET"]),
        Route("/mcp/{name}", RequestBodyLimitMiddleware(ServerEndpoint(relay, "handle_mcp"), limit),
              methods=["GET", "POST", "DELETE"]),
        Route("/sse/{name}", ServerEndpoint(relay, "handle_sse"), methods=["GET"]),
        Route("/sse/{name}/messages", ServerEndpoint(relay, "handle_sse_post"), methods=["POST"]),
    ]


def create_app(dist: Path | None, relay: Relay | None = None, policy: Policy | None = None,
               remote: RemoteBridge | None = None, webdav: WebDavBridge | None = None) -> Starlette:
    """The site from ``dist`` and, given a relay, its bridges (and ``remote``'s allowlisted URLs, ``webdav``'s
    allowlisted sync folders); ``policy`` is required with a relay."""
    routes: list[BaseRoute] = []
    middleware = [Middleware(SiteHeaders, policy=site_policy(dist), frame=frame_policy(dist))]
    lifespan = None
    if relay is not None:
        if policy is None:
            raise ValueError("a relay needs a Policy (Host, Origin and token checks)")
        routes += relay_routes(relay, remote, webdav)
        middleware.insert(0, Middleware(Guard, policy=policy))

        @asynccontextmanager
        async def lifespan(app: Starlette) -> AsyncIterator[None]:
            try:
                async with relay.running():
                    yield
            finally:
                for bridge in (remote, webdav):
                    if bridge is not None:
                        await bridge.aclose()

    if dist is not None:
        routes.append(Mount("/", app=SiteFiles(directory=dist, html=True), name="site"))
    return Starlette(routes=routes, middleware=middleware, lifespan=lifespan)
