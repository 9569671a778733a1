"""A loopback stand-in for the vendors' clouds that replays their REAL recorded responses.

The page reaches it through a provider's Base URL. Each test scripts what the next requests get,
by fixture name from ``tests/fixtures/vendors/manifest.json``; the bytes, HTTP status and
content type are the recorded ones::

    vendor = VendorReplay()
    vendor.script("openai/chat-stream-tool-call", "openai/chat-stream-text-usage")
    ...                                  # point the app at vendor.url, chat
    vendor.requests[0].json["messages"]  # what the page sent
    vendor.close()

Only model requests (POST) consume the script; anything else (a model list: GET) gets a 404, as
there is no recording of one, so the app's "type the model name" path is what runs. A test that needs
a model list says which models (``list_models``): ``GET …/models`` then answers in the shape OpenAI
documents for it (``{"object": "list", "data": [{"id", "object": "model", "created", "owned_by"}]}``),
which OpenAI-compatible servers copy; that body is built, not recorded.

A test may also script a body it built itself from a recording (``script_body``: e.g. a classifier's
forced tool call made from the recorded non-streamed reply's JSON, as a vendor sends it; or
``with_tool_call``: the recorded streamed tool call naming another tool, with other arguments).

Slow mode (``script(..., delay=0.2)``) sends the body one event (SSE) or line (NDJSON) at a time;
``stall_after=n`` sends n events and then holds the connection open until the client goes away,
which is what a Stop test needs: a reply that is certainly still streaming.

CORS is answered like a vendor that allows browsers (any origin, the requested headers), since the
page and this server are different loopback origins.
"""

from __future__ import annotations

import json
import re
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "vendors"
MANIFEST = {f"{e['vendor']}/{e['name']}": e for e in json.loads((FIXTURES / "manifest.json").read_text())}


def with_tool_call(name: str, tool: str, arguments: dict[str, Any] | str, call_id: str | None = None) -> bytes:
    """The OpenAI Chat stream recording ``name`` (one tool call) calling ``tool`` with ``arguments`` instead:
    the vendor's own events, framing, ids and usage, with the call's name, its arguments (in the first
    arguments delta; the later ones empty; a str is sent as it is, broken JSON too) and, when given, its id
    replaced."""
    out = []
    arguments_sent = False
    for piece in Reply(name).pieces():
        text = piece.decode()
        if not text.startswith("data: {"):
            out.append(piece)
            continue
        body = text.rstrip("\r\n")
        payload = json.loads(body[len("data: "):])
        for choice in payload.get("choices") or []:
            for call in (choice.get("delta") or {}).get("tool_calls") or []:
                function = call.get("function") or {}
                if call_id and call.get("id"):
                    call["id"] = call_id
                if "name" in function:
                    function["name"] = tool
                elif "arguments" in function:
                    written = arguments if isinstance(arguments, str) else json.dumps(arguments)
                    function["arguments"] = "" if arguments_sent else written
                    arguments_sent = True
        out.append(("data: " + json.dumps(payload, separators=(",", ":")) + text[len(body):]).encode())
    return b"".join(out)


def with_text(name: str, text: str) -> bytes:
    """The OpenAI Chat stream recording ``name`` (a text reply) saying ``text`` instead: the vendor's own
    events, framing, ids and usage, with ``text`` as the first content delta and the later ones empty."""
    out = []
    text_sent = False
    for piece in Reply(name).pieces():
        raw = piece.decode()
        if not raw.startswith("data: {"):
            out.append(piece)
            continue
        body = raw.rstrip("\r\n")
        payload = json.loads(body[len("data: "):])
        for choice in payload.get("choices") or []:
            delta = choice.get("delta") or {}
            if delta.get("content"):
                delta["content"] = "" if text_sent else text
                text_sent = True
        out.append(("data: " + json.dumps(payload, separators=(",", ":")) + raw[len(body):]).encode())
    return b"".join(out)


def expected(name: str) -> dict[str, Any]:
    """The unified result the vendor's official SDK got from this recording (the oracle)."""
    return json.loads((FIXTURES / f"{name}.expected.json").read_text())


@dataclass
class Reply:
    name: str
    delay: float = 0.0
    stall_after: int | None = None
    raw: bytes | None = None  # a body built by the test; then content_type/status below apply
    content_type: str = "application/json"
    status: int = 200

    @property
    def entry(self) -> dict[str, Any]:
        if self.raw is not None:
            ext = {"text/event-stream": "sse", "application/x-ndjson": "ndjson"}.get(
                self.content_type.split(";")[0].strip(), "json")
            return {"status": self.status, "content_type": self.content_type, "ext": ext}
        return MANIFEST[self.name]

    def body(self) -> bytes:
        if self.raw is not None:
            return self.raw
        return (FIXTURES / self.entry["file"]).read_bytes()

    def pieces(self) -> list[bytes]:
        """The body cut where the vendor's own framing ends an event (kept byte-exact when joined)."""
        body = self.body()
        if self.entry["ext"] == "sse":
            return [p for p in re.split(rb"(?<=\r\n\r\n)|(?<=\n\n)", body) if p]
        if self.entry["ext"] == "ndjson":
            return body.splitlines(keepends=True)
        return [body]


@dataclass
class Received:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes = b""
    answered_with: str | None = None

    @property
    def json(self) -> Any:
        return json.loads(self.body)


@dataclass
class _State:
    script: list[Reply] = field(default_factory=list)
    requests: list[Received] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    closing: threading.Event = field(default_factory=threading.Event)
    models: list[str] | None = None  # list_models(): what GET …/models answers


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:  # quiet: pytest shows failures, not traffic
        pass

    def _cors(self) -> None:
        self.send_header("Access-Control-Allow-Origin", self.headers.get("Origin") or "*")
        self.send_header("Access-Control-Expose-Headers", "*")

    def do_OPTIONS(self) -> None:
        self.send_response(204)
        self._cors()
        self.send_header("Access-Control-Allow-Methods", "GET, POST, OPTIONS")
        self.send_header("Access-Control-Allow-Headers", self.headers.get("Access-Control-Request-Headers", "*"))
        self.send_header("Access-Control-Max-Age", "600")
        self.end_headers()

    def do_GET(self) -> None:
        self._record(b"")
        models = self.server.state.models
        if models is not None and self.path.split("?")[0].rstrip("/").endswith("/models"):
            self._send_json(200, {"object": "list", "data": [
                {"id": model, "object": "model", "created": 1686935002, "owned_by": "system"} for model in models]})
            return
        self._send_json(404, {"error": {"message": "vendor_replay has no recording of a model list",
                                        "type": "not_found"}})

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        received = self._record(body)
        state = self.server.state
        with state.lock:
            reply = state.script.pop(0) if state.script else None
        if reply is None:
            self._send_json(500, {"error": {"message": "vendor_replay: the test scripted no more responses",
                                            "type": "test_script_exhausted"}})
            return
        received.answered_with = reply.name
        entry = reply.entry
        self.send_response(entry["status"])
        self._cors()
        self.send_header("Content-Type", entry["content_type"])
        self.send_header("Cache-Control", "no-store")
        self.send_header("Connection", "close")
        self.end_headers()
        try:
            for i, piece in enumerate(reply.pieces()):
                if reply.stall_after is not None and i >= reply.stall_after:
                    self._stall()
                    return
                self.wfile.write(piece)
                self.wfile.flush()
                if reply.delay:
                    time.sleep(reply.delay)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the page stopped reading (Stop): what a vendor sees too

    def _stall(self) -> None:
        """Hold the stream open, sending nothing, until the client hangs up or the server closes."""
        self.connection.settimeout(0.1)
        while not self.server.state.closing.is_set():
            try:
                if self.connection.recv(1) == b"":
                    return
            except TimeoutError:
                continue
            except OSError:
                return

    def _record(self, body: bytes) -> Received:
        received = Received(self.command, self.path, {k.lower(): v for k, v in self.headers.items()}, body)
        with self.server.state.lock:
            self.server.state.requests.append(received)
        return received

    def _send_json(self, status: int, payload: Any) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self._cors()
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    state: _State


class VendorReplay:
    def __init__(self, port: int = 0) -> None:
        """``port`` 0 picks a free one; a test may name one it left closed first (a vendor that comes back)."""
        self._server = _Server(("127.0.0.1", port), _Handler)
        self._server.state = _State()
        self._thread = threading.Thread(target=self._server.serve_forever, name="vendor-replay", daemon=True)
        self._thread.start()
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"

    def script(self, *names: str, delay: float = 0.0, stall_after: int | None = None) -> None:
        """Queue recordings for the next POSTs, in order (``vendor/name`` as in the manifest)."""
        for name in names:
            if name not in MANIFEST:
                raise KeyError(f"no recording named {name!r} in the manifest")
        with self._server.state.lock:
            self._server.state.script += [Reply(n, delay, stall_after) for n in names]

    def script_body(self, label: str, body: bytes, *, content_type: str = "application/json",
                    status: int = 200, stall_after: int | None = None) -> None:
        """Queue a body the test built (``label`` names it in ``Received.answered_with``); ``stall_after`` as in
        ``script`` (counted in events: give the SSE or NDJSON content type)."""
        with self._server.state.lock:
            self._server.state.script.append(Reply(label, raw=body, content_type=content_type, status=status,
                                                   stall_after=stall_after))

    def list_models(self, *models: str) -> None:
        """Answer ``GET …/models`` with these model ids, in the shape OpenAI documents (see above)."""
        with self._server.state.lock:
            self._server.state.models = list(models)

    @property
    def requests(self) -> list[Received]:
        with self._server.state.lock:
            return list(self._server.state.requests)

    @property
    def model_requests(self) -> list[Received]:
        return [r for r in self.requests if r.method == "POST"]

    def close(self) -> None:
        self._server.state.closing.set()
        self._server.shutdown()
        self._server.server_close()
