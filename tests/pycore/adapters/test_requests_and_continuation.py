"""Request builders: headers, URLs, keys, and cross-vendor continuation rules (runs in Pyodide too)."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from conversations import TRANSCRIPTS, all_conversations, transcript

from pycore.adapters import get_adapter
from pycore.adapters._gemini_schema import clean_schema
from pycore.exceptions import AuthenticationError, OverloadedError, RateLimitError, RequestTooLargeError
from pycore.messages import (
    AskedEntry,
    ChatRequest,
    Message,
    ReasoningPart,
    TextPart,
    ToolCallPart,
    ToolDisplay,
    ToolResultPart,
)

pytestmark = pytest.mark.pyodide

KEY = "sk-ant-api03-SECRETSECRETSECRET"
TARGETS = ("openai", "openai-responses", "anthropic", "gemini", "ollama")
CONVERSATIONS = all_conversations()


def body_of(target: str, request: ChatRequest) -> dict[str, Any]:
    return json.loads(get_adapter(target, api_key=KEY).build_request(request).body or b"{}")


@pytest.mark.parametrize("name", list(CONVERSATIONS))
def test_anthropic_always_sends_the_direct_browser_access_header(name: str) -> None:  # T-V1
    request = get_adapter("anthropic", api_key=KEY).build_request(CONVERSATIONS[name])
    assert request.headers["anthropic-dangerous-direct-browser-access"] == "true"


@pytest.mark.parametrize("target", TARGETS)
def test_no_url_carries_the_key_and_only_needed_headers_are_sent(target: str) -> None:  # T-V2, T-V8, V10
    adapter = get_adapter(target, api_key=KEY)
    for request in [adapter.build_request(c) for c in CONVERSATIONS.values()] + [adapter.models_request()]:
        assert KEY not in request.url and "key=" not in request.url
        extra = {h for h in request.headers if h.startswith(("x-stainless", "user-agent", "idempotency"))}
        assert not extra
        assert sum(KEY in v for v in request.headers.values()) == 1


def test_gemini_key_goes_in_x_goog_api_key() -> None:
    request = get_adapter("gemini", api_key=KEY).build_request(CONVERSATIONS["text"])
    assert request.headers["x-goog-api-key"] == KEY
    assert request.url.endswith("/models/some-model:streamGenerateContent?alt=sse")


@pytest.mark.parametrize("target", TARGETS)
def test_error_messages_never_contain_the_key(target: str) -> None:
    body = json.dumps({"error": {"type": "authentication_error", "message": f"bad key {KEY}", "status": "X"}})
    error = get_adapter(target, api_key=KEY).map_error(401, {"X-Request-Id": "r1"}, body.encode())
    assert isinstance(error, AuthenticationError)
    assert KEY not in str(error) and KEY not in error.vendor_message
    assert error.headers == {"x-request-id": "r1"} and error.status == 401 and error.vendor == target


@pytest.mark.parametrize(
    ("status", "cls"), [(429, RateLimitError), (529, OverloadedError), (413, RequestTooLargeError)]
)
def test_status_classes(status: int, cls: type) -> None:
    assert type(get_adapter("anthropic").map_error(status, {}, b"not json")) is cls


# ------------------------------------------------------------------------------ continuation
@pytest.mark.parametrize("source", list(TRANSCRIPTS))
def test_anthropic_gets_alternating_roles_with_tool_results_first(source: str) -> None:
    messages = body_of("anthropic", transcript(source))["messages"]
    roles = [m["role"] for m in messages]
    assert roles[0] == "user" and all(a != b for a, b in zip(roles, roles[1:], strict=False))
    uses = {b["id"] for m in messages for b in m["content"] if b["type"] == "tool_use"}
    for message in messages:
        kinds = [b["type"] for b in message["content"]]
        assert kinds == sorted(kinds, key=lambda k: k != "tool_result")
        results = {b["tool_use_id"] for b in message["content"] if b["type"] == "tool_result"}
        assert results <= uses
        assert all(re.fullmatch(r"[a-zA-Z0-9_-]+", i) for i in results)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("source", list(TRANSCRIPTS))
def test_every_recorded_tool_call_reaches_every_vendor_with_its_result(source: str, target: str) -> None:
    request = transcript(source)
    calls = [p for m in request.messages for p in m.parts if isinstance(p, ToolCallPart)]
    text = json.dumps(body_of(target, request))
    for call in calls:
        assert text.count(f"result of {call.name}") >= 1
        assert call.name in text
    if target in ("openai", "openai-responses"):  # ids travel as they are
        assert all(call.id in text for call in calls)


def _reasoning_of(source: str) -> list[ReasoningPart]:
    return [p for m in transcript(source).messages for p in m.parts if isinstance(p, ReasoningPart)]


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("source", ["anthropic-thinking", "openai-responses"])
def test_reasoning_goes_back_only_to_the_vendor_that_made_it(source: str, target: str) -> None:
    (reasoning,) = [r for r in _reasoning_of(source) if r.signature or r.encrypted]
    opaque = reasoning.signature or reasoning.encrypted
    assert opaque
    sent = json.dumps(body_of(target, transcript(source)))
    assert (opaque in sent) == (reasoning.vendor == target)


def test_gemini_gets_its_own_thought_signature_back_on_the_function_call() -> None:
    contents = body_of("gemini", transcript("gemini"))["contents"]
    calls = [p for c in contents for p in c["parts"] if "functionCall" in p]
    assert calls and all(p.get("thoughtSignature") for p in calls)
    assert "thoughtSignature" not in json.dumps(body_of("gemini", transcript("anthropic")))


def test_gemini_function_responses_are_named_after_their_calls() -> None:
    contents = body_of("gemini", transcript("openai"))["contents"]
    calls = [p["functionCall"]["name"] for c in contents for p in c["parts"] if "functionCall" in p]
    responses = [p["functionResponse"]["name"] for c in contents for p in c["parts"] if "functionResponse" in p]
    assert calls == responses and calls


def test_synthesized_gemini_ids_are_stable_and_distinct() -> None:
    first = [p.id for m in transcript("gemini").messages for p in m.parts if isinstance(p, ToolCallPart)]
    again = [p.id for m in transcript("gemini").messages for p in m.parts if isinstance(p, ToolCallPart)]
    assert first == again and all(first)


def test_system_prompt_placement() -> None:
    request = CONVERSATIONS["text"]
    assert body_of("openai", request)["messages"][0] == {"role": "system", "content": "You are terse."}
    assert body_of("anthropic", request)["system"] == "You are terse."
    assert body_of("gemini", request)["systemInstruction"] == {"parts": [{"text": "You are terse."}]}
    assert body_of("openai-responses", request)["instructions"] == "You are terse."
    assert body_of("ollama", request)["messages"][0] == {"role": "system", "content": "You are terse."}


def test_anthropic_merges_consecutive_turns_and_starts_with_the_user() -> None:
    request = ChatRequest(model="m", messages=[Message.assistant("Hello."), Message.user("a"), Message.user("b")])
    assert body_of("anthropic", request)["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "(continued)"}]},
        {"role": "assistant", "content": [{"type": "text", "text": "Hello."}]},
        {"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]},
    ]


def test_vendor_options_pass_through_untouched() -> None:
    request = CONVERSATIONS["text"].model_copy(update={"vendor_options": {"generationConfig": {"topK": 3}, "x": [1]}})
    body = body_of("gemini", request)
    assert body["generationConfig"] == {"temperature": 0.2, "maxOutputTokens": 256, "topK": 3}
    assert body["x"] == [1]


def test_text_parts_keep_their_gemini_signature_only_for_gemini() -> None:
    part = TextPart(text="hi", vendor="gemini", provider_details={"thought_signature": "sig"})
    request = ChatRequest(model="m", messages=[Message.user("q"), Message(role="assistant", parts=[part])])
    assert body_of("gemini", request)["contents"][1]["parts"] == [{"text": "hi", "thoughtSignature": "sig"}]
    assert "sig" not in json.dumps(body_of("anthropic", request))


# ------------------------------------------------------------------------------ gemini schemas
def test_gemini_schema_cleaning_of_a_real_world_mcp_schema() -> None:
    schema = {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "type": "object",
        "additionalProperties": False,
        "properties": {
            "path": {"type": "string", "default": "."},
            "mode": {"const": "fast"},
            "limit": {"type": ["integer", "null"], "minimum": 1},
            "node": {"$ref": "#/definitions/Node"},
            "either": {"oneOf": [{"type": "string"}, {"type": "number"}]},
        },
        "required": ["path", "ghost"],
        "definitions": {"Node": {"type": "object", "properties": {"child": {"$ref": "#/definitions/Node"}}}},
    }
    assert clean_schema(schema) == {
        "type": "object",
        "properties": {
            "path": {"type": "string"},
            "mode": {"enum": ["fast"], "type": "string"},
            "limit": {"type": "integer", "nullable": True, "minimum": 1},
            "node": {"type": "object", "properties": {"child": {"type": "object", "description": "(recursive Node)"}}},
            "either": {"anyOf": [{"type": "string"}, {"type": "number"}]},
        },
        "required": ["path"],
    }


@pytest.mark.parametrize("target", TARGETS)
def test_a_result_parts_display_never_reaches_the_vendor(target: str) -> None:
    """``ToolResultPart.display`` is the page's card (the server's items, a form the user answered, files the code
    wrote): the body a vendor gets is the same with it or without it."""
    plain = CONVERSATIONS["parallel-tool-calls"]
    shown = plain.model_copy(deep=True)
    display = ToolDisplay(content=[{"type": "resource_link", "uri": "file:///secret-plan.txt", "name": "plan"}],
                          structured={"private": "PAGE-ONLY"}, duration_ms=12.5, source="mcp:s1",
                          asked=[AskedEntry(id="q1", kind="form", asker="s1", message="Your PIN?", answer="1234")])
    for message in shown.messages:
        for part in message.parts:
            if isinstance(part, ToolResultPart):
                part.display = display
    assert body_of(target, shown) == body_of(target, plain)
