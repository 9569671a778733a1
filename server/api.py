"""``GET /api/servers``: the configured servers, their state and recent stderr, for the page to list."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import JSONResponse

from server.sessions import Relay, ServerState


def describe(state: ServerState) -> dict[str, object]:
    spec = state.spec
    return {
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


def servers_endpoint(relay: Relay):
    async def servers(request: Request) -> JSONResponse:
        body = {"servers": [describe(s) for s in relay.servers.values()],
                "sessions": relay.open_sessions, "maxSessions": relay.limits.max_sessions}
        return JSONResponse(body, headers={"Cache-Control": "no-store"})

    return servers
