"""A traffic record (:mod:`pycore.mcp.traffic`) run again against the client, with no network, for a bug report:
``python -m pycore mcp replay FILE``.

:class:`RecordedServer` serves the recorded server: each request the client sends is answered with what the
server sent after the recorded request of the same method (the same params first, else in order), up to its
response, as one SSE stream (so notifications and the server's own requests arrive where they did), its id
made the new request's. :func:`replay` has the client do again what it did (initialize, the lists, each tool
call, resource read and prompt) and reports what the client made of each answer.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

from pycore.http.base import Request, Response, Transport
from pycore.mcp.errors import MCPError
from pycore.mcp.session import ClientSession
from pycore.mcp.traffic import FORMAT

REPLAYED = ("tools/list", "tools/call", "resources/list", "resources/read", "prompts/list", "prompts/get")


class _Stream(Response):
    def __init__(self, status: int, body: bytes, content_type: str) -> None:
        self.status = status
        self.headers = {"content-type": content_type}
        self._body = body

    async def aiter_bytes(self) -> AsyncIterator[bytes]:
        if self._body:
            yield self._body

    async def aclose(self) -> None:
        return None


class RecordedServer(Transport):
    """An HTTP transport for :class:`~pycore.mcp.session.ClientSession` that answers from a record."""

    def __init__(self, record: dict[str, Any]) -> None:
        messages = [e for e in record.get("messages", []) if isinstance(e, dict) and isinstance(e.get("message"), dict)]
        self.messages = messages
        self.used: set[int] = set()

    async def send(self, request: Request) -> Response:
        if request.method != "POST":
            return _Stream(405 if request.method == "GET" else 200, b"", "text/plain")
        sent = json.loads(request.body or b"{}")
        if "method" not in sent or "id" not in sent:
            return _Stream(202, b"", "text/plain")  # a notification, or our answer to a server request
        answer = self._answer(sent)
        if answer is None:
            error = {"jsonrpc": "2.0", "id": sent["id"],
                     "error": {"code": -32601, "message": f"the record has no {sent['method']} to replay"}}
            return _Stream(200, json.dumps(error).encode(), "application/json")
        body = b"".join(f"event: message\ndata: {json.dumps(m)}\n\n".encode() for m in answer)
        return _Stream(200, body, "text/event-stream")

    def _answer(self, sent: dict[str, Any]) -> list[dict[str, Any]] | None:
        """What the server sent after the first unused recorded request of this method, to its response."""
        candidates = [i for i, e in enumerate(self.messages) if i not in self.used and e["dir"] == "out"
                      and e["message"].get("method") == sent["method"] and "id" in e["message"]]
        same = [i for i in candidates if self.messages[i]["message"].get("params") == sent.get("params")]
        if not candidates:
            return None
        start = (same or candidates)[0]
        self.used.add(start)
        recorded_id = self.messages[start]["message"]["id"]
        out = []
        for entry in self.messages[start + 1:]:
            message = dict(entry["message"])
            if entry["dir"] != "in":
                continue
            if message.get("id") == recorded_id and "method" not in message:
                out.append({**message, "id": sent["id"]})
                return out
            if "method" in message:
                out.append(message)  # a notification or a request of the server's, on the way
        return out or None


async def replay(record: dict[str, Any], *, timeout: float = 10.0) -> list[dict[str, Any]]:
    """The client against the recorded server: what it made of each recorded request's answer."""
    if record.get("format") != FORMAT:
        raise ValueError(f"not an MCP traffic record ({FORMAT}): format is {record.get('format')!r}")
    url = str(record.get("url") or "http://recorded.invalid/mcp")
    report: list[dict[str, Any]] = []
    server = RecordedServer(record)
    probed = server._answer({"method": "server/discover", "id": 0})  # the record of a 2026-07-28 server
    server.used.clear()
    discover = bool(probed and any("result" in m for m in probed))
    async with ClientSession(url, http=server, timeout=timeout, legacy_fallback=False, discover=discover) as mcp:
        report.append({"method": "initialize", "result": {"server": mcp.server.server_info.name if mcp.server else None,
                                                          "protocol": mcp.protocol_version}})
        for entry in record["messages"]:
            message = entry.get("message") or {}
            method, params = message.get("method"), message.get("params") or {}
            if entry.get("dir") != "out" or method not in REPLAYED or "id" not in message:
                continue
            try:
                result = await _again(mcp, method, params)
                report.append({"method": method, "params": params, "result": result})
            except MCPError as e:
                report.append({"method": method, "params": params, "error": f"{type(e).__name__}: {e}"})
    return report


async def _again(mcp: Any, method: str, params: dict[str, Any]) -> Any:
    dump = _dump
    if method == "tools/list":
        return [tool.name for tool in await mcp.list_tools()]
    if method == "tools/call":
        out = await mcp.call_tool(str(params.get("name")), params.get("arguments") or {})
        return {"is_error": out.is_error, "content": out.content, "structured": out.structured,
                "schema_violation": out.schema_violation}
    if method == "resources/list":
        return [str(r.uri) for r in await mcp.list_resources()]
    if method == "resources/read":
        return dump(await mcp.read_resource(str(params.get("uri"))))
    if method == "prompts/list":
        return [p.name for p in await mcp.list_prompts()]
    return dump(await mcp.get_prompt(str(params.get("name")), params.get("arguments") or {}))


def _dump(model: Any) -> Any:
    return model.model_dump(mode="json", by_alias=True, exclude_none=True)
