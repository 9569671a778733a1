"""Ollama's native ``/api/chat`` (NDJSON stream). For Ollama's OpenAI-compatible ``/v1`` use
:mod:`pycore.adapters.openai` with that base URL.

Each line is a whole ``ChatResponse``: content and ``thinking`` deltas, tool calls that arrive whole
(with an ``id`` in recent versions, without in older ones: then a stable one is made), and a last
``done: true`` line with ``done_reason`` and token counts. An ``{"error": "..."}`` line can arrive
inside a 200 stream.

From a web page, Ollama answers only origins it was told to trust (``OLLAMA_ORIGINS``; SECURITY.md
§5, T-V7): its 403, and in a browser the failed CORS preflight that shows as a connection error,
come with the exact setting to make, naming this page's origin.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any, assert_never

from pycore._parts import PartsManager
from pycore.adapters._base import Adapter, StreamParser, drop_none, finish_from
from pycore.adapters._convert import result_images, result_text, tool_names
from pycore.adapters.openai import tool_param
from pycore.exceptions import APIConnectionError, APIStatusError
from pycore.http import Request, page_origin
from pycore.messages import (
    ChatRequest,
    DocumentPart,
    Event,
    FinishReason,
    ImagePart,
    Message,
    ModelInfo,
    ReasoningPart,
    TextPart,
    ToolCallPart,
    ToolResultPart,
)

FINISH: dict[str, FinishReason] = {"stop": "stop", "length": "length"}


class OllamaParser(StreamParser):
    ndjson = True

    def handle(self, payload: Any) -> list[Event]:
        return handle_line(self.parts, payload, self.status)


def handle_line(parts: PartsManager, line: Any, status: int = 200) -> list[Event]:
    if not isinstance(line, dict):
        return []
    if line.get("error"):
        return parts.set_error(status, None, str(line["error"]))
    parts.model = line.get("model") or parts.model
    message = line.get("message") or {}
    content = message.get("content")
    if content and not line.get("done") and len(message) == 2:  # the usual line: role and a piece of text
        return parts.text("content", content)
    events: list[Event] = []
    if message.get("thinking"):
        events += parts.reasoning("thinking", message["thinking"])
    if content:
        events += parts.text("content", content)
    for call in message.get("tool_calls") or []:
        events += _call(parts, call)
    if line.get("done"):
        events += _done(parts, line)
    return events


def _call(parts: PartsManager, call: dict[str, Any]) -> list[Event]:
    function = call.get("function") or {}
    name, args = function.get("name", ""), function.get("arguments") or {}
    text = args if isinstance(args, str) else json.dumps(args)
    ordinal = sum(1 for p in parts.parts if isinstance(p, ToolCallPart))
    call_id = call.get("id")
    if not call_id:
        call_id = "call_" + hashlib.sha256(f"{ordinal}|{name}|{text}".encode()).hexdigest()[:24]
    return parts.tool_call(("call", ordinal), call_id, name, text, synthesized=not call.get("id"))


def _done(parts: PartsManager, line: dict[str, Any]) -> list[Event]:
    raw = line.get("done_reason")
    calls = any(isinstance(p, ToolCallPart) for p in parts.parts)
    parts.set_finish(finish_from(FINISH, raw or "stop", tool_calls=calls), raw)
    counts = {k: v for k, v in line.items() if k.endswith(("_count", "_duration"))}
    return parts.set_usage(line.get("prompt_eval_count"), line.get("eval_count"), counts)


# ---------------------------------------------------------------------------------- request body
def messages_param(request: ChatRequest) -> list[dict[str, Any]]:
    names = tool_names(request.messages)
    out: list[dict[str, Any]] = [{"role": "system", "content": request.system}] if request.system else []
    for message in request.messages:
        out += _assistant(message) if message.role == "assistant" else _user(message, names)
    return out


def _user(message: Message, names: dict[str, str]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    texts: list[str] = []
    images: list[str] = []
    for part in message.parts:
        if isinstance(part, ToolResultPart):
            text = result_text(part)
            out.append(
                drop_none(
                    {
                        "role": "tool",
                        "content": f"Error: {text}" if part.is_error else text,
                        "tool_name": part.name or names.get(part.call_id),
                    }
                )
            )
            images += [i.base64() for i in result_images(part)]
        elif isinstance(part, TextPart):
            texts.append(part.text)
        elif isinstance(part, ImagePart):
            images.append(part.base64())
        elif isinstance(part, DocumentPart):  # Ollama reads no files: the text, under the file's name
            texts.append(part.labelled_text())
        elif isinstance(part, ReasoningPart | ToolCallPart):
            continue
        else:
            assert_never(part)
    if texts or images:
        out.append(drop_none({"role": "user", "content": "\n".join(texts), "images": images or None}))
    return out


def _assistant(message: Message) -> list[dict[str, Any]]:
    text = "".join(p.text for p in message.parts if isinstance(p, TextPart) and not p.refusal)
    calls = [
        {"function": {"name": p.name, "arguments": p.arguments}} for p in message.parts if isinstance(p, ToolCallPart)
    ]
    thinking = "".join(p.text for p in message.parts if isinstance(p, ReasoningPart) and p.vendor == "ollama")
    if not (text or calls):
        return []
    return [
        drop_none({"role": "assistant", "content": text, "thinking": thinking or None, "tool_calls": calls or None})
    ]


class OllamaAdapter(Adapter):
    label = "Ollama"
    needs_key = False  # a local server
    classifier_mode = "json"

    @classmethod
    def json_mode_options(cls, name: str, schema: dict[str, Any], open_schema: dict[str, Any]) -> dict[str, Any]:
        return {"format": schema}

    vendor = "ollama"
    default_base_url = "http://localhost:11434"

    def __init__(self, api_key: str | None = None, base_url: str | None = None, *, origin: str | None = None) -> None:
        super().__init__(api_key, base_url)
        self.origin = origin or page_origin()  # the page's origin, in a browser

    def origins_hint(self) -> str:
        origin = self.origin or "<the origin of this page>"
        return (f"Ollama only answers web pages it trusts: set OLLAMA_ORIGINS={origin} where Ollama runs "
                f"and restart it (e.g. OLLAMA_ORIGINS={origin} ollama serve)")

    def map_error(self, status: int, headers: Mapping[str, str], body: bytes) -> APIStatusError:
        error = super().map_error(status, headers, body)
        if status != 403:
            return error
        return type(error)(f"{error.vendor_message}. {self.origins_hint()}", vendor=self.vendor, status=status,
                           type=error.type, headers=error.headers, body=error.body)

    def explain_connection_error(self, error: APIConnectionError) -> APIConnectionError:
        if self.origin is None:  # not in a browser: no CORS, nothing to add
            return error
        hint = f"could not reach Ollama at {self.base_url}: is it running? If it is, {self.origins_hint()}"
        return type(error)(f"{error} ({hint})", vendor=self.vendor)

    def _headers(self) -> dict[str, str]:  # a key only for ollama.com or an authenticating proxy
        return {"authorization": f"Bearer {self.api_key}"} if self.api_key else {}

    def request_body(self, request: ChatRequest) -> dict[str, Any]:
        options = drop_none({"temperature": request.temperature, "num_predict": request.max_tokens})
        return {
            "model": request.model,
            "messages": messages_param(request),
            "stream": request.stream,  # Ollama streams unless told not to
            "options": options or None,
        }

    def tools_fields(self, request: ChatRequest) -> dict[str, Any]:
        if request.tool_choice == "none":  # Ollama has no tool_choice: "none" = no tools
            return {}
        return {"tools": [tool_param(t) for t in request.tools]}

    def chat_url(self, request: ChatRequest) -> str:
        return f"{self.base_url}/api/chat"

    def stream_parser(self, *, status: int = 200) -> StreamParser:
        return OllamaParser(self.vendor, status=status)

    def parse_payload(self, parts: PartsManager, payload: Any) -> None:
        handle_line(parts, payload)

    def error_fields(self, payload: Any) -> tuple[str | None, str | None]:
        error = payload.get("error") if isinstance(payload, dict) else None
        return (None, str(error)) if error else (None, None)

    def models_request(self) -> Request:
        return Request("GET", f"{self.base_url}/api/tags", self._headers())

    def parse_models(self, body: bytes) -> list[ModelInfo]:
        return [ModelInfo(id=m["name"], provider_details=m.get("details")) for m in json.loads(body).get("models", [])]
