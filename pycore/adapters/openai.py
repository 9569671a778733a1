"""OpenAI Chat Completions, and every OpenAI-compatible endpoint by base URL.

Ollama ``/v1``, LM Studio, vLLM, OpenRouter, Groq... speak the same wire format; give their base URL
(e.g. ``http://localhost:11434/v1``). Stream quirks handled here: tool calls assembled by
``index`` across chunks, the final ``stream_options.include_usage`` chunk with empty ``choices``,
Azure's content-filter chunks with empty ``choices``, ``refusal`` deltas (kept apart from text),
``reasoning_content``/``reasoning`` deltas of compatible servers, ``data: [DONE]``, and an
``error`` object sent inside the stream.
"""

from __future__ import annotations

import json
from typing import Any, ClassVar, assert_never
from urllib.parse import urlsplit

from pycore._parts import PartsManager
from pycore.adapters._base import Adapter, StreamParser, VendorAlias, drop_none, finish_from, multipart, sse_json
from pycore.adapters._convert import data_url, is_pdf, result_images, result_text
from pycore.decoders import SSEEvent
from pycore.http import Request
from pycore.http.retry import OPENAI_POLICY
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

FINISH: dict[str, FinishReason] = {
    "stop": "stop",
    "length": "length",
    "tool_calls": "tool_calls",
    "function_call": "tool_calls",
    "content_filter": "content_filter",
}


class OpenAIChatParser(StreamParser):
    def decode(self, unit: SSEEvent) -> Any:
        if unit.data == "[DONE]":
            self.done = True
            return None
        return sse_json(unit.data)

    def handle(self, payload: Any) -> list[Event]:
        return handle_chunk(self.parts, payload, self.status) if payload is not None else []


def handle_chunk(parts: PartsManager, chunk: dict[str, Any], status: int = 200) -> list[Event]:
    if chunk.get("error"):
        kind, message = error_fields(chunk)
        return parts.set_error(status, kind, message or "error in stream")
    parts.response_id = chunk.get("id") or parts.response_id
    parts.model = chunk.get("model") or parts.model
    events: list[Event] = []
    for choice in chunk.get("choices") or []:
        if choice.get("index", 0) == 0:
            events += _delta(parts, choice.get("delta") or {})
            if choice.get("finish_reason"):
                parts.set_finish(finish_from(FINISH, choice["finish_reason"]), choice["finish_reason"])
    if chunk.get("usage"):
        events += _usage(parts, chunk["usage"])
    return events


def _delta(parts: PartsManager, delta: dict[str, Any]) -> list[Event]:
    content = delta.get("content")
    if content and len(delta) == 1:  # the usual chunk: a piece of text, nothing else
        return parts.text("content", content)
    events: list[Event] = []
    reasoning = delta.get("reasoning_content") or delta.get("reasoning")
    if isinstance(reasoning, str) and reasoning:
        events += parts.reasoning("reasoning", reasoning)
    if content:
        events += parts.text("content", content)
    if delta.get("refusal"):
        events += parts.text("refusal", delta["refusal"], refusal=True)
    for call in delta.get("tool_calls") or []:
        function = call.get("function") or {}
        events += parts.streamed_tool_call(call.get("index", 0), call.get("id"), function.get("name"),
                                           function.get("arguments") or "")
    return events


def _usage(parts: PartsManager, usage: dict[str, Any]) -> list[Event]:
    return parts.set_usage(usage.get("prompt_tokens"), usage.get("completion_tokens"), usage)


def error_fields(payload: Any) -> tuple[str | None, str | None]:
    error = payload.get("error") if isinstance(payload, dict) else None
    if isinstance(error, dict):
        return error.get("type") or error.get("code"), error.get("message")
    if isinstance(error, str):  # several compatible servers
        return None, error
    return None, None


# ---------------------------------------------------------------------------------- request body
def tool_choice(choice: ToolChoice | None) -> Any:
    if choice is None or isinstance(choice, str):
        return choice
    if isinstance(choice, NamedToolChoice):
        return {"type": "function", "function": {"name": choice.name}}
    assert_never(choice)


def tool_param(tool: Tool) -> dict[str, Any]:
    function = drop_none({"name": tool.name, "description": tool.description or None, "parameters": tool.input_schema})
    return {"type": "function", "function": function}


def messages_param(request: ChatRequest, *, files: bool = True, audio: bool = True) -> list[dict[str, Any]]:
    """``files``: the server reads PDF file parts (OpenAI's does; compatible servers get the text); ``audio``: it
    takes input_audio (OpenAI's; a compatible server is refused a clip)."""
    out: list[dict[str, Any]] = [{"role": "system", "content": request.system}] if request.system else []
    for message in request.messages:
        out += _assistant(message) if message.role == "assistant" else _user(message, files, audio)
    return out


def _user(message: Message, files: bool, audio: bool) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    content: list[dict[str, Any]] = []
    for part in message.parts:
        if isinstance(part, ToolResultPart):
            text = result_text(part)
            out.append(
                {"role": "tool", "tool_call_id": part.call_id, "content": f"Error: {text}" if part.is_error else text}
            )
            content += [_image(i) for i in result_images(part)]
        elif isinstance(part, TextPart):
            content.append({"type": "text", "text": part.text})
        elif isinstance(part, ImagePart):
            content.append(_image(part))
        elif isinstance(part, DocumentPart):
            content.append(_document(part, files, audio))
        elif isinstance(part, ReasoningPart | ToolCallPart):
            continue  # not user content; nothing to send
        else:
            assert_never(part)
    if content:
        simple = len(content) == 1 and content[0]["type"] == "text"
        out.append({"role": "user", "content": content[0]["text"] if simple else content})
    return out


# Chat Completions' input_audio takes these two formats (the page records WAV)
AUDIO_FORMATS = {"audio/wav": "wav", "audio/x-wav": "wav", "audio/wave": "wav", "audio/mpeg": "mp3", "audio/mp3": "mp3"}


def _document(part: DocumentPart, files: bool, audio: bool) -> dict[str, Any]:
    """A PDF or a clip itself where the server takes it; otherwise the file's text, or a refusal (a clip has none)."""
    if files and is_pdf(part):
        return {"type": "file", "file": {"filename": part.name, "file_data": data_url(part)}}
    if audio and part.is_audio() and part.mime_type in AUDIO_FORMATS:
        return {"type": "input_audio", "input_audio": {"data": part.base64(), "format": AUDIO_FORMATS[part.mime_type]}}
    return {"type": "text", "text": part.labelled_text()}


def _image(image: ImagePart) -> dict[str, Any]:
    return {"type": "image_url", "image_url": {"url": data_url(image)}}


def _assistant(message: Message) -> list[dict[str, Any]]:
    text = "".join(p.text for p in message.parts if isinstance(p, TextPart) and not p.refusal)
    calls = [
        {"id": p.id, "type": "function", "function": {"name": p.name, "arguments": json.dumps(p.arguments)}}
        for p in message.parts
        if isinstance(p, ToolCallPart)
    ]
    refusal = "".join(p.text for p in message.parts if isinstance(p, TextPart) and p.refusal)
    if not text and not calls and not refusal:
        return []  # e.g. only another vendor's reasoning: nothing this API can take
    return [
        drop_none(
            {"role": "assistant", "content": text or None, "refusal": refusal or None, "tool_calls": calls or None}
        )
    ]


class OpenAIChatAdapter(Adapter):
    reasoning = "effort"
    label = "OpenAI"
    # Services that speak Chat Completions, offered by name so nobody has to look up a base URL; each
    # service's own documentation gives the address. Local servers (LM Studio, vLLM) take no key by default.
    aliases: ClassVar[tuple[VendorAlias, ...]] = (
        VendorAlias(id="openai-compatible", label="OpenAI-compatible", needs_key=False, needs_base_url=True),
        VendorAlias(id="openrouter", label="OpenRouter", needs_key=True, base_url="https://openrouter.ai/api/v1"),
        VendorAlias(id="groq", label="Groq", needs_key=True, base_url="https://api.groq.com/openai/v1"),
        VendorAlias(id="together", label="Together AI", needs_key=True, base_url="https://api.together.xyz/v1"),
        VendorAlias(id="deepseek", label="DeepSeek", needs_key=True, base_url="https://api.deepseek.com/v1"),
        VendorAlias(id="mistral", label="Mistral AI", needs_key=True, base_url="https://api.mistral.ai/v1"),
        VendorAlias(id="lm-studio", label="LM Studio", needs_key=False, base_url="http://localhost:1234/v1"),
        VendorAlias(id="vllm", label="vLLM", needs_key=False, base_url="http://localhost:8000/v1"),
    )

    @classmethod
    def json_mode_options(cls, name: str, schema: dict[str, Any], open_schema: dict[str, Any]) -> dict[str, Any]:
        return {"response_format": {"type": "json_schema", "json_schema": {"name": name, "strict": True,
                                                                           "schema": schema}}}

    vendor = "openai"
    default_base_url = "https://api.openai.com/v1"
    retry_policy = OPENAI_POLICY

    def _headers(self) -> dict[str, str]:
        return {"authorization": f"Bearer {self.api_key}"} if self.api_key else {}

    def _is_openai(self) -> bool:
        return urlsplit(self.base_url).hostname == "api.openai.com"

    def _takes_audio(self) -> bool:
        """A clip has no text to fall back on, so the user's word is taken: OpenAI itself at another address (a
        proxy) gets it too; an OpenAI-compatible server is refused it."""
        return self._is_openai() or self.chosen == "openai"

    def describe(self) -> str:
        host = urlsplit(self.base_url).hostname
        return self.label if self._takes_audio() else f"the OpenAI-compatible server at {host}"

    stream_fields = {"stream": True, "stream_options": {"include_usage": True}}

    def request_body(self, request: ChatRequest) -> dict[str, Any]:
        # OpenAI's reasoning models refuse the older name for the token limit; compatible servers want it.
        max_tokens = "max_completion_tokens" if self._is_openai() else "max_tokens"
        return {
            "model": request.model,
            "messages": messages_param(request, files=self._is_openai(), audio=self._takes_audio()),
            "temperature": request.temperature,
            max_tokens: request.max_tokens,
            "reasoning_effort": request.reasoning.as_effort() if request.reasoning else None,
        }

    def tools_fields(self, request: ChatRequest) -> dict[str, Any]:
        return {"tools": [tool_param(t) for t in request.tools], "tool_choice": tool_choice(request.tool_choice)}

    def chat_url(self, request: ChatRequest) -> str:
        return f"{self.base_url}/chat/completions"

    def stream_parser(self, *, status: int = 200) -> StreamParser:
        return OpenAIChatParser(self.vendor, status=status)

    def parse_payload(self, parts: PartsManager, payload: Any) -> None:
        parts.response_id, parts.model = payload.get("id"), payload.get("model")
        choice = (payload.get("choices") or [{}])[0]
        message = choice.get("message") or {}
        _delta(parts, {k: v for k, v in message.items() if k != "tool_calls"})
        for i, call in enumerate(message.get("tool_calls") or []):
            function = call.get("function") or {}
            parts.tool_call(i, call.get("id") or f"call_{i}", function.get("name", ""), function.get("arguments") or "")
        if choice.get("finish_reason"):
            parts.set_finish(finish_from(FINISH, choice["finish_reason"]), choice["finish_reason"])
        if payload.get("usage"):
            _usage(parts, payload["usage"])

    def error_fields(self, payload: Any) -> tuple[str | None, str | None]:
        return error_fields(payload)

    def models_request(self) -> Request:
        return Request("GET", f"{self.base_url}/models", self._headers())

    # Speech: /audio/transcriptions (multipart, answers {"text"}) and /audio/speech (JSON, answers the audio).
    # A compatible server that offers them (Groq's Whisper, a local one) is asked at the same paths.
    transcription_model = "gpt-4o-mini-transcribe"
    speech_model = "gpt-4o-mini-tts"
    speech_voice = "alloy"

    def transcription_request(self, audio: bytes, mime_type: str, *, chat_model: str, model: str | None = None,
                              language: str | None = None) -> Request:
        extension = AUDIO_FORMATS.get(mime_type) or mime_type.split("/")[-1].split(";")[0]
        body, content_type = multipart({"model": model or self.transcription_model, "language": language,
                                        "response_format": "json"}, ("file", f"speech.{extension}", mime_type, audio))
        return Request("POST", f"{self.base_url}/audio/transcriptions",
                       {**self._headers(), "content-type": content_type}, body)

    def parse_transcription(self, body: bytes) -> str:
        return str(json.loads(body).get("text") or "")

    def speech_request(self, text: str, *, voice: str | None = None, speed: float | None = None,
                       model: str | None = None) -> Request:
        body = {"model": model or self.speech_model, "input": text, "voice": voice or self.speech_voice,
                "speed": speed, "response_format": "wav"}
        return self._json_request(f"{self.base_url}/audio/speech", drop_none(body), self._headers())

    def parse_models(self, body: bytes) -> list[ModelInfo]:
        return [ModelInfo(id=m["id"]) for m in json.loads(body).get("data", [])]
