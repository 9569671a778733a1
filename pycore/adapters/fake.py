"""A scripted model: drives the loop tests, the browser tests and demos without a vendor.

It goes through the same seam as a real vendor: :class:`FakeAdapter` builds a request,
:class:`FakeTransport` answers it with an NDJSON stream of the next scripted turn, and the parser
rebuilds events through the parts manager. A turn is a list of steps, or a function of the
:class:`~pycore.messages.ChatRequest` returning one::

    model = FakeTransport([
        ["Let me look.", ToolCallPart(id="c1", name="search", arguments={"q": "x"})],
        lambda request: [f"You said {len(request.messages)} things."],
    ])

Steps: ``str`` (text, streamed word by word), :class:`ReasoningPart`, :class:`ToolCallPart`,
:class:`Usage`, :class:`ErrorInfo` (an error inside the stream), or ``("finish", raw_reason)``.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any

from pycore._parts import PartsManager
from pycore.adapters._base import Adapter, StreamParser, finish_from
from pycore.http import Request, Response, Transport
from pycore.messages import (
    ChatRequest,
    Completion,
    ErrorInfo,
    Event,
    FinishReason,
    ModelInfo,
    ReasoningPart,
    ToolCallPart,
    Usage,
)

Step = str | ReasoningPart | ToolCallPart | Usage | ErrorInfo | tuple[str, str]
Turn = Sequence[Step] | Callable[[ChatRequest], Sequence[Step]]
FINISH: dict[str, FinishReason] = {"stop": "stop", "length": "length", "tool_calls": "tool_calls"}
URL = "fake://model/chat"


def encode_turn(steps: Sequence[Step]) -> bytes:
    lines: list[dict[str, Any]] = []
    for step in steps:
        lines += _lines(step)
    if not any("finish" in line or "error" in line for line in lines):
        calls = any(isinstance(s, ToolCallPart) for s in steps)
        lines.append({"finish": "tool_calls" if calls else "stop"})
    return b"".join(json.dumps(line).encode() + b"\n" for line in lines)


def _lines(step: Step) -> list[dict[str, Any]]:
    if isinstance(step, str):
        return [{"text": word} for word in re.findall(r"\S*\s*", step) if word]
    if isinstance(step, ReasoningPart):
        return [{"reasoning": step.text, "signature": step.signature}]
    if isinstance(step, ToolCallPart):
        return [{"tool_call": {"id": step.id, "name": step.name, "arguments": step.arguments}}]
    if isinstance(step, Usage):
        return [{"usage": [step.input_tokens, step.output_tokens]}]
    if isinstance(step, ErrorInfo):
        return [{"error": {"type": step.type, "message": step.message}}]
    if isinstance(step, tuple) and step[0] == "finish":
        return [{"finish": step[1]}]
    raise TypeError(f"not a fake-model step: {step!r}")


class FakeParser(StreamParser):
    ndjson = True

    def handle(self, item: Any) -> list[Event]:
        return handle_line(self.parts, item, self.status)


def handle_line(parts: PartsManager, line: Any, status: int = 200) -> list[Event]:
    if not isinstance(line, dict):
        return []
    if "text" in line:
        return parts.text(len(parts.parts) if not parts.parts else _last_text(parts), line["text"])
    if "reasoning" in line:
        return parts.reasoning(len(parts.parts), line["reasoning"], signature=line.get("signature"))
    if "tool_call" in line:
        call = line["tool_call"]
        return parts.tool_call(call["id"], call["id"], call["name"], json.dumps(call["arguments"]))
    if "usage" in line:
        return parts.set_usage(*line["usage"])
    if "error" in line:
        return parts.set_error(status, line["error"].get("type"), line["error"]["message"])
    if "finish" in line:
        parts.set_finish(finish_from(FINISH, line["finish"]), line["finish"])
    return []


def _last_text(parts: PartsManager) -> int:
    """Consecutive text lines extend the last part when it is text; otherwise a new part starts."""
    last = parts.parts[-1]
    return len(parts.parts) - 1 if last.type == "text" else len(parts.parts)


class FakeAdapter(Adapter):
    label = "Scripted (tests and demos)"
    needs_key = False

    vendor = "fake"
    default_base_url = "fake://model"
    url_schemes = ("fake",)

    # The whole ChatRequest is the body, unchanged: the fake model reads it back (FakeTransport).
    def build_request(self, request: ChatRequest) -> Request:
        body = request.model_dump_json().encode()
        return Request("POST", self.chat_url(request), {"content-type": "application/json"}, body)

    def request_body(self, request: ChatRequest) -> dict[str, Any]:
        return request.model_dump(mode="json")

    def tools_fields(self, request: ChatRequest) -> dict[str, Any]:
        return {}  # already in the body

    def chat_url(self, request: ChatRequest) -> str:
        return URL

    def stream_parser(self, *, status: int = 200) -> StreamParser:
        return FakeParser(self.vendor, status=status)

    def parse_payload(self, parts: PartsManager, payload: Any) -> None:
        for line in payload if isinstance(payload, list) else [payload]:
            handle_line(parts, line)

    def parse_response(self, body: bytes) -> Completion:
        parser = self.stream_parser()
        parser.feed(body)
        parser.finish()
        return parser.completion()

    def error_fields(self, payload: Any) -> tuple[str | None, str | None]:
        error = payload.get("error") if isinstance(payload, dict) else None
        return (error.get("type"), error.get("message")) if isinstance(error, dict) else (None, None)

    def models_request(self) -> Request:
        return Request("GET", "fake://model/models")

    def parse_models(self, body: bytes) -> list[ModelInfo]:
        return [ModelInfo(id="fake")]


class _FakeResponse(Response):
    def __init__(self, body: bytes, chunk_size: int) -> None:
        self.status, self.headers = 200, {"content-type": "application/x-ndjson"}
        self._body, self._size = body, chunk_size

    async def aiter_bytes(self) -> AsyncIterator[bytes]:
        for start in range(0, len(self._body), self._size):
            yield self._body[start : start + self._size]

    async def aclose(self) -> None:
        return None


class FakeTransport(Transport):
    """Answers each request with the next scripted turn; keeps the requests it saw."""

    def __init__(self, turns: Sequence[Turn], *, chunk_size: int = 64) -> None:
        self.turns = list(turns)
        self.requests: list[ChatRequest] = []
        self.chunk_size = chunk_size

    async def send(self, request: Request) -> Response:
        if request.url.endswith("/models"):
            return _FakeResponse(b'{"models": ["fake"]}', self.chunk_size)
        chat = ChatRequest.model_validate_json(request.body or b"{}")
        self.requests.append(chat)
        if not self.turns:
            raise AssertionError("the fake model has no scripted turn left")
        turn = self.turns.pop(0)
        steps = turn(chat) if callable(turn) else turn
        return _FakeResponse(encode_turn(steps), self.chunk_size)
