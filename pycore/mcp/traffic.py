"""The traffic inspector's record: every JSON-RPC message of an MCP session, in and out, with its time, and
the replay of such a record against the client, for a bug report.

    session.traffic.entries          [{t, dir, message}]: ms since the session began, "out" | "in", the message
    export(session) -> dict          the file the Tools panel saves (FORMAT), secrets already out of it
    await replay(record) -> list     the client run again against the recorded answers (no network):
                                     ``python -m pycore mcp replay FILE``

Secrets never enter the record: the session's header values (a token, an API key; also the token of a
``Bearer`` value), any string under a key that names a credential (``authorization``, ``api_key``,
``access_token``…, :func:`pycore.exceptions.secrets_in`) and anything shaped like a vendor key are replaced by
``[redacted]`` before a message is kept, so the view and the export show the same redacted text. The record
keeps the last :data:`KEEP` messages; ``dropped`` counts the older ones.

A replay serves the recorded server: each request the client sends is answered with what the server sent
after the recorded request of the same method (in order), up to its response, as one SSE stream (so
notifications and the server's own requests arrive where they did), its id made the new request's. Then the
client does again what it did (initialize, the lists, each tool call, resource read and prompt) and the
replay reports what the client made of each answer.
"""

from __future__ import annotations

import json
import time
from collections import deque
from collections.abc import AsyncIterator, Iterable
from typing import Any

from pycore.exceptions import redact, secrets_in
from pycore.http.base import Request, Response, Transport

KEEP = 2000
FORMAT = "orizuru-mcp-traffic/1"
REPLAYED = ("tools/list", "tools/call", "resources/list", "resources/read", "prompts/list", "prompts/get")


class Traffic:
    def __init__(self, secrets: Iterable[str] = ()) -> None:
        self.started = time.time()
        self.entries: deque[dict[str, Any]] = deque(maxlen=KEEP)
        self.dropped = 0
        self.secrets = [s for value in secrets for s in (value, value.partition(" ")[2]) if len(s) >= 4]

    def record(self, direction: str, message: dict[str, Any]) -> None:
        text = redact(json.dumps(message, ensure_ascii=False), [*self.secrets, *secrets_in(message)])
        if len(self.entries) == KEEP:
            self.dropped += 1
        self.entries.append({"t": round((time.time() - self.started) * 1000, 1), "dir": direction,
                             "message": json.loads(text)})


def export(url: str, traffic: Traffic, server: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"format": FORMAT, "url": redact(url, traffic.secrets), "server": server or {},
            "started": traffic.started, "dropped": traffic.dropped, "messages": list(traffic.entries)}


# ------------------------------------------------------------------ replay


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
    from pycore.mcp.errors import MCPError
    from pycore.mcp.session import ClientSession

    if record.get("format") != FORMAT:
        raise ValueError(f"not an MCP traffic record ({FORMAT}): format is {record.get('format')!r}")
    url = str(record.get("url") or "http://recorded.invalid/mcp")
    report: list[dict[str, Any]] = []
    async with ClientSession(url, http=RecordedServer(record), timeout=timeout, legacy_fallback=False) as mcp:
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
