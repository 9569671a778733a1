"""Anthropic Messages API.

Always sends ``anthropic-dangerous-direct-browser-access: true``: without it the API refuses CORS
requests from a page (SECURITY.md §5). Stream: content blocks keyed by their ``index``,
``input_json_delta`` (partial JSON, parsed even when cut by ``max_tokens``), thinking with
``signature_delta``, ``redacted_thinking``, ``ping``, and ``event: error`` mid-stream.

Requests obey the API's shape rules: roles alternate (consecutive turns are merged), the first turn
is the user's, ``tool_result`` blocks come first in their user turn, tool ids match
``[a-zA-Z0-9_-]+``, and only Anthropic's own thinking (with its signature) is sent back.
"""

from __future__ import annotations

import json
import re
from typing import Any, assert_never

from pycore._parts import PartsManager
from pycore.adapters._base import Adapter, StreamParser, drop_none, finish_from, sse_json
from pycore.adapters._convert import is_pdf
from pycore.decoders import SSEEvent
from pycore.http import Request
from pycore.http.retry import ANTHROPIC_POLICY
from pycore.messages import (
    ChatRequest,
    DocumentPart,
    Event,
    FinishReason,
    ImagePart,
    Message,
    ModelInfo,
    NamedToolChoice,
    ReasoningPart,
    TextPart,
    Tool,
    ToolCallPart,
    ToolChoice,
    ToolResultPart,
)

API_VERSION = "2023-06-01"
DEFAULT_MAX_TOKENS = 4096  # required by the API; used when the request does not say
FINISH: dict[str, FinishReason] = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "pause_turn": "stop",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "tool_use": "tool_calls",
    "refusal": "refusal",
}


class AnthropicParser(StreamParser):
    def decode(self, unit: SSEEvent) -> Any:
        event = sse_json(unit.data)
        if type(event) is dict and "type" not in event:
            event["type"] = unit.event
        return event

    def handle(self, event: Any) -> list[Event]:
        kind = event.get("type")
        if kind == "content_block_delta":  # nearly every event
            return block_delta(self.parts, event["index"], event.get("delta") or {})
        if kind == "message_start":
            return message_start(self.parts, event.get("message") or {})
        if kind == "content_block_start":
            return block_start(self.parts, event["index"], event.get("content_block") or {})
        if kind == "content_block_stop":
            return self.parts.tool_call_end(event["index"])
        if kind == "message_delta":
            return message_delta(self.parts, event.get("delta") or {}, event.get("usage") or {})
        if kind == "error":
            error = event.get("error") or {}
            return self.parts.set_error(self.status, error.get("type"), error.get("message") or "error")
        self.done = kind == "message_stop"
        return []  # ping, message_stop, and event types added after this was written


def message_start(parts: PartsManager, message: dict[str, Any]) -> list[Event]:
    parts.response_id, parts.model = message.get("id"), message.get("model")
    usage = message.get("usage") or {}
    return parts.set_usage(usage.get("input_tokens"), usage.get("output_tokens"), usage, merge=True)


def message_delta(parts: PartsManager, delta: dict[str, Any], usage: dict[str, Any]) -> list[Event]:
    if delta.get("stop_reason"):
        parts.set_finish(finish_from(FINISH, delta["stop_reason"]), delta["stop_reason"])
    if not usage:
        return []
    return parts.set_usage(usage.get("input_tokens"), usage.get("output_tokens"), usage, merge=True)


def block_start(parts: PartsManager, index: int, block: dict[str, Any]) -> list[Event]:
    kind = block.get("type")
    if kind == "text":
        return parts.text(index, block.get("text", ""))
    if kind == "thinking":
        return parts.reasoning(index, block.get("thinking", ""), signature=block.get("signature"))
    if kind == "redacted_thinking":
        return parts.reasoning(index, encrypted=block.get("data"), redacted=True)
    if kind == "tool_use":
        return parts.tool_call_start(index, block.get("id", ""), block.get("name", ""))
    return []  # server tools and their results are not ours to run


def block_delta(parts: PartsManager, index: int, delta: dict[str, Any]) -> list[Event]:
    kind = delta.get("type")
    if kind == "text_delta":
        return parts.text(index, delta.get("text", ""))
    if kind == "thinking_delta":
        return parts.reasoning(index, delta.get("thinking", ""))
    if kind == "signature_delta":
        return parts.reasoning(index, signature=delta.get("signature"))
    if kind == "input_json_delta" and parts.has_tool_call(index):
        return parts.tool_call_args(index, delta.get("partial_json", ""))
    return []


# ---------------------------------------------------------------------------------- request body
_ID_UNSAFE = re.compile(r"[^a-zA-Z0-9_-]")


def safe_id(call_id: str) -> str:
    return _ID_UNSAFE.sub("_", call_id) or "call"


def tool_choice(choice: ToolChoice | None) -> dict[str, Any] | None:
    if choice is None:
        return None
    if isinstance(choice, NamedToolChoice):
        return {"type": "tool", "name": choice.name}
    return {"type": {"auto": "auto", "none": "none", "required": "any"}[choice]}


def tool_param(tool: Tool) -> dict[str, Any]:
    return drop_none({"name": tool.name, "description": tool.description or None, "input_schema": tool.input_schema})


def messages_param(messages: list[Message]) -> list[dict[str, Any]]:
    turns: list[dict[str, Any]] = []
    for message in messages:
        blocks = _assistant_blocks(message) if message.role == "assistant" else _user_blocks(message)
        if not blocks:
            continue
        if turns and turns[-1]["role"] == message.role:
            turns[-1]["content"] = _order(turns[-1]["content"] + blocks)
        else:
            turns.append({"role": message.role, "content": _order(blocks)})
    if turns and turns[0]["role"] == "assistant":
        turns.insert(0, {"role": "user", "content": [{"type": "text", "text": "(continued)"}]})
    return turns


def _order(blocks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """tool_result blocks first: the API rejects a user turn where they follow other content."""
    return [b for b in blocks if b["type"] == "tool_result"] + [b for b in blocks if b["type"] != "tool_result"]


def _image(image: ImagePart) -> dict[str, Any]:
    return {"type": "image", "source": {"type": "base64", "media_type": image.mime_type, "data": image.base64()}}


def _user_blocks(message: Message) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    for part in message.parts:
        if isinstance(part, TextPart):
            if part.text:
                blocks.append({"type": "text", "text": part.text})
        elif isinstance(part, ImagePart):
            blocks.append(_image(part))
        elif isinstance(part, DocumentPart):
            blocks.append({"type": "document", "title": part.name,
                           "source": {"type": "base64", "media_type": part.mime_type, "data": part.base64()}}
                          if is_pdf(part) else {"type": "text", "text": part.labelled_text()})
        elif isinstance(part, ToolResultPart):
            content = [
                _image(c) if isinstance(c, ImagePart) else {"type": "text", "text": c.text} for c in part.content
            ]
            blocks.append(
                drop_none(
                    {
                        "type": "tool_result",
                        "tool_use_id": safe_id(part.call_id),
                        "content": content,
                        "is_error": part.is_error or None,
                    }
                )
            )
        elif isinstance(part, ReasoningPart | ToolCallPart):
            continue
        else:
            assert_never(part)
    return blocks


def _assistant_blocks(message: Message) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    for part in message.parts:
        if isinstance(part, TextPart):
            if part.text:
                blocks.append({"type": "text", "text": part.text})
        elif isinstance(part, ToolCallPart):
            blocks.append({"type": "tool_use", "id": safe_id(part.id), "name": part.name, "input": part.arguments})
        elif isinstance(part, ReasoningPart):
            blocks += _thinking(part)
        elif isinstance(part, ImagePart | DocumentPart | ToolResultPart):
            continue
        else:
            assert_never(part)
    return blocks


def _thinking(part: ReasoningPart) -> list[dict[str, Any]]:
    """Anthropic verifies its own signatures; anyone else's reasoning is dropped."""
    if part.vendor != "anthropic":
        return []
    if part.redacted and part.encrypted:
        return [{"type": "redacted_thinking", "data": part.encrypted}]
    if part.signature:
        return [{"type": "thinking", "thinking": part.text, "signature": part.signature}]
    return []


class AnthropicAdapter(Adapter):
    temperature = False
    reasoning = "budget"
    label = "Anthropic"  # no JSON mode of its own: the classifier's prompt asks for JSON, which is checked

    vendor = "anthropic"
    default_base_url = "https://api.anthropic.com"
    retry_policy = ANTHROPIC_POLICY

    def _headers(self) -> dict[str, str]:
        headers = {"anthropic-version": API_VERSION, "anthropic-dangerous-direct-browser-access": "true"}
        if self.api_key:
            headers["x-api-key"] = self.api_key
        return headers

    def request_body(self, request: ChatRequest) -> dict[str, Any]:
        budget = request.reasoning.as_budget() if request.reasoning else None
        max_tokens = request.max_tokens or DEFAULT_MAX_TOKENS + (budget or 0)  # the answer's room beside the thinking
        if budget is not None and budget >= max_tokens:
            raise ValueError(f"Anthropic counts thinking in the output: Max output tokens ({max_tokens}) must be above "
                             f"the thinking budget ({budget}); raise it or lower the budget")
        return {
            "model": request.model,
            "max_tokens": max_tokens,
            "messages": messages_param(request.messages),
            "system": request.system,
            "thinking": {"type": "enabled", "budget_tokens": budget} if budget else None,
        }  # no temperature: the Messages API (SDK 2.11) no longer takes one (temperature = False)

    def tools_fields(self, request: ChatRequest) -> dict[str, Any]:
        return {"tools": [tool_param(t) for t in request.tools], "tool_choice": tool_choice(request.tool_choice)}

    def chat_url(self, request: ChatRequest) -> str:
        return f"{self.base_url}/v1/messages"

    def stream_parser(self, *, status: int = 200) -> StreamParser:
        return AnthropicParser(self.vendor, status=status)

    def parse_payload(self, parts: PartsManager, payload: Any) -> None:
        if payload.get("type") == "error":
            kind, message = self.error_fields(payload)
            parts.set_error(200, kind, message or "error")
            return
        message_start(parts, payload)
        for index, block in enumerate(payload.get("content") or []):
            if block.get("type") == "tool_use":
                parts.tool_call(index, block.get("id", ""), block.get("name", ""), json.dumps(block.get("input") or {}))
            else:
                block_start(parts, index, block)
        message_delta(parts, {"stop_reason": payload.get("stop_reason")}, {})

    def error_fields(self, payload: Any) -> tuple[str | None, str | None]:
        error = payload.get("error") if isinstance(payload, dict) else None
        if isinstance(error, dict):
            return error.get("type"), error.get("message")
        return None, None

    def models_request(self) -> Request:
        return Request("GET", f"{self.base_url}/v1/models?limit=1000", self._headers())

    def parse_models(self, body: bytes) -> list[ModelInfo]:
        return [ModelInfo(id=m["id"], name=m.get("display_name")) for m in json.loads(body).get("data", [])]
