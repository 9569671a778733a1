"""Request bodies for a fixed set of conversations, checked against the vendors' own SDK request
types and against golden files (CPython only: the SDKs are test-only dependencies).

Regenerate the goldens after an intended change with::

    ORIZURU_REGEN_GOLDEN=1 .venv/bin/python -m pytest tests/pycore/adapters/test_request_bodies_sdk.py

and review the diff of ``tests/pycore/golden/`` before committing it.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from conversations import all_conversations
from sdk_types import check

from pycore.adapters import get_adapter

GOLDEN = Path(__file__).resolve().parents[1] / "golden"
REGENERATE = os.environ.get("ORIZURU_REGEN_GOLDEN") == "1"
TARGETS = ("openai", "openai-responses", "anthropic", "gemini", "ollama")
CONVERSATIONS = all_conversations()
KEY = "test-key-0123456789"


def sdk_problems_openai(body: dict[str, Any]) -> list[str]:
    from openai.types.chat.completion_create_params import CompletionCreateParamsStreaming

    return check(body, CompletionCreateParamsStreaming)


def sdk_problems_openai_responses(body: dict[str, Any]) -> list[str]:
    from openai.types.responses.response_create_params import ResponseCreateParamsStreaming

    return check(body, ResponseCreateParamsStreaming)


def sdk_problems_anthropic(body: dict[str, Any]) -> list[str]:
    from anthropic.types.message_create_params import MessageCreateParamsStreaming

    return check(body, MessageCreateParamsStreaming)


def sdk_problems_gemini(body: dict[str, Any]) -> list[str]:
    from google.genai import types  # pydantic models with extra="forbid"

    known = {
        "contents": types.Content,
        "systemInstruction": types.Content,
        "generationConfig": types.GenerationConfig,
        "tools": types.Tool,
        "toolConfig": types.ToolConfig,
    }
    problems = [f"unknown key {k}" for k in body if k not in known]
    for key, model in known.items():
        for item in body.get(key, []) if key in ("contents", "tools") else [body[key]] if key in body else []:
            try:
                model.model_validate(item)
            except ValueError as e:
                problems.append(f"{key}: {e}")
    return problems


def _extra_keys(value: Any, model: Any, path: str) -> list[str]:
    fields = {(f.alias or name) for name, f in model.model_fields.items()} | set(model.model_fields)
    return [f"{path}: unknown key {k}" for k in value if k not in fields]


def sdk_problems_ollama(body: dict[str, Any]) -> list[str]:
    from ollama._types import ChatRequest, Message, Tool

    try:
        ChatRequest.model_validate(body)
    except ValueError as e:
        return [str(e)]
    problems = _extra_keys(body, ChatRequest, "$")
    for i, message in enumerate(body.get("messages", [])):
        problems += _extra_keys(message, Message, f"$.messages[{i}]")
        for call in message.get("tool_calls", []):
            problems += _extra_keys(call, Message.ToolCall, "$.tool_call")
    for tool in body.get("tools", []):
        problems += _extra_keys(tool, Tool, "$.tools")
    return problems


CHECKS = {
    "openai": sdk_problems_openai,
    "openai-responses": sdk_problems_openai_responses,
    "anthropic": sdk_problems_anthropic,
    "gemini": sdk_problems_gemini,
    "ollama": sdk_problems_ollama,
}


def build(target: str, name: str) -> dict[str, Any]:
    request = get_adapter(target, api_key=KEY).build_request(CONVERSATIONS[name])
    return {
        "method": request.method,
        "url": request.url,
        "headers": request.headers,
        "body": json.loads(request.body or b"null"),
    }


@pytest.mark.parametrize("name", list(CONVERSATIONS))
@pytest.mark.parametrize("target", TARGETS)
def test_body_is_valid_for_the_vendor_sdk(target: str, name: str) -> None:
    assert CHECKS[target](build(target, name)["body"]) == []


@pytest.mark.parametrize("name", list(CONVERSATIONS))
@pytest.mark.parametrize("target", TARGETS)
def test_request_matches_golden(target: str, name: str) -> None:
    got = build(target, name)
    path = GOLDEN / target / f"{name}.json"
    if REGENERATE:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(got, indent=1, ensure_ascii=False, sort_keys=True) + "\n", "utf-8")
    assert path.is_file(), f"no golden file {path}: run with ORIZURU_REGEN_GOLDEN=1 and review it"
    assert got == json.loads(path.read_text("utf-8"))


def test_the_sdk_check_can_fail() -> None:
    body = build("anthropic", "parallel-tool-calls")["body"]
    body["messages"][1]["content"][1]["type"] = "tool_call"  # not an Anthropic block type
    assert sdk_problems_anthropic(body)
    assert sdk_problems_openai({"model": "m", "messages": [{"role": "robot", "content": "x"}], "stream": True})
    assert sdk_problems_gemini({"contents": [{"role": "user", "parts": [{"functionCal": {}}]}]})
    assert sdk_problems_ollama({"model": "m", "messages": [{"role": "user", "content": "x", "pictures": []}]})


def test_a_thinking_budget_above_the_output_limit_names_both_and_what_to_do() -> None:
    from pycore.messages import Reasoning

    request = CONVERSATIONS["assistant-budget"].model_copy(update={"max_tokens": 2000,
                                                                   "reasoning": Reasoning(budget_tokens=4096)})
    with pytest.raises(ValueError, match=r"Max output tokens \(2000\) must be above the thinking budget \(4096\)"):
        get_adapter("anthropic", api_key=KEY).build_request(request)
    unset = CONVERSATIONS["assistant-budget"].model_copy(update={"max_tokens": None})
    assert build_body(unset)["max_tokens"] == 4096 + 4096  # room for the answer beside the thinking


def build_body(request: Any) -> dict[str, Any]:
    body: dict[str, Any] = json.loads(get_adapter("anthropic", api_key=KEY).build_request(request).body or b"null")
    return body


def test_a_pdf_goes_as_a_file_to_openai_and_as_its_text_to_a_compatible_server() -> None:
    request = CONVERSATIONS["documents"]
    compatible = get_adapter("openai", api_key=KEY, base_url="http://127.0.0.1:8000/v1").build_request(request)
    content = json.loads(compatible.body or b"null")["messages"][0]["content"]
    assert [c["type"] for c in content] == ["text", "text", "text"]
    assert content[2]["text"].startswith('<file name="report.pdf" type="application/pdf">\nQuarterly sales report')
    assert build("openai", "documents")["body"]["messages"][0]["content"][2]["type"] == "file"


def test_a_pdf_without_text_says_which_vendors_read_it_where_it_cannot_go() -> None:
    from pycore.exceptions import UnsupportedContentError
    from pycore.messages import DocumentPart, Message

    scan = DocumentPart(name="scan.pdf", mime_type="application/pdf", data=b"%PDF-1.4 no text layer")
    request = CONVERSATIONS["text"].model_copy(update={"messages": [Message(role="user", parts=[scan])]})
    assert get_adapter("anthropic", api_key=KEY).build_request(request)  # read by the vendor itself
    with pytest.raises(UnsupportedContentError, match=r"scan.pdf \(application/pdf\) has no readable text.*Anthropic"):
        get_adapter("ollama").build_request(request)
