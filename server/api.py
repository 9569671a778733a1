"""``GET /api/servers``: the configured servers, their state and recent stderr, for the page to list.

Each entry has a ``kind``: ``"stdio"`` (a configured command, at ``/mcp/{name}`` and ``/sse/{name}``) or
``"remote"`` (an ``--allow-remote`` URL, at ``/remote/{name}``, streamable HTTP only).

``GET /api/webdav``: the sync folders the relay forwards to (``--allow-webdav``, at ``/webdav/{name}/``), so the
page can offer them when a WebDAV server sends no CORS headers (web/sync/doctor.js).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from starlette.requests import Request
from starlette.responses import JSONResponse

from server.remote import RemoteBridge
from server.sessions import Relay, ServerState
from server.webdav import WebDavBridge


def describe(state: ServerState) -> dict[str, object]:
    spec = state.spec
    return {
        "kind": "stdio",
        "name": spec.name,
        "url": f"/mcp/{spec.name}",
        "sseUrl": f"/sse/{spec.name}",
        # The exact command, so the page can show what runs; env values may be secrets, so keys only.
        "command": spec.command,
        "args": list(spec.args),
        "envKeys": sorted(spec.env),
        "cwd": spec.cwd,
        "state": "running" if state.sessions else ("error" if state.last_error else "idle"),
        "sessions": len(state.sessions),
        "started": state.started,
        "failures": state.failures,
        "lastError": state.last_error,
        "stderr": state.log.recent(),
    }


def servers_endpoint(relay: Relay, remote: RemoteBridge | None = None) -> Callable[[Request], Awaitable[JSONResponse]]:
    async def servers(request: Request) -> JSONResponse:
        remotes = remote.describe() if remote is not None else []
        body = {"servers": [describe(s) for s in relay.servers.values()] + remotes,
                "sessions": relay.open_sessions, "maxSessions": relay.limits.max_sessions}
        return JSONResponse(body, headers={"Cache-Control": "no-store"})

    return servers


def folders_endpoint(webdav: WebDavBridge | None) -> Callable[[Request], Awaitable[JSONResponse]]:
    async def folders(request: Request) -> JSONResponse:
        return JSONResponse({"folders": webdav.describe() if webdav is not None else []},
                            headers={"Cache-Control": "no-store"})

    return folders
