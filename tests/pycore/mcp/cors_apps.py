"""Loopback servers with each CORS misconfiguration the doctor must name (Starlette, uvicorn in a thread).

``mcp_app(cors)`` is the scripted MCP server wrapped in Starlette's CORSMiddleware with the given options
(``None``: no CORS at all); ``ollama_app(allowed)`` answers like Ollama: "Ollama is running" on GET /, 403 with
an empty body for any other Origin.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from mcp_servers import serve_asgi
from scripted_server import Script, create_app
from starlette.applications import Starlette
from starlette.middleware.cors import CORSMiddleware
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

ORIGIN = "http://127.0.0.1:8765"
ALL_HEADERS = ["Content-Type", "Authorization", "Mcp-Session-Id", "MCP-Protocol-Version", "Last-Event-ID"]
GOOD = {"allow_origins": [ORIGIN], "allow_methods": ["GET", "POST", "DELETE"], "allow_headers": ALL_HEADERS,
        "expose_headers": ["Mcp-Session-Id", "WWW-Authenticate"]}


def mcp_app(cors: dict[str, Any] | None) -> Any:
    app = create_app(Script())
    return app if cors is None else CORSMiddleware(app, **cors)


def origin_checking_app() -> Any:
    """CORS is fine, but the server itself refuses unknown Origins with 403 (as MCP servers must)."""
    inner = create_app(Script())

    async def guarded(scope: Any, receive: Any, send: Any) -> None:
        headers = dict(scope.get("headers") or [])
        if scope["type"] == "http" and scope["method"] == "POST" and headers.get(b"origin") != b"http://other.example":
            await JSONResponse({"error": "Forbidden: invalid Origin"}, status_code=403)(scope, receive, send)
            return
        await inner(scope, receive, send)

    return CORSMiddleware(guarded, allow_origins=["*"], allow_methods=["*"], allow_headers=ALL_HEADERS,
                          expose_headers=["Mcp-Session-Id"])


def fixed_cors_app(cors_headers: dict[str, str]) -> Any:
    """A server that always sends the same CORS headers (as hand-written configs do), whoever asks."""
    inner = create_app(Script())

    async def fixed(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http" and scope["method"] == "OPTIONS":
            await Response(status_code=204, headers=cors_headers)(scope, receive, send)
            return

        async def send_with_headers(message: Any) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message["headers"],
                                      *((k.lower().encode(), v.encode()) for k, v in cors_headers.items())]
            await send(message)

        await inner(scope, receive, send_with_headers)

    return fixed


def ollama_app(allowed: str = "http://localhost") -> Any:
    async def root(request: Request) -> Response:
        return PlainTextResponse("Ollama is running")

    async def api(request: Request) -> Response:
        return JSONResponse({"models": []})

    app = Starlette(routes=[Route("/", root), Route("/api/tags", api), Route("/v1/chat/completions", api,
                                                                            methods=["POST"])])

    async def ollama(scope: Any, receive: Any, send: Any) -> None:
        origin = dict(scope.get("headers") or []).get(b"origin")
        if scope["type"] == "http" and origin is not None and origin.decode() != allowed:
            await Response(status_code=403)(scope, receive, send)
            return
        await CORSMiddleware(app, allow_origins=[allowed], allow_methods=["*"], allow_headers=["*"])(
            scope, receive, send)

    return ollama


@contextlib.contextmanager
def serve_app(app: Any) -> Iterator[str]:
    """``http://127.0.0.1:PORT`` of ``app`` on loopback."""
    with serve_asgi(lambda _base: app) as (base, _):
        yield base
