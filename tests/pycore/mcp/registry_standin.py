"""A local stand-in for the official MCP registry, for the registry search's tests and journey.

NOT recorded from the live registry: this machine has no internet. It serves the registry's published read API
as documented in modelcontextprotocol/registry (``docs/reference/api/openapi.yaml``: ``GET /v0.1/servers`` with
``search`` (a case-insensitive substring of the name), ``version=latest``, ``limit``, answering
``{servers: [{server, _meta: {"io.modelcontextprotocol.registry/official": {status, isLatest, …}}}],
metadata: {count, nextCursor}}``) over entries shaped as that repository's ``server.json`` examples are
(``docs/reference/server-json/examples/valid/with-remote.json``, ``with-package.json``). Every request is kept in
``asked`` (a search is the only request the app may make).

    app = registry_app(published(remote_url), asked, origin)   # origin: answer CORS for a browser page
"""

from __future__ import annotations

from typing import Any

from starlette.applications import Starlette
from starlette.middleware.cors import CORSMiddleware
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

OFFICIAL = "io.modelcontextprotocol.registry/official"


def published(remote_url: str) -> list[dict[str, Any]]:
    """The registry's entries: a remote server at ``remote_url``, a package, one with a templated host, one
    deleted, and a server.json the client must tolerate (an unknown package kind, a remote of another type)."""
    def listed(server: dict[str, Any], status: str = "active") -> dict[str, Any]:
        return {"server": {"$schema": "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json",
                           **server},
                "_meta": {OFFICIAL: {"status": status, "publishedAt": "2026-07-30T10:00:00Z",
                                     "updatedAt": "2026-07-30T10:00:00Z", "isLatest": True}}}

    return [
        listed({"name": "io.github.orizuru/capitals", "title": "Capitals", "version": "1.2.0",
                "description": "The capital city of a country, <b>over</b> streamable HTTP.",
                "remotes": [{"type": "streamable-http", "url": remote_url}]}),
        listed({"name": "io.github.orizuru/capitals-weather", "version": "1.0.0",
                "description": "Local weather, as an npm package.",
                "packages": [{"registryType": "npm", "identifier": "@orizuru/capitals-weather", "version": "1.0.0",
                              "transport": {"type": "stdio"}, "runtimeHint": "npx",
                              "packageArguments": [{"type": "positional", "valueHint": "config_path"},
                                                   {"type": "named", "name": "--port", "value": "8080"}],
                              "environmentVariables": [{"name": "API_KEY", "isSecret": True, "isRequired": True},
                                                       {"name": "LOG_LEVEL", "isRequired": False}]},
                             {"registryType": "nuget", "identifier": "Orizuru.Weather", "version": "1.0.0",
                              "transport": {"type": "stdio"}}]}),
        listed({"name": "com.example/capitals-hosted", "version": "2.1.0",
                "description": "Hosted, on a host you name.",
                "remotes": [{"type": "streamable-http", "url": "https://{tenant}.example.com/mcp",
                             "variables": {"tenant": {"description": "Your tenant"}},
                             "headers": [{"name": "Authorization", "isSecret": True, "isRequired": True}]},
                            {"type": "websocket", "url": "wss://example.com/mcp"}]}),
        listed({"name": "io.github.gone/capitals-old", "version": "0.1.0", "description": "Withdrawn.",
                "remotes": [{"type": "streamable-http", "url": "https://gone.example/mcp"}]}, status="deleted"),
        listed({"name": "io.github.other/notes", "version": "3.0.0", "description": "Not a capital in sight.",
                "remotes": [{"type": "sse", "url": "https://notes.example/sse"}]}),
    ]


def registry_app(entries: list[dict[str, Any]], asked: list[str], origin: str | None = None) -> Any:
    async def servers(request: Request) -> JSONResponse:
        asked.append(str(request.url.path) + ("?" + request.url.query if request.url.query else ""))
        search = request.query_params.get("search", "").lower()
        limit = int(request.query_params.get("limit", "30"))
        found = [e for e in entries if search in e["server"]["name"].lower()][:limit]
        return JSONResponse({"servers": found, "metadata": {"count": len(found)}})

    app: Any = Starlette(routes=[Route("/v0.1/servers", servers)])
    if origin is not None:
        app = CORSMiddleware(app, allow_origins=[origin], allow_methods=["GET"])
    return app
