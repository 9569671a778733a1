"""The relay's Starlette application: ``create_app()`` returns it, the routes are a plain list."""

from __future__ import annotations

from pathlib import Path

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.routing import Mount
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Message, Receive, Scope, Send

# Content-hashed or version-pinned folders: safe to keep forever.
IMMUTABLE_PREFIXES = ("/assets/", "/wheels/", "/pyodide/")

# The page talks to vendors and MCP servers the user picks, so connect-src stays open to https
# and loopback; everything that executes or renders comes from this origin only.
CONTENT_SECURITY_POLICY = "; ".join([
    "default-src 'self'",
    "script-src 'self' 'wasm-unsafe-eval'",
    "worker-src 'self'",
    "connect-src 'self' https: http://127.0.0.1:* http://localhost:* http://[::1]:*",
    "img-src 'self' data: blob:",
    "style-src 'self'",
    "object-src 'none'",
    "base-uri 'none'",
    "frame-ancestors 'none'",
    "form-action 'none'",
])


class SiteHeaders:
    """Cache and security headers for the static site."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path: str = scope["path"]
        cache = "public, max-age=31536000, immutable" if path.startswith(IMMUTABLE_PREFIXES) else "no-cache"

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = message.setdefault("headers", [])
                headers += [
                    (b"cache-control", cache.encode()),
                    (b"content-security-policy", CONTENT_SECURITY_POLICY.encode()),
                    (b"x-content-type-options", b"nosniff"),
                    (b"referrer-policy", b"no-referrer"),
                    (b"cross-origin-opener-policy", b"same-origin"),
                ]
            await send(message)

        await self.app(scope, receive, send_with_headers)


def create_app(dist: Path) -> Starlette:
    routes = [Mount("/", app=StaticFiles(directory=dist, html=True), name="site")]
    return Starlette(routes=routes, middleware=[Middleware(SiteHeaders)])
