"""A scripted MCP server that misbehaves on demand (Starlette, run by uvicorn in a thread on loopback).

``Script`` holds the knobs each test sets; ``requests`` records what the client sent.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from typing import Any

from mcp_servers import serve_asgi
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
CONTENT_TOOL = {"name": "content", "inputSchema": {"type": "object"},
                "outputSchema": {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}}


@dataclass
class Script:
    answer: str = "json"  # or "sse"
    version: str | None = None  # protocolVersion to answer (default: echo the client's)
    session_header: bool = True  # send Mcp-Session-Id (False: require it anyway, like a CORS-hidden header)
    expire_once: bool = False  # 404 the first post-init request carrying the session
    repeat_cursor: bool = False
    legacy: bool = False
    endpoint: str = "/messages"
    requests: list[dict[str, Any]] = field(default_factory=list)
    initializes: int = 0
    tools_lists: int = 0
    legacy_queue: asyncio.Queue[dict[str, Any]] | None = None
    unauthorized: bool = False
    tools: list[dict[str, Any]] | None = None  # tools/list answers these instead of echo + content
    refuse_initialize: list[Any] = field(default_factory=list)  # 400 bodies for the next initialize POSTs
    elicit_url: str = ""  # the URL a tools/call of "elicit" asks the client to open (URL-mode elicitation)
    # JSON-RPC method ("*": any POSTed request, "GET": the SSE stream) -> a 307 to that URL
    redirect: dict[str, str] = field(default_factory=dict)
    endless_sent: int = 0  # bytes of the endless event sent so far (tools/call "endless")


def create_app(script: Script) -> Starlette:
    async def mcp(request: Request) -> Response:
        body = json.loads(await request.body() or b"null")
        script.requests.append({"method": request.method, "headers": dict(request.headers), "body": body})
        if request.method == "GET" and "GET" in script.redirect:
            return Response(status_code=307, headers={"location": script.redirect["GET"]})
        if script.legacy:
            return await _legacy_get(script) if request.method == "GET" else Response(status_code=405)
        if request.method != "POST":
            return Response(status_code=405)
        return await _post(script, request, body)

    async def messages(request: Request) -> Response:
        body = json.loads(await request.body())
        script.requests.append({"method": "POST", "headers": dict(request.headers), "body": body})
        if "id" in body and "method" in body and script.legacy_queue is not None:
            await script.legacy_queue.put(_result(script, body))
        return Response(status_code=202)

    async def elsewhere(request: Request) -> Response:  # any other path: recorded, so a test sees it was asked
        script.requests.append({"method": request.method, "headers": dict(request.headers), "body": None,
                                "path": request.url.path})
        return Response(status_code=404)

    return Starlette(routes=[Route("/mcp", mcp, methods=["GET", "POST", "DELETE"]),
                             Route("/messages", messages, methods=["POST"]),
                             Route("/{path:path}", elsewhere, methods=["GET", "POST", "HEAD"])])


async def _post(script: Script, request: Request, body: dict[str, Any]) -> Response:
    where = script.redirect.get(body.get("method", ""), script.redirect.get("*"))
    if where is not None:
        return Response(status_code=307, headers={"location": where})
    if script.unauthorized:
        return Response(status_code=401, headers={"www-authenticate": 'Bearer resource_metadata="x"'})
    if "method" not in body or "id" not in body:
        return Response(status_code=202)
    session = request.headers.get("mcp-session-id")
    if body["method"] == "initialize" and script.refuse_initialize:
        refusal = script.refuse_initialize.pop(0)
        if refusal is None:
            return Response(status_code=400)
        return JSONResponse(refusal, status_code=400)
    if body["method"] == "initialize":
        script.initializes += 1
        headers = {"mcp-session-id": f"s{script.initializes}"} if script.session_header else {}
        return JSONResponse(_result(script, body), headers=headers)
    if session is None:
        return JSONResponse({"jsonrpc": "2.0", "id": None, "error": {"code": -32000, "message":
                             "Bad Request: Missing session ID"}}, status_code=400)
    if script.expire_once and session == "s1":
        return Response(status_code=404)
    special = _special(script, body)
    if special is not None:
        return special
    if script.answer == "sse":
        return StreamingResponse(_sse([_result(script, body)]), media_type="text/event-stream")
    return JSONResponse(_result(script, body))


def _special(script: Script, body: dict[str, Any]) -> Response | None:
    name = (body.get("params") or {}).get("name") if body["method"] == "tools/call" else None
    if name == "storm":
        return StreamingResponse(_storm(script, body), media_type="text/event-stream")
    if name == "hang":
        return StreamingResponse(_hang(), media_type="application/json")
    if name == "garbage":
        return Response(b'{"jsonrpc": "2.0", "id": ', media_type="application/json")
    if name == "die":
        return StreamingResponse(_die(), media_type="text/event-stream")
    if name == "elicit":
        return StreamingResponse(_elicit(script, body), media_type="text/event-stream")
    if name == "endless":
        return StreamingResponse(_endless(script), media_type="text/event-stream")
    return None


async def _hang() -> AsyncIterator[bytes]:
    await asyncio.sleep(30)
    yield b"{}"


async def _endless(script: Script) -> AsyncIterator[bytes]:
    """One SSE event that never ends (up to 64 MiB, then the server gives up); ``endless_sent`` counts bytes.
    Paced (20 ms a MiB) so that a client hanging up is noticed before the server has written it all."""
    yield b"id: 0\ndata: \n\nevent: message\ndata: "
    for _ in range(64):
        await asyncio.sleep(0.02)
        script.endless_sent += 1024 * 1024
        yield b"x" * (1024 * 1024)


async def _die() -> AsyncIterator[bytes]:
    yield b"id: 0\ndata: \n\n"
    raise RuntimeError("server died mid-call")


def _result(script: Script, body: dict[str, Any]) -> dict[str, Any]:
    method, params = body["method"], body.get("params") or {}
    if method == "initialize":
        result: dict[str, Any] = {"protocolVersion": script.version or params["protocolVersion"],
                                  "capabilities": {"tools": {"listChanged": True}},
                                  "serverInfo": {"name": "scripted", "version": "1"}}
    elif method == "tools/list":
        result = _tools_page(script, params.get("cursor"))
    elif method == "tools/call":
        result = _call(params["name"])
    else:
        result = {}
    return {"jsonrpc": "2.0", "id": body["id"], "result": result}


def _tools_page(script: Script, cursor: str | None) -> dict[str, Any]:
    script.tools_lists += 1
    if script.tools is not None:
        return {"tools": script.tools}
    if script.repeat_cursor:
        return {"tools": [{"name": "loop", "inputSchema": {"type": "object"}}], "nextCursor": "same"}
    return {"tools": [{"name": "echo", "inputSchema": {"type": "object"}}, CONTENT_TOOL]}


def _call(name: str) -> dict[str, Any]:
    if name != "content":
        return {"content": [{"type": "text", "text": f"called {name}"}]}
    return {"content": [
        {"type": "text", "text": "t"},
        {"type": "image", "data": PNG, "mimeType": "image/png"},
        {"type": "image", "data": PNG, "mimeType": "image/svg+xml"},
        {"type": "audio", "data": "AAAA", "mimeType": "audio/wav"},
        {"type": "resource_link", "uri": "file:///etc/passwd", "name": "passwd"},
        {"type": "resource", "resource": {"uri": "test://r", "text": "inside"}},
        {"type": "resource", "resource": {"uri": "test://b", "blob": "AAAA", "mimeType": "application/pdf"}},
    ], "structuredContent": {"n": "not a number"}, "isError": True}


async def _sse(messages: list[dict[str, Any]]) -> AsyncIterator[bytes]:
    yield b"id: 0\ndata: \n\n"  # priming event
    for i, message in enumerate(messages, 1):
        yield f"id: {i}\nevent: message\ndata: {json.dumps(message)}\n\n".encode()


async def _storm(script: Script, body: dict[str, Any]) -> AsyncIterator[bytes]:
    changed = {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}
    progress = {"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": "nobody's",
                                                                                  "progress": 1}}
    ping = {"jsonrpc": "2.0", "id": "srv-1", "method": "ping"}
    async for chunk in _sse([changed] * 50 + [progress, ping, _result(script, body)]):
        yield chunk


async def _elicit(script: Script, body: dict[str, Any]) -> AsyncIterator[bytes]:
    """Ask the client (URL-mode elicitation) to open a URL, wait for its answer, then answer the call."""
    ask = {"jsonrpc": "2.0", "id": "srv-elicit", "method": "elicitation/create", "params": {
        "mode": "url", "url": script.elicit_url, "message": "Please sign in", "elicitationId": "e1"}}
    async for chunk in _sse([ask]):
        yield chunk
    for _ in range(100):
        if any((r["body"] or {}).get("id") == "srv-elicit" for r in script.requests):
            break
        await asyncio.sleep(0.02)
    yield f"id: 9\nevent: message\ndata: {json.dumps(_result(script, body))}\n\n".encode()


async def _legacy_get(script: Script) -> Response:
    script.legacy_queue = asyncio.Queue()
    queue = script.legacy_queue

    async def events() -> AsyncIterator[bytes]:
        yield f"event: endpoint\ndata: {script.endpoint}\n\n".encode()
        while True:
            message = await queue.get()
            yield f"event: message\ndata: {json.dumps(message)}\n\n".encode()

    return StreamingResponse(events(), media_type="text/event-stream")


@contextlib.contextmanager
def serve(script: Script) -> Iterator[str]:
    with serve_asgi(lambda _base: create_app(script)) as (base, _):
        yield base + "/mcp"
