"""OpenAI Responses API (``/v1/responses``), for OpenAI's reasoning models.

Requests are stateless (``store: false``) and ask for ``reasoning.encrypted_content``, so the
transcript we keep is enough to continue, reasoning included. Stream: output items keyed by their
id, ``function_call_arguments`` deltas, reasoning-summary deltas, and a mid-stream ``error`` event
(after which, as in the SDK, nothing counts: not even the ``response.failed`` that follows).
"""

from __future__ import annotations

import json
from typing import Any, assert_never, cast

from pycore._parts import PartsManager
from pycore.adapters._base import StreamParser, drop_none, sse_json
from pycore.adapters._convert import data_url, is_pdf, result_images, result_text
from pycore.adapters.openai import OpenAIChatAdapter, error_fields
from pycore.decoders import SSEEvent
from pycore.exceptions import StreamFormatError
from pycore.messages import (
    ChatRequest,
    DocumentPart,
    Event,
    FinishReason,
    ImagePart,
    Message,
    NamedToolChoice,
    ReasoningPart,
    TextPart,
    Tool,
    ToolCallPart,
    ToolChoice,
    ToolResultPart,
)

VENDOR = "openai-responses"
INCOMPLETE: dict[str, FinishReason] = {"max_output_tokens": "length", "content_filter": "content_filter"}


class ResponsesParser(StreamParser):
    def decode(self, unit: SSEEvent) -> Any:
        event = sse_json(unit.data)
        if type(event) is dict and "type" not in event:
            event["type"] = unit.event
        return event

    def handle(self, event: Any) -> list[Event]:
        kind = event.get("type")
        handler = _HANDLERS.get(kind)
        return handler(self, event) if handler else []

    def _error(self, event: dict[str, Any]) -> list[Event]:
        nested = event.get("error")
        error: dict[str, Any] = nested if isinstance(nested, dict) else event
        return self.parts.set_error(
            self.status, error.get("type") or error.get("code"), error.get("message") or "error"
        )

    def _item_added(self, event: dict[str, Any]) -> list[Event]:
        return item_started(self.parts, event["item"])

    def _item_done(self, event: dict[str, Any]) -> list[Event]:
        return item_done(self.parts, event["item"])

    def _text(self, event: dict[str, Any]) -> list[Event]:
        return self.parts.text(event["item_id"], event.get("delta", ""))

    def _refusal(self, event: dict[str, Any]) -> list[Event]:
        return self.parts.text(("refusal", event["item_id"]), event.get("delta", ""), refusal=True)

    def _summary(self, event: dict[str, Any]) -> list[Event]:
        return self.parts.reasoning(event["item_id"], event.get("delta", ""))

    def _summary_part(self, event: dict[str, Any]) -> list[Event]:
        # Summary parts of one reasoning item are paragraphs: separate them.
        return self.parts.reasoning(event["item_id"], "\n\n") if event.get("summary_index", 0) > 0 else []

    def _args(self, event: dict[str, Any]) -> list[Event]:
        item = event["item_id"]
        if not self.parts.has_tool_call(item):
            raise StreamFormatError(f"{VENDOR}: arguments for function call {item!r}, which the stream never started")
        return self.parts.tool_call_args(item, event.get("delta", ""))

    def _response(self, event: dict[str, Any]) -> list[Event]:
        return response_state(self.parts, event.get("response") or {})


_HANDLERS = {
    "error": ResponsesParser._error,
    "response.output_item.added": ResponsesParser._item_added,
    "response.output_item.done": ResponsesParser._item_done,
    "response.output_text.delta": ResponsesParser._text,
    "response.refusal.delta": ResponsesParser._refusal,
    "response.reasoning_summary_text.delta": ResponsesParser._summary,
    "response.reasoning_summary_part.added": ResponsesParser._summary_part,
    "response.function_call_arguments.delta": ResponsesParser._args,
    "response.created": ResponsesParser._response,
    "response.completed": ResponsesParser._response,
    "response.incomplete": ResponsesParser._response,
    "response.failed": ResponsesParser._response,
}


def item_started(parts: PartsManager, item: dict[str, Any]) -> list[Event]:
    kind, key = item.get("type"), item.get("id")
    if kind == "function_call" and not parts.has_tool_call(key):
        # JSON, not yet checked: ToolCallPart, the first thing tool_call_start makes, rejects an id that is no string.
        call_id = cast(str, item.get("call_id") or key)
        return parts.tool_call_start(key, call_id, item.get("name", ""), details={"item_id": key})
    if kind == "reasoning":
        return parts.reasoning(key, details={"id": key})
    return []


def item_done(parts: PartsManager, item: dict[str, Any]) -> list[Event]:
    kind, key = item.get("type"), item.get("id")
    if kind == "function_call":
        events = item_started(parts, item)
        if events:  # the call arrived whole (no deltas)
            events += parts.tool_call_args(key, item.get("arguments") or "")
        return events + parts.tool_call_end(key)
    if kind == "reasoning":
        return parts.reasoning(key, encrypted=item.get("encrypted_content"))
    return []


def response_state(parts: PartsManager, response: dict[str, Any]) -> list[Event]:
    parts.response_id = response.get("id") or parts.response_id
    parts.model = response.get("model") or parts.model
    status = response.get("status")
    events: list[Event] = []
    if response.get("usage"):
        usage = response["usage"]
        events += parts.set_usage(usage.get("input_tokens"), usage.get("output_tokens"), usage)
    if status in ("completed", "incomplete", "failed", "cancelled"):
        parts.set_finish(_finish(parts, response), status)
    return events


def _finish(parts: PartsManager, response: dict[str, Any]) -> FinishReason:
    status = response.get("status")
    if status == "completed":
        return "tool_calls" if any(isinstance(p, ToolCallPart) for p in parts.parts) else "stop"
    if status == "incomplete":
        return INCOMPLETE.get((response.get("incomplete_details") or {}).get("reason", ""), "other")
    return "error" if status == "failed" else "other"


# ---------------------------------------------------------------------------------- request body
def tool_choice(choice: ToolChoice | None) -> Any:
    if choice is None or isinstance(choice, str):
        return choice
    if isinstance(choice, NamedToolChoice):
        return {"type": "function", "name": choice.name}
    assert_never(choice)


def tool_param(tool: Tool) -> dict[str, Any]:
    return drop_none(
        {
            "type": "function",
            "name": tool.name,
            "description": tool.description or None,
            "parameters": tool.input_schema,
            "strict": False,
        }
    )


def input_items(messages: list[Message]) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    for message in messages:
        items += _assistant(message) if message.role == "assistant" else _user(message)
    return items


def _user(message: Message) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    content: list[dict[str, Any]] = []
    for part in message.parts:
        if isinstance(part, ToolResultPart):
            text = result_text(part)
            output = f"Error: {text}" if part.is_error else text
            items.append({"type": "function_call_output", "call_id": part.call_id, "output": output})
            content += [_image(i) for i in result_images(part)]
        elif isinstance(part, TextPart):
            content.append({"type": "input_text", "text": part.text})
        elif isinstance(part, ImagePart):
            content.append(_image(part))
        elif isinstance(part, DocumentPart):
            content.append({"type": "input_file", "filename": part.name, "file_data": data_url(part)} if is_pdf(part)
                           else {"type": "input_text", "text": part.labelled_text()})
        elif isinstance(part, ReasoningPart | ToolCallPart):
            continue
        else:
            assert_never(part)
    return items + ([{"role": "user", "content": content}] if content else [])


def _image(image: ImagePart) -> dict[str, Any]:
    return {"type": "input_image", "image_url": data_url(image), "detail": "auto"}


def _assistant(message: Message) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    for part in message.parts:
        if isinstance(part, TextPart):
            if part.text:
                items.append({"role": "assistant", "content": part.text})
        elif isinstance(part, ToolCallPart):
            items.append(
                {
                    "type": "function_call",
                    "call_id": part.id,
                    "name": part.name,
                    "arguments": json.dumps(part.arguments),
                }
            )
        elif isinstance(part, ReasoningPart):
            items += _reasoning(part)
        elif isinstance(part, ImagePart | DocumentPart | ToolResultPart):
            continue  # an assistant turn cannot carry these here
        else:
            assert_never(part)
    return items


def _reasoning(part: ReasoningPart) -> list[dict[str, Any]]:
    """Only this API's own reasoning goes back (it alone can read ``encrypted_content``)."""
    item_id = (part.provider_details or {}).get("id")
    if part.vendor != VENDOR or not part.encrypted or not item_id:
        return []
    summary = [{"type": "summary_text", "text": part.text}] if part.text else []
    return [{"type": "reasoning", "id": item_id, "summary": summary, "encrypted_content": part.encrypted}]


class OpenAIResponsesAdapter(OpenAIChatAdapter):
    reasoning = "effort"
    label = "OpenAI Responses"
    aliases = ()  # not OpenAI Chat's: compatible servers speak Chat Completions

    @classmethod
    def json_mode_options(cls, name: str, schema: dict[str, Any], open_schema: dict[str, Any]) -> dict[str, Any]:
        return {"text": {"format": {"type": "json_schema", "name": name, "strict": True, "schema": schema}}}

    vendor = VENDOR

    stream_fields = {"stream": True}

    def request_body(self, request: ChatRequest) -> dict[str, Any]:
        effort = request.reasoning.as_effort() if request.reasoning else None
        return {
            "model": request.model,
            "input": input_items(request.messages),
            "instructions": request.system,
            "temperature": request.temperature,
            "max_output_tokens": request.max_tokens,
            "reasoning": {"effort": effort} if effort else None,
            "store": False,
            "include": ["reasoning.encrypted_content"],
        }

    def tools_fields(self, request: ChatRequest) -> dict[str, Any]:
        return {"tools": [tool_param(t) for t in request.tools], "tool_choice": tool_choice(request.tool_choice)}

    def chat_url(self, request: ChatRequest) -> str:
        return f"{self.base_url}/responses"

    def stream_parser(self, *, status: int = 200) -> StreamParser:
        return ResponsesParser(self.vendor, status=status)

    def parse_payload(self, parts: PartsManager, payload: Any) -> None:
        if payload.get("error"):
            kind, message = error_fields(payload)
            parts.set_error(200, kind, message or "error")
            return
        for item in payload.get("output") or []:
            _whole_item(parts, item)
        response_state(parts, payload)


def _whole_item(parts: PartsManager, item: dict[str, Any]) -> None:
    kind, key = item.get("type"), item.get("id")
    if kind == "message":
        for block in item.get("content") or []:
            if block.get("type") == "output_text":
                parts.text(key, block.get("text", ""))
            elif block.get("type") == "refusal":
                parts.text(("refusal", key), block.get("refusal", ""), refusal=True)
    elif kind == "reasoning":
        text = "\n\n".join(s.get("text", "") for s in item.get("summary") or [])
        parts.reasoning(key, text, encrypted=item.get("encrypted_content"), details={"id": key})
    elif kind == "function_call":
        item_done(parts, item)
