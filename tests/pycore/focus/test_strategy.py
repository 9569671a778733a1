"""The classifier request, as each vendor's adapter puts it on the wire: JSON by forced tool or by
the vendor's JSON mode, temperature at most 0.1, no streaming. Adapters are used as they are."""

from __future__ import annotations

import json

import pytest

from pycore.adapters import get_adapter
from pycore.focus.classification import TOOL_NAME
from pycore.focus.strategy import classifier_request

pytestmark = pytest.mark.pyodide


def body(vendor: str, **kwargs) -> dict:
    request = classifier_request(vendor, "small", "classify", "hello", **kwargs)
    return json.loads(get_adapter(vendor, api_key="k").build_request(request).body)


def test_openai_chat_forces_the_function():
    b = body("openai")
    assert b["tool_choice"] == {"type": "function", "function": {"name": TOOL_NAME}}
    assert b["tools"][0]["function"]["parameters"]["properties"]["labels"]["maxItems"] == 2
    assert b["temperature"] <= 0.1 and "stream" not in b


def test_openai_responses_forces_the_function():
    b = body("openai-responses")
    assert b["tool_choice"] == {"type": "function", "name": TOOL_NAME} and b["temperature"] <= 0.1


def test_anthropic_forces_the_tool():
    b = body("anthropic")
    assert b["tool_choice"] == {"type": "tool", "name": TOOL_NAME} and b["tools"][0]["name"] == TOOL_NAME
    assert "temperature" not in b  # the Messages API takes none any more (see the adapter); the tool bounds the answer


def test_gemini_uses_its_json_mode_with_the_schema_merged_beside_the_temperature():
    b = body("gemini")
    config = b["generationConfig"]
    assert config["responseMimeType"] == "application/json" and config["temperature"] <= 0.1
    assert "additionalProperties" not in json.dumps(config["responseSchema"]) and "tools" not in b


def test_ollama_uses_structured_output_format():
    b = body("ollama")
    assert b["format"]["properties"]["labels"]["items"]["enum"][0] == "PROBLEM_DEFINITION"
    assert b["options"]["temperature"] <= 0.1 and b["stream"] is False and "tools" not in b


@pytest.mark.parametrize("vendor", ["openai", "openai-responses"])
def test_the_json_override_uses_strict_structured_output(vendor):
    b = body(vendor, strategy="json")
    assert "tools" not in b
    fmt = b.get("response_format", {}).get("json_schema") or b["text"]["format"]
    assert fmt["strict"] is True and fmt["schema"]["additionalProperties"] is False


def test_the_tool_override_works_on_gemini():
    b = body("gemini", strategy="tool")
    assert b["toolConfig"] == {"functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": [TOOL_NAME]}}
