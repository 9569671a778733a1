"""Google Gemini API: ``generateContent`` and ``streamGenerateContent?alt=sse``.

The key travels in the ``x-goog-api-key`` header, never in the URL (SECURITY.md V2, T-V8). Gemini
sends no tool-call ids: we make stable ones from the response id, the call's position, name and
arguments (``id_synthesized`` marks them; the fixture summary reports ``null``). Thought parts are
reasoning; ``thoughtSignature`` is kept on the part that carried it and sent back to Gemini only.
Tool schemas go through :func:`~pycore.adapters._gemini_schema.clean_schema`.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import struct
from typing import Any, ClassVar, assert_never
from urllib.parse import quote

from pycore._parts import PartsManager
from pycore.adapters._base import Adapter, StreamParser, drop_none, finish_from
from pycore.adapters._convert import is_pdf, tool_names
from pycore.adapters._gemini_schema import clean_schema
from pycore.exceptions import StreamFormatError
from pycore.http import Request
from pycore.messages import (
    ChatRequest,
    DocumentPart,
    Event,
    FinishReason,
    ImagePart,
    Message,
    ModelInfo,
    NamedToolChoice,
    Part,
    ReasoningPart,
    TextPart,
    Tool,
    ToolCallPart,
    ToolChoice,
    ToolResultPart,
)

FINISH: dict[str, FinishReason] = {
    "STOP": "stop",
    "MAX_TOKENS": "length",
    "SAFETY": "content_filter",
    "RECITATION": "content_filter",
    "BLOCKLIST": "content_filter",
    "PROHIBITED_CONTENT": "content_filter",
    "SPII": "content_filter",
    "IMAGE_SAFETY": "content_filter",
    "MALFORMED_FUNCTION_CALL": "error",
}


class GeminiParser(StreamParser):
    def __init__(self, vendor: str, *, status: int = 200) -> None:
        super().__init__(vendor, status=status)
        self.state = _State()

    def handle(self, payload: Any) -> list[Event]:
        return handle_response(self.parts, self.state, payload, self.status)


class _State:
    """Where the next part goes: consecutive text (or thought) chunks extend one part."""

    def __init__(self) -> None:
        self.segment = 0
        self.kind = ""
        self.calls = 0

    def key(self, kind: str) -> int:
        if kind != self.kind:
            self.segment += 1
            self.kind = kind
        return self.segment


def handle_response(parts: PartsManager, state: _State, payload: Any, status: int = 200) -> list[Event]:
    if isinstance(payload, list):  # errors may come wrapped in a list
        return [e for one in payload for e in handle_response(parts, state, one, status)]
    if payload.get("error"):
        kind, message = error_fields(payload)
        return parts.set_error(status, kind, message or "error")
    parts.response_id = payload.get("responseId") or parts.response_id
    parts.model = payload.get("modelVersion") or parts.model
    events: list[Event] = []
    candidate = (payload.get("candidates") or [{}])[0]
    for part in (candidate.get("content") or {}).get("parts") or []:
        events += _part(parts, state, part)
    if candidate.get("finishReason"):
        raw = candidate["finishReason"]
        calls = any(isinstance(p, ToolCallPart) for p in parts.parts)
        parts.set_finish(finish_from(FINISH, raw, tool_calls=calls), raw)
    usage = payload.get("usageMetadata")
    if usage and (parts.usage is None or parts.usage.details != usage):  # repeated in every chunk: read on change
        events += parts.set_usage(usage.get("promptTokenCount"), usage.get("candidatesTokenCount"), usage)
    return events


def _part(parts: PartsManager, state: _State, part: dict[str, Any]) -> list[Event]:
    if len(part) == 1 and "text" in part:  # the usual part: a piece of text, nothing else
        return parts.text(state.key("text"), part["text"])
    signature = part.get("thoughtSignature")
    if "functionCall" in part:
        return _call(parts, state, part["functionCall"], signature)
    if part.get("thought"):
        return parts.reasoning(state.key("thought"), part.get("text", ""), signature=signature)
    if "text" in part:
        details = {"thought_signature": signature} if signature else None
        return parts.text(state.key("text"), part["text"], details=details)
    return []  # inline data, executable code... not produced for chat here


def _call(parts: PartsManager, state: _State, call: dict[str, Any], signature: str | None) -> list[Event]:
    state.kind = "call"
    state.calls += 1
    args = json.dumps(call.get("args") or {}, sort_keys=True)
    name = call.get("name", "")
    call_id = call.get("id")
    if not call_id:
        seed = f"{parts.response_id}|{state.calls}|{name}|{args}".encode()
        call_id = "call_" + hashlib.sha256(seed).hexdigest()[:24]
    details = {"thought_signature": signature} if signature else None
    return parts.tool_call(("call", state.calls), call_id, name, args, synthesized=not call.get("id"), details=details)


def error_fields(payload: Any) -> tuple[str | None, str | None]:
    if isinstance(payload, list) and payload:
        payload = payload[0]
    error = payload.get("error") if isinstance(payload, dict) else None
    if isinstance(error, dict):
        return error.get("status"), error.get("message")
    return None, None


# ---------------------------------------------------------------------------------- request body
def tool_config(choice: ToolChoice | None) -> dict[str, Any] | None:
    if choice is None:
        return None
    if isinstance(choice, NamedToolChoice):
        return {"functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": [choice.name]}}
    return {"functionCallingConfig": {"mode": {"auto": "AUTO", "none": "NONE", "required": "ANY"}[choice]}}


def tool_param(tool: Tool) -> dict[str, Any]:
    return drop_none(
        {"name": tool.name, "description": tool.description or None, "parameters": clean_schema(tool.input_schema)}
    )


def contents(messages: list[Message]) -> list[dict[str, Any]]:
    names = tool_names(messages)
    out: list[dict[str, Any]] = []
    for message in messages:
        role = "model" if message.role == "assistant" else "user"
        parts = [p for part in message.parts for p in _to_parts(part, names)]
        if not parts:
            continue
        if out and out[-1]["role"] == role:
            out[-1]["parts"] += parts
        else:
            out.append({"role": role, "parts": parts})
    return out


def _signed(part: dict[str, Any], vendor: str | None, details: dict[str, Any] | None) -> dict[str, Any]:
    signature = (details or {}).get("thought_signature")
    return {**part, "thoughtSignature": signature} if signature and vendor == "gemini" else part


def _to_parts(part: Part, names: dict[str, str]) -> list[dict[str, Any]]:
    if isinstance(part, TextPart):
        return [_signed({"text": part.text}, part.vendor, part.provider_details)] if part.text else []
    if isinstance(part, ImagePart):
        return [{"inlineData": {"mimeType": part.mime_type, "data": part.base64()}}]
    if isinstance(part, DocumentPart):  # a PDF or a recorded clip itself, under its name; any other file as its text
        if is_pdf(part) or part.is_audio():
            return [{"text": f"Attached file: {part.name}"},
                    {"inlineData": {"mimeType": part.mime_type, "data": part.base64()}}]
        return [{"text": part.labelled_text()}]
    if isinstance(part, ToolCallPart):
        call = {"functionCall": {"name": part.name, "args": part.arguments}}
        return [_signed(call, part.vendor, part.provider_details)]
    if isinstance(part, ToolResultPart):
        return _result(part, names)
    if isinstance(part, ReasoningPart):
        if part.vendor == "gemini" and part.signature:
            return [{"text": part.text, "thought": True, "thoughtSignature": part.signature}]
        return []
    assert_never(part)


def _result(part: ToolResultPart, names: dict[str, str]) -> list[dict[str, Any]]:
    text = "\n".join(c.text for c in part.content if isinstance(c, TextPart))
    name = part.name or names.get(part.call_id, "tool")
    response = {"error": text} if part.is_error else {"result": text}
    images = [
        {"inlineData": {"mimeType": c.mime_type, "data": c.base64()}} for c in part.content if isinstance(c, ImagePart)
    ]
    return [{"functionResponse": {"name": name, "response": response}}, *images]


def _wav(pcm: bytes, mime_type: str) -> tuple[bytes, str]:
    """Gemini's ``audio/L16;codec=pcm;rate=24000`` (16-bit little-endian mono PCM) as a WAV file."""
    if not mime_type.lower().startswith("audio/l16"):
        return pcm, mime_type or "application/octet-stream"
    rate = int(m.group(1)) if (m := re.search(r"rate=(\d+)", mime_type)) else 24000
    fmt = struct.pack("<IHHIIHH", 16, 1, 1, rate, rate * 2, 2, 16)  # PCM, mono, 16-bit
    header = b"RIFF" + struct.pack("<I", 36 + len(pcm)) + b"WAVEfmt " + fmt
    return header + b"data" + struct.pack("<I", len(pcm)) + pcm, "audio/wav"


class GeminiAdapter(Adapter):
    reasoning = "budget"
    label = "Gemini"
    tool_name = re.compile(r"^[a-zA-Z_][a-zA-Z0-9_.:-]{0,63}$")
    classifier_mode = "json"

    @classmethod
    def json_mode_options(cls, name: str, schema: dict[str, Any], open_schema: dict[str, Any]) -> dict[str, Any]:
        return {"generationConfig": {"responseMimeType": "application/json", "responseSchema": open_schema}}

    vendor = "gemini"
    default_base_url = "https://generativelanguage.googleapis.com/v1beta"

    def _headers(self) -> dict[str, str]:
        return {"x-goog-api-key": self.api_key} if self.api_key else {}

    stream_fields: ClassVar[dict[str, Any]] = {}  # streaming is a different URL, not a body field

    def request_body(self, request: ChatRequest) -> dict[str, Any]:
        budget = request.reasoning.as_budget() if request.reasoning else None
        config = drop_none({"temperature": request.temperature, "maxOutputTokens": request.max_tokens,
                            "thinkingConfig": {"thinkingBudget": budget} if budget else None})
        return {
            "contents": contents(request.messages),
            "systemInstruction": {"parts": [{"text": request.system}]} if request.system else None,
            "generationConfig": config or None,
        }

    def tools_fields(self, request: ChatRequest) -> dict[str, Any]:
        return {
            "tools": [{"functionDeclarations": [tool_param(t) for t in request.tools]}],
            "toolConfig": tool_config(request.tool_choice),
        }

    def chat_url(self, request: ChatRequest) -> str:
        model = quote(request.model.removeprefix("models/"), safe="-._")
        action = "streamGenerateContent?alt=sse" if request.stream else "generateContent"
        return f"{self.base_url}/models/{model}:{action}"

    def stream_parser(self, *, status: int = 200) -> StreamParser:
        return GeminiParser(self.vendor, status=status)

    def parse_payload(self, parts: PartsManager, payload: Any) -> None:
        handle_response(parts, _State(), payload)

    def error_fields(self, payload: Any) -> tuple[str | None, str | None]:
        return error_fields(payload)

    def models_request(self) -> Request:
        return Request("GET", f"{self.base_url}/models?pageSize=1000", self._headers())

    # Speech: Gemini's chat models read audio, so a clip is transcribed by the profile's own model; its voice is
    # a TTS model answering 16-bit PCM, which is wrapped as WAV for the page. It has no speed: not sent.
    speech_model = "gemini-2.5-flash-preview-tts"
    speech_voice = "Kore"

    def transcription_request(self, audio: bytes, mime_type: str, *, chat_model: str, model: str | None = None,
                              language: str | None = None) -> Request:
        ask = "Transcribe this audio exactly, in the language spoken" + (f" (probably {language})" if language else "")
        parts = [{"text": ask + ". Answer with the transcript only."},
                 {"inlineData": {"mimeType": mime_type, "data": base64.b64encode(audio).decode("ascii")}}]
        name = quote((model or chat_model).removeprefix("models/"), safe="-._")
        url = f"{self.base_url}/models/{name}:generateContent"
        return self._json_request(url, {"contents": [{"role": "user", "parts": parts}]}, self._headers())

    def parse_transcription(self, body: bytes) -> str:
        return "".join(p.text for p in self.parse_response(body).message.parts if isinstance(p, TextPart)).strip()

    def speech_request(self, text: str, *, voice: str | None = None, speed: float | None = None,
                       model: str | None = None) -> Request:
        voice_config = {"prebuiltVoiceConfig": {"voiceName": voice or self.speech_voice}}
        body = {"contents": [{"role": "user", "parts": [{"text": text}]}],
                "generationConfig": {"responseModalities": ["AUDIO"], "speechConfig": {"voiceConfig": voice_config}}}
        url = f"{self.base_url}/models/{quote(model or self.speech_model, safe='-._')}:generateContent"
        return self._json_request(url, body, self._headers())

    def parse_speech(self, body: bytes, content_type: str) -> tuple[bytes, str]:
        parts = ((json.loads(body).get("candidates") or [{}])[0].get("content") or {}).get("parts") or []
        inline = next((p["inlineData"] for p in parts if "inlineData" in p), None)
        if inline is None:
            raise StreamFormatError("gemini: the speech answer carries no audio")
        return _wav(base64.b64decode(inline["data"]), inline.get("mimeType", ""))

    def parse_models(self, body: bytes) -> list[ModelInfo]:
        models = json.loads(body).get("models", [])
        return [
            ModelInfo(id=m["name"].removeprefix("models/"), name=m.get("displayName"))
            for m in models
            if "generateContent" in m.get("supportedGenerationMethods", ["generateContent"])
        ]
